"""Scorer ablation: TER and mTER after each normalisation step, applied cumulatively.

SpeechColab's Table VII for any stored cell: the stored raw reference and raw hypothesis of
every utterance (`utterances.jsonl`) are re-scored by the platform's scorer (`get_scorer`) with
the steps switched on one at a time, in the order raw, +CASE, +PUNC, +ITJ, +UK-US, +NSW, +DAE
(any other step the scorer can switch, such as NONSPEECH or OPTIONAL, goes before +DAE).
This scores stored hypotheses; no model runs. Steps the cell's own scorer did not use are
skipped (shown as such), so the last row is the cell's configuration and is checked against the
stored counts: a difference means the scorer code changed since the cell was written.

All cells of one dataset are scored together (one `score()` call per step, IDs prefixed by the
model), so the shared references are normalised once. Per utterance, the step at which its
reference or hypothesis tokens changed is recorded: the cell page shows which steps applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asrbench.report.collect import Cell
from scoring.metrics import Metrics, pooled

# (label, ScorerConfig flag, step name in summary.scorer.steps)
LADDER: list[tuple[str, str, str]] = [
    ("+CASE", "case", "CASE"),
    ("+PUNC", "punc", "PUNC"),
    ("+ITJ", "itj", "ITJ"),
    ("+UK-US", "ukus", "UK-US"),
    ("+NSW", "nsw", "NSW"),
    ("+DAE", "dae", "DAE"),
]
# boolean ScorerConfig fields that are input conventions, not pipeline steps
NOT_STEPS = {"ignore_id_case"}
# fields whose step is named otherwise in summary.scorer.steps
STEP_NAMES = {"alternations": "ALTERNATION", "fragments": "FRAGMENT"}
SEP = "\x1f"  # model index / utterance ID separator (a control character: not in IDs)


def ladder() -> list[tuple[str, str, str]]:
    """LADDER, with any other step the scorer can switch (a boolean ScorerConfig field, e.g.
    NONSPEECH, OPTIONAL) added before +DAE, so that "raw" has every step off."""
    from dataclasses import fields

    from scoring import ScorerConfig

    known = {f for _, f, _ in LADDER} | NOT_STEPS
    extra = [
        (
            f"+{STEP_NAMES.get(f.name, f.name.upper())}",
            f.name,
            STEP_NAMES.get(f.name, f.name.upper()),
        )
        for f in fields(ScorerConfig)
        if f.type in ("bool", bool) and f.name not in known
    ]
    return LADDER[:-1] + extra + LADDER[-1:]


def _has(steps: set[str], name: str) -> bool:
    """A step is on under its name or a variant of it (NSW-num2words counts as NSW)."""
    return name in steps or any(s.startswith(f"{name}-") for s in steps)


@dataclass
class CellAblation:
    """One cell's ladder: a row per stage, and which steps changed each utterance."""

    rows: list[dict[str, Any]]  # stage, applied (in this cell's scorer), ter, mter, sub, ...
    matches_stored: bool | None
    note: str | None
    applied: dict[str, list[str]]  # utterance ID -> step names that changed its tokens


def _config(cell: Cell) -> tuple[str, dict[str, Any], set[str]]:
    """(language, the cell's scorer options other than the step flags, enabled flags)."""
    sc = cell.summary.scorer or {}
    lang = str(sc.get("lang") or "en")
    steps = set(sc.get("steps") or [])
    enabled = {flag for _, flag, name in ladder() if _has(steps, name)}
    flags = {f for _, f, _ in ladder()}
    run_opts = cell.run.scorer_options if cell.run else {}
    base = {k: v for k, v in run_opts.items() if k not in flags and k != "bootstrap"}
    return lang, base, enabled


def _stored(c: Cell) -> Metrics:
    """A cell's stored metrics: `ablate_dataset` groups only the cells that have them."""
    assert c.summary.metrics is not None
    return c.summary.metrics


def ablate_dataset(cells: list[Cell]) -> dict[str, CellAblation]:
    """The ladder for every cell of one dataset (cells with unusable utterances are skipped).

    Cells whose scorers differ (language, options, enabled steps) are scored in separate
    groups, each with its own ladder.
    """
    from asrbench.scorers import get_scorer

    groups: dict[str, list[Cell]] = {}
    for c in cells:
        if c.summary.metrics is None or c.utterances() is None:
            continue
        lang, base, enabled = _config(c)
        key = repr((lang, sorted(base.items()), sorted(enabled)))
        groups.setdefault(key, []).append(c)
    out: dict[str, CellAblation] = {}
    for group in groups.values():
        lang, base, enabled = _config(group[0])
        refs: dict[str, str] = {}
        hyps: dict[str, str] = {}
        owners: list[tuple[int, str]] = []  # (cell index, utterance ID), in scoring order
        bounds = [0]
        for i, c in enumerate(group):
            for u in c.utterances() or []:
                k = f"{i}{SEP}{u['id']}"
                refs[k] = u.get("ref") or ""
                if u.get("hyp") is not None:
                    hyps[k] = u["hyp"]
                owners.append((i, u["id"]))
            bounds.append(len(owners))
        steps = ladder()
        flags = [f for _, f, _ in steps]
        stages: list[tuple[str, str | None, bool]] = [("raw", None, True)]
        stages += [(label, flag, flag in enabled) for label, flag, _ in steps]
        on: set[str] = set()
        prev: list[tuple[list[str], list[str]]] = []
        applied: dict[str, dict[str, list[str]]] = {c.model: {} for c in group}
        per_cell_rows: dict[str, list[dict[str, Any]]] = {c.model: [] for c in group}
        last: dict[str, Any] = {}
        for label, flag, active in stages:
            if flag is not None and not active:
                for c in group:
                    per_cell_rows[c.model].append({"stage": label, "applied": False})
                continue
            if flag is not None:
                on.add(flag)
            opts = {**base, **{f: f in on for f in flags}, "bootstrap": 0}
            utts = get_scorer(lang, opts).score(refs, hyps).utterances
            if prev:  # the utterances whose tokens this step changed
                name = label[1:]
                for (i, uid), scored, (pr, ph) in zip(owners, utts, prev, strict=True):
                    if scored.ref != pr or scored.hyp != ph:
                        applied[group[i].model].setdefault(uid, []).append(name)
            prev = [(u.ref, u.hyp) for u in utts]
            for i, c in enumerate(group):
                m = pooled(utts[bounds[i] : bounds[i + 1]], _stored(c).unit)
                per_cell_rows[c.model].append(
                    {
                        "stage": label,
                        "applied": True,
                        "ter": m.ter,
                        "mter": m.mter,
                        "sub": m.sub,
                        "ins": m.ins,
                        "del": m.dele,
                        "n_ref": m.n_ref,
                        "n_hyp": m.n_hyp,
                    }
                )
                last[c.model] = m
        for c in group:
            stored = _stored(c)
            m = last[c.model]
            same = (m.sub, m.ins, m.dele, m.n_ref) == (
                stored.sub,
                stored.ins,
                stored.dele,
                stored.n_ref,
            )
            note = None
            if not same:
                note = (
                    f"the last step gives {m.sub}/{m.ins}/{m.dele} sub/ins/del over "
                    f"{m.n_ref} words; the stored result has {stored.sub}/{stored.ins}/"
                    f"{stored.dele} over {stored.n_ref}: the scorer's code or data changed "
                    f"since the cell was written (stored code {c.summary.scorer.get('code')})"
                )
            out[c.model] = CellAblation(per_cell_rows[c.model], same, note, applied[c.model])
    return out
