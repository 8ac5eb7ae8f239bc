"""Statistics for comparing speaker groups: cluster bootstrap within groups, permutation tests.

Everything works on *units*: the clusters that are resampled or relabelled (a speaker, or an
utterance where no speaker is known), each belonging to one group, each carrying column sums
(errors, reference words, edit distances...). Ratios are always ratios of pooled sums, so a
statistic is recomputed from resampled or relabelled sums, never averaged per unit.

* Bootstrap (`bootstrap_sums`): each group's units are drawn with replacement independently
  (stratified cluster bootstrap, Field & Welsh 2007), `reps` times, as a (reps, units) count
  matrix times the unit sums: one matrix product per group, no Python loop over replicates.
  Where many units carry identical sums (utterances), the draws are a multinomial over the
  distinct rows, as in `scoring.stats`.
* Permutation (`label_matrix`, `group_sums`): the group labels are permuted over the units;
  under "no difference between groups" the labels are exchangeable across speakers, which is
  the only assumption. When the number of distinct relabellings is at most the number of
  permutations asked for, all of them are enumerated and the p-value is exact; otherwise
  `reps` random permutations give p = (1 + #{T* >= T}) / (reps + 1) (Phipson & Smyth 2010),
  which never falls below 1 / (reps + 1) and keeps the test's level.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from asrbench.identity import derive_seed
from scoring import stats as scoring_stats
from scoring.stats import ratio  # the one empty-denominator rule: NaN, never 0

# Work arrays of (replicates x units) are cut into blocks of at most this many cells.
BLOCK_CELLS = 1 << 22


def rng_for(seed: int, name: str) -> np.random.Generator:
    """A generator per (seed, analysis name): each analysis draws the same numbers whatever
    else runs before it, so adding an analysis never moves another one's intervals."""
    return np.random.default_rng(derive_seed(seed, name))


@dataclass(frozen=True)
class Units:
    """Clusters for resampling and relabelling: `group[u]` is the group index of unit u."""

    group: np.ndarray  # (U,) int
    n_groups: int
    kind: str  # "speaker" or "utterance"

    def members(self, g: int) -> np.ndarray:
        return np.flatnonzero(self.group == g)

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.group, minlength=self.n_groups)

    def subset(self, groups: list[int]) -> tuple[Units, np.ndarray]:
        """Units of some groups only, relabelled 0..len(groups)-1; and their indices."""
        keep = np.flatnonzero(np.isin(self.group, groups))
        remap = np.full(self.n_groups, -1)
        remap[groups] = np.arange(len(groups))
        return Units(remap[self.group[keep]], len(groups), self.kind), keep


def _resample_counts(rng: np.random.Generator, reps: int, n: int) -> np.ndarray:
    """(reps, n) how often each of n units is drawn when n are drawn with replacement."""
    draws = scoring_stats.resample_indices(rng, n, reps)
    draws += (np.arange(reps) * n)[:, None]
    return np.bincount(draws.ravel(), minlength=reps * n).reshape(reps, n)


def bootstrap_sums(
    units: Units, values: np.ndarray, reps: int, rng: np.random.Generator
) -> np.ndarray:
    """(reps, groups, columns) column sums of each group under stratified cluster resampling.

    `values` is (U, C) (or (U,)); a group with no unit gets zeros.
    """
    vals = np.asarray(values, dtype=np.float64)
    flat = vals.reshape(len(vals), -1)
    out = np.zeros((reps, units.n_groups, flat.shape[1]))
    for g in range(units.n_groups):
        idx = units.members(g)
        if not len(idx):
            continue
        rows, freq = np.unique(flat[idx], axis=0, return_counts=True)
        if 2 * len(rows) < len(idx):
            # Units with identical rows are interchangeable: how many draws land on each
            # distinct row is multinomial, the same distribution at a fraction of the cost
            # (utterance-level units: a few hundred distinct count rows among thousands).
            draws = scoring_stats.resample_group_counts(rng, freq, reps)
            out[:, g] = draws.astype(np.float64) @ rows
            continue
        block = max(1, BLOCK_CELLS // len(idx))
        for start in range(0, reps, block):
            stop = min(reps, start + block)
            counts = _resample_counts(rng, stop - start, len(idx))
            out[start:stop, g] = counts.astype(np.float64) @ flat[idx]
    return out.reshape((reps, units.n_groups) + vals.shape[1:])


def n_relabellings(sizes: np.ndarray | list[int]) -> int:
    """Distinct assignments of the labels to units: the multinomial coefficient."""
    total, out = 0, 1
    for s in sizes:
        total += int(s)
        out *= math.comb(total, int(s))
    return out


def _enumerate(labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Every distinct relabelling with the same group sizes (the observed one included)."""
    sizes = np.bincount(labels, minlength=n_groups)
    n = len(labels)
    rows: list[np.ndarray] = []

    def place(free: tuple[int, ...], g: int, current: np.ndarray) -> None:
        if g == n_groups - 1:
            current[list(free)] = g
            rows.append(current.copy())
            return
        for chosen in itertools.combinations(free, int(sizes[g])):
            nxt = current.copy()
            nxt[list(chosen)] = g
            rest = tuple(p for p in free if p not in set(chosen))
            place(rest, g + 1, nxt)

    place(tuple(range(n)), 0, np.zeros(n, dtype=np.int64))
    return np.array(rows, dtype=np.int64)


@dataclass(frozen=True)
class Relabellings:
    """The label matrix of a permutation test and how it was made."""

    labels: np.ndarray  # (P, U)
    exact: bool

    @property
    def n(self) -> int:
        return len(self.labels)


def label_matrix(
    labels: np.ndarray, n_groups: int, reps: int, rng: np.random.Generator
) -> Relabellings:
    """All relabellings when there are at most `reps` of them (exact test), else `reps`
    uniformly random permutations of `labels`."""
    labels = np.asarray(labels, dtype=np.int64)
    sizes = np.bincount(labels, minlength=n_groups)
    if n_relabellings(sizes) <= reps:
        return Relabellings(_enumerate(labels, n_groups), True)
    return Relabellings(rng.permuted(np.tile(labels, (reps, 1)), axis=1), False)


def group_sums(labels: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """(P, groups, columns...) column sums per group for every row of a label matrix.

    One matrix product per group and block of rows ((labels == g) @ values, BLAS), the last
    group by difference from the total: exact for counts (integers below 2**53).
    """
    labels = np.asarray(labels)
    vals = np.asarray(values, dtype=np.float64)
    flat = vals.reshape(len(vals), -1)
    p, u = labels.shape
    out = np.empty((p, n_groups, flat.shape[1]))
    total = flat.sum(axis=0)
    block = max(1, BLOCK_CELLS // max(u, 1))
    for start in range(0, p, block):
        lab = labels[start : start + block]
        for g in range(max(n_groups - 1, 1)):
            out[start : start + len(lab), g] = (lab == g).astype(np.float64) @ flat
        if n_groups > 1:
            out[start : start + len(lab), -1] = total - out[start : start + len(lab), :-1].sum(1)
    return out.reshape((p, n_groups) + vals.shape[1:])


def finite_or_none(x: float | np.floating | np.ndarray | None) -> float | None:
    """A scalar as a JSON number, None where it is missing or undefined (NaN, infinite)."""
    return float(x) if x is not None and np.isfinite(x) else None


def p_value(null: np.ndarray, observed: float, exact: bool) -> float | None:
    """Share of relabellings whose statistic reaches the observed one (larger = more extreme).

    Exact enumeration: #{T* >= T} / N (the observed labelling is one of the N). Random
    permutations: (1 + #{T* >= T}) / (P + 1). Undefined statistics (NaN) count as not reaching.
    """
    if observed is None or not np.isfinite(observed):
        return None
    tol = 1e-12 * max(1.0, abs(observed))
    hits = int(np.count_nonzero(np.nan_to_num(null, nan=-np.inf) >= observed - tol))
    if exact:
        return hits / len(null)
    return (1 + hits) / (len(null) + 1)


def interval(replicates: np.ndarray, level: float, point: float | None = None) -> dict:
    """`scoring.stats.interval` of bootstrap replicates (undefined ones left out and counted);
    no bounds where the statistic itself (`point`) is undefined."""
    defined = point is not None and bool(np.isfinite(point))
    return scoring_stats.interval(replicates, level, defined=defined)


def rate_dispersion(err: np.ndarray, den: np.ndarray) -> np.ndarray:
    """k-group statistic: sum_g n_g (r_g - r)^2 / sum_g n_g over the last axis (groups).

    r_g = err_g / n_g pooled within group g, r the pooled rate of all groups; n_g are the
    denominators (reference words). Zero when every group has the same rate; under relabelling
    r and sum n_g are fixed, so large values mean groups differ more than labels explain.
    """
    err = np.asarray(err, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    total_den = den.sum(axis=-1, keepdims=True)
    pooled = ratio(err.sum(axis=-1, keepdims=True), total_den)
    rates = np.where(den > 0, ratio(err, den), pooled)
    return np.sum(den * (rates - pooled) ** 2, axis=-1) / np.where(
        total_den[..., 0] > 0, total_den[..., 0], np.nan
    )


def _present(p_values: list[float | None]) -> dict[int, float]:
    """The p-values that exist, by their position (in position order, so ties sort as before)."""
    return {i: p for i, p in enumerate(p_values) if p is not None}


def holm(p_values: list[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values (family-wise error), None kept in place."""
    present = _present(p_values)
    order = sorted(present, key=present.__getitem__)
    m = len(order)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * present[i]))
        out[i] = running
    return out


def benjamini_hochberg(p_values: list[float | None]) -> list[float | None]:
    """Benjamini-Hochberg q-values (false discovery rate), None kept in place."""
    present = _present(p_values)
    order = sorted(present, key=present.__getitem__)
    m = len(order)
    out: list[float | None] = [None] * len(p_values)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, present[i] * m / (rank + 1))
        out[i] = min(1.0, running)
    return out
