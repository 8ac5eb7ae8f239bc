"""The streaming contract's wire format: what the feed writes is what a program reads."""

from __future__ import annotations

import io
import json
import struct

import pytest

from asrbench.streaming import framing


def test_round_trip_of_two_utterances():
    pcm_a = struct.pack("<6h", 0, 1, -1, 32767, -32768, 7)
    pcm_b = struct.pack("<2h", 5, -5)
    buf = io.BytesIO()
    for uid, pcm in (("a", pcm_a), ("b\tü", pcm_b)):
        buf.write(framing.header(uid, 16000))
        for i in range(0, len(pcm), 4):  # frames of 2 samples: a short last one for a
            buf.write(framing.frame(pcm[i : i + 4]))
        buf.write(framing.END)
    buf.seek(0)
    first, second = framing.read_utterance(buf), framing.read_utterance(buf)
    assert first == ({"id": "a", "sample_rate": 16000}, pcm_a)
    assert second == ({"id": "b\tü", "sample_rate": 16000}, pcm_b)
    assert framing.read_utterance(buf) is None


def test_bad_frames_are_refused():
    for bad in (b"", b"\x00", b"\x00" * 3):
        with pytest.raises(framing.FramingError, match="even count"):
            framing.frame(bad)
    torn = io.BytesIO(framing.header("x", 16000) + struct.pack("<I", 10) + b"\x00" * 4)
    with pytest.raises(framing.FramingError, match="ended inside a frame"):
        framing.read_utterance(torn)


def test_events_parse_with_their_clocks():
    line = json.dumps({"id": "u1", "type": "partial", "text": "hi", "audio_s": 0.3, "t": 5.0})
    e = framing.parse_event(line.encode(), 5.002, 99.0)
    assert (e.type, e.uid, e.text, e.audio_s, e.t_program, e.t_recv, e.mono_recv) == (
        "partial", "u1", "hi", 0.3, 5.0, 5.002, 99.0,
    )  # fmt: skip
    assert framing.parse_event(b'{"type": "ready"}', 1.0, 2.0).type == "ready"
    for bad, why in (
        (b"not json", "not JSON"),
        (b'{"type": "word"}', "without a type"),
        (b'{"type": "final", "id": "u", "text": "x", "audio_s": -1}', "audio_s"),
        (b'{"type": "final", "id": 3, "text": "x", "audio_s": 1}', "string id"),
    ):
        with pytest.raises(framing.FramingError, match=why):
            framing.parse_event(bad, 0.0, 0.0)
