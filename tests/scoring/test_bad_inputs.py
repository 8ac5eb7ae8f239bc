"""The scorer's files from tests/bad_inputs/: what users get wrong, and what they get."""

from __future__ import annotations

import pytest

from scoring import Scorer, ScorerConfig, ScoringError, read_transcripts
from tests.conftest import REPO_ROOT

BAD = REPO_ROOT / "tests" / "bad_inputs"


def test_tab_inside_a_transcript_is_a_space() -> None:
    # Headerless TSV: the text is everything after the first tab, a further tab a space (the
    # benchmark reads what models write the same way).
    assert read_transcripts(BAD / "transcript_tab_inside.tsv") == {
        "u1": "hello world",
        "u2": "press  one",
    }


def test_reference_markers_are_not_charged() -> None:
    refs = read_transcripts(BAD / "reference_markers.tsv")
    hyps = {
        "beep": "",
        "menu": "press 1 for sales 2 for support",
        "silence": "",
        "music": "thank you",
    }
    res = Scorer(ScorerConfig(nsw=False, bootstrap=0)).score(refs, hyps)
    got = {u.id: (u.ref, u.errors) for u in res.utterances}
    assert got["beep"] == ([], 0)
    assert got["menu"][1] == 0 and "noise" not in got["menu"][0]
    assert got["silence"] == (["1", "second", "of", "silence"], 0)  # optional, omitted
    assert got["music"] == (["thank", "you"], 0)


def test_alternatives_with_one_form_names_the_line() -> None:
    with pytest.raises(ScoringError, match=r"alternatives_one_form.txt:3: a rule needs"):
        Scorer(ScorerConfig(nsw=False, alternatives=str(BAD / "alternatives_one_form.txt")))


def test_bad_marker_pattern_names_the_line() -> None:
    with pytest.raises(ScoringError, match=r"nonspeech_bad_regex.txt:3: not a valid regular"):
        Scorer(ScorerConfig(nsw=False, nonspeech_markers=str(BAD / "nonspeech_bad_regex.txt")))
