"""OpenAI's transcription `response_format`s: json, text, verbose_json, srt, vtt.

The model contract gives one text per utterance, with no timings inside it, so the timed
formats carry one segment spanning the whole upload (start 0, end = its duration); the
per-token fields of `verbose_json` segments that the contract does not give (`tokens`,
`avg_logprob`, `compression_ratio`, `no_speech_prob`) are present, as the schema asks, with
neutral values (empty list, 0.0).
"""

from __future__ import annotations

import json
from typing import Any

FORMATS = ("json", "text", "verbose_json", "srt", "vtt")


def _clock(seconds: float, sep: str) -> str:
    ms = int(round(seconds * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def render(fmt: str, text: str, duration: float, language: str) -> tuple[str, str]:
    """(content type, body) of the answer in `fmt`."""
    if fmt == "json":
        return "application/json", json.dumps({"text": text})
    if fmt == "text":
        return "text/plain; charset=utf-8", text + "\n"
    if fmt == "srt":
        return (
            "application/x-subrip; charset=utf-8",
            f"1\n{_clock(0, ',')} --> {_clock(duration, ',')}\n{text}\n\n",
        )
    if fmt == "vtt":
        return (
            "text/vtt; charset=utf-8",
            f"WEBVTT\n\n{_clock(0, '.')} --> {_clock(duration, '.')}\n{text}\n\n",
        )
    if fmt == "verbose_json":
        segment: dict[str, Any] = {
            "id": 0,
            "seek": 0,
            "start": 0.0,
            "end": round(duration, 3),
            "text": text,
            "tokens": [],
            "temperature": 0.0,
            "avg_logprob": 0.0,
            "compression_ratio": 0.0,
            "no_speech_prob": 0.0,
        }
        return "application/json", json.dumps(
            {
                "task": "transcribe",
                "language": language,
                "duration": round(duration, 3),
                "text": text,
                "segments": [segment],
            }
        )
    raise ValueError(fmt)
