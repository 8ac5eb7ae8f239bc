"""Each pipeline step on its own, and the data files it reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.normalize import Case, FullWidth, Itj, Nsw, Punc, UkUs, char_tokens
from scoring.scorer import DATA


def test_case() -> None:
    assert Case()("The BBC Said") == "the bbc said"


def test_punc_keeps_contractions_numbers_and_splits_compounds() -> None:
    p = Punc()
    assert p("Don't stop, it's 3.5 metres!") == "Don't stop it's 3.5 metres"
    assert p("1,000,000 people; 1,5 apples.") == "1000000 people 1 5 apples"
    assert p("a story-teller's tale") == "a story teller's tale"
    assert p("\u2018quoted\u2019 rock\u2019n\u2019roll") == "quoted rock'n'roll"
    assert p("end. Next") == "end Next"
    assert Punc("keep")("story-teller") == "story-teller"
    assert Punc("join")("story-teller") == "storyteller"


def test_itj_removes_only_listed_fillers() -> None:
    itj = Itj(DATA / "interjections.txt")
    assert itj("uh i um think so hmm".split()) == ["i", "think", "so"]
    assert itj(["like", "well", "so"]) == ["like", "well", "so"]


def test_ukus() -> None:
    m = UkUs(DATA / "uk_us.tsv")
    assert (
        m("the colour of the centre organisation".split())
        == "the color of the center organization".split()
    )


def test_uk_us_data_file_is_consistent() -> None:
    step = UkUs(DATA / "uk_us.tsv")
    assert len(step.mapping) >= 500
    for uk, us in step.mapping.items():
        assert uk != us and us not in step.mapping, (uk, us)  # no identity, no chains
        assert uk.islower() and " " not in uk


def test_interjections_data_file() -> None:
    words = Itj(DATA / "interjections.txt").words
    assert {"uh", "um", "hmm"} <= words
    assert not words & {"like", "well", "so", "right", "okay", "yes", "no", "oh"}


def test_fullwidth_and_char_tokens() -> None:
    assert FullWidth()("ＡＢＣ１２３，\u3000x") == "ABC123, x"
    assert char_tokens("我爱 NLP 和 python3") == ["我", "爱", "NLP", "和", "python3"]


def test_nsw_verbalises_and_caches(nsw_step) -> None:
    assert nsw_step("no digits here") == "no digits here"
    out = nsw_step("I paid $5 for 3 apples.")
    assert "five dollars" in out and "three apples" in out
    nsw_step.flush()
    calls = nsw_step.calls
    assert nsw_step("I paid $5 for 3 apples.") == out and nsw_step.calls == calls


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab1 ,.'-!?$%&()_:;\"", max_size=30))
def test_punc_ascii_text_unchanged_by_a_non_ascii_neighbour(text: str) -> None:
    # Non-ASCII text takes extra steps (apostrophe look-alikes, Unicode hyphens): they must
    # not change what happens to the ASCII part.
    p = Punc()
    assert p(text + " \u00e9") == (p(text) + " \u00e9").strip()


_BATCH_ALPHABET = (
    "aAbBzZ \t\n-'.,!?0123456789\u2019\u2010\u00e9\u03a3\u03c3\u4e2d\ue000\ue001\ue002"
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet=_BATCH_ALPHABET, max_size=30), max_size=8),
    st.sampled_from(["space", "keep", "join"]),
)
def test_pipeline_batch_equals_one_by_one(texts: list[str], hyphen: str) -> None:
    from scoring.normalize import Pipeline

    itj = Itj(DATA / "interjections.txt")
    ukus = UkUs(DATA / "uk_us.tsv")
    pipe = Pipeline([Case(), Punc(hyphen)], [itj, ukus])
    texts = [*texts, "Uh the Colour, um, of the Aeroplane's wing", "one\ntwo"]
    assert pipe.batch(texts) == [pipe(t) for t in texts]
    # The fused token steps give what the steps give one after the other.
    for t in texts:
        toks = Punc(hyphen)(Case()(t)).split()
        assert pipe(t) == ukus(itj(toks))


def test_pipeline_batches_with_and_without_token_step_words() -> None:
    """One pipeline, batches in turn: none of its texts holds an ITJ or UK-US word (the batch
    skips the token steps), then some do, then none again; each as one text at a time."""
    from scoring.normalize import Pipeline

    pipe = Pipeline([Case(), Punc()], [Itj(DATA / "interjections.txt"), UkUs(DATA / "uk_us.tsv")])
    plain = ["the wing of the plane", "a b c", ""]
    touched = ["uh the colour", "the wing, um", "no such word"]
    for texts in (plain, touched, plain, [*plain, *touched]):
        assert pipe.batch(texts) == [pipe(t) for t in texts]
    assert pipe.batch(touched) == [["the", "color"], ["the", "wing"], ["no", "such", "word"]]


def test_punctuation_class_is_unicode_category_p() -> None:
    # PUNC removes `regex`'s \p{P}. On every code point this Python's Unicode database assigns,
    # that is exactly the characters whose category starts with P (the scan this replaced);
    # code points assigned only in later Unicode versions may be added, never removed.
    import sys
    import unicodedata

    from scoring.normalize.punc import _PUNCT

    differ = []
    for c in range(sys.maxunicode + 1):
        ch = chr(c)
        cat = unicodedata.category(ch)
        if cat != "Cn" and (cat[0] == "P") != bool(_PUNCT.fullmatch(ch)):
            differ.append(hex(c))
    assert not differ
    p = Punc()
    assert p("«a» ¿b? c—d 「e」 f・g") == "a b c d e f g"
    assert p("© ° ½ + $ 😀") == "© ° ½ + $ 😀"  # symbols (S*) and numbers are not punctuation


def test_nsw_ascii_triggers_match_pattern() -> None:
    from scoring.normalize.nsw import _ASCII_TRIGGERS, NEEDS_NSW

    assert {chr(c) for c in range(128) if NEEDS_NSW.match(chr(c))} == set(_ASCII_TRIGGERS)


@pytest.mark.parametrize(
    ("text", "needed"),
    [
        ("separated by * and then", True),  # a spoken symbol (asterisk)
        ("press # to enter", True),
        ("visit www.asterisk.org", True),  # a URL
        ("mail jdoe@example.com", True),  # an e-mail address
        ("at 5 A.M. or P.M.", True),
        ("A.M.", True),  # a dotted abbreviation
        ("e.g. this", True),
        ("the 30S", True),  # a letter-digit mix
        ("H.323", True),
        ("© the authors", True),
        ("etc. and Mr. Smith", False),  # a dot before a space is a full stop to PUNC
        ("plain words, no symbols!", False),
        ("a | b ~ c", False),  # `|` separates words in some corpora; `~` is rarely read
    ],
)
def test_nsw_triggers(text: str, needed: bool) -> None:
    from scoring.normalize.nsw import NEEDS_NSW

    assert bool(NEEDS_NSW.search(text)) is needed
    step = Nsw(Path("/nonexistent-cache"))  # batch() decides without the cache when not needed
    if not needed:
        assert step.batch([text, "x"]) == [text, "x"]


def test_nsw_says_every_spoken_symbol(cache_dir: Path) -> None:
    # The cases, through the whole scorer: spoken reference words no longer vanish.
    from scoring import Scorer, ScorerConfig

    sc = Scorer(ScorerConfig(cache_dir=str(cache_dir), bootstrap=0))
    refs = {
        "star": "Please enter one or more keywords separated by * and then press the pound key.",
        "url": "For more information, visit www.asterisk.org.",
        "am": "A.M.",
        "decade": "the 30S",
    }
    hyps = {
        "star": "please enter one or more keywords separated by star and then press the pound key",
        "url": "for more information visit w w w dot asterisk dot org",
        "am": "AM",
        "decade": "the thirties",
    }
    got = {u.id: u for u in sc.score(refs, hyps).utterances}
    assert got["star"].n_ref == 15 and (got["star"].sub, got["star"].errors) == (1, 1)
    assert ("asterisk", "star") in [(r, h) for _, r, h in got["star"].ops]
    assert got["url"].ref[-5:] == ["www", "dot", "asterisk", "dot", "org"]
    assert got["url"].errors == 0  # www | w w w from the alternatives
    assert (got["am"].ref, got["am"].errors) == (["am"], 0)
    assert (got["decade"].ref, got["decade"].errors) == (["the", "thirties"], 0)
