"""Who spoke when, per recording of a long-form cell, for the report's speaker timelines.

Where every reference turn and every timed unit of the hypothesis names a speaker (a diarizer's
cell, an ASR model combined with one: the cells that get DER and JER, asrbench/benchmark/
sessions.py), the cell stores `speakers.json` (`SpeakersRecord`): per recording, both sides'
turns (each speaker's turns merged where they touch or overlap, as DER scores them), the
one-to-one mapping of hypothesis speakers to reference speakers that DER uses (Hungarian,
`scoring.diarization`), and the recording's DER, JER and cpWER. The inputs are those of the
cell's session metrics (the dataset's segments, `hyp_turns`, `hyp_segments`, the cell's scorer
options), so the recordings' DER parts and cpWER counts add up to summary.json's pooled ones.
Computed when the benchmark writes the cell (`derived.derive`) or by `ops/report --backfill`;
the report only draws it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from asrbench.results.records import SpeakersRecord
from asrbench.results.timed import TIMED_FILE, hyp_segments, hyp_turns, read_hyp_timed
from scoring.meeting import SESSION_METRICS

# the registry's speaker-attributed metric without a collar: cpWER
CPWER = next(k for k, m in SESSION_METRICS.items() if m.speakers and not m.collar)

# a speakers.json recording's keys (report.speakers draws them)
SPEAKER_KEYS = (
    "id",
    "duration",
    "ref",
    "hyp",
    "mapping",
    "der",
    "jer",
    "missed",
    "false_alarm",
    "confusion",
    "total",
    "ref_speakers",
    "hyp_speakers",
    CPWER,
)


def _turn_rows(segments: Sequence[Any]) -> list[list[Any]]:
    """[speaker, start, end] per merged turn, by start then speaker (DER's view of the turns)."""
    from scoring.diarization import merge_turns

    rows = [
        [spk, float(a), float(b)] for spk, spans in merge_turns(segments).items() for a, b in spans
    ]
    return sorted(rows, key=lambda r: (r[1], r[2], r[0]))


def _cpwer(scorer: Any, refs: list, segs: list) -> dict[str, dict[str, Any]]:
    """Each recording's cpWER counts ({id: errors, n_ref, sub, del, ins, rate}), or {} where the
    hypothesis does not support cpWER (or it refuses it: more than 20 speakers)."""
    from scoring.errors import ScoringError
    from scoring.meeting import score_sessions, supported_metrics

    if CPWER not in supported_metrics(segs, True):
        return {}
    try:
        scored = score_sessions(scorer, refs, segs, CPWER)
    except ScoringError:
        return {}  # summary.json's `skipped` says why
    return {
        s.session_id: {
            "errors": s.errors,
            "n_ref": s.n_ref,
            "sub": s.sub,
            "del": s.dele,
            "ins": s.ins,
            "rate": s.errors / s.n_ref if s.n_ref else None,
        }
        for s in scored.sessions
    }


def _recording(
    rid: str, refs: list, turns: list, session: Any, cpwer: dict | None, duration: float | None
) -> dict[str, Any]:
    ref_rows, hyp_rows = _turn_rows(refs), _turn_rows(turns)
    end = max([duration or 0.0, *(r[2] for r in ref_rows), *(h[2] for h in hyp_rows)])
    return {
        "id": rid,
        "duration": end,
        "ref": ref_rows,
        "hyp": hyp_rows,
        "mapping": [list(p) for p in session.mapping],
        "der": session.der,
        "jer": session.jer,
        "missed": session.missed,
        "false_alarm": session.false_alarm,
        "confusion": session.confusion,
        "total": session.total,
        "ref_speakers": session.ref_speakers,
        "hyp_speakers": session.hyp_speakers,
        CPWER: cpwer,
    }


def speaker_record(
    folder: Path,
    utts: list[dict[str, Any]],
    scorer: Any,
    segments: Mapping[str, list],
) -> SpeakersRecord | None:
    """The speakers.json of a long-form cell in `folder` (its utterances.jsonl records, the
    scorer of its options, the dataset's reference segments by recording), or None where the
    reference or the hypothesis does not name a speaker on every turn (no DER to draw)."""
    from scoring.diarization import DEFAULT_COLLAR, score_diarization

    timed, _ = read_hyp_timed(Path(folder) / TIMED_FILE)
    hyps = {str(u["id"]): u["hyp"] for u in utts if u.get("hyp") is not None}
    ids = sorted(i for i in hyps if i in segments)
    refs = [s for i in ids for s in segments[i]]
    turns = hyp_turns(timed, ids)
    if not ids or turns is None or not all(r.speaker.strip() for r in refs):
        return None
    durations = {str(u["id"]): u.get("duration") or 0.0 for u in utts}
    segs = hyp_segments({i: hyps[i] for i in ids}, timed, durations)
    cpwer = _cpwer(scorer, refs, segs)
    # the session metrics' collar; no intervals: one recording is one bootstrap unit
    scored = score_diarization(refs, turns, collar=DEFAULT_COLLAR, bootstrap=(0, 0.95, 0))
    by_turns: dict[str, list] = {}
    for t in turns:
        by_turns.setdefault(t.session_id, []).append(t)
    out = [
        _recording(
            s.session_id,
            segments[s.session_id],
            by_turns.get(s.session_id, []),
            s,
            cpwer.get(s.session_id),
            durations.get(s.session_id),
        )
        for s in sorted(scored.sessions, key=lambda s: s.session_id)
    ]
    return SpeakersRecord(recordings=out, note=None)
