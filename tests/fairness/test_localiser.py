"""The fault localiser on planted word drops, and its validation on planted errors."""

from __future__ import annotations

import numpy as np
import pytest

from asrbench.fairness.localiser import localise, split_halves, validate
from asrbench.fairness.tokens import Vocab
from tests.fairness import synth

SPK = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}


def _tables(g, v: Vocab):
    """Original: every utterance says 'six two three'. Under severities 1..3 group A loses
    'six' (8, 0 then 5 occurrences of its 10 kept: the minimum is at severity 2, not the
    last), 'three' becomes more frequent, 'two' is untouched; group B keeps everything."""
    n = len(g.ids)
    orig = [["six", "two", "three"] for _ in range(n)]
    a_rows = [i for i, u in enumerate(g.ids) if u.startswith("a")]
    keep_six = {1: 8, 2: 0, 3: 5}
    sev = []
    for s in (1, 2, 3):
        rows = []
        for i in range(n):
            words = ["two", "three"]
            if i not in a_rows or a_rows.index(i) < keep_six[s]:
                words = ["six"] + words
            if i in a_rows:
                words = words + ["three"]
            rows.append(words)
        sev.append(v.table(rows))
    return v.table(orig), sev


def test_planted_drops_min_over_severities_and_no_negative_drop():
    g = synth.grouping(SPK, 5)  # 10 utterances per group
    v = Vocab()
    orig, sev = _tables(g, v)
    rows = localise(g, orig, sev, [1, 2, 3], v.words, omega=3, min_count=1)
    got = {(r["group"], r["word"]): r for r in rows}
    six = got[("A", "six")]
    assert six["wc"] == 10 and six["counts"] == [8, 0, 5] and six["min_wc"] == 0
    assert six["min_at"] == 2 and six["drop"] == 10 and six["rel_drop"] == 1.0
    assert six["non_robust"] and six["rank"] == 1
    assert got[("A", "three")]["drop"] == 0  # 20 > 10 occurrences: no negative drop
    assert got[("A", "two")]["drop"] == 0 and not got[("A", "two")]["non_robust"]
    assert got[("B", "six")]["drop"] == 0
    assert got[("*", "six")]["drop"] == 10 and got[("*", "six")]["rel_drop"] == 0.5
    # omega: a drop of 10 is non-robust above omega = 9, not at omega = 10
    assert localise(g, orig, sev, [1, 2, 3], v.words, omega=10)[0]["non_robust"] is False


def test_validation_measures_planted_error_rates_on_held_out_utterances():
    g = synth.grouping({f"s{i}": "A" if i < 4 else "B" for i in range(8)}, 10)
    v = Vocab()
    n = len(g.ids)
    orig = v.table([["six", "two"] for _ in range(n)])
    sev = [v.table([["two"] for _ in range(n)])]  # 'six' always lost: non-robust
    six, two = v.id("six"), v.id("two")
    # reference alignments: 'six' wrong in 1 of 2 utterances, 'two' in 1 of 10
    utt = np.repeat(np.arange(n), 2)
    word = np.tile([six, two], n)
    err = np.zeros(2 * n, dtype=bool)
    err[0::4] = True  # 'six' of every other utterance
    err[1::20] = True  # 'two' of every tenth utterance
    out = validate(g, orig, sev, [1], v.words, [(utt, word, err)], omega=0, reps=200)
    disc = split_halves(g, 0)
    assert disc.sum() == out["n_discovery_utts"] == 40 and out["n_heldout_utts"] == 40
    assert out["non_robust_words"] == ["six"] and out["n_robust_words"] == 1
    held = np.flatnonzero(~disc)
    exp_nr = np.mean([err[2 * i] for i in held])
    exp_r = np.mean([err[2 * i + 1] for i in held])
    assert out["nonrobust"]["error_rate"] == pytest.approx(exp_nr)
    assert out["robust"]["error_rate"] == pytest.approx(exp_r)
    assert out["more_errors_pct"] == pytest.approx(100 * (exp_nr / exp_r - 1))
    assert out["nonrobust"]["occurrences"] == 40 and out["paper_more_errors_pct"] == 223.8
    ci = out["more_errors_pct_ci"]
    assert ci["low"] <= out["more_errors_pct"] <= ci["high"]


def test_halves_hold_every_speaker():
    g = synth.grouping({f"s{i}": "A" if i % 2 else "B" for i in range(6)}, 5)
    disc = split_halves(g, 1)
    for u in range(6):
        m = g.boot_unit == u
        assert disc[m].sum() == 3 and (~disc[m]).sum() == 2
