"""Differential test against jiwer 4.0.0 itself (issue 25 item 3): counts, WER, CER, MER, WIL, WIP.

The scorer's own normalisation steps (which jiwer does not have) are switched off, so both see
the same tokens: single-spaced texts split at spaces (words) or into characters, spaces
included (`unit="char"`, jiwer's `cer`). Both minimise the number of edits, so the total E =
S + D + I of every pair is determined and must be equal. How E splits into S, D and I is not:
among paths of equal E, ours takes the fewest substitutions (docs/SCORING.md, Alignment),
rapidfuzz's opcodes (jiwer) take another one. Since N_ref + N_hyp = 2H + S + E, fewer
substitutions means more hits, so where the splits differ ours has H higher by half the S
difference, and MER/WIP (which read H and I) differ with them. What is compared exactly:
E and WER for every pair and pooled, every count where the splits agree, and the measure
formulas (Metrics built from jiwer's own counts give jiwer's measures to the last bit).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import jiwer
import pytest

from scoring import Scorer, ScorerConfig
from scoring.metrics import Metrics

# Every step jiwer does not do, off: what is scored is the text split at spaces.
OFF: dict[str, Any] = {
    "nsw": False,
    "dae": False,
    "itj": False,
    "ukus": False,
    "punc": False,
    "case": False,
    "nonspeech": False,
    "optional": False,
    "invisible": False,
    "unicode": False,
    "bootstrap": 0,
}
N_PAIRS = 3000
PROCESS: dict[str, Callable] = {
    "word": jiwer.process_words,
    "char": jiwer.process_characters,
}


def _corpus(seed: int, vocab: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Seeded pairs: empty texts included; half the hypotheses are noisy copies."""
    rng = random.Random(seed)

    def sentence() -> str:
        return " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 10)))

    refs = {f"u{i:05d}": sentence() for i in range(N_PAIRS)}
    hyps = {}
    for key, ref in refs.items():
        if rng.random() < 0.5:
            hyps[key] = sentence()
        else:
            words = [w if rng.random() < 0.7 else rng.choice(vocab) for w in ref.split()]
            hyps[key] = " ".join(w for w in words if rng.random() < 0.9)
    return refs, hyps


def _from_counts(unit: str, h: int, s: int, d: int, i: int) -> Metrics:
    """A Metrics holding jiwer's pooled counts (only what the measures read)."""
    return Metrics(unit, 1, h + s + d, h + s + i, h, s, i, d, 0, 0, 0, 0)


VOCABS = {
    "word": "a b c d e f".split(),  # few words: many matches and equal-cost paths
    "char": "the cat sat on a mat ab ba".split(),
}


@pytest.mark.parametrize("unit", ["word", "char"])
def test_counts_and_measures_match_jiwer(unit: str) -> None:
    refs, hyps = _corpus(25, VOCABS[unit])
    res = Scorer(ScorerConfig(unit=unit, **OFF)).score(refs, hyps)
    process = PROCESS[unit]
    split_differs = 0
    for u in res.utterances:
        o = process(refs[u.id], hyps[u.id])
        assert len(u.ref) == o.hits + o.substitutions + o.deletions, u.id
        assert len(u.hyp) == o.hits + o.substitutions + o.insertions, u.id
        assert u.errors == o.substitutions + o.deletions + o.insertions, u.id  # E: determined
        if (u.cor, u.sub) != (o.hits, o.substitutions):
            split_differs += 1
            # ours: the fewest substitutions among minimal paths, so at least jiwer's hits
            assert u.sub < o.substitutions and u.cor > o.hits, u.id
    pooled = process(list(refs.values()), list(hyps.values()))
    m = res.metrics
    h, s, d, i = pooled.hits, pooled.substitutions, pooled.deletions, pooled.insertions
    assert (m.n_ref, m.n_hyp, m.errors) == (h + s + d, h + s + i, s + d + i)
    rate = pooled.wer if unit == "word" else pooled.cer
    assert m.ter == rate
    # The formulas: our Metrics on jiwer's counts gives jiwer's numbers exactly.
    theirs = _from_counts(unit, h, s, d, i)
    assert theirs.ter == rate
    if unit == "word":
        assert (theirs.mer, theirs.wil, theirs.wip) == (pooled.mer, pooled.wil, pooled.wip)
    # Where no split differs, every count and measure is jiwer's (the char corpus has a few).
    assert split_differs < N_PAIRS // 10
    if split_differs == 0:
        assert (m.cor, m.sub, m.dele, m.ins) == (h, s, d, i)


def test_measures_on_agreeing_splits_equal_jiwer() -> None:
    """Pairs whose splits agree (most): pooled, every count and measure is jiwer's."""
    refs, hyps = _corpus(7, VOCABS["word"])
    res = Scorer(ScorerConfig(**OFF)).score(refs, hyps)
    keep = [u.id for u in res.utterances if (u.cor, u.sub) == _hs(refs[u.id], hyps[u.id])]
    assert len(keep) > 0.9 * N_PAIRS
    sub = Scorer(ScorerConfig(**OFF)).score({k: refs[k] for k in keep}, {k: hyps[k] for k in keep})
    o = jiwer.process_words([refs[k] for k in keep], [hyps[k] for k in keep])
    m = sub.metrics
    assert (m.cor, m.sub, m.dele, m.ins) == (o.hits, o.substitutions, o.deletions, o.insertions)
    assert (m.ter, m.mer, m.wil, m.wip) == (o.wer, o.mer, o.wil, o.wip)


def _hs(ref: str, hyp: str) -> tuple[int, int]:
    o = jiwer.process_words(ref, hyp)
    return o.hits, o.substitutions


def test_cer_counts_spaces_as_jiwer() -> None:
    """The issue's example: jiwer's 5/14 with `unit="char"`; zh's default is the mixed unit."""
    ref, hyp = "This is a test", "This test"
    m = Scorer(ScorerConfig(unit="char", **OFF)).score({"a": ref}, {"a": hyp}).metrics
    assert (m.errors, m.n_ref, m.ter, m.name) == (5, 14, jiwer.cer(ref, hyp), "CER")
    zh = Scorer(ScorerConfig(lang="zh", bootstrap=0)).score({"a": ref}, {"a": hyp}).metrics
    assert (zh.unit, zh.name, zh.errors, zh.n_ref) == ("mixed", "TER", 2, 4)
    assert zh.tokens_name == "tokens (CJK characters + words)"
    # with the default steps, `--unit char` lower-cases and strips punctuation first
    m = (
        Scorer(ScorerConfig(unit="char", nsw=False, bootstrap=0))
        .score({"a": "This, is a test."}, {"a": "this test"})
        .metrics
    )
    assert (m.errors, m.n_ref) == (5, 14)


def test_char_unit_for_any_language() -> None:
    sc = Scorer(ScorerConfig(lang="zh", unit="char", bootstrap=0))
    m = sc.score({"a": "今天 OK"}, {"a": "今夫 ok"}).metrics
    assert (m.n_ref, m.errors) == (5, 1)  # 今 天 space O K; CASE folded ok
    assert sc.normalize("今天 OK") == ["今", "天", " ", "o", "k"]


def test_char_unit_optional_word_costs_nothing() -> None:
    sc = Scorer(ScorerConfig(unit="char", nsw=False, bootstrap=0))
    res = sc.score({"a": "yes (well) i do", "b": "(well) yes"}, {"a": "yes i do", "b": "yes"})
    assert [u.errors for u in res.utterances] == [0, 0]


def test_empty_references_follow_jiwer_where_defined() -> None:
    """Empty references: their hypothesis words are insertions (as jiwer counts them); a
    corpus TER over no reference word is undefined (null), where jiwer returns the insertion
    count as its "WER"; MER/WIL/WIP take jiwer's empty cases."""
    sc = Scorer(ScorerConfig(**OFF))
    m = sc.score({"a": "", "b": "x y"}, {"a": "p q", "b": "x y"}).metrics
    o = jiwer.process_words(["", "x y"], ["p q", "x y"])
    assert (m.ins, m.n_empty_ref, m.ter) == (o.insertions, 1, o.wer)
    assert (m.mer, m.wil, m.wip) == (o.mer, o.wil, o.wip)
    for ref, hyp in (("", "p q"), ("", ""), ("x", "")):
        m = sc.score({"a": ref}, {"a": hyp}).metrics
        o = jiwer.process_words(ref, hyp)
        assert (m.mer, m.wil, m.wip) == (o.mer, o.wil, o.wip), (ref, hyp)
        assert m.ter == (None if not ref else o.wer)


def test_summary_round_trip_and_older_summaries() -> None:
    m = Scorer(ScorerConfig(**OFF)).score({"a": "a b c"}, {"a": "a x c d"}).metrics
    d = m.to_dict()
    assert (d["mer"], d["wil"], d["wip"]) == (m.mer, m.wil, m.wip)
    assert Metrics.from_dict(d) == m
    old = {k: v for k, v in d.items() if k not in ("mer", "wil", "wip")}
    assert Metrics.from_dict(old).wip == m.wip  # recomputed from the counts
    # before `mixed` existed, zh's unit was written "char": read as what it counted
    assert Metrics.from_dict({**old, "unit": "char"}).unit == "mixed"
    assert Metrics.from_dict({**d, "unit": "char"}).unit == "char"
