"""The session metrics of a long-form cell: what its hypothesis supports, by the one session
scorer (`scoring.meeting.score_supported`, as `ops/score --metric` scores timed files).

A hypothesis whose every timed unit names a speaker (models/README.md, "Timed output") gets
cpWER and tcpWER; any other gets ORC-WER and session WER. The hypothesis segments are those
`ops/export` writes for the cell (`asrbench.results.timed.hyp_segments`), the reference
segments the dataset's own (`ops/export DATASET --to seglst`), so `ops/score --metric` on the
two files gives the cell's numbers.

Who spoke when is scored too: where every reference turn and every timed unit of the
hypothesis names a speaker (a diarizer's card, or an ASR model combined with one), DER and JER
(`scoring.diarization`, with `ops/score --metric der`'s default collar) join them, keyed
`der` and `jer`, over the hypothesis' turns (`asrbench.results.timed.hyp_turns`: a diarizer's
turns carry no words, and still count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from asrbench.dataset import Dataset, Utterance
from asrbench.results.summary import stored_session_parts
from asrbench.results.timed import hyp_segments, hyp_turns
from scoring.diarization import score_diarization
from scoring.meeting import MeetingScore, score_supported
from scoring.scorer import Scorer


def session_metrics(
    scorer: Scorer | None,
    ds: Dataset,
    selection: Sequence[Utterance],
    hyps: Mapping[str, str],
    timed: Mapping[str, Mapping[str, Any]],
) -> dict[str, dict[str, Any]] | None:
    """summary.json's `session_metrics` of a long-form cell (None for any other cell): per
    metric, its `session` description and pooled `metrics`, or `skipped` with the reason."""
    if not ds.longform or scorer is None:
        return None
    ids = {u.id for u in selection}
    refs = [s for s in ds.segments if s.session_id in ids]
    durations = {u.id: u.duration for u in selection}
    segs = hyp_segments({k: v for k, v in hyps.items() if k in ids}, timed, durations)
    out = {
        metric: _entry(metric, scored)
        for metric, scored in score_supported(scorer, refs, segs).items()
    }
    turns = hyp_turns(timed, [i for i in ids if i in hyps])
    return {**out, **_diarization(scorer, refs, turns)}


def _diarization(
    scorer: Scorer, refs: Sequence[Any], turns: list[Any] | None
) -> dict[str, dict[str, Any]]:
    """`der` and `jer` entries (the `session` object of `ops/score --metric der|jer`, with its
    default collar and the scorer's bootstrap), or none where the reference or the hypothesis
    does not name a speaker on every turn."""
    if turns is None or not refs or not all(r.speaker.strip() for r in refs):
        return {}
    cfg = scorer.config
    scored = score_diarization(refs, turns, bootstrap=(cfg.bootstrap, cfg.confidence, cfg.seed))
    return {metric: scored.describe(metric) for metric in ("der", "jer")}


def _entry(metric: str, scored: MeetingScore | str) -> dict[str, Any]:
    if isinstance(scored, str):
        return {"metric": metric, "skipped": scored}
    return {**scored.describe(), "metrics": scored.metrics.to_dict()}


def session_line(metrics: Mapping[str, Mapping[str, Any]]) -> str:
    """The console line of a cell's session metrics: `sessions: cpWER 60.55% (...), ...`."""
    return "sessions: " + ", ".join(stored_session_parts(metrics))
