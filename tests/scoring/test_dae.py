"""DAE: the alternatives file, expansion on the hypothesis only, and each rule class."""

from __future__ import annotations

import pytest

from scoring import Scorer, ScorerConfig, ScoringError
from scoring.dae import Alternatives, Slot, parse_rules
from scoring.scorer import DATA


def test_curated_list_is_large_and_unambiguous(scorer: Scorer) -> None:
    rules = parse_rules(DATA / "alternatives_en.txt")
    assert len(rules) >= 300
    assert (
        scorer.alternatives is not None and len(scorer.alternatives) >= 300
    )  # loads: no form twice


@pytest.mark.parametrize(
    ("ref", "hyp"),
    [
        ("i am going to go", "i'm gonna go"),  # contraction + informal
        ("they do not know", "they don't know"),  # negation
        ("a good storyteller", "a good story-teller"),  # compound, hyphenated
        ("a good story teller", "a good storyteller"),  # compound, open in the reference
        ("it is ok", "it's okay"),  # abbreviation
        ("the u s a", "the usa"),  # initialism
        ("we will see", "we'll see"),
    ],
)
def test_each_class_matches(scorer: Scorer, ref: str, hyp: str) -> None:
    res = scorer.score({"u": ref}, {"u": hyp})
    assert res.utterances[0].errors == 0, res.utterances[0].ops
    assert res.utterances[0].n_ref == len(ref.split())


def test_reference_is_never_expanded(scorer: Scorer) -> None:
    refs = {"u": "i'm gonna go", "v": "we are going to see"}
    hyps = {"u": "i am going to go", "v": "we're gonna see"}
    with_dae = scorer.score(refs, hyps)
    without = Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=0)).score(refs, hyps)
    assert [u.ref for u in with_dae.utterances] == [u.ref for u in without.utterances]
    assert with_dae.metrics.n_ref == without.metrics.n_ref == 8  # |ref| never moves
    assert with_dae.metrics.errors == 0 < without.metrics.errors
    # two spans a hypothesis are scored in their other form: i am, going to; we are, going to
    assert with_dae.metrics.dae_slots_used == 4 and without.metrics.dae_slots_used == 0


def test_span_matches_as_a_whole(scorer: Scorer) -> None:
    # Only half of "going to" is in the reference: the slot must not mix forms.
    res = scorer.score({"u": "we are going home"}, {"u": "we're gonna home"})
    u = res.utterances[0]
    assert u.hyp in (
        ["we", "are", "gonna", "home"],
        ["we", "are", "going", "to", "home"],
        ["we're", "gonna", "home"],
    )


def test_expand_longest_match(tmp_path) -> None:  # noqa: ANN001
    f = tmp_path / "alt.txt"
    f.write_text("a b c|abc\nab|a b\n", encoding="utf-8")
    alts = Alternatives(f, str.split)
    seg = alts.expand("x a b c y".split())
    assert (
        seg[0] == "x"
        and isinstance(seg[1], Slot)
        and seg[1].forms[seg[1].surface] == ("a", "b", "c")
    )
    assert alts.expand("nothing here".split()) is None


def test_bad_rules_name_the_line(tmp_path) -> None:  # noqa: ANN001
    f = tmp_path / "alt.txt"
    f.write_text("ok|okay\nsolo\n", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"alt.txt:2"):
        Scorer(ScorerConfig(nsw=False, alternatives=str(f)))
    f.write_text("ok|okay\nokay|o k\n", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"alt.txt:2.*line 1"):
        Scorer(ScorerConfig(nsw=False, alternatives=str(f)))


def _scan(alts: Alternatives, tokens: list[str]) -> list:
    """The documented expansion, position by position: longest form first, file order on ties."""
    out, i, found = [], 0, False
    while i < len(tokens):
        cands = [(toks, r, k) for r, rule in enumerate(alts.rules)
                 for k, toks in enumerate(rule.forms) if tuple(tokens[i : i + len(toks)]) == toks]
        if cands:
            toks, r, k = max(cands, key=lambda c: len(c[0]))  # max keeps the first on ties
            out.append(Slot(r, alts.rules[r].forms, k))
            i += len(toks)
            found = True
        else:
            out.append(tokens[i])
            i += 1
    return out if found else None


def test_expansion_matches_a_plain_scan(scorer: Scorer) -> None:
    import random

    alts = scorer.alternatives
    assert alts is not None
    forms = [" ".join(f) for r in alts.rules[:80] for f in r.forms]
    rng = random.Random(4)
    for _ in range(300):
        words = rng.choices(["the", "cat", "to", "i", "am", "a"] + forms, k=rng.randint(0, 12))
        tokens = " ".join(words).split()
        assert alts.expand(tokens) == _scan(alts, tokens), tokens
