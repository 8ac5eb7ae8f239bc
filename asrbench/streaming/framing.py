"""The streaming contract's wire format (models/README.md, "Streaming contract").

To the program (stdin, bytes), per utterance:
    one header line: a JSON object `{"id": ..., "sample_rate": 16000}` and `\\n`
    audio frames: a 4-byte little-endian unsigned length N, then N bytes of 16-bit
    little-endian mono PCM (N even, 0 < N <= MAX_FRAME)
    the end frame: a length of 0 (the utterance ends; the program answers with its `final`)
The stream ends when stdin closes.

From the program (stdout): one JSON object a line, an event:
    `{"type": "ready"}` once, when the model is loaded (the feed starts then)
    `{"id", "type": "partial" | "final", "text", "audio_s", "t"}`: `audio_s` the audio consumed
    (seconds) when the event was written, `t` the program's wall clock (time.time()) then
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any, BinaryIO

from asrbench.errors import InputError

MAX_FRAME = 1 << 24
END = struct.pack("<I", 0)
EVENT_TYPES = ("ready", "partial", "final")


class FramingError(InputError):
    """Bytes or an event line that break the streaming contract; the message says which."""


def header(uid: str, sample_rate: int) -> bytes:
    """The header line that opens an utterance."""
    return json.dumps({"id": uid, "sample_rate": sample_rate}).encode("utf-8") + b"\n"


def frame(pcm: bytes) -> bytes:
    """One audio frame: its length, then the PCM bytes."""
    if not pcm or len(pcm) % 2 or len(pcm) > MAX_FRAME:
        raise FramingError(
            f"an audio frame holds 2 to {MAX_FRAME} bytes, an even count; got {len(pcm)}"
        )
    return struct.pack("<I", len(pcm)) + pcm


def read_utterance(inp: BinaryIO) -> tuple[dict[str, Any], bytes] | None:
    """The program's side, for tests and Python programs: (header, all PCM) of the next
    utterance, or None at the end of the stream."""
    line = inp.readline()
    if not line:
        return None
    head = json.loads(line)
    parts: list[bytes] = []
    while True:
        (n,) = struct.unpack("<I", _exact(inp, 4))
        if n == 0:
            return head, b"".join(parts)
        if n > MAX_FRAME or n % 2:
            raise FramingError(f"utterance {head.get('id')}: bad frame length {n}")
        parts.append(_exact(inp, n))


def _exact(inp: BinaryIO, n: int) -> bytes:
    data = inp.read(n)
    if len(data) != n:
        raise FramingError(f"the stream ended inside a frame ({len(data)} of {n} bytes)")
    return data


@dataclass(frozen=True)
class Event:
    """One event as the program wrote it, with when the platform recorded it."""

    type: str
    uid: str
    text: str
    audio_s: float
    t_program: float | None  # the program's wall clock at writing (None: not given)
    t_recv: float  # the platform's wall clock (time.time()) at reading the line
    mono_recv: float  # the platform's monotonic clock at reading the line

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.uid,
            "text": self.text,
            "audio_s": self.audio_s,
            "t_program": self.t_program,
            "t_recv": self.t_recv,
            "mono_recv": self.mono_recv,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        """The event `to_dict` wrote (a stream cell's cache keeps them: streaming/cache.py)."""
        return cls(
            d["type"], d["id"], d["text"], d["audio_s"], d["t_program"], d["t_recv"], d["mono_recv"]
        )


def parse_event(line: bytes, t_recv: float, mono_recv: float) -> Event:
    """One stdout line of the program as an Event; FramingError naming what is wrong."""
    try:
        d = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FramingError(f"event line is not JSON ({exc}): {line[:120]!r}") from None
    if not isinstance(d, dict) or d.get("type") not in EVENT_TYPES:
        raise FramingError(f"event line without a type of {EVENT_TYPES}: {line[:120]!r}")
    if d["type"] == "ready":
        return Event("ready", "", "", 0.0, _num(d.get("t")), t_recv, mono_recv)
    if not isinstance(d.get("id"), str) or not isinstance(d.get("text"), str):
        raise FramingError(f"event needs a string id and text: {line[:120]!r}")
    audio = _num(d.get("audio_s"))
    if audio is None or audio < 0:
        raise FramingError(f"event {d['id']}: audio_s must be a number >= 0: {line[:120]!r}")
    return Event(d["type"], d["id"], d["text"], audio, _num(d.get("t")), t_recv, mono_recv)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
