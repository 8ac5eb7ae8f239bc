"""SRB robustness disparity: WERD per group and severity, and how the gap between groups grows.

For one model, each condition (clean and every perturbation x severity of a grid) gives
per-utterance error counts on the same utterances. Per group g and condition c the pooled rate
r_g(c); WERD_g(c) = r_g(c) - r_g(clean). For a compared group k and the base group b the gap
gap(c) = r_k(c) - r_b(c); its growth with severity is the least-squares slope of gap(s) over the
severities s = 0 (clean), 1, ..., n of one perturbation, in rate units per severity step.

Uncertainty: one stratified speaker bootstrap shared by every condition (the same speakers are
resampled for the clean and the perturbed audio: the comparison is paired), and a permutation
test of the slope (k's and b's labels relabelled over speakers, the same relabelling in every
condition), two-sided.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from asrbench.fairness.groups import Grouping
from asrbench.fairness.stats import (
    bootstrap_sums,
    finite_or_none,
    group_sums,
    interval,
    label_matrix,
    p_value,
    ratio,
    rng_for,
)


@dataclass(frozen=True)
class Condition:
    """One column of the grid: `spec` (canonical), its perturbation and severity."""

    spec: str
    perturbation: str  # "clean" for the reference condition
    severity: int | None  # 0 for clean


def _lwerr(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log2(ratio(num, den))
    out[~np.isfinite(out)] = np.nan
    return out


def robustness_disparity(
    grouping: Grouping,
    conditions: list[Condition],
    err: np.ndarray,
    den: np.ndarray,
    base: int,
    compares: list[int],
    *,
    reps: int = 1000,
    perms: int = 10000,
    level: float = 0.95,
    seed: int = 0,
    name: str = "robustness",
) -> dict:
    """`err`, `den`: (N, C) per-utterance errors and denominators, columns as `conditions`
    (the first must be the clean one)."""
    if conditions[0].perturbation != "clean":
        raise ValueError("the first condition must be the clean one")
    G, C = grouping.n_groups, len(conditions)
    names = grouping.names
    cols = np.stack([err, den], axis=-1).astype(np.float64)  # (N, C, 2)
    sums = np.zeros((G, C, 2))
    for g in range(G):
        sums[g] = cols[grouping.group == g].sum(axis=0)
    rates = ratio(sums[..., 0], sums[..., 1])  # (G, C)
    boot = bootstrap_sums(
        grouping.boot, grouping.boot_sums(cols), reps, rng_for(seed, f"{name}/bootstrap")
    )
    rreps = ratio(boot[..., 0], boot[..., 1])  # (reps, G, C)
    enough = grouping.boot.sizes >= 2
    werd = rates - rates[:, :1]
    werd_reps = rreps - rreps[..., :1]
    group_rows = []
    for g in range(G):
        for c, cond in enumerate(conditions):
            ter_ci = interval(rreps[:, g, c], level, finite_or_none(rates[g, c]))
            werd_ci = interval(werd_reps[:, g, c], level, finite_or_none(werd[g, c]))
            if not enough[g]:
                for d in (ter_ci, werd_ci):
                    d.update(low=None, high=None, stderr=None)
            group_rows.append(
                {
                    "group": names[g],
                    "condition": cond.spec,
                    "perturbation": cond.perturbation,
                    "severity": cond.severity,
                    "rate": finite_or_none(rates[g, c]),
                    "rate_ci": ter_ci,
                    "werd": finite_or_none(werd[g, c]),
                    "werd_ci": werd_ci,
                }
            )
    perturbations: dict[str, list[tuple[int | None, int]]] = {}
    for c, cond in enumerate(conditions[1:], start=1):
        perturbations.setdefault(cond.perturbation, []).append((cond.severity, c))
    gap_rows, slope_rows = [], []
    perm_cols = grouping.perm_sums(cols)
    for k in compares:
        both = bool(enough[k] and enough[base])
        gap = rates[k] - rates[base]
        gap_reps = rreps[:, k] - rreps[:, base]
        lw = _lwerr(rates[k], rates[base])
        lw_reps = _lwerr(rreps[:, k], rreps[:, base])
        sub, keep = grouping.perm.subset([k, base])
        rel = label_matrix(
            sub.group, 2, perms, rng_for(seed, f"{name}/{names[k]}-vs-{names[base]}")
        )
        null = group_sums(rel.labels, perm_cols[keep], 2)  # (P, 2, C, 2)
        null_rates = ratio(null[..., 0], null[..., 1])
        null_gap = null_rates[:, 0] - null_rates[:, 1]  # (P, C)
        for c, cond in enumerate(conditions):
            cis = [
                interval(gap_reps[:, c], level, finite_or_none(gap[c])),
                interval(gap_reps[:, c] - gap_reps[:, 0], level, finite_or_none(gap[c] - gap[0])),
                interval(lw_reps[:, c], level, finite_or_none(lw[c])),
            ]
            if not both:
                for d in cis:
                    d.update(low=None, high=None, stderr=None)
            gap_rows.append(
                {
                    "group": names[k],
                    "base": names[base],
                    "condition": cond.spec,
                    "perturbation": cond.perturbation,
                    "severity": cond.severity,
                    "gap": finite_or_none(gap[c]),
                    "gap_ci": cis[0],
                    "werd_gap": finite_or_none(gap[c] - gap[0]),
                    "werd_gap_ci": cis[1],
                    "lwerr": finite_or_none(lw[c]),
                    "lwerr_ci": cis[2],
                }
            )
        for pert, points in perturbations.items():
            pts = [(0, 0)] + sorted((s, c) for s, c in points if s is not None)
            row = {
                "group": names[k],
                "base": names[base],
                "perturbation": pert,
                "severities": [s for s, _ in pts],
                "n_units": int(len(keep)),
                "unit": sub.kind,
                "slope": None,
                "ci": None,
                "p_value": None,
                "permutations": rel.n,
                "exact": rel.exact,
            }
            if len({p for p, _ in pts}) >= 2:
                s = np.array([p for p, _ in pts], dtype=np.float64)
                idx = [c for _, c in pts]
                w = (s - s.mean()) / np.sum((s - s.mean()) ** 2)
                slope = float(w @ gap[idx]) if np.all(np.isfinite(gap[idx])) else None
                ci = interval(gap_reps[:, idx] @ w, level, slope)
                if not both:
                    ci.update(low=None, high=None, stderr=None)
                null_slope = null_gap[:, idx] @ w
                row.update(
                    slope=slope,
                    ci=ci,
                    p_value=p_value(np.abs(null_slope), abs(slope), rel.exact)
                    if slope is not None
                    else None,
                )
            else:
                row["note"] = "no numeric severity (spec given by parameters): no slope"
            slope_rows.append(row)
    return {
        "base": names[base],
        "compared": [names[k] for k in compares],
        "conditions": [c.spec for c in conditions],
        "groups": group_rows,
        "gaps": gap_rows,
        "slopes": slope_rows,
        "slope_unit": "rate per severity step (severity 0 = clean)",
    }
