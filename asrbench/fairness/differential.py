"""AequeVox differential testing, no references needed, with intervals and p-values.

Two recognisers A and B, a group g, a transformation T at severity theta (Rajan et al., FASE
2022, and its replication code `compASR.py`):

    d_g       = sum_u lev(A(u), B(u)) / sum_u max(|A(u)|, |B(u)|)   over the group's utterances
    d_g^T     = the same on the transformed speech T_theta(u)
    D_g       = d_g^T - d_g                                          (degradation)

lev is the word-level Levenshtein distance. The mean distance divided by the mean length of
the longer output, i.e. a ratio of pooled sums, as the published code computes it (a
per-utterance ratio would let one-word outputs dominate). For a base group b and each other
group k, a fairness violation is counted when D_b - D_k > tau; every group is the base in turn,
and counts are also given for a whole curve of tau.

Beyond the paper: D_b - D_k gets a stratified speaker-bootstrap interval (the same speakers for
the original and the transformed speech) and a one-sided permutation p-value (b's and k's
labels relabelled over speakers: "b degrades no more than k"), with Benjamini-Hochberg q-values
over every (base, other, transformation, severity) of the run; `violation_ci` marks violations
whose whole interval lies above tau. The single-recogniser variant compares one system's
output on the original with its output on the transformed speech of the same utterance: d_g is
0 by construction and D_g = d_g^T.
"""

from __future__ import annotations

import numpy as np

from asrbench.fairness.groups import Grouping
from asrbench.fairness.stats import (
    benjamini_hochberg,
    bootstrap_sums,
    finite_or_none,
    group_sums,
    interval,
    label_matrix,
    p_value,
    ratio,
    rng_for,
)

PAPER_TAUS = (0.01, 0.05, 0.1, 0.15)  # the values plotted by AequeVox's analysis notebooks
TAU_CURVE = tuple(round(0.01 * i, 2) for i in range(0, 51))


def differential(
    grouping: Grouping,
    transformations: dict[str, list[tuple[int | None, str]]],
    dist: dict[str, np.ndarray],
    longer: dict[str, np.ndarray],
    baseline: str | None,
    *,
    tau: float = 0.1,
    taus: tuple[float, ...] = TAU_CURVE,
    reps: int = 1000,
    perms: int = 10000,
    level: float = 0.95,
    seed: int = 0,
    name: str = "differential",
) -> dict:
    """Degradations and violations.

    `transformations`: name -> [(severity, condition)]; `dist[c]`, `longer[c]`: per-utterance
    edit distance and longer length for condition c (aligned with `grouping.ids`);
    `baseline`: the condition of the original speech (None for the single-recogniser variant,
    where d on the original is 0).
    """
    G, names = grouping.n_groups, grouping.names
    # One column per condition (the original first, if any): every transformation shares one
    # bootstrap draw and, per pair of groups, one set of relabellings.
    cols = ([baseline] if baseline is not None else []) + [
        c for points in transformations.values() for _, c in points
    ]
    where = {c: j for j, c in enumerate(cols)}
    x = np.stack([np.stack([dist[c], longer[c]], axis=-1) for c in cols], axis=1)
    x = x.astype(np.float64)  # (N, n_cols, 2)
    sums = np.zeros((G,) + x.shape[1:])
    for g in range(G):
        sums[g] = x[grouping.group == g].sum(axis=0)
    d = ratio(sums[..., 0], sums[..., 1])  # (G, n_cols)
    boot = bootstrap_sums(
        grouping.boot, grouping.boot_sums(x), reps, rng_for(seed, f"{name}/bootstrap")
    )
    bd = ratio(boot[..., 0], boot[..., 1])  # (reps, G, n_cols)
    if baseline is not None:
        deg, bdeg = d - d[:, :1], bd - bd[..., :1]
    else:
        deg, bdeg = d, bd
    enough = grouping.boot.sizes >= 2
    d_rows: list[dict] = []
    deg_rows: list[dict] = []
    pair_rows: list[dict] = []
    if baseline is not None:
        for g in range(G):
            d_rows.append(
                {
                    "group": names[g],
                    "transformation": None,
                    "severity": None,
                    "condition": baseline,
                    "d": finite_or_none(d[g, 0]),
                }
            )
    for tname, points in transformations.items():
        for g in range(G):
            for sev, cond in points:
                j = where[cond]
                ci = interval(bdeg[:, g, j], level, finite_or_none(deg[g, j]))
                if not enough[g]:
                    ci.update(low=None, high=None, stderr=None)
                d_rows.append(
                    {
                        "group": names[g],
                        "transformation": tname,
                        "severity": sev,
                        "condition": cond,
                        "d": finite_or_none(d[g, j]),
                    }
                )
                deg_rows.append(
                    {
                        "group": names[g],
                        "transformation": tname,
                        "severity": sev,
                        "condition": cond,
                        "D": finite_or_none(deg[g, j]),
                        "ci": ci,
                    }
                )
    perm_x = grouping.perm_sums(x)
    for a in range(G):
        for b in range(a + 1, G):
            sub, keep = grouping.perm.subset([a, b])
            rel = label_matrix(sub.group, 2, perms, rng_for(seed, f"{name}/{names[a]}-{names[b]}"))
            null = group_sums(rel.labels, perm_x[keep], 2)
            nd = ratio(null[..., 0], null[..., 1])  # (P, 2, n_cols)
            ndeg = nd - nd[..., :1] if baseline is not None else nd
            null_delta = ndeg[:, 0] - ndeg[:, 1]  # (P, n_cols): D_a - D_b
            for base, other, sign in ((a, b, 1.0), (b, a, -1.0)):
                both = bool(enough[base] and enough[other])
                for tname, points in transformations.items():
                    for sev, cond in points:
                        j = where[cond]
                        delta = finite_or_none(deg[base, j] - deg[other, j])
                        ci = interval(bdeg[:, base, j] - bdeg[:, other, j], level, delta)
                        if not both:
                            ci.update(low=None, high=None, stderr=None)
                        p = (
                            p_value(sign * null_delta[:, j], delta, rel.exact)
                            if delta is not None
                            else None
                        )
                        pair_rows.append(
                            {
                                "base": names[base],
                                "other": names[other],
                                "transformation": tname,
                                "severity": sev,
                                "condition": cond,
                                "delta": delta,
                                "ci": ci,
                                "p_value": p,
                                "n_units": int(len(keep)),
                                "unit": sub.kind,
                                "permutations": rel.n,
                                "exact": rel.exact,
                                "violation": delta is not None and delta > tau,
                                "violation_ci": ci["low"] is not None and ci["low"] > tau,
                            }
                        )
    q_values = benjamini_hochberg([r["p_value"] for r in pair_rows])
    for row, q in zip(pair_rows, q_values, strict=True):
        row["q_value"] = q
    return {
        "tau": tau,
        "groups": [i["group"] for i in grouping.info],
        "d": d_rows,
        "degradation": deg_rows,
        "pairs": pair_rows,
        "violations": violation_counts(pair_rows, names, tau),
        "tau_curve": tau_curve(pair_rows, names, taus),
    }


def violation_counts(pairs: list[dict], names: list[str], tau: float) -> list[dict]:
    """Per base group: violations (D_b - D_k > tau), those whose interval clears tau, and how
    many comparisons there were; also per transformation."""
    out = []
    for base in names:
        rows = [r for r in pairs if r["base"] == base]
        by_t: dict[str, int] = {}
        for r in rows:
            by_t[r["transformation"]] = by_t.get(r["transformation"], 0) + (
                r["delta"] is not None and r["delta"] > tau
            )
        out.append(
            {
                "base": base,
                "tau": tau,
                "violations": sum(r["delta"] is not None and r["delta"] > tau for r in rows),
                "violations_ci": sum(
                    r["ci"]["low"] is not None and r["ci"]["low"] > tau for r in rows
                ),
                "comparisons": len(rows),
                "by_transformation": by_t,
            }
        )
    return out


def tau_curve(pairs: list[dict], names: list[str], taus: tuple[float, ...]) -> list[dict]:
    """Violation counts per base group for every tau of the curve (point and interval rule)."""
    deltas = np.array([r["delta"] if r["delta"] is not None else -np.inf for r in pairs])
    lows = np.array([r["ci"]["low"] if r["ci"]["low"] is not None else -np.inf for r in pairs])
    bases = np.array([r["base"] for r in pairs], dtype=object)
    t = np.asarray(taus)[:, None]
    out = []
    for base in names:
        m = bases == base
        out.append(
            {
                "base": base,
                "taus": list(taus),
                "violations": (deltas[m][None, :] > t).sum(axis=1).tolist(),
                "violations_ci": (lows[m][None, :] > t).sum(axis=1).tolist(),
            }
        )
    return out
