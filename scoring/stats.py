"""Confidence intervals and paired significance by bootstrap over utterances.

Bisani & Ney (2004): resample whole utterances with replacement, recompute the pooled error
rate each time; the percentiles of the replicates give the interval. The paired test resamples
the same utterances for both systems, so only the difference between them varies.
"""

from __future__ import annotations

import numpy as np

_CHUNK = 64  # replicates per numpy batch: bounds memory to ~64 x n_utts indices


def _replicates(cols: np.ndarray, reps: int, seed: int) -> np.ndarray:
    """Column sums under `reps` utterance resamplings: shape (reps, n_cols).

    All columns share each resampling, so one gather serves every ratio (TER and mTER)."""
    rng = np.random.default_rng(seed)
    n = cols.shape[0]
    out = np.empty((reps, cols.shape[1]))
    for start in range(0, reps, _CHUNK):
        size = min(_CHUNK, reps - start)
        idx = rng.integers(0, n, size=(size, n))
        # How often each utterance was drawn, per replicate; then one matrix product.
        idx += np.arange(size)[:, None] * n
        weights = np.bincount(idx.ravel(), minlength=size * n).reshape(size, n)
        out[start : start + size] = weights.astype(np.float64) @ cols  # float: BLAS
    return out


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.zeros(len(num)), where=den > 0)


def _interval(r: np.ndarray, level: float, reps: int) -> dict:
    alpha = (1 - level) / 2
    return {
        "low": float(np.quantile(r, alpha)),
        "high": float(np.quantile(r, 1 - alpha)),
        "stderr": float(r.std(ddof=1)) if reps > 1 else 0.0,
        "level": level,
        "replicates": reps,
    }


def bootstrap_ratios(
    num: list[int] | np.ndarray,
    dens: dict[str, list[int] | np.ndarray],
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, dict]:
    """Intervals of sum(num)/sum(den) for several denominators, from the same resamplings."""
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
            out[k] = _interval(_ratio(sums[:, 0], sums[:, i]), level, reps)
    return out


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
    observed = float((a.sum() - b.sum()) / d.sum()) if d.sum() else 0.0
    sums = _replicates(np.column_stack([a - b, d]), reps, seed)
    r = _ratio(sums[:, 0], sums[:, 1])
    if observed == 0:
        p = 1.0
    else:
        far = np.mean(r <= 0) if observed > 0 else np.mean(r >= 0)
        p = float(min(1.0, 2 * far))
    alpha = (1 - level) / 2
    return {
        "delta_ter": observed,
        "low": float(np.quantile(r, alpha)),
        "high": float(np.quantile(r, 1 - alpha)),
        "p_value": p,
        "level": level,
        "replicates": reps,
        "method": "paired bootstrap over utterances (Bisani & Ney 2004)",
    }
