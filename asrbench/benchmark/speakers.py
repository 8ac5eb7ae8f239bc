"""Speakers for an ASR model's words: `-m ASR+DIARIZER`, the words of one and the turns of the
other, joined by time (docs/LONGFORM.md, "An ASR model with a diarizer").

Both models run on the same recordings, each as its own cached stage (its own hypothesis cache
entry, as `-m ASR` and `-m DIARIZER` alone would: a rerun with another diarizer reuses the
ASR's hypotheses). The ASR's timed output gives the words: its word times where it gave them
for the recording, else each segment's words at times estimated by MeetEval's
`character_based` rule (`scoring.meeting`, as `ops/export --to ctm` estimates them): a Whisper
segment may be a whole 30-s window, and two speakers' words inside it must not share one
speaker (on mini_meeting_en, whisper_tiny_en: cpWER 40.6 % by estimated words, 64.2 % by whole
segments). Each word takes the speaker of the diarizer's turn that overlaps it longest (ties:
the earlier turn); a word no turn overlaps takes the nearest turn's speaker, and in a
recording where the diarizer found no speech every word is `UNATTRIBUTED`. Runs of words of
one speaker become that speaker's segments, so the cell's hypothesis names a speaker on every
segment and its session metrics are cpWER and tcpWER (and DER/JER over those segments); the
`words` kept are the model's own (none where it gave none). hyp.tsv's text is the ASR's,
unchanged: the cell's WER is the ASR's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring.meeting import character_based

RULE = "max-overlap-v1"  # part of a combined cell's cache key: a new rule is a new key
UNATTRIBUTED = "unattributed"


def _turns(record: Mapping[str, Any]) -> list[tuple[float, float, str]]:
    units = record.get("segments") or record.get("words") or []
    return sorted(
        (float(u["start"]), float(u["end"]), str(u["speaker"]))
        for u in units
        if str(u.get("speaker", "")).strip()
    )


def speaker_at(start: float, end: float, turns: Sequence[tuple[float, float, str]]) -> str:
    """The speaker of the turn overlapping [start, end] longest, else of the nearest turn."""
    if not turns:
        return UNATTRIBUTED
    best, best_overlap = turns[0][2], 0.0
    for a, b, speaker in turns:
        overlap = min(end, b) - max(start, a)
        if overlap > best_overlap:
            best, best_overlap = speaker, overlap
    if best_overlap > 0:
        return best
    gap = [(max(a - end, start - b, 0.0), n) for n, (a, b, _) in enumerate(turns)]
    return turns[min(gap)[1]][2]


def _grouped(words: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive words of one speaker as one segment."""
    out: list[dict[str, Any]] = []
    for w in words:
        if out and out[-1]["speaker"] == w["speaker"]:
            out[-1]["end"] = max(out[-1]["end"], w["end"])
            out[-1]["text"] += " " + w["word"]
        else:
            out.append({"start": w["start"], "end": w["end"], "text": w["word"]})
            out[-1]["speaker"] = w["speaker"]
    return out


def _estimated_words(segments: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each segment's words at the times MeetEval's `character_based` rule gives them."""
    out = []
    for seg in segments:
        words = str(seg["text"]).split()
        times = character_based(float(seg["start"]), float(seg["end"]), words)
        out += [{"start": a, "end": b, "word": w} for w, (a, b) in zip(words, times, strict=True)]
    return out


def attribute(asr: Mapping[str, Any], diarized: Mapping[str, Any]) -> dict[str, Any]:
    """One recording's ASR timed record with a speaker on every segment (and word)."""
    turns = _turns(diarized)
    own = list(asr.get("words") or [])
    words = [
        {**w, "speaker": speaker_at(float(w["start"]), float(w["end"]), turns)}
        for w in own or _estimated_words(asr.get("segments") or [])
    ]
    return {**asr, "segments": _grouped(words), "words": words if own else []}


def attribute_all(
    asr: Mapping[str, Mapping[str, Any]],
    diarized: Mapping[str, Mapping[str, Any]],
    ids: Sequence[str],
    diarizer: str,
) -> dict[str, dict[str, Any]]:
    """`attribute` for every recording of `ids` the ASR gave timed output for; each record
    names the `diarizer` its speakers come from (`speakers`)."""
    return {
        rid: {**attribute(asr[rid], diarized.get(rid, {})), "speakers": diarizer}
        for rid in ids
        if rid in asr
    }
