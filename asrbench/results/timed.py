"""Optional timed output (`hyp.timed.jsonl`, models/README.md): read, checked, shifted, written.

A program may write, beside hyp.tsv, one JSON line per utterance:

    {"id": "utt1", "segments": [{"start": 0.0, "end": 2.1, "text": "..."}],
     "words": [{"start": 0.1, "end": 0.4, "word": "..."}]}

times in seconds of the audio it was given, `words` optional; a segment or word may name its
`speaker` (a speaker-attributed hypothesis: the benchmark then reports cpWER and tcpWER of a
long-form cell, `scoring.meeting`). The platform trusts nothing: a
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
    if "speaker" in item and not isinstance(item["speaker"], str):
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
        return (
            "segments must be a list of {start, end, text[, speaker]} with 0 <= start <= end "
            "(speaker a string)"
        )
    if not isinstance(words, list) or not all(_times_ok(w, "word") for w in words):
        return (
            "words must be a list of {start, end, word[, speaker]} with 0 <= start <= end "
            "(speaker a string)"
        )
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
    out = {"start": float(item["start"]), "end": float(item["end"]), text_key: item[text_key]}
    if "speaker" in item:  # only where the model gave one: other lines keep their bytes
        out["speaker"] = item["speaker"]
    return out


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


# ----------------------------------------------------------------------------- as sessions


def _units(timed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A record's timed units: its segments, else its words (a model may give only words)."""
    return list(timed.get("segments") or timed.get("words") or [])


def speaker_attributed(hyps: Mapping[str, str], timed: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether every recording with a hypothesis has timed units that all name a speaker."""
    said = [rid for rid, text in hyps.items() if text.strip()]
    return bool(said) and all(
        _units(timed.get(rid, {}))
        and all(str(u.get("speaker", "")).strip() for u in _units(timed[rid]))
        for rid in said
    )


def hyp_segments(
    hyps: Mapping[str, str],
    timed: Mapping[str, Mapping[str, Any]],
    durations: Mapping[str, float],
) -> list[Segment]:
    """A long-form cell's hypothesis as session segments: the one conversion behind the
    benchmark's session metrics and `ops/export` of a cell, so both score the same thing.

    Speaker-attributed (`speaker_attributed`): the model's own segments (or words), each with
    its speaker and times. Otherwise one segment per recording holding its whole hypothesis
    (hyp.tsv's text, which timed output never changes), spanning the recording: session WER
    and ORC-WER then score exactly the text the cell's WER scores. A diarizer's cell (no text
    anywhere, speaker turns in every recording) gives its turns, without words: its export
    then carries who spoke when, scored by DER and JER as the cell is."""
    if not any(text.strip() for text in hyps.values()):
        return hyp_turns(timed, list(hyps)) or []
    if speaker_attributed(hyps, timed):
        return [
            Segment(rid, u["speaker"], u["start"], u["end"], u.get("text", u.get("word", "")))
            for rid in sorted(hyps)
            if hyps[rid].strip()  # an empty hypothesis has no turns, whatever its timed line
            for u in _units(timed[rid])
        ]
    return [
        Segment(rid, "", 0.0, float(durations[rid]), text)
        for rid, text in sorted(hyps.items())
        if text.strip()
    ]


def hyp_turns(timed: Mapping[str, Mapping[str, Any]], ids: Collection[str]) -> list[Segment] | None:
    """Who spoke when in the recordings `ids`: every timed unit as a speaker turn (its text,
    possibly empty: a diarizer recognises no words), for DER and JER; None unless every
    recording has a timed record, some have units and each unit names a speaker. A record
    without units is a recording in which the model heard no speech: all of it missed, not a
    reason to drop the cell's DER."""
    if not ids or any(rid not in timed for rid in ids):
        return None
    units = {rid: _units(timed[rid]) for rid in sorted(ids)}
    every = [u for us in units.values() for u in us]
    if not every or not all(str(u.get("speaker", "")).strip() for u in every):
        return None
    return [
        Segment(rid, u["speaker"], u["start"], u["end"], u.get("text", u.get("word", "")))
        for rid, us in units.items()
        for u in us
    ]


def hyp_words(
    hyps: Mapping[str, str],
    timed: Mapping[str, Mapping[str, Any]],
    segments: list[Segment],
) -> list[TimedWord]:
    """The cell's hypothesis as CTM words: the model's word times where it gave them for every
    recording, else each segment split among its words by MeetEval's `character_based` rule;
    CTM has no speaker (cpWER needs the SegLST)."""
    from scoring.meeting import character_based

    said = [rid for rid, text in sorted(hyps.items()) if text.strip()]
    if said and all(timed.get(rid, {}).get("words") for rid in said):
        spans = [
            (rid, w["start"], w["end"], word)
            for rid in said
            for w in timed[rid]["words"]
            for word in w["word"].split()
        ]
    else:
        spans = [
            (seg.session_id, a, b, word)
            for seg in segments
            for word, (a, b) in zip(
                seg.words.split(),
                character_based(seg.start_time, seg.end_time, seg.words.split()),
                strict=True,
            )
        ]
    # CTM is read back in file and time order (scoring.timed checks it): sorted, stable
    spans.sort(key=lambda x: (x[0], x[1]))
    return [TimedWord(rid, a, round(b - a, 9), word) for rid, a, b, word in spans]
