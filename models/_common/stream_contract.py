"""The stdin/stdout side of the streaming contract (models/README.md, "Streaming contract"),
for programs that need no numpy (the vendor streaming programs).

stdin: per utterance a JSON header line, then length-prefixed PCM frames (4-byte little-endian
length, then that many bytes of 16-bit mono PCM; length 0 ends the utterance), until stdin
ends. stdout: `ready` once, then `partial` and `final` events, JSON lines stamped with the
program's wall clock `t`, flushed as written.

`stream_policy.py` (the re-decoding policy's loop) carries its own copy of `emit` and a
threaded reader because it imports numpy; both follow this same format.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterator
from typing import Any, BinaryIO

MAX_FRAME = 1 << 24  # bytes: a frame longer than this is a broken stream, not audio


class ContractError(Exception):
    """stdin broke the contract (a bad header or frame, or it ended inside an utterance)."""


def emit(out: BinaryIO, **event: object) -> None:
    """One event line on stdout, stamped with this program's wall clock, flushed."""
    event["t"] = time.time()
    out.write(json.dumps(event, ensure_ascii=False).encode("utf-8") + b"\n")
    out.flush()


def _exact(inp: BinaryIO, n: int) -> bytes:
    data = inp.read(n)
    if len(data) != n:
        raise ContractError(f"stdin ended inside a frame ({len(data)} of {n} bytes)")
    return data


def frames(inp: BinaryIO) -> Iterator[bytes]:
    """The PCM frames of one utterance, up to its end frame (length 0)."""
    while True:
        (n,) = struct.unpack("<I", _exact(inp, 4))
        if n == 0:
            return
        if n > MAX_FRAME or n % 2:
            raise ContractError(f"bad frame length {n} (16-bit PCM, at most {MAX_FRAME} bytes)")
        yield _exact(inp, n)


def headers(inp: BinaryIO, sample_rate: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each utterance's (ID, header) until stdin ends; read that utterance's `frames` before
    asking for the next. A header that is not JSON, or names another rate, is a ContractError."""
    while line := inp.readline():
        try:
            head = json.loads(line)
        except ValueError:
            raise ContractError(f"header line is not JSON: {line[:80]!r}") from None
        uid = str(head.get("id"))
        if head.get("sample_rate") != sample_rate:
            raise ContractError(f"{uid}: sample_rate must be {sample_rate}")
        yield uid, head
