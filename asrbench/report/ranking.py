"""Per-dataset ranking with significance groups from paired bootstraps over utterances.

Models are ordered by TER. Every pair is compared with `scoring.stats.paired_bootstrap` (the
scorer's own paired test: the same utterances resampled for both systems) on the per-utterance
error counts stored in `utterances.jsonl`. A difference is significant when its two-sided p-value
is below 1 - level. As in the WMT evaluation campaigns, model i's rank range is

    1 + (number of models significantly better than i)  ..  N - (number significantly worse)

shown as "1" when both ends agree and "1-2" otherwise: models whose differences are not
significant share a range. The tests are pairwise and uncorrected for multiplicity (as in WMT);
the p-values are shown so a reader can apply a correction.

Only reported full results on the same utterances (same dataset hash and selection) are
compared; any other cell of the dataset is listed as not ranked with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from asrbench.report.collect import Cell
from scoring.stats import paired_bootstrap


@dataclass(frozen=True)
class Ranking:
    """Ranks of one dataset."""

    order: list[str]  # ranked models, best TER first
    rank: dict[str, int]  # plain rank by TER (ties share the lower rank), as ops/leaderboard
    group: dict[str, str]  # significance rank range: "1", "1-2", ...
    pairs: dict[str, dict[str, dict[str, Any]]]  # a -> b -> paired bootstrap result
    not_ranked: dict[str, str]  # model -> why
    level: float
    reps: int


def _arrays(cell: Cell, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    by_id = {u["id"]: u for u in cell.utterances() or []}
    err = np.array([by_id[i]["sub"] + by_id[i]["ins"] + by_id[i]["del"] for i in ids],
                   dtype=np.int64)
    den = np.array([by_id[i]["n_ref"] for i in ids], dtype=np.int64)
    return err, den


def rank_dataset(cells: list[Cell], level: float = 0.95, reps: int = 1000,
                 seed: int = 0) -> Ranking:
    """Ranks, significance groups and pairwise tests for the cells of one dataset."""
    not_ranked: dict[str, str] = {}
    eligible: list[Cell] = []
    for c in sorted(cells, key=lambda c: c.model):
        m = c.summary.metrics
        if c.kind != "reported":
            not_ranked[c.model] = (f"partial: a sample of {c.summary.selection.n_utts} of "
                                   f"{c.summary.selection.n_dataset_utts} utterances")
        elif m is None or m.ter is None:
            not_ranked[c.model] = "no reference text: hypotheses only, no error rate"
        elif c.utterances() is None:
            not_ranked[c.model] = f"per-utterance results unusable ({c.utts_problem})"
        else:
            eligible.append(c)
    # Only cells scored on the same utterances can be paired: the largest such set is ranked.
    parts: dict[tuple, list[Cell]] = {}
    for c in eligible:
        parts.setdefault((c.summary.dataset_hash, c.summary.selection.ids_sha256), []).append(c)
    ranked: list[Cell] = []
    if parts:
        best = max(sorted(parts), key=lambda k: len(parts[k]))
        ranked = parts[best]
        for k, group in parts.items():
            if k != best:
                for c in group:
                    not_ranked[c.model] = (f"scored on other dataset content or utterances "
                                           f"(dataset hash {c.summary.dataset_hash}) than the "
                                           "ranked models: not comparable")
    ranked.sort(key=lambda c: (c.summary.metrics.ter, c.model))
    order = [c.model for c in ranked]
    ters = [c.summary.metrics.ter for c in ranked]
    rank = {c.model: 1 + ters.index(c.summary.metrics.ter) for c in ranked}
    pairs: dict[str, dict[str, dict[str, Any]]] = {m: {} for m in order}
    better = {m: 0 for m in order}
    worse = {m: 0 for m in order}
    if len(ranked) > 1:
        ids = [u["id"] for u in ranked[0].utterances() or []]
        arrays = {c.model: _arrays(c, ids) for c in ranked}
        alpha = 1 - level
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                ea, den = arrays[a]
                eb, _ = arrays[b]
                r = paired_bootstrap(ea, eb, den, reps=reps, level=level, seed=seed)
                r["significant"] = bool(r["p_value"] < alpha)
                pairs[a][b] = r
                flipped = dict(r, delta_ter=-r["delta_ter"], low=-r["high"], high=-r["low"])
                pairs[b][a] = flipped
                if r["significant"]:
                    if r["delta_ter"] < 0:
                        better[b] += 1
                        worse[a] += 1
                    elif r["delta_ter"] > 0:
                        better[a] += 1
                        worse[b] += 1
    n = len(order)
    group = {}
    for m in order:
        lo, hi = 1 + better[m], n - worse[m]
        group[m] = str(lo) if lo == hi else f"{lo}-{hi}"
    return Ranking(order, rank, group, pairs, not_ranked, level, reps)
