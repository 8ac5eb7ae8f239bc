"""`stream.json`: the streaming record of a cell (format `asrbench-stream-v2`), and
`capacity.json`: a capacity probe (`asrbench-stream-capacity-v1`, capacity.py).

Beside it in the cell: `summary.json` (the finals scored as any hypotheses are, producer
`stream`, the same keys as every summary) and `events.jsonl` (every event of every utterance
with its clocks, one utterance a line). docs/STREAMING.md documents the fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asrbench.results.records import RecordError, check_format, read_record, write_record

FORMAT = "asrbench-stream-v2"
# v1 (the first slice) had the same fields; v2 adds the word metrics to `pooled` and the rows
# and measures the cursor lag by the scorer's alignment, not a common prefix
OLDER = ("asrbench-stream-v1",)


@dataclass(frozen=True)
class StreamRecord:
    """How a model streamed a dataset: the feed's settings, its accuracy, the metrics."""

    model: str
    model_identity: str
    runner: str
    dataset: str
    dataset_hash: str
    result_key: str  # the summary.json's result key (the finals' identity)
    chunk_ms: int
    speed: float
    n_utts: int
    n_failed: int
    pooled: dict[str, Any]  # metrics.pooled
    pacing: dict[str, Any]  # metrics.pacing
    overhead_s: dict[str, Any]  # metrics.overhead
    utterances: list[dict[str, Any]]  # metrics.per_utterance rows
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "model": self.model,
            "model_identity": self.model_identity,
            "runner": self.runner,
            "dataset": self.dataset,
            "dataset_hash": self.dataset_hash,
            "result_key": self.result_key,
            "chunk_ms": self.chunk_ms,
            "speed": self.speed,
            "n_utts": self.n_utts,
            "n_failed": self.n_failed,
            "pooled": self.pooled,
            "pacing": self.pacing,
            "overhead_s": self.overhead_s,
            "utterances": self.utterances,
            "notes": self.notes,
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "stream.json") -> StreamRecord:
        check_format(d, where, FORMAT, "rerun ops/stream", OLDER)
        try:
            return cls(**{k: d[k] for k in cls.__dataclass_fields__})
        except (KeyError, TypeError) as exc:
            raise RecordError(
                f"{where}: malformed stream record ({exc}); rerun ops/stream"
            ) from None


def write_stream(path: Path, record: StreamRecord) -> None:
    write_record(path, record)


def read_stream(path: Path) -> StreamRecord:
    return read_record(Path(path), StreamRecord.from_dict)


CAPACITY_FORMAT = "asrbench-stream-capacity-v1"


@dataclass(frozen=True)
class CapacityRecord:
    """How many simultaneous paced streams of a model this machine sustained (capacity.py)."""

    model: str
    model_identity: str
    runner: str
    dataset: str
    dataset_hash: str
    chunk_ms: int
    speed: float
    n_utts: int  # utterances per stream
    criterion: dict[str, Any]  # capacity.Criterion
    tried: list[int]  # the N probed, in order
    capacity: int  # the largest N sustained (0: not even one)
    levels: list[dict[str, Any]]  # capacity.level_figures per N, judged
    machine: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": CAPACITY_FORMAT,
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "capacity.json") -> CapacityRecord:
        check_format(d, where, CAPACITY_FORMAT, "rerun ops/stream --capacity")
        try:
            return cls(**{k: d[k] for k in cls.__dataclass_fields__})
        except (KeyError, TypeError) as exc:
            raise RecordError(
                f"{where}: malformed capacity record ({exc}); rerun ops/stream --capacity"
            ) from None


def write_capacity(path: Path, record: CapacityRecord) -> None:
    write_record(path, record)


def read_capacity(path: Path) -> CapacityRecord:
    return read_record(Path(path), CapacityRecord.from_dict)
