"""AequeVox fault localiser: the words a recogniser stops producing under a transformation.

For a group, a recogniser and a transformation T with severities theta_1..theta_n (Rajan et
al., FASE 2022; `wordDropTableGen.py` of its replication code):

    WC[w]           count of w over the transcripts of the original speech
    WC_theta[w]     count of w over the transcripts of the speech transformed at theta
    min_wc(w)       min over theta of WC_theta[w] (0 where w is absent; the paper's min_count)
    drop(w)         max(WC[w] - min_wc(w), 0)
    non-robust      drop(w) > omega

No reference is needed. Two edge cases of the published code are settled here as the paper
defines them: the minimum runs over every severity (the code kept only the last severity's
counts), and a word that becomes *more* frequent has drop 0, not a negative drop.

Beyond the paper: `rel_drop` = drop / WC[w], so frequent words do not dominate the ranking,
and, where references exist, `validate` measures whether the predicted non-robust words really
fail more often: the utterances are split in two halves (per speaker, seeded); words are
classified on one half (non-robust: drop > omega; robust: drop = 0; both need WC >= min_count)
and, on the other half under the same transformation (all severities), the share of reference
occurrences of each class that the alignment marks as substituted or deleted is compared.
AequeVox reports +223.8 % more mispredictions for non-robust words (68 vs 21, summed over three
cloud recognisers, on sentences built from each class and spoken by TTS).
"""

from __future__ import annotations

import numpy as np

from asrbench.fairness.groups import Grouping
from asrbench.fairness.stats import (
    Units,
    bootstrap_sums,
    finite_or_none,
    interval,
    ratio,
    rng_for,
)
from asrbench.fairness.tokens import TokenTable

ALL = "*"  # the pseudo-group of every utterance
PAPER_MORE_ERRORS_PCT = 223.8


def word_counts(
    table: TokenTable,
    group: np.ndarray,
    n_groups: int,
    vocab_size: int,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """(n_groups + 1, V) word counts per group, the last row over every utterance."""
    keep = np.ones(len(table), dtype=bool) if rows is None else rows
    tok_row = table.row_of_token()
    tok_keep = keep[tok_row]
    g = group[tok_row][tok_keep]
    ids = table.ids[tok_keep]
    counts = np.bincount(g * vocab_size + ids, minlength=n_groups * vocab_size)
    counts = counts.reshape(n_groups, vocab_size)
    return np.vstack([counts, counts.sum(axis=0, keepdims=True)])


def drops(wc: np.ndarray, wc_sev: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(drop, min_wc, argmin severity index) from WC (..., V) and WC_theta (S, ..., V)."""
    min_wc = wc_sev.min(axis=0)
    return np.maximum(wc - min_wc, 0), min_wc, wc_sev.argmin(axis=0)


def localise(
    grouping: Grouping,
    original: TokenTable,
    transformed: list[TokenTable],
    severities: list[int | None],
    words: list[str],
    omega: float,
    min_count: int = 1,
    rows: np.ndarray | None = None,
) -> list[dict]:
    """Per group (and `*` = all) and word of the original transcripts: counts, drop, rank."""
    V, G = len(words), grouping.n_groups
    wc = word_counts(original, grouping.group, G, V, rows)
    wc_sev = np.stack([word_counts(t, grouping.group, G, V, rows) for t in transformed])
    drop, mins, at = drops(wc, wc_sev)
    rel = ratio(drop, wc)
    out = []
    for gi, gname in enumerate([*grouping.names, ALL]):
        present = np.flatnonzero(wc[gi] > 0)
        # Ranked: words seen at least min_count times, by relative drop, then drop; the rest
        # follow unranked (a word seen once that vanishes has rel_drop 1 and tells little).
        order = sorted(
            present.tolist(),
            key=lambda w: (wc[gi, w] < min_count, -rel[gi, w], -drop[gi, w], -wc[gi, w], words[w]),
        )
        for k, w in enumerate(order, start=1):
            ranked = bool(wc[gi, w] >= min_count)
            out.append(
                {
                    "group": gname,
                    "word": words[w],
                    "wc": int(wc[gi, w]),
                    "counts": [int(c) for c in wc_sev[:, gi, w]],
                    "severities": list(severities),
                    "min_wc": int(mins[gi, w]),
                    "min_at": severities[int(at[gi, w])],
                    "drop": int(drop[gi, w]),
                    "rel_drop": float(rel[gi, w]),
                    "non_robust": bool(drop[gi, w] > omega),
                    "ranked": ranked,
                    "rank": k if ranked else None,
                }
            )
    return out


def split_halves(grouping: Grouping, seed: int) -> np.ndarray:
    """Boolean mask of the discovery half: each speaker's utterances shuffled (seeded) and
    halved, so both halves hold every speaker."""
    rng = rng_for(seed, "localiser/split")
    mask = np.zeros(len(grouping.ids), dtype=bool)
    for u in range(len(grouping.boot.group)):
        idx = np.flatnonzero(grouping.boot_unit == u)
        rng.shuffle(idx)
        mask[idx[: (len(idx) + 1) // 2]] = True
    return mask


def validate(
    grouping: Grouping,
    original: TokenTable,
    transformed: list[TokenTable],
    severities: list[int | None],
    words: list[str],
    ref_ops: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    omega: float,
    min_count: int = 1,
    reps: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict:
    """Error rates of predicted non-robust vs robust words on held-out utterances.

    `ref_ops[s]` = (utterance index, reference word id, error) per reference word occurrence
    of the alignments under severity s (ids from the same vocabulary, -1 for a word no
    transcript produced; error: the scorer's op is S or D).
    """
    disc = split_halves(grouping, seed)
    V, G = len(words), grouping.n_groups
    wc = word_counts(original, grouping.group, G, V, disc)[-1]
    wc_sev = np.stack([word_counts(t, grouping.group, G, V, disc)[-1] for t in transformed])
    drop, _, _ = drops(wc, wc_sev)
    eligible = wc >= max(min_count, 1)
    is_nr = np.r_[eligible & (drop > omega), False]  # index -1: a word never produced
    is_r = np.r_[eligible & (drop == 0), False]
    n = len(grouping.ids)
    cols = np.zeros((n, 4))
    for utt, word, err in ref_ops:
        held = ~disc[utt]
        for j, cls in ((0, is_nr), (2, is_r)):
            m = held & cls[word]
            cols[:, j] += np.bincount(utt[m], weights=err[m].astype(np.float64), minlength=n)
            cols[:, j + 1] += np.bincount(utt[m], minlength=n)
    non_robust = {words[w] for w in np.flatnonzero(is_nr[:-1])}
    robust = {words[w] for w in np.flatnonzero(is_r[:-1])}
    h = grouping.restricted(~disc)
    unit_vals = h.boot_sums(cols[~disc])
    one = Units(np.zeros(len(h.boot.group), dtype=np.int64), 1, h.boot.kind)
    boot = bootstrap_sums(one, unit_vals, reps, rng_for(seed, "localiser/validate"))[:, 0]
    tot = cols[~disc].sum(axis=0)
    r_nr, r_r = ratio(tot[0], tot[1]), ratio(tot[2], tot[3])
    b_nr, b_r = ratio(boot[:, 0], boot[:, 1]), ratio(boot[:, 2], boot[:, 3])
    rr = float(ratio(r_nr, r_r)) if np.isfinite(r_nr) and r_r > 0 else None
    more = 100 * (rr - 1) if rr is not None else None
    rr_reps = ratio(b_nr, b_r)
    return {
        "split": "per speaker, seeded halves: words classified on one, errors counted on the other",
        "n_discovery_utts": int(disc.sum()),
        "n_heldout_utts": int((~disc).sum()),
        "n_heldout_units": int(len(h.boot.group)),
        "unit": h.boot.kind,
        "omega": omega,
        "min_count": min_count,
        "non_robust_words": sorted(non_robust),
        "n_robust_words": len(robust),
        "nonrobust": {
            "occurrences": int(tot[1]),
            "errors": int(tot[0]),
            "error_rate": finite_or_none(r_nr),
            "ci": interval(b_nr, level, finite_or_none(r_nr)),
        },
        "robust": {
            "occurrences": int(tot[3]),
            "errors": int(tot[2]),
            "error_rate": finite_or_none(r_r),
            "ci": interval(b_r, level, finite_or_none(r_r)),
        },
        "error_rate_ratio": rr,
        "ratio_ci": interval(rr_reps, level, rr),
        "more_errors_pct": more,
        "more_errors_pct_ci": _percent(interval(rr_reps, level, rr)),
        "paper_more_errors_pct": PAPER_MORE_ERRORS_PCT,
    }


def _percent(ci: dict) -> dict:
    """A ratio's interval as "% more": 100 (ratio - 1)."""
    out = dict(ci)
    for k in ("low", "high"):
        out[k] = 100 * (ci[k] - 1) if ci[k] is not None else None
    out["stderr"] = 100 * ci["stderr"] if ci["stderr"] is not None else None
    return out
