"""COMPOUNDS: a word joined on one side and split on the other matches, |ref| never moves."""

from __future__ import annotations

import pytest

from scoring import Scorer, ScorerConfig
from scoring.normalize.compounds import MAX_PARTS, compound_matches


def _counts(scorer: Scorer, ref: str, hyp: str) -> tuple[int, int, int, int]:
    u = scorer.score({"u": ref}, {"u": hyp}).utterances[0]
    return u.sub, u.ins, u.dele, len(u.ref)


@pytest.fixture(scope="module")
def on() -> Scorer:
    return Scorer(ScorerConfig(lang="de", nsw=False, bootstrap=0, compounds=True))


@pytest.fixture(scope="module")
def off() -> Scorer:
    return Scorer(ScorerConfig(lang="de", nsw=False, bootstrap=0, compounds=False))


def test_matches_join_and_split() -> None:
    joined = compound_matches(["die", "telefon", "nummer"], ["die", "telefonnummer"])
    assert joined == {1: [(3, (("telefonnummer",),))]}
    split = compound_matches(["touchtone", "phone"], ["a", "touch", "tone", "phone"])
    assert split == {0: [(1, (("touch", "tone"),))]}


def test_short_parts_and_long_chains_are_not_compounds() -> None:
    # `a voir` is not `avoir`: a part of one letter never joins
    assert compound_matches(["a", "voir"], ["avoir"]) == {}
    assert compound_matches(["avoir"], ["a", "voir"]) == {}
    parts = ["ab"] * (MAX_PARTS + 1)
    assert compound_matches(parts, ["ab" * (MAX_PARTS + 1)]) == {}
    assert compound_matches(parts, ["ab" * MAX_PARTS])  # MAX_PARTS parts still join


@pytest.mark.parametrize(
    ("ref", "hyp", "plain", "ref_words"),
    [
        # hypothesis split, reference joined: one substitution and one insertion without
        ("die Telefonnummer ist falsch", "die Telefon Nummer ist falsch", (1, 1, 0), 4),
        # hypothesis joined, reference split: |ref| stays 3 (the leaderboard's merge makes it 2)
        ("bitte touch tone wählen", "bitte touchtone wählen", (1, 0, 1), 4),
        ("Haustür Schlüssel", "Haus Tür Schlüssel", (1, 1, 0), 2),
    ],
)
def test_compound_is_a_match_and_ref_unchanged(
    on: Scorer, off: Scorer, ref: str, hyp: str, plain: tuple[int, int, int], ref_words: int
) -> None:
    assert _counts(off, ref, hyp) == (*plain, ref_words)
    assert _counts(on, ref, hyp) == (0, 0, 0, ref_words)


def test_a_wrong_compound_is_still_wrong(on: Scorer, off: Scorer) -> None:
    # `touch tune` joins to `touchtune`, not the reference's `touchtone`: no match, same count
    assert _counts(on, "touchtone", "touch tune") == _counts(off, "touchtone", "touch tune")
    # joined, the parts must give the reference word exactly (a plural is another word)
    ref, hyp = "die Telefonnummern", "die Telefon Nummer"
    assert _counts(on, ref, hyp) == _counts(off, ref, hyp) == (1, 1, 0, 2)


def test_compounds_beside_a_rule_of_the_same_span() -> None:
    # English keeps COMPOUNDS off by default (its numbers as before); switched on, a compound
    # and the curated DAE rules share the hypothesis
    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0, compounds=True))
    assert _counts(
        scorer, "press the touchtone key i am here", "press the touch tone key i'm here"
    )[:3] == (0, 0, 0)


def test_recorded_and_defaults() -> None:
    de = Scorer(ScorerConfig(lang="de", nsw=False, bootstrap=0))
    assert de.config.compounds is True
    assert de.config_dict()["compounds"] is True
    assert "DAE" in de.config_dict()["steps"]  # COMPOUNDS run inside DAE, even without a list
    en = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    assert en.config.compounds is False
    assert "compounds" not in en.config_dict()  # English config hashes as before
    assert Scorer(ScorerConfig(lang="de", nsw=False, dae=False)).config.compounds is False
    zh = Scorer(ScorerConfig(lang="zh", nsw=False, bootstrap=0, compounds=True))
    assert zh.config.compounds is False  # characters are scored: nothing to join


def test_fst_engine_agrees() -> None:
    # the FST path (`engine="fst"`, or too many slot combinations) reads the same slots
    refs = {"a": "bitte touch tone wählen", "b": "die Telefonnummer ist die Telefonnummer"}
    hyps = {"a": "bitte touchtone wählen", "b": "die Telefon Nummer ist die Telefon nummer"}
    dp = Scorer(ScorerConfig(lang="de", nsw=False, bootstrap=0)).score(refs, hyps)
    fst = Scorer(ScorerConfig(lang="de", nsw=False, bootstrap=0, engine="fst")).score(refs, hyps)
    counts = [(u.sub, u.ins, u.dele, len(u.ref)) for u in dp.utterances]
    assert counts == [(u.sub, u.ins, u.dele, len(u.ref)) for u in fst.utterances]
    assert counts == [(0, 0, 0, 4), (0, 0, 0, 5)]
