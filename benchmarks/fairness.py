"""Fairness analysis benchmark on a generated result set, with anchors measured in the same run.

A seeded result set of 20,000 utterances by 200 speakers in 5 groups (40 speakers, 100
utterances each; 5-25 reference words from a 2,000-word Zipf vocabulary), two recognisers whose
error rates depend on the speaker, the group and the transformation's severity, on the clean
audio and on every condition of the `aequevox` grid (8 transformations x 5 severities +
amplify: 41 conditions). What `ops/fairness` computes after the model runs is timed, stage by
stage, with the documented defaults (1,000 speaker-cluster bootstrap replicates, 10,000
permutations per test):

  accuracy     per-group TER/mTER with intervals, disparity to the best group, the 5-group
               test and 4 pairwise tests (Holm), LWERR of each group against the best
  robustness   WERD per group and condition, gap to the base group with intervals, slope of
               the gap per transformation with a permutation test, for 4 compared groups
  differential AequeVox between the two recognisers: edit distances of 42 x 20,000 pairs
               (timed apart), degradations, 10 group pairs x 41 conditions of tests, tau curve
  metamorphic  the single-recogniser variant (41 x 20,000 pairs)
  localiser    word drops per group for 9 transformations, and the validation

Anchors (same data, same process): the platform's utterance bootstrap of one corpus WER
(`scoring.stats.bootstrap_ci`, 1,000 replicates over 20,000 utterances); rapidfuzz's C++
Levenshtein over the same hypothesis pairs as our edit distances; and a plain loop over
10,000 permutations (one `np.bincount` per permutation) against the vectorised test. Peak
memory is the process's maximum resident set size (ru_maxrss), after generating the data and
after the analyses.

    .venv/bin/python benchmarks/fairness.py [--utts 20000] [--speakers 200] [--groups 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asrbench.fairness import accuracy, differential, localiser, robustness  # noqa: E402
from asrbench.fairness.groups import Row, make_grouping  # noqa: E402
from asrbench.fairness.stats import group_sums, label_matrix, rng_for  # noqa: E402
from asrbench.fairness.tokens import TokenTable, edit_distance  # noqa: E402
from asrbench.perturb.grids import GRIDS  # noqa: E402
from asrbench.perturb.spec import parse_spec  # noqa: E402


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def generate(n_utts: int, n_spk: int, n_groups: int, seed: int = 0):
    """Reference tokens, and per (system, condition) hypotheses made by deleting and
    substituting reference words at a speaker-, group- and severity-dependent rate."""
    rng = np.random.default_rng(seed)
    per = n_utts // n_spk
    spk_group = np.arange(n_spk) % n_groups
    rows = [Row(f"s{s}-{i}", f"g{spk_group[s]}", f"s{s}") for s in range(n_spk) for i in range(per)]
    g = make_grouping(rows, "GROUP", "generated")
    n = len(rows)
    vocab = 2000
    lengths = rng.integers(5, 26, n)
    p = 1.0 / np.arange(1, vocab + 1)
    ref = rng.choice(vocab, size=int(lengths.sum()), p=p / p.sum())
    utt_of_tok = np.repeat(np.arange(n), lengths)
    spk_rate = rng.beta(2, 20, n_spk)[np.repeat(np.arange(n_spk), per)]
    grp_extra = 0.02 * g.group  # group k is 2k points worse
    specs = ["clean"] + GRIDS["aequevox"]
    conds = []
    for s in specs:
        if s == "clean":
            conds.append(robustness.Condition("clean", "clean", 0))
        else:
            st = parse_spec(s)[0]
            conds.append(robustness.Condition(s, st.name, st.severity))
    systems = {}
    for si, sysname in enumerate(("A", "B")):
        tables, err, ops = {}, {}, {}
        for c in conds:
            sev = c.severity or 0
            rate = np.clip(spk_rate + grp_extra * (1 + 0.3 * sev) + 0.03 * sev * (si + 1), 0, 0.9)[
                utt_of_tok
            ]
            u = rng.random(len(ref))
            dele = u < rate / 2
            sub = (u >= rate / 2) & (u < rate)
            hyp = np.where(sub, rng.integers(0, vocab, len(ref)), ref)[~dele]
            hyp_len = np.bincount(utt_of_tok[~dele], minlength=n)
            tables[c.spec] = TokenTable(hyp, hyp_len, np.ones(n, dtype=bool))
            err[c.spec] = np.bincount(utt_of_tok, weights=(dele | sub), minlength=n)
            ops[c.spec] = (utt_of_tok, ref, dele | sub)
        systems[sysname] = (tables, err, ops)
    words = [f"w{i}" for i in range(vocab)]
    return g, conds, lengths, systems, words


CPU: dict[str, float] = {}


def timed(label: str, fn, results: dict):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    results[label] = time.perf_counter() - t
    CPU[label] = time.process_time() - c
    print(f"  {label}: {results[label]:.2f} s (CPU {CPU[label]:.2f} s)", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--utts", type=int, default=20000)
    ap.add_argument("--speakers", type=int, default=200)
    ap.add_argument("--groups", type=int, default=5)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--permutations", type=int, default=10000)
    args = ap.parse_args()
    reps, perms = args.bootstrap, args.permutations
    common = dict(reps=reps, perms=perms, level=0.95, seed=0)
    t = time.perf_counter()
    g, conds, n_ref, systems, words = generate(args.utts, args.speakers, args.groups)
    gen_s = time.perf_counter() - t
    rss_gen = rss_mb()
    print(
        f"{args.utts} utterances, {args.speakers} speakers, {args.groups} groups, "
        f"{len(conds)} conditions x 2 systems generated in {gen_s:.1f} s "
        f"(peak RSS {rss_gen:.0f} MB); {os.cpu_count()} CPU(s), "
        f"{platform.processor() or platform.machine()}, load {os.getloadavg()[0]:.1f}"
    )
    res: dict[str, float] = {}
    tabA, errA, opsA = systems["A"]
    tabB = systems["B"][0]
    counts = {
        "cor": n_ref - errA["clean"],
        "sub": errA["clean"],
        "ins": np.zeros_like(n_ref),
        "del": np.zeros_like(n_ref),
        "n_ref": n_ref,
        "n_hyp": n_ref,
        "missing": np.zeros_like(n_ref),
    }
    counts = {k: np.asarray(v, dtype=np.int64) for k, v in counts.items()}
    t_all = time.perf_counter()

    def acc():
        sec, fit = accuracy.group_accuracy(g, counts, **common)
        best = g.index(sec["best_group"])
        return sec, accuracy.lwerr(fit, best, [k for k in range(g.n_groups) if k != best])

    sec, _ = timed("accuracy + LWERR", acc, res)
    err = np.stack([errA[c.spec] for c in conds], 1)
    den = np.repeat(n_ref[:, None], len(conds), 1)
    timed(
        "robustness disparity",
        lambda: robustness.robustness_disparity(
            g, conds, err, den, 0, list(range(1, g.n_groups)), **common
        ),
        res,
    )
    trans: dict[str, list] = {}
    for c in conds[1:]:
        trans.setdefault(c.perturbation, []).append((c.severity, c.spec))
    specs = [c.spec for c in conds]

    def distances(x, y, conditions):
        return (
            {s: edit_distance(x[s], y[s]) for s in conditions},
            {s: np.maximum(x[s].lengths, y[s].lengths) for s in conditions},
        )

    dist, longer = timed(
        f"edit distances, two recognisers ({len(specs)} x {args.utts} pairs)",
        lambda: distances(tabA, tabB, specs),
        res,
    )
    d = timed(
        "differential statistics",
        lambda: differential.differential(g, trans, dist, longer, "clean", **common),
        res,
    )
    clean_a = {s: tabA["clean"] for s in specs[1:]}
    dist1, longer1 = timed(
        f"edit distances, one recogniser ({len(specs) - 1} x {args.utts} pairs)",
        lambda: distances(clean_a, tabA, specs[1:]),
        res,
    )
    timed(
        "metamorphic statistics",
        lambda: differential.differential(g, trans, dist1, longer1, None, **common),
        res,
    )

    def loc():
        out = []
        for pts in trans.values():
            tt = [tabA[c] for _, c in pts]
            sev = [s for s, _ in pts]
            out.append(localiser.localise(g, tabA["clean"], tt, sev, words, 0, 3))
            out.append(
                localiser.validate(
                    g, tabA["clean"], tt, sev, words, [opsA[c] for _, c in pts], 0, 3, reps, 0.95, 0
                )
            )
        return out

    timed("localiser + validation", loc, res)
    total = time.perf_counter() - t_all
    rss_all = rss_mb()
    print(f"analyses total {total:.1f} s; peak RSS {rss_all:.0f} MB")
    n_viol = {r["base"]: r["violations"] for r in d["violations"]}
    print(f"(sanity: best group {sec['best_group']}, violations at tau 0.1 per base {n_viol})")

    # anchors
    from scoring.stats import bootstrap_ci

    err_clean = errA["clean"]
    t = time.perf_counter()
    bootstrap_ci(err_clean, n_ref, reps=reps)
    anchor_boot = time.perf_counter() - t
    t = time.perf_counter()
    sec2, _ = accuracy.group_accuracy(g, counts, reps=reps, perms=1, level=0.95, seed=1)
    ours_boot = time.perf_counter() - t
    pairs_a, pairs_b = tabA["clean"], tabB["clean"]
    t = time.perf_counter()
    ours = edit_distance(pairs_a, pairs_b)
    ours_lev = time.perf_counter() - t
    try:
        from rapidfuzz.distance import Levenshtein

        la = [
            pairs_a.ids[o : o + n].tolist()
            for o, n in zip(pairs_a.offsets, pairs_a.lengths, strict=True)
        ]
        lb = [
            pairs_b.ids[o : o + n].tolist()
            for o, n in zip(pairs_b.offsets, pairs_b.lengths, strict=True)
        ]
        t = time.perf_counter()
        rf = [Levenshtein.distance(x, y) for x, y in zip(la, lb, strict=True)]
        rf_lev = time.perf_counter() - t
        assert rf == ours.tolist(), "edit distances differ from rapidfuzz"
    except ImportError:
        rf_lev = None
    vals = g.perm_sums(np.stack([err_clean, n_ref], 1).astype(np.float64))
    rel = label_matrix(g.perm.group, g.n_groups, perms, rng_for(0, "bench"))
    t = time.perf_counter()
    group_sums(rel.labels, vals, g.n_groups)
    ours_perm = time.perf_counter() - t
    t = time.perf_counter()
    for row in rel.labels:
        np.bincount(row, weights=vals[:, 0], minlength=g.n_groups)
        np.bincount(row, weights=vals[:, 1], minlength=g.n_groups)
    loop_perm = time.perf_counter() - t
    print("\n| stage | wall s | CPU s |\n|---|---|---|")
    for k, v in res.items():
        print(f"| {k} | {v:.2f} | {CPU[k]:.2f} |")
    print(f"| **all analyses** | **{total:.2f}** | **{sum(CPU.values()):.2f}** |")
    print(
        f"\npeak RSS: {rss_gen:.0f} MB after generating the data, {rss_all:.0f} MB after the "
        "analyses"
    )
    print(
        "\n| anchor (same data, same run) | anchor s | ours s | ours / anchor |\n|---|---|---|---|"
    )
    print(
        f"| corpus WER bootstrap (scoring.stats, 1,000 reps, 20,000 utts) vs per-group "
        f"speaker bootstrap of TER and mTER + utterance view (accuracy, 1 permutation) | "
        f"{anchor_boot:.3f} | {ours_boot:.3f} | {ours_boot / anchor_boot:.2f} |"
    )
    if rf_lev is not None:
        print(
            f"| rapidfuzz Levenshtein (C++), {len(ours)} pairs | {rf_lev:.3f} | "
            f"{ours_lev:.3f} | {ours_lev / rf_lev:.2f} |"
        )
    print(
        f"| {perms} permutations of {len(vals)} speakers: a bincount per permutation "
        f"(loop) vs one batched bincount | {loop_perm:.3f} | {ours_perm:.3f} | "
        f"{ours_perm / loop_perm:.2f} |"
    )


if __name__ == "__main__":
    main()
