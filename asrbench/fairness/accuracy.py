"""Per-group accuracy with ground truth: pooled TER/mTER per group, intervals from speakers,
disparity to the best group, permutation tests of "no difference", and SRB's LWERR.

Inputs are per-utterance alignment counts (what `utterances.jsonl` stores), aligned with a
`Grouping`. Rates are pooled within a group (errors / reference words), never averaged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from asrbench.fairness.groups import Grouping
from asrbench.fairness.stats import (
    Units,
    bootstrap_sums,
    finite_or_none,
    group_sums,
    holm,
    interval,
    label_matrix,
    p_value,
    rate_dispersion,
    ratio,
    rng_for,
)
from scoring.metrics import RATES, Counts, Interval, Metrics, group_rates

COUNT_KEYS = ("cor", "sub", "ins", "del", "n_ref", "n_hyp", "missing")
CI_SPEAKERS = "bootstrap over speakers within the group (stratified cluster bootstrap), percentile"
CI_UTTERANCES = "bootstrap over utterances within the group, percentile"
LOG_BASE = 2  # SRB's analysis notebook takes log2 of the WER ratio


@dataclass(frozen=True)
class Fit:
    """Observed sums and bootstrap replicates of one model's per-group rates."""

    grouping: Grouping
    metric: str  # a scoring.metrics.group_rates() key: "ter" or "mter_utt"
    sums: np.ndarray  # (G, 3): errors, n_ref, mter_den
    boot: np.ndarray  # (reps, G, 3) cluster bootstrap
    perm_values: np.ndarray  # (U_perm, 2): errors, denominator of the metric
    level: float
    reps: int
    perms: int
    seed: int

    @property
    def den_col(self) -> int:
        return den_col(self.metric)

    @property
    def rates(self) -> np.ndarray:
        return ratio(self.sums[:, 0], self.sums[:, self.den_col])

    @property
    def rate_reps(self) -> np.ndarray:
        return ratio(self.boot[..., 0], self.boot[..., self.den_col])

    def n_units(self, g: int) -> int:
        return int(self.grouping.boot.sizes[g])

    def pair_test(self, a: int, b: int, name: str) -> dict:
        """Two-sided permutation test of rate(a) = rate(b), labels permuted over a's and b's
        units (speakers where labels are constant within speakers)."""
        sub, keep = self.grouping.perm.subset([a, b])
        rel = label_matrix(sub.group, 2, self.perms, rng_for(self.seed, name))
        null = group_sums(rel.labels, self.perm_values[keep], 2)
        stat = np.abs(np.diff(ratio(null[..., 0], null[..., 1]), axis=1))[:, 0]
        obs_sums = group_sums(sub.group[None, :], self.perm_values[keep], 2)[0]
        obs = float(abs(np.diff(ratio(obs_sums[:, 0], obs_sums[:, 1]))[0]))
        return {
            "p_value": p_value(stat, obs, rel.exact),
            "statistic": f"|{self.metric} difference|",
            "n_units": int(len(keep)),
            "unit": sub.kind,
            "permutations": rel.n,
            "exact": rel.exact,
        }


def _interval_obj(d: dict) -> Interval | None:
    if d["low"] is None:
        return None
    return Interval(d["low"], d["high"], d["stderr"], d["level"], d["replicates"])


# The columns of Fit.sums: errors, then each group rate's per-utterance denominator.
_COLUMNS = ("errors", "n_ref", "mter_den")


def den_col(metric: str) -> int:
    """The column of `Fit.sums` dividing the errors for `metric` (a `group_rates()` key)."""
    return _COLUMNS.index(RATES[metric].per_unit_den or "")


def unit_den(metric: str, counts: dict[str, np.ndarray]) -> np.ndarray:
    """Per-utterance denominators of `metric` from per-utterance count arrays."""
    if RATES[metric].per_unit_den == "mter_den":
        return np.maximum(counts["n_ref"], counts["n_hyp"])
    return counts[RATES[metric].per_unit_den or ""]


def fit(
    grouping: Grouping,
    counts: dict[str, np.ndarray],
    metric: str = "ter",
    reps: int = 1000,
    perms: int = 10000,
    level: float = 0.95,
    seed: int = 0,
    name: str = "accuracy",
) -> Fit:
    """Sums and cluster-bootstrap replicates for `grouping` (counts aligned with its ids)."""
    err = counts["sub"] + counts["ins"] + counts["del"]
    mden = np.maximum(counts["n_ref"], counts["n_hyp"])
    cols = np.stack([err, counts["n_ref"], mden], axis=1).astype(np.float64)
    sums = np.zeros((grouping.n_groups, 3))
    for j in range(3):
        sums[:, j] = np.bincount(grouping.group, weights=cols[:, j], minlength=grouping.n_groups)
    boot = bootstrap_sums(
        grouping.boot, grouping.boot_sums(cols), reps, rng_for(seed, f"{name}/bootstrap")
    )
    perm_values = grouping.perm_sums(cols[:, [0, den_col(metric)]])
    return Fit(grouping, metric, sums, boot, perm_values, level, reps, perms, seed)


def _group_metrics(
    grouping: Grouping,
    counts: dict[str, np.ndarray],
    g: int,
    unit: str,
    ter_ci: Interval | None,
    mter_utt_ci: Interval | None,
    method: str,
) -> Metrics:
    m = grouping.group == g
    n_ref, n_hyp = counts["n_ref"][m], counts["n_hyp"][m]
    err = counts["sub"][m] + counts["ins"][m] + counts["del"][m]
    pooled = Counts(
        n_utts=int(m.sum()),
        n_ref=int(n_ref.sum()),
        n_hyp=int(n_hyp.sum()),
        cor=int(counts["cor"][m].sum()),
        sub=int(counts["sub"][m].sum()),
        ins=int(counts["ins"][m].sum()),
        dele=int(counts["del"][m].sum()),
        n_err_utts=int(np.count_nonzero(err > 0)),
        mter_den=int(np.maximum(n_ref, n_hyp).sum()),
        n_missing=int(counts["missing"][m].sum()),
        n_empty_ref=int(np.count_nonzero(n_ref == 0)),
    )
    return replace(
        Metrics.from_counts(unit, pooled), ter_ci=ter_ci, mter_utt_ci=mter_utt_ci, ci_method=method
    )


def group_accuracy(
    grouping: Grouping,
    counts: dict[str, np.ndarray],
    *,
    unit: str = "word",
    metric: str = "ter",
    reps: int = 1000,
    perms: int = 10000,
    level: float = 0.95,
    seed: int = 0,
    name: str = "accuracy",
) -> tuple[dict, Fit]:
    """Per-group rates with intervals, disparity to the best group, and the tests.

    Returns the report section and the fit (reused for LWERR). Intervals of a group with fewer
    than two units are null: one speaker says nothing about the spread between speakers.
    """
    f = fit(grouping, counts, metric, reps, perms, level, seed, name)
    G = grouping.n_groups
    # Utterance-level intervals (within the speakers at hand) as a second, labelled view.
    utt_units = Units(grouping.group, G, "utterance")
    err = counts["sub"] + counts["ins"] + counts["del"]
    ucols = np.stack([err, counts["n_ref"], np.maximum(counts["n_ref"], counts["n_hyp"])], 1)
    uboot = bootstrap_sums(
        utt_units, ucols.astype(np.float64), reps, rng_for(seed, f"{name}/bootstrap-utterances")
    )
    rates, rate_reps = f.rates, f.rate_reps
    urates = ratio(uboot[..., 0], uboot[..., f.den_col])
    small = [i["small"] for i in grouping.info]
    defined = [g for g in range(G) if np.isfinite(rates[g])]
    pool = [g for g in defined if not small[g]] or defined
    best = min(pool, key=lambda g: (rates[g], grouping.names[g])) if pool else None
    groups: list[dict] = []
    tests_vs_best: list[dict | None] = []
    for g in range(G):
        enough = f.n_units(g) >= 2
        cis = {}
        for key in group_rates():
            col = den_col(key)
            r = ratio(f.boot[:, g, 0], f.boot[:, g, col])
            cis[key] = interval(r, level, finite_or_none(ratio(f.sums[g, 0], f.sums[g, col])))
            if not enough:
                cis[key].update(low=None, high=None, stderr=None)
        method = CI_SPEAKERS if grouping.unit_kind == "speaker" else CI_UTTERANCES
        metrics = _group_metrics(
            grouping,
            counts,
            g,
            unit,
            _interval_obj(cis["ter"]),
            _interval_obj(cis["mter_utt"]),
            method,
        )
        row = {
            **grouping.info[g],
            "metrics": metrics.to_dict(),
            "rate": finite_or_none(rates[g]),
            "ci": cis[metric],
            "ci_utterances": interval(urates[:, g], level, finite_or_none(rates[g])),
        }
        if not enough:
            row["ci_note"] = (
                f"fewer than 2 {grouping.unit_kind}s: the between-"
                f"{grouping.unit_kind} interval is undefined"
            )
        diff = ratio_best = test = None
        if best is not None and g != best and np.isfinite(rates[g]):
            both = enough and f.n_units(best) >= 2
            d_reps = rate_reps[:, g] - rate_reps[:, best]
            diff = interval(d_reps, level, finite_or_none(rates[g] - rates[best]))
            rb = finite_or_none(ratio(rates[g], rates[best])) if rates[best] > 0 else None
            ratio_best = interval(ratio(rate_reps[:, g], rate_reps[:, best]), level, rb)
            if not both:
                for d in (diff, ratio_best):
                    d.update(low=None, high=None, stderr=None)
            diff["value"], ratio_best["value"] = finite_or_none(rates[g] - rates[best]), rb
            if rb is None:
                ratio_best["note"] = f"the best group's {metric} is 0: ratio undefined"
            test = f.pair_test(g, best, f"{name}/vs-best/{grouping.names[g]}")
        elif g == best:
            diff = {"value": 0.0}
            ratio_best = {"value": 1.0 if rates[g] > 0 else None}
        row["diff_to_best"], row["ratio_to_best"], row["test_vs_best"] = diff, ratio_best, test
        tests_vs_best.append(test)
        groups.append(row)
    adj = holm([t["p_value"] if t else None for t in tests_vs_best])
    for t, a in zip(tests_vs_best, adj, strict=True):
        if t:
            t["p_holm"] = a
    return {
        "metric": metric,
        "unit": unit,
        "best_group": grouping.names[best] if best is not None else None,
        "best_chosen_from": (
            "groups not flagged small"
            if any(not small[g] for g in defined)
            else "all groups (every group is small)"
        ),
        "groups": groups,
        "test": omnibus_test(f, f"{name}/omnibus"),
    }, f


def omnibus_test(f: Fit, name: str) -> dict:
    """No difference between the groups: |difference| for two groups, the weighted dispersion
    of group rates (`rate_dispersion`) for more, against relabellings of the units."""
    perm = f.grouping.perm
    G = f.grouping.n_groups
    rel = label_matrix(perm.group, G, f.perms, rng_for(f.seed, name))
    null = group_sums(rel.labels, f.perm_values, G)
    obs_sums = group_sums(perm.group[None, :], f.perm_values, G)[0]
    if G == 2:
        stat_null = np.abs(
            ratio(null[:, 0, 0], null[:, 0, 1]) - ratio(null[:, 1, 0], null[:, 1, 1])
        )
        obs = abs(
            float(ratio(obs_sums[0, 0], obs_sums[0, 1]) - ratio(obs_sums[1, 0], obs_sums[1, 1]))
        )
        stat = f"|{f.metric} difference| (two groups)"
    else:
        stat_null = rate_dispersion(null[..., 0], null[..., 1])
        obs = float(rate_dispersion(obs_sums[:, 0], obs_sums[:, 1]))
        stat = (
            f"sum_g n_g ({f.metric}_g - {f.metric})^2 / sum_g n_g ({G} groups, n_g = "
            "reference words)"
        )
    return {
        "hypothesis": "no difference between groups",
        "statistic": stat,
        "value": finite_or_none(obs),
        "p_value": p_value(stat_null, obs, rel.exact),
        "n_units": int(len(perm.group)),
        "unit": perm.kind,
        "groups": G,
        "permutations": rel.n,
        "exact": rel.exact,
    }


def lwerr(f: Fit, base: int, compares: list[int], name: str = "lwerr") -> list[dict]:
    """SRB's Log WER Ratio log2(rate(compare) / rate(base)): positive = worse for `compare`.

    The interval comes from the same stratified speaker bootstrap (replicates where either
    rate is 0 are undefined and counted); the p-value is the two-group permutation test of
    equal rates, the same null hypothesis as a log ratio of 0.
    """
    rates, reps = f.rates, f.rate_reps
    names = f.grouping.names
    out = []
    for c in compares:
        rb, rc = rates[base], rates[c]
        value = math.log(rc / rb, LOG_BASE) if rb > 0 and rc > 0 else None
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.log2(ratio(reps[:, c], reps[:, base]))
        r[~np.isfinite(r)] = np.nan
        ci = interval(r, f.level, value)
        if f.n_units(c) < 2 or f.n_units(base) < 2:
            ci.update(low=None, high=None, stderr=None)
        row = {
            "base": names[base],
            "compare": names[c],
            "metric": f.metric,
            f"{f.metric}_base": finite_or_none(rb),
            f"{f.metric}_compare": finite_or_none(rc),
            "lwerr": value,
            "log_base": LOG_BASE,
            "ci": ci,
            "test": f.pair_test(c, base, f"{name}/{names[c]}-vs-{names[base]}"),
            "n_speakers_base": f.grouping.info[base]["n_speakers"],
            "n_speakers_compare": f.grouping.info[c]["n_speakers"],
            "n_utts_base": f.grouping.info[base]["n_utts"],
            "n_utts_compare": f.grouping.info[c]["n_utts"],
        }
        if value is None:
            row["note"] = (
                f"{f.metric} of {'base' if not rb > 0 else 'compare'} group is 0: "
                "the log ratio is undefined"
            )
        out.append(row)
    return out
