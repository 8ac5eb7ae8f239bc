"""Scoring from Python in one line, as jiwer users do (issue 39, item 10).

`from scoring import wer; wer(ref, hyp)` runs the real default pipeline, NSW included, with no
cache argument: NSW's grammars and results go to the checkout's `.cache` (the platform's own,
shared with the other scoring tests through `conftest.cache_dir`), so the English grammars are
built once per checkout. Before this issue `score_corpus()` with its defaults raised "NSW needs
a cache folder".
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jiwer
import pytest

from asrbench.settings import REPO_ROOT
from scoring import ScoringError, cer, score_corpus, wer
from scoring.normalize.nsw import default_cache_dir


def test_wer_of_one_pair_is_a_float_through_the_default_pipeline() -> None:
    # NSW reads "$5" as "five dollars", CASE and PUNC fold the rest: no error
    value = wer("I paid $5.", "i paid five dollars")
    assert isinstance(value, float) and value == 0.0
    assert wer("The cat sat.", "the hat sat") == pytest.approx(1 / 3)


def test_a_default_call_in_a_fresh_process_needs_no_cache_argument() -> None:
    code = (
        "from scoring import wer, score_corpus\n"
        "print(wer('I paid $5 on 3 May', 'i paid five dollars on the third of may'))\n"
        "print(score_corpus({'a': 'I paid $5'}, {'a': 'I paid 5 dollars'}).metrics.ter)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0.0", "0.0"]


def test_default_cache_is_the_checkouts_else_the_users(tmp_path: Path) -> None:
    assert default_cache_dir() == REPO_ROOT / ".cache"  # the platform's default cache
    # scoring installed on its own (no asrbench/settings.py beside it): the user's cache
    alone = tmp_path / "site-packages"
    alone.mkdir()
    xdg = tmp_path / "xdg"
    assert default_cache_dir(alone, {"XDG_CACHE_HOME": str(xdg)}) == xdg / "asrbench"
    assert default_cache_dir(alone, {}) == Path.home() / ".cache" / "asrbench"


def test_corpus_forms_pool_errors_over_reference_words() -> None:
    refs = ["the cat sat on the mat", "a dog"]
    hyps = ["the hat sat on the mat", "a dog"]
    assert wer(refs, hyps) == pytest.approx(1 / 8) == pytest.approx(jiwer.wer(refs, hyps))
    by_id = wer(dict(zip("ab", refs, strict=True)), dict(zip("ab", hyps, strict=True)))
    assert by_id == pytest.approx(1 / 8)
    # a missing hypothesis is an empty string: all deletions, never dropped
    assert wer(["a b", "c d"], ["a b", ""]) == pytest.approx(0.5)


def test_cer_counts_characters_as_jiwer_does() -> None:
    assert cer("the cat", "the hat") == pytest.approx(jiwer.cer("the cat", "the hat"))
    assert cer(["abc", "de"], ["abd", "de"]) == pytest.approx(1 / 5)


def test_score_corpus_gives_the_rich_result_with_defaults() -> None:
    res = score_corpus(["the cat sat", "I paid $5"], ["the hat sat", "i paid five dollars"])
    m = res.metrics
    assert (m.sub, m.ins, m.dele, m.n_ref) == (1, 0, 0, 7)
    assert m.ter_ci is not None and m.ter_ci.low <= m.ter <= m.ter_ci.high  # bootstrap on
    assert [u.id for u in res.utterances] == ["0", "1"]
    assert res.utterances[0].ops[1] == ("S", "cat", "hat")
    # options are ScorerConfig fields: without NSW the digits are a word of their own
    assert score_corpus(["I paid $5"], ["I paid five dollars"], nsw=False).metrics.errors > 0


def test_mismatched_inputs_are_one_scoring_error() -> None:
    with pytest.raises(ScoringError, match="2 references but 1 hypotheses"):
        wer(["a", "b"], ["a"])
    with pytest.raises(ScoringError, match="same form"):
        wer("a b", ["a b"])  # type: ignore[arg-type]
    with pytest.raises(ScoringError, match="undefined"):
        wer("", "something")
    with pytest.raises(ScoringError, match="lang"):
        wer("a", "a", lang="not a tag!")
