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

A dataset that declares `session_groups:` (metadata columns, e.g. meeting_overlap_en's
OVERLAP_BIN) gets the same metrics once more per value of each column (`session_groups`),
each over that value's sessions only, so its intervals resample those sessions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from asrbench.dataset import Dataset, Utterance
from asrbench.results.summary import session_rate, stored_session_parts
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


def session_groups(
    scorer: Scorer | None,
    ds: Dataset,
    selection: Sequence[Utterance],
    hyps: Mapping[str, str],
    timed: Mapping[str, Mapping[str, Any]],
) -> dict[str, list[dict[str, Any]]] | None:
    """summary.json's `session_groups` (None where the dataset declares none): per declared
    column, its values in the selection in order (numbers numerically), each with its
    sessions and their `session_metrics`."""
    columns = ds.meta.get("session_groups") or []
    if not columns or not ds.longform or scorer is None:
        return None
    out: dict[str, list[dict[str, Any]]] = {}
    for column in columns:
        by: dict[str, list[Utterance]] = {}
        for u in selection:
            by.setdefault(u.extra.get(column, ""), []).append(u)
        # a list, not a mapping: summary.json's keys are stored sorted, and "10" < "5"
        out[column] = [
            {
                "value": value,
                "sessions": [u.id for u in utts],
                "metrics": session_metrics(scorer, ds, utts, hyps, timed),
            }
            for value, utts in sorted(by.items(), key=lambda kv: _value_order(kv[0]))
        ]
    return out


def _value_order(value: str) -> tuple[int, float, str]:
    """Numbers in numeric order (5 before 10), then text."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


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


def group_lines(groups: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """One console line per group: `OVERLAP_BIN 5 (3 sessions): DER 12.00% [8.10, 15.20], ...`
    (the rates with their intervals over the group's sessions; a skipped metric said so)."""
    lines = []
    for column, values in groups.items():
        for g in values:
            n = len(g["sessions"])
            parts = ", ".join(_rate_part(m, e) for m, e in g["metrics"].items())
            lines.append(f"{column} {g['value']} ({n} session{'s' * (n != 1)}): {parts}")
    return lines


def _rate_part(metric: str, entry: Mapping[str, Any]) -> str:
    got = session_rate(metric, entry)
    if got is None:
        return f"{metric} not scored"
    return f"{got.label} {_pct(got.rate)} [{_pct(got.low)}, {_pct(got.high)}]"


def _pct(x: float | None) -> str:
    return f"{100 * x:.2f}%" if x is not None else "-"
