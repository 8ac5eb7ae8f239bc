"""The stream and capacity records now live in `asrbench/results/records.py` (one home for
every stored record); this module re-exports them for the code and tests that import it here.
"""

from __future__ import annotations

from asrbench.results.records import (
    CAPACITY_FORMAT,
    CapacityRecord,
    StreamRecord,
    read_capacity,
    read_stream,
    write_capacity,
    write_stream,
)
from asrbench.results.records import STREAM_FORMAT as FORMAT
from asrbench.results.records import STREAM_OLDER as OLDER

__all__ = [
    "CAPACITY_FORMAT",
    "FORMAT",
    "OLDER",
    "CapacityRecord",
    "StreamRecord",
    "read_capacity",
    "read_stream",
    "write_capacity",
    "write_stream",
]
