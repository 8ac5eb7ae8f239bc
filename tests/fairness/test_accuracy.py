"""Per-group accuracy and LWERR on synthetic results whose answers are known by construction."""

from __future__ import annotations

import math

import numpy as np
import pytest

from asrbench.errors import InputError
from asrbench.fairness.accuracy import group_accuracy, lwerr
from asrbench.fairness.groups import Row, make_grouping, rows_from
from tests.fairness import synth

FIVE_AND_FIVE = {**{f"f{i}": "F" for i in range(5)}, **{f"m{i}": "M" for i in range(5)}}


def _planted(err_f: int = 2, err_m: int = 1, n_ref: int = 10, per: int = 4):
    """Every F utterance has err_f errors in n_ref words, every M utterance err_m."""
    g = synth.grouping(FIVE_AND_FIVE, per)
    errors = np.where(np.array([i.startswith("f") for i in g.ids]), err_f, err_m)
    return g, synth.counts(errors, np.full(len(errors), n_ref))


def test_planted_group_errors_give_known_rates_differences_and_exact_p():
    g, c = _planted()
    acc, f = group_accuracy(g, c, reps=200, perms=10000)
    rows = {r["group"]: r for r in acc["groups"]}
    assert rows["F"]["rate"] == pytest.approx(0.2) and rows["M"]["rate"] == pytest.approx(0.1)
    assert acc["best_group"] == "M"
    assert rows["F"]["diff_to_best"]["value"] == pytest.approx(0.1)
    assert rows["F"]["ratio_to_best"]["value"] == pytest.approx(2.0)
    # identical speakers within a group: every bootstrap replicate is the same
    assert rows["F"]["ci"]["low"] == pytest.approx(0.2) == rows["F"]["ci"]["high"]
    assert rows["F"]["metrics"]["ci"]["ter"]["low"] == pytest.approx(0.2)
    assert rows["F"]["metrics"]["sub"] == 5 * 4 * 2 and rows["F"]["metrics"]["n_ref"] == 200
    # 5 + 5 speakers: 252 relabellings, enumerated; only the observed one and its mirror
    # image reach |0.2 - 0.1|
    t = acc["test"]
    assert t["exact"] and t["permutations"] == 252 and t["n_units"] == 10
    assert t["p_value"] == pytest.approx(2 / 252)
    assert rows["F"]["test_vs_best"]["p_value"] == pytest.approx(2 / 252)
    assert rows["F"]["test_vs_best"]["p_holm"] == pytest.approx(2 / 252)
    (row,) = lwerr(f, base=g.index("M"), compares=[g.index("F")])
    assert row["lwerr"] == pytest.approx(1.0) and row["log_base"] == 2
    assert row["ci"]["low"] == pytest.approx(1.0) == row["ci"]["high"]
    assert row["test"]["p_value"] == pytest.approx(2 / 252)


def test_mter_utt_uses_the_longer_of_reference_and_hypothesis_per_utterance():
    g, c = _planted()
    c = dict(c)
    c["ins"] = c["sub"].copy()  # every error doubled by insertions: |hyp| = |ref| + err
    c["n_hyp"] = c["n_ref"] + c["ins"]
    acc, _ = group_accuracy(g, c, metric="mter_utt", reps=50, perms=100)
    rows = {r["group"]: r for r in acc["groups"]}
    assert rows["F"]["rate"] == pytest.approx(4 / 12)  # (2 sub + 2 ins) / max(10, 12)
    assert rows["F"]["metrics"]["ter"] == pytest.approx(0.4)


def test_lwerr_is_undefined_when_a_group_makes_no_error():
    g, c = _planted(err_f=1, err_m=0)
    _, f = group_accuracy(g, c, reps=50, perms=100)
    (row,) = lwerr(f, base=g.index("M"), compares=[g.index("F")])
    assert row["lwerr"] is None and "undefined" in row["note"]
    assert row["ci"]["low"] is None


def test_small_groups_are_flagged_kept_and_warned_about():
    spk = {"a1": "A", "a2": "A", "a3": "A", "b1": "B"}
    g = synth.grouping(spk, 10)
    assert [i["small"] for i in g.info] == [False, True]
    assert g.info[1]["small_reasons"] == ["1 speaker(s) < 3", "10 utterance(s) < 20"]
    assert any("group 'B' of GENDER" in w and "1 speaker" in w for w in g.warnings)
    errors = np.where(np.array([i.startswith("b") for i in g.ids]), 0, 3)
    acc, _ = group_accuracy(g, synth.counts(errors, np.full(40, 10)), reps=50, perms=100)
    rows = {r["group"]: r for r in acc["groups"]}
    # B is best (no error) but small: the best group is chosen among the groups not flagged
    assert acc["best_group"] == "A" and rows["B"]["small"]
    assert rows["B"]["ci"]["low"] is None and "fewer than 2 speakers" in rows["B"]["ci_note"]
    assert rows["B"]["ci_utterances"]["low"] == 0.0  # the within-speaker view still exists


def test_unlabelled_utterances_are_reported_and_left_out():
    rows = [Row("u1", "F", "s1"), Row("u2", "", "s1"), Row("u3", "M", "s2")]
    g = make_grouping(rows, "GENDER", "mini", 1, 1)
    assert g.ids == ["u1", "u3"] and g.unlabelled == ["u2"]
    assert "1 utterance(s) of mini have no GENDER value (u2)" in g.warnings[0]


def test_label_varying_within_a_speaker_relabels_utterances_and_says_so():
    rows = [
        Row("u1", "noisy", "s1"),
        Row("u2", "quiet", "s1"),
        Row("u3", "noisy", "s2"),
        Row("u4", "quiet", "s2"),
    ]
    g = make_grouping(rows, "ROOM", "d", 1, 1)
    assert g.perm.kind == "utterance" and len(g.boot.group) == 4
    assert any("ROOM varies within 2 speaker(s)" in w for w in g.warnings)


def test_input_errors_name_the_column_and_the_dataset():
    from types import SimpleNamespace

    utts = [SimpleNamespace(id="u1", extra={"GENDER": "F"})]
    with pytest.raises(
        InputError,
        match="dataset mini_en has no column 'ACCENTS'; its metadata columns: SPEAKER, GENDER",
    ):
        rows_from(
            utts, "ACCENTS", "mini_en", ["ID", "AUDIO", "DURATION", "TEXT", "SPEAKER", "GENDER"]
        )
    with pytest.raises(InputError, match="single value 'F'"):
        make_grouping([Row("u1", "F", "s"), Row("u2", "F", "t")], "GENDER", "mini_en")
    g = synth.grouping(FIVE_AND_FIVE, 2)
    with pytest.raises(
        InputError,
        match="--base 'W' is not a value of GENDER in dataset synthetic; its values: F, M",
    ):
        g.index("W", "--base")


def test_three_groups_dispersion_statistic_by_hand():
    spk = {f"{k}{i}": k for k in "ABC" for i in range(3)}
    g = synth.grouping(spk, 2)
    rate = {"A": 1, "B": 2, "C": 3}
    errors = np.array([rate[i[0]] for i in g.ids])
    acc, _ = group_accuracy(g, synth.counts(errors, np.full(len(errors), 10)), reps=10, perms=5000)
    # rates .1 .2 .3, pooled .2, equal weights: sum n_g (r_g - r)^2 / sum n_g = 0.02 / 3
    assert acc["test"]["value"] == pytest.approx(0.02 / 3)
    # 9!/(3!3!3!) = 1680 relabellings: exact; the 3! orderings of the observed split reach it
    assert acc["test"]["exact"] and acc["test"]["permutations"] == 1680
    assert acc["test"]["p_value"] == pytest.approx(6 / 1680)
    assert math.isclose(sum(r["diff_to_best"]["value"] for r in acc["groups"]), 0.3)
