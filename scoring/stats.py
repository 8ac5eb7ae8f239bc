"""Confidence intervals and paired significance by bootstrap over utterances.

Bisani & Ney (2004): resample whole utterances with replacement, recompute the pooled error
rate each time; the percentiles of the replicates give the interval. The paired test resamples
the same utterances for both systems, so only the difference between them varies.

One rule for an empty denominator, here and in asrbench's fairness analyses (which use `ratio`
and `interval` from here): a rate over an empty denominator (no reference word) is undefined,
NaN, never 0, which would read as a perfect score. A replicate whose resampled denominator is
empty is left out of the percentiles and counted in the interval's `undefined`; a rate that is
undefined on the data itself has no interval (`low`/`high`/`stderr` None).
"""

from __future__ import annotations

import math

import numpy as np

from scoring.errors import ScoringError

# Replicates are drawn in chunks of about this many (replicate x group) cells, so the per-group
# draw counts take ~8 MiB (int64) a copy however many replicates are asked for; only the few
# sums a replicate keeps grow with the count. (1,000 replicates stay one chunk up to 1,048
# groups of identical rows.)
CHUNK_CELLS = 1 << 20
# The most replicates a caller may ask for. The percentile interval needs every replicate's
# ratio kept and sorted (about 100 bytes a replicate over the three metrics): a million is
# ~100 MB and seconds of work, and its Monte Carlo error (~1/sqrt(reps) of the standard error)
# is already far below anything an interval is read for; a billion would be ~100 GB.
MAX_BOOTSTRAP = 1_000_000
MAX_BOOTSTRAP_REASON = (
    "more replicates no longer change an interval (Monte Carlo error "
    "~1/sqrt(replicates)) and each one is kept to sort"
)


def check_reps(reps: int) -> None:
    """Refuse a replicate count outside 0..MAX_BOOTSTRAP (0: no intervals)."""
    if (
        isinstance(reps, bool)
        or not isinstance(reps, (int, np.integer))
        or not 0 <= reps <= MAX_BOOTSTRAP
    ):
        raise ScoringError(
            f"bootstrap replicates must be a whole number from 0 to "
            f"{MAX_BOOTSTRAP:,}, not {reps!r}: {MAX_BOOTSTRAP_REASON}"
        )


def resample_indices(rng: np.random.Generator, n: int, reps: int) -> np.ndarray:
    """(reps, n): per replicate, the indices of n units drawn with replacement. With
    `resample_group_counts`, the only two bootstrap draws of the project (asrbench's fairness,
    robustness and attack tables draw here too; tests/test_architecture.py checks it): one
    place decides what a replicate is, so the same seed gives the same intervals everywhere."""
    return rng.integers(0, n, size=(reps, n))


def resample_group_counts(
    rng: np.random.Generator, counts: np.ndarray, reps: int | None = None
) -> np.ndarray:
    """How many of n = sum(counts) draws with replacement land in each group of identical
    units (group g holds counts[g] of them), per replicate: multinomial, the distribution of
    `resample_indices` summed by group at O(reps x groups); shape (reps, groups)."""
    n = int(np.sum(counts))
    return rng.multinomial(n, counts / n, size=reps)


def chunk_size(n_groups: int) -> int:
    """Replicates drawn at a time for `n_groups` distinct rows (at least one)."""
    return max(1, CHUNK_CELLS // max(1, n_groups))


def _distinct_rows(cols: np.ndarray, inverse: bool = False):
    """The distinct rows of `cols` in sorted order, with how often each occurs (and, with
    `inverse`, the index of each input row's distinct row)."""
    low = cols.min(axis=0)
    span = cols.max(axis=0) - low + 1
    if np.all(cols == np.round(cols)) and float(np.prod(span)) < 2.0**53:
        # Integer counts (the usual case): one int64 key a row, a 1-D unique (much faster).
        shifted = (cols - low).astype(np.int64)
        key = np.zeros(len(cols), dtype=np.int64)
        for c in range(cols.shape[1]):
            key = key * int(span[c]) + shifted[:, c]
        # np.unique(key, return_index=True, return_counts=True), spelled out: np.unique would
        # import numpy.ma (~25 ms of a short process's start-up) for nothing.
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        first = np.r_[True, sorted_key[1:] != sorted_key[:-1]]
        starts = np.flatnonzero(first)
        counts = np.diff(np.r_[starts, len(key)])
        if not inverse:
            return cols[order[starts]], counts
        inv = np.empty(len(key), dtype=np.int64)
        inv[order] = np.cumsum(first) - 1
        return cols[order[starts]], counts, inv
    if not inverse:
        return np.unique(cols, axis=0, return_counts=True)
    rows, inv, counts = np.unique(cols, axis=0, return_inverse=True, return_counts=True)
    return rows, counts, inv.reshape(-1)


def _replicates(
    cols: np.ndarray,
    reps: int,
    seed: int,
    split: np.ndarray | None = None,
    chunk: int | None = None,
) -> np.ndarray:
    """Column sums under `reps` utterance resamplings: shape (reps, n_cols), plus one column
    for `split` when given.

    All columns share each resampling, so one draw serves every ratio (TER and mTER).
    Utterances with identical rows are interchangeable, so only how many draws fall in each
    group of identical rows matters: a multinomial over the G distinct rows (G is small, a few
    hundred to a few thousand) has exactly the distribution of the per-utterance counts summed
    by group, at a cost of O(reps x G) instead of O(reps x n_utts).

    `split` is one more per-utterance integer column that the grouping leaves out (it would
    multiply the groups): within each group, the draws are shared out among the utterances'
    distinct `split` values by conditional binomials, which together with the first draw is
    the multinomial over the finer groups (same distribution), while the sums of `cols` stay
    exactly those of the grouping without it (same random stream, same numbers).

    Replicates are drawn `chunk` at a time (default `chunk_size(G)`), so memory is
    O(chunk x G) plus the sums kept, O(reps x n_cols), however many replicates are asked for.
    """
    check_reps(reps)
    rng = np.random.default_rng(seed)
    n = cols.shape[0]
    if split is None:
        rows, counts = _distinct_rows(cols)
    else:
        rows, counts, inverse = _distinct_rows(cols, inverse=True)
        values = np.asarray(split, dtype=np.int64)
    # Integer counts (the usual case): an integer product is exact, so the same sums as the
    # float one, and it does not wake BLAS's worker threads (which then spin on the other core
    # for nothing in a short process).
    exact = (
        bool(np.all(rows == np.round(rows))) and float(np.abs(rows).max(initial=0)) * n < 2.0**53
    )
    rows_m = rows.astype(np.int64) if exact else rows
    k = rows.shape[1]
    out = np.empty((reps, k + (split is not None)), dtype=np.float64)
    # In chunks of replicates, so memory is O(chunk x G) whatever `reps` is. Consecutive
    # multinomial draws are one stream however they are chunked, so the sums of `cols` do not
    # depend on the chunk size. The binomials of `split` come after every multinomial in the
    # stream (as in one chunk, the case of every count up to chunk_size(G)): past one chunk
    # the multinomials are drawn again, chunk by chunk, from a second generator with the seed.
    step = chunk or chunk_size(len(counts))
    again = np.random.default_rng(seed) if split is not None and reps > step else None
    for start in range(0, reps, step):
        size = min(step, reps - start)
        weights = resample_group_counts(rng, counts, size)
        out[start : start + size, :k] = (
            weights @ rows_m if exact else weights.astype(np.float64) @ rows_m
        )
        if split is not None and again is None:
            out[:, k] = _shared_out(rng, weights, counts, inverse, values)
        del weights
    if again is not None:
        for start in range(0, reps, step):
            size = min(step, reps - start)
            weights = resample_group_counts(again, counts, size)
            out[start : start + size, k] = _shared_out(rng, weights, counts, inverse, values)
            del weights
    return out


def _shared_out(
    rng: np.random.Generator,
    weights: np.ndarray,
    counts: np.ndarray,
    inverse: np.ndarray,
    values: np.ndarray,
) -> np.ndarray:
    """Per replicate, the sum of `values` over the drawn utterances, given `weights` (reps, G):
    how many draws fell in each group. Each group's draws are shared out among its distinct
    values (subgroups) one subgroup at a time: Binomial(draws left, subgroup size / members
    left)."""
    low = int(values.min(initial=0))
    span = int(values.max(initial=0)) - low + 1
    key = inverse * span + (values - low)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    sub_count = np.diff(np.r_[starts, len(key)])
    sub_group = inverse[order[starts]]
    sub_value = values[order[starts]]
    first = np.flatnonzero(np.r_[True, sub_group[1:] != sub_group[:-1]])  # one per group
    n_subs = np.diff(np.r_[first, len(sub_group)])
    # (G, reps): draws not yet given to a subgroup, group-major so that consecutive binomials
    # share their p (numpy's sampler then reuses its set-up: ~30 % faster)
    left = np.ascontiguousarray(weights.T, dtype=np.int64)
    members_left = counts.astype(np.int64)
    out = np.zeros(len(weights), dtype=np.int64)
    for level in range(int(n_subs.max(initial=1)) - 1):
        groups = np.flatnonzero(n_subs > level + 1)
        sub = first[groups] + level
        drawn = rng.binomial(left[groups], (sub_count[sub] / members_left[groups])[:, None])
        out += sub_value[sub] @ drawn
        left[groups] -= drawn
        members_left[groups] -= sub_count[sub]
    out += sub_value[first + n_subs - 1] @ left  # the last subgroup takes what is left
    return out


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, NaN where den is 0 (undefined, never 0: see the module doc)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast_shapes(num.shape, den.shape), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _quantile(ordered: np.ndarray, q: float) -> float:
    """`np.quantile(values, q)` (its default, linear method) of sorted values, the same float.

    Spelled out because np.quantile imports numpy.ma, ~20 ms of a short process's start-up.
    """
    n = len(ordered)
    virtual = (n - 1) * q
    if virtual >= n - 1:
        return float(ordered[-1])
    if virtual < 0:
        return float(ordered[0])
    below = math.floor(virtual)
    gamma = virtual - below
    a, b = float(ordered[below]), float(ordered[below + 1])
    diff = b - a
    # numpy's _lerp: from the nearer end, so that gamma = 1 gives b exactly
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def interval(replicates: np.ndarray, level: float, defined: bool = True) -> dict:
    """Percentile interval of bootstrap replicates, with their standard error. Undefined (NaN)
    replicates are left out and counted in `undefined`; `defined=False` (the rate is undefined
    on the data itself) gives no bounds."""
    r = np.asarray(replicates, dtype=np.float64).ravel()
    ok = r[np.isfinite(r)]
    out = {
        "low": None,
        "high": None,
        "stderr": None,
        "level": level,
        "replicates": int(len(r)),
        "undefined": int(len(r) - len(ok)),
    }
    if not defined or not len(ok):
        return out
    alpha = (1 - level) / 2
    ordered = np.sort(ok)
    out.update(
        low=_quantile(ordered, alpha),
        high=_quantile(ordered, 1 - alpha),
        stderr=float(ok.std(ddof=1)) if len(ok) > 1 else 0.0,
    )
    return out


def bootstrap_ratios(
    num: list[int] | np.ndarray,
    dens: dict[str, list[int] | np.ndarray],
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, dict]:
    """Intervals of sum(num)/sum(den) for several denominators, from the same resamplings."""
    check_reps(reps)
    num_a = np.asarray(num, dtype=np.float64)
    names = list(dens)
    if len(num_a) == 0 or reps <= 0:
        empty = {"low": None, "high": None, "stderr": None, "level": level, "replicates": reps}
        return {k: dict(empty) for k in names}
    cols = np.column_stack([num_a] + [np.asarray(dens[k], dtype=np.float64) for k in names])
    sums = _replicates(cols, reps, seed)
    out = {}
    for i, k in enumerate(names, 1):
        if cols[:, i].sum() == 0:
            out[k] = {"low": None, "high": None, "stderr": None, "level": level, "replicates": reps}
        else:
            out[k] = interval(ratio(sums[:, 0], sums[:, i]), level)
    return out


def bootstrap_metrics(
    errors: list[int] | np.ndarray,
    n_ref: list[int] | np.ndarray,
    n_hyp: list[int] | np.ndarray,
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, dict]:
    """Intervals of TER, mTER (errors / max(sum ref, sum hyp)) and mTER_utt (errors / sum of
    max(ref, hyp) per utterance), all from the same resamplings.

    The utterances are grouped by (errors, |ref|, max(|ref|, |hyp|)) and |hyp| is shared out
    within the groups (`_replicates`'s `split`): the TER and mTER_utt intervals are those of
    `bootstrap_ratios` on the same columns, number for number.
    """
    check_reps(reps)
    err = np.asarray(errors, dtype=np.float64)
    ref = np.asarray(n_ref, dtype=np.float64)
    hyp = np.asarray(n_hyp, dtype=np.int64)
    names = ("ter", "mter", "mter_utt")
    empty = {"low": None, "high": None, "stderr": None, "level": level, "replicates": reps}
    if len(err) == 0 or reps <= 0:
        return {k: dict(empty) for k in names}
    cols = np.column_stack([err, ref, np.maximum(ref, hyp.astype(np.float64))])
    sums = _replicates(cols, reps, seed, split=hyp)
    dens = {"ter": sums[:, 1], "mter": np.maximum(sums[:, 1], sums[:, 3]), "mter_utt": sums[:, 2]}
    totals = {
        "ter": ref.sum(),
        "mter": max(ref.sum(), float(hyp.sum())),
        "mter_utt": cols[:, 2].sum(),
    }
    return {
        k: interval(ratio(sums[:, 0], dens[k]), level) if totals[k] else dict(empty) for k in names
    }


def bootstrap_ci(
    num: list[int] | np.ndarray,
    den: list[int] | np.ndarray,
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict:
    """Percentile interval of sum(num)/sum(den) under utterance resampling; also the std error."""
    return bootstrap_ratios(num, {"x": den}, reps, level, seed)["x"]


def paired_bootstrap(
    err_a: list[int] | np.ndarray,
    err_b: list[int] | np.ndarray,
    den: list[int] | np.ndarray,
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict:
    """Paired bootstrap of TER(A) - TER(B) on the same utterances.

    p_value is two-sided: twice the share of replicates on the far side of zero from the
    observed difference (capped at 1); a difference of exactly zero gives p = 1.
    """
    a, b, d = (np.asarray(x, dtype=np.float64) for x in (err_a, err_b, den))
    if not (len(a) == len(b) == len(d)):
        raise ValueError("paired test needs the same utterances for both systems")
    if not d.sum():  # undefined, not 0 (see the module doc)
        raise ScoringError(
            "paired test: the references hold no word, so the TER difference is undefined; "
            "compare on a dataset with transcripts"
        )
    observed = float((a.sum() - b.sum()) / d.sum())
    sums = _replicates(np.column_stack([a - b, d]), reps, seed)
    r = ratio(sums[:, 0], sums[:, 1])
    ok = r[np.isfinite(r)]  # a replicate that drew only empty references is left out
    if observed == 0 or not len(ok):
        p = 1.0
    else:
        far = np.mean(ok <= 0) if observed > 0 else np.mean(ok >= 0)
        p = float(min(1.0, 2 * far))
    alpha = (1 - level) / 2
    ordered = np.sort(ok)
    return {
        "delta_ter": observed,
        "low": _quantile(ordered, alpha) if len(ok) else None,
        "high": _quantile(ordered, 1 - alpha) if len(ok) else None,
        "p_value": p,
        "level": level,
        "replicates": reps,
        "undefined": int(len(r) - len(ok)),
        "method": "paired bootstrap over utterances (Bisani & Ney 2004)",
    }
