"""Optional timed output (`hyp.timed.jsonl`, models/README.md): read, checked, shifted, written.

A program may write, beside hyp.tsv, one JSON line per utterance:

    {"id": "utt1", "segments": [{"start": 0.0, "end": 2.1, "text": "..."}],
     "words": [{"start": 0.1, "end": 0.4, "word": "..."}]}

times in seconds of the audio it was given, `words` optional. The platform trusts nothing: a
line that is not such an object (bad JSON, a time that is not a finite number >= 0, an end
before its start, an ID it was not given) is a contract problem, reported and ignored; a torn
last line is dropped; an ID written again replaces the earlier line (a program resumed after a
crash writes the utterance again). Timed output never changes a hypothesis or a score.

The dict is the file's record, carried as it is from the program to the cell's copy (so the
file's bytes never move); whatever analyses it reads it as the one data model of timed
transcripts, `scoring.segments` (`Segment`, `TimedWord`), through `as_transcript`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from asrbench.fsio import atomic_write_text
from scoring.segments import Segment, TimedWord

TIMED_FILE = "hyp.timed.jsonl"


def _times_ok(item: Any, text_key: str) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get(text_key), str):
        return False
    a, b = item.get("start"), item.get("end")
    if not all(
        isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t >= 0
        for t in (a, b)
    ):
        return False
    return float(b) >= float(a)  # type: ignore[arg-type]


def check_line(obj: Any) -> str | None:
    """Why one parsed line is not a timed hypothesis, or None."""
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        return "not an object with an id"
    segments, words = obj.get("segments", []), obj.get("words", [])
    if not isinstance(segments, list) or not all(_times_ok(s, "text") for s in segments):
        return "segments must be a list of {start, end, text} with 0 <= start <= end"
    if not isinstance(words, list) or not all(_times_ok(w, "word") for w in words):
        return "words must be a list of {start, end, word} with 0 <= start <= end"
    return None


def read_hyp_timed(
    path: Path, given: Collection[str] | None = None
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The timed hypotheses of one file by ID (the last line per ID), and the problems: the one
    reader of `hyp.timed.jsonl`, for the benchmark and the report alike (the timed *files* of a
    dataset or `ops/score`, STM/CTM/SegLST/RTTM, are `scoring.timed.read_timed`'s)."""
    if not Path(path).is_file():
        return {}, []
    out: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    lines = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")[:-1]
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{TIMED_FILE} line {n}: not JSON ({exc.msg}); ignored")
            continue
        why = check_line(obj)
        if why is None and given is not None and obj["id"] not in given:
            why = f"ID {obj['id']!r} was not in the wav list given to the program"
        if why:
            problems.append(f"{TIMED_FILE} line {n}: {why}; ignored")
            continue
        out[obj["id"]] = {
            "id": obj["id"],
            "segments": [_item(s, "text") for s in obj.get("segments", [])],
            "words": [_item(w, "word") for w in obj.get("words", [])],
        }
    return out, problems


def _item(item: dict[str, Any], text_key: str) -> dict[str, Any]:
    return {"start": float(item["start"]), "end": float(item["end"]), text_key: item[text_key]}


def as_transcript(
    record: Mapping[str, Any], session_id: str
) -> tuple[list[Segment], list[TimedWord]]:
    """One checked record as timed-transcript types: its segments and its words, in
    `session_id`, speaker unknown ("")."""
    segments = [
        Segment(session_id, "", float(g["start"]), float(g["end"]), str(g.get("text") or ""))
        for g in record.get("segments") or []
    ]
    words = [_word(w, session_id) for w in record.get("words") or []]
    return segments, words


def _word(item: Mapping[str, Any], session_id: str) -> TimedWord:
    start = float(item["start"])
    return TimedWord(session_id, start, float(item["end"]) - start, str(item["word"]))


def shifted(items: list[dict[str, Any]], offset: float) -> list[dict[str, Any]]:
    """Items with times moved by `offset` seconds (a piece's start in its recording)."""
    return [
        {**i, "start": round(i["start"] + offset, 3), "end": round(i["end"] + offset, 3)}
        for i in items
    ]


def write_hyp_timed(path: Path, timed: Mapping[str, dict[str, Any]]) -> None:
    """One JSON line per ID, sorted by ID, keys sorted (byte-stable), written atomically."""
    lines = [json.dumps(timed[k], ensure_ascii=False, sort_keys=True) for k in sorted(timed)]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
