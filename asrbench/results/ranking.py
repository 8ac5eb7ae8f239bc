"""The one ranking rule, used by `ops/leaderboard` and the HTML report alike.

**What is comparable.** Per dataset, the shown cells (`store.scan`) with an error rate are
grouped by what they were scored on: the dataset's content hash and the utterance selection.
One group is ranked: full results before samples (a leaderboard is about full test sets), then
the group with most models, then the smaller key (deterministic). Every other cell is listed as
not ranked, with the reason. Samples of one selection (`--max-utts N --seed S` for several
models) share a key and are ranked side by side when no full result exists; they stay marked
as samples.

**Rank.** 1 + the number of ranked models with a strictly lower TER (ties share the lower rank).

**Significance** (the report; `reps` > 0). Every pair is compared with
`scoring.stats.paired_bootstrap` (the same utterances resampled for both systems) on the
per-utterance error counts in `utterances.jsonl`; a difference is significant when its two-sided
p-value is below 1 - level. As in the WMT campaigns, model i's rank range is
`1 + (#significantly better) .. N - (#significantly worse)`, shown as "1" when both ends agree.
The tests are pairwise and uncorrected for multiplicity (as in WMT); the p-values are shown.

**Shared rank** (`Ranking.shared`): 1 + the number of ranked models with a lower TER that this
model is not shown to equal: where both were tested, only those the paired bootstrap finds
significantly better (the lower end of the range above); otherwise every lower TER counts.
Without tests it is the rank. Two models the tests cannot tell apart share the better rank.

**Mean rank.** The mean of the shared ranks, only over the datasets on which every model that
has any rank is ranked (the common datasets), so a model ranked on one easy dataset never sits
above one ranked on two; the datasets used are returned with it. With no common dataset there
is no mean rank. A mean rank of 1.0 against 2.0 thus says the tests separated the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from asrbench.results.store import StoredCell
from scoring.stats import paired_bootstrap

MEAN_RANK_DIGITS = 2
DEFAULT_REPS = 1000  # paired-bootstrap replicates of ops/leaderboard and ops/report
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Ranking:
    """Ranks of one dataset."""

    order: list[str]  # ranked models, best TER first
    rank: dict[str, int]  # plain rank by TER (ties share the lower rank)
    group: dict[str, str]  # significance rank range ("1", "1-2"); empty without bootstraps
    pairs: dict[str, dict[str, dict[str, Any]]]  # a -> b -> paired bootstrap result
    not_ranked: dict[str, str]  # model -> why
    level: float
    reps: int
    sample: bool = False  # the ranked cells are samples of one selection
    untested: dict[str, str] | None = None  # ranked model -> why it has no significance range

    @property
    def shared(self) -> dict[str, int]:
        """The shared rank of each ranked model (the module doc): a lower TER the paired
        bootstrap does not find significant is no rank lost."""
        return {
            m: 1
            + sum(
                1
                for x in self.order
                if self.rank[x] < self.rank[m]
                and not (x in self.pairs.get(m, {}) and not self.pairs[m][x]["significant"])
            )
            for m in self.order
        }

    @property
    def tested(self) -> list[str]:
        """Ranked models with pairwise tests (per-utterance results usable), best first."""
        return [m for m in self.order if m not in (self.untested or {})]


@dataclass(frozen=True)
class MeanRanks:
    """Mean shared rank per model over the datasets every ranked model has."""

    value: dict[str, float | None]
    datasets: list[str]  # the common datasets the means are taken over
    n_ranked: dict[str, int]  # datasets on which each model is ranked

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean_rank": self.value,
            "mean_rank_datasets": self.datasets,
            "n_ranked": self.n_ranked,
        }


def _arrays(cell: StoredCell, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    by_id = {u["id"]: u for u in cell.utterances() or []}
    err = np.array(
        [by_id[i]["sub"] + by_id[i]["ins"] + by_id[i]["del"] for i in ids], dtype=np.int64
    )
    den = np.array([by_id[i]["n_ref"] for i in ids], dtype=np.int64)
    return err, den


def _choose(cells: list[StoredCell]) -> tuple[list[StoredCell], dict[str, str], bool]:
    """(ranked cells, not ranked model -> why, ranked cells are samples)."""
    not_ranked: dict[str, str] = {}
    groups: dict[tuple, list[StoredCell]] = {}
    for c in sorted(cells, key=lambda c: c.model):
        m = c.summary.metrics
        if m is None or m.ter is None:
            not_ranked[c.model] = "no reference text: hypotheses only, no error rate"
        elif c.kind not in ("reported", "sample"):
            not_ranked[c.model] = "a variant stored beside the reported result"
        else:
            groups.setdefault((c.is_sample, *map(str, c.comparable_on)), []).append(c)
    if not groups:
        return [], not_ranked, False
    best = min(groups, key=lambda k: (k[0], -len(groups[k]), k))
    for k, group in groups.items():
        if k == best:
            continue
        for c in group:
            s = c.summary.selection
            if c.is_sample and not best[0]:
                why = (
                    f"partial: a sample of {s.n_utts} of {s.n_dataset_utts} utterances "
                    "(only full results are ranked where there are any)"
                )
            elif c.is_sample:
                why = (
                    f"a sample of other utterances ({s.n_utts} of {s.n_dataset_utts}) than "
                    "the ranked samples: not comparable"
                )
            else:
                why = (
                    f"scored on other dataset content or utterances (dataset hash "
                    f"{c.summary.dataset_hash}) than the ranked models: not comparable"
                )
            not_ranked[c.model] = why
    return groups[best], not_ranked, best[0]


def _ter(c: StoredCell) -> float:
    """The TER of a cell `_choose` ranked (it ranks only cells that have one)."""
    m = c.summary.metrics
    assert m is not None and m.ter is not None, c.folder
    return m.ter


def rank_dataset(
    cells: list[StoredCell], level: float = 0.95, reps: int = 0, seed: int = 0
) -> Ranking:
    """Ranks (and, with reps > 0, significance groups and pairwise tests) for one dataset."""
    ranked, not_ranked, sample = _choose(cells)
    ranked = sorted(ranked, key=lambda c: (_ter(c), c.model))
    order = [c.model for c in ranked]
    ters = [_ter(c) for c in ranked]
    rank = {c.model: 1 + ters.index(_ter(c)) for c in ranked}
    pairs: dict[str, dict[str, dict[str, Any]]] = {m: {} for m in order}
    group: dict[str, str] = {}
    if reps <= 0:
        return Ranking(order, rank, group, pairs, not_ranked, level, reps, sample)
    testable = [c for c in ranked if c.utterances() is not None]
    untested = {
        c.model: f"ranked by TER, no significance test: per-utterance results "
        f"unusable ({c.utts_problem})"
        for c in ranked
        if c.utterances() is None
    }
    better = {c.model: 0 for c in testable}
    worse = {c.model: 0 for c in testable}
    if len(testable) > 1:
        ids = [u["id"] for u in testable[0].utterances() or []]
        arrays = {c.model: _arrays(c, ids) for c in testable}
        names = [c.model for c in testable]
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                ea, den = arrays[a]
                eb, _ = arrays[b]
                r = paired_bootstrap(ea, eb, den, reps=reps, level=level, seed=seed)
                r["significant"] = bool(r["p_value"] < 1 - level)
                pairs[a][b] = r
                pairs[b][a] = dict(r, delta_ter=-r["delta_ter"], low=-r["high"], high=-r["low"])
                if r["significant"]:
                    loser, winner = (a, b) if r["delta_ter"] > 0 else (b, a)
                    if r["delta_ter"] != 0:
                        better[loser] += 1
                        worse[winner] += 1
    n = len(testable)
    for m in better:
        lo, hi = 1 + better[m], n - worse[m]
        group[m] = str(lo) if lo == hi else f"{lo}-{hi}"
    return Ranking(order, rank, group, pairs, not_ranked, level, reps, sample, untested)


def mean_ranks(rankings: dict[str, Ranking]) -> MeanRanks:
    """Mean shared rank over the datasets every ranked model is ranked on (the module doc)."""
    n_ranked: dict[str, int] = {}
    for r in rankings.values():
        for m in r.rank:
            n_ranked[m] = n_ranked.get(m, 0) + 1
    models = sorted(n_ranked)
    common = sorted(d for d, r in rankings.items() if r.rank and all(m in r.rank for m in models))
    shared = {d: rankings[d].shared for d in common}
    value: dict[str, float | None] = {}
    for m in models:
        value[m] = (
            round(sum(shared[d][m] for d in common) / len(common), MEAN_RANK_DIGITS)
            if common
            else None
        )
    return MeanRanks(value, common, n_ranked)
