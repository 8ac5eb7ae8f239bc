"""DAE on long pairs, window by window (scoring/dae_windows.py, `Scorer._windowed`): the windows'
counts equal the whole pair's on every pair short enough for the whole-pair engines, and a pair
too long for the FST's exact weights is scored with DAE instead of refused."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scoring import Scorer, ScorerConfig
from scoring.align import check_exact
from scoring.dae_windows import Weights, cut_rows, plan_cuts
from scoring.meeting import score_sessions
from scoring.segments import Segment

# Phrases with DAE readings (rules of alternatives_en.txt), in pairs of equivalent forms,
# overlapping ones among them (`a hundred and`), and plain words: hypotheses hold many slots.
PAIRS = [
    ("i am", "i'm"), ("going to", "gonna"), ("we are", "we're"), ("it is", "it's"),
    ("ok", "okay"), ("that is", "that's"), ("i would", "i'd"), ("i had", "i'd"),
    ("he is", "he's"), ("he has", "he's"), ("do not", "don't"), ("five oh one", "five zero one"),
    ("a hundred and", "one hundred"), ("we will", "we'll"), ("let us", "let's"),
]  # fmt: skip
PHRASES = [p for pair in PAIRS for p in pair]
PARTNER = {a: b for pair in PAIRS for a, b in (pair, pair[::-1])}
WORDS = "the of and to a in is was he for it with as his on be at by had not are but".split()


def _text(rng: random.Random, n: int, phrases: float) -> list[str]:
    """Chunks (a word or a phrase) of at least n words."""
    out: list[str] = []
    words = 0
    while words < n:
        out.append(rng.choice(PHRASES) if rng.random() < phrases else rng.choice(WORDS))
        words += out[-1].count(" ") + 1
    return out


def _system(rng: random.Random, ref: list[str], err: float) -> list[str]:
    """Substitutions, deletions, insertions (now and then a burst of them, as a model's
    hallucination), a phrase's other form (DAE takes it back), other phrases in place of
    words (DAE must not)."""
    hyp: list[str] = []
    for chunk in ref:
        if rng.random() < 0.01:
            hyp += [rng.choice(WORDS) for _ in range(rng.randint(5, 25))]
        x = rng.random()
        if x < err * 0.5:
            hyp.append(rng.choice(WORDS))
        elif x < err * 0.75:
            continue
        elif x < err:
            hyp += [chunk, rng.choice(WORDS)]
        elif chunk in PARTNER and x < err + 0.5:
            hyp.append(PARTNER[chunk])
        elif x < err + 0.05:
            hyp.append(rng.choice(PHRASES))
        else:
            hyp.append(chunk)
    return " ".join(hyp).split()


def _corpus(seed: int, n: int, longest: int) -> tuple[dict[str, str], dict[str, str]]:
    """Pairs with DAE phrases on both sides; some reference words optional (`(the)`)."""
    rng = random.Random(seed)
    refs, hyps = {}, {}
    for k in range(n):
        chunks = _text(rng, rng.randint(1, longest), 0.3)
        refs[f"u{k}"] = " ".join(f"({w})" if rng.random() < 0.04 else w for w in chunks)
        hyps[f"u{k}"] = " ".join(_system(rng, chunks, 0.2))
    return refs, hyps


def _counts(u) -> tuple:
    """What every engine gives alike: errors and substitutions always, and where no reference
    word is optional, deletions, insertions and correct words too. An optional word matched
    (C) or omitted (O, free, counted correct) can tie on (E, S) and trade D against I, in the
    whole-pair engines as in the windows (seen: `(that) (is) by` against `that is by` scored
    `O O` + two insertions, or `C C` + a deletion and an insertion; `(one) hundred` against
    `a hundred and` read `one hundred and` or `a hundred`, C or O)."""
    if u.optional and any(u.optional):
        return (u.errors, u.sub, len(u.ref))
    return (u.errors, u.sub, u.dele, u.ins, u.cor, len(u.ref))


def _is_reading(u) -> None:
    """The hypothesis as aligned is a reading of what was written: each alternative in place,
    and its codes fit the tokens."""
    assert len(u.codes) - u.ins == len(u.ref)
    assert len(u.codes) - u.dele - u.codes.count("O") == len(u.hyp)
    for a, b, form, _ in u.alternatives:
        assert u.hyp[a:b] == form.split()


@pytest.mark.parametrize("max_enum", [2, 8])
def test_windows_give_the_whole_pairs_counts(max_enum: int) -> None:
    # Every pair whose slots allow more than max_enum combinations is scored by windows on
    # one side (window_dae) and whole on the other (enumeration or the FST): equal counts.
    refs, hyps = _corpus(max_enum, 150, 90)
    whole = Scorer(ScorerConfig(nsw=False, bootstrap=0, max_enum=max_enum))
    windowed = Scorer(ScorerConfig(nsw=False, bootstrap=0, max_enum=max_enum))
    windowed.window_dae = True
    a, b = whole.score(refs, hyps), windowed.score(refs, hyps)
    cut = 0
    for x, y in zip(a.utterances, b.utterances, strict=True):
        assert _counts(x) == _counts(y), (x.id, x.ops, y.ops)
        _is_reading(y)
        written = windowed.normalize(hyps[x.id])
        found = windowed.alternatives.split(written, y.ref) if written else None
        if found:
            readings = [len(s.forms) for s in found[1]]
            cut += bool(plan_cuts(_readings(found), max_enum)) and np.prod(readings) > max_enum
    assert cut >= 20  # the windows were cut, many times over
    assert (a.metrics.errors, a.metrics.n_ref) == (b.metrics.errors, b.metrics.n_ref)


def _readings(found) -> list[int]:
    runs, slots = found
    out = [1] * len(runs[0])
    for slot, run in zip(slots, runs[1:], strict=True):
        out.append(len(slot.forms))
        out.extend([1] * len(run))
    return out


def test_cut_rows_on_plain_pairs_give_the_aligners_cost() -> None:
    # Without slots the lattice is the hypothesis: the optimum equals the aligner's counts,
    # and the cut rows never go back.
    rng = random.Random(3)
    scorer = Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=0))
    for _ in range(40):
        chunks = _text(rng, rng.randint(1, 120), 0)
        ref, hyp = chunks, _system(rng, chunks, 0.3) or ["the"]
        u = scorer.score({"u": " ".join(ref)}, {"u": " ".join(hyp)}).utterances[0]
        ids = {w: i for i, w in enumerate(sorted(set(ref + hyp)))}
        cuts = sorted(rng.sample(range(1, len(hyp)), min(5, len(hyp) - 1)))
        e0 = u.sub + u.dele + u.ins
        best, rows, w = cut_rows(
            np.array([ids[x] for x in ref]), None, [ids[x] for x in hyp], cuts, e0
        )
        assert w.counts(best) == (e0, u.sub, u.ins)
        assert rows == sorted(rows) and all(0 <= r <= len(ref) for r in rows)


def test_weights_order_edits_then_substitutions_then_insertions() -> None:
    w = Weights.for_pair(1000, 1200)
    assert w.e > 1000 * w.m + 1200  # one edit outweighs every S and I
    assert w.counts(3 * w.e + 2 * w.m + 1) == (3, 2, 1)


def _long_pair(n: int) -> tuple[str, str]:
    rng = random.Random(11)
    chunks = _text(rng, n, 0.25)
    return " ".join(chunks), " ".join(_system(rng, chunks, 0.15))


def test_a_pair_too_long_for_the_fst_is_scored_with_dae() -> None:
    # 3,300 words with hundreds of slots: the whole-pair FST's float32 weights are not exact
    # (this pair used to be refused: "split it, or pass dae=False"); the windows score it.
    ref, hyp = _long_pair(3300)
    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    refs, hyps = {"s": ref}, {"s": hyp}
    found = scorer.alternatives.split(scorer.normalize(hyp), scorer.normalize(ref))
    assert found is not None and len(found[1]) > 100
    assert not check_exact(len(hyp.split()) + 2, len(ref.split()), len(hyp.split()))
    u = scorer.score(refs, hyps).utterances[0]
    _is_reading(u)
    assert len(u.alternatives) > 50  # DAE took alternatives
    plain = Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=0)).score(refs, hyps)
    assert u.errors < plain.utterances[0].errors
    # other cuts (windows of at most 16 combinations, or 256) give the same counts
    for max_enum in (16, 256):
        other = Scorer(ScorerConfig(nsw=False, bootstrap=0, max_enum=max_enum))
        assert _counts(other.score(refs, hyps).utterances[0]) == _counts(u)


def test_long_session_scores_with_dae_on() -> None:
    # session WER and cpWER hand a session's (a speaker's) whole text to the Scorer as one
    # utterance: 3,300 words with DAE on score, where they were refused
    ref, hyp = _long_pair(3300)
    refs = [Segment("s1", "A", 0.0, 1800.0, ref)]
    hyps = [Segment("s1", "x", 0.0, 1800.0, hyp)]
    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    want = scorer.score({"s": ref}, {"s": hyp}).utterances[0]
    for metric in ("wer", "cpwer"):
        got = score_sessions(scorer, refs, hyps, metric).sessions[0]
        assert (got.sub, got.dele, got.ins, got.n_ref) == (
            want.sub,
            want.dele,
            want.ins,
            len(want.ref),
        )


def test_a_window_with_one_huge_slot_is_enumerated() -> None:
    # A slot whose readings exceed max_enum stays alone in its window; when even that window
    # is too long for the FST (a long run of deletions beside it), the DP enumerates its
    # readings: no refusal. Forced here with max_enum=1 and a reference far longer.
    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0, max_enum=1))
    ref = " ".join(["the"] * 4000 + ["i", "am", "going", "to", "go"])
    u = scorer.score({"s": ref}, {"s": "i'm gonna go"}).utterances[0]
    assert (u.sub, u.ins, u.dele) == (0, 0, 4000)
    assert u.hyp == ["i", "am", "going", "to", "go"]


def test_engine_fst_never_refuses_a_long_pair() -> None:
    # engine="fst" sends every pair to the FST; one too long for its exact weights goes to the
    # DP (a plain hypothesis: the same counts by construction) or to windows (with slots)
    rng = random.Random(5)
    ref = " ".join(rng.choice(WORDS[:8]) for _ in range(3000))
    hyp = " ".join(rng.choice(WORDS[:8]) for _ in range(3000))
    auto, fst = (
        Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=0, engine=e)) for e in ("auto", "fst")
    )
    assert _counts(fst.score({"s": ref}, {"s": hyp}).utterances[0]) == _counts(
        auto.score({"s": ref}, {"s": hyp}).utterances[0]
    )
    dae = Scorer(ScorerConfig(nsw=False, bootstrap=0, engine="fst"))
    u = dae.score({"s": "i am going to go " * 600}, {"s": "i'm gonna go " * 600}).utterances[0]
    assert (u.errors, len(u.alternatives), len(u.ref)) == (0, 1200, 3000)


@pytest.mark.parametrize("max_enum", [8, 16])
def test_many_combinations_are_chosen_by_windows_and_aligned_whole(max_enum: int) -> None:
    # A pair with more than max_enum slot combinations has its forms chosen by the windows and
    # is then aligned whole, as the FST's path was: no FST is composed, the counts are the
    # FST engine's, and where both chose the same forms the ops are the same (the whole pair's
    # back-trace, not the windows' joined ops, which can place an edit elsewhere).
    refs, hyps = _corpus(10 + max_enum, 150, 90)
    auto = Scorer(ScorerConfig(nsw=False, bootstrap=0, max_enum=max_enum))
    fst = Scorer(ScorerConfig(nsw=False, bootstrap=0, max_enum=max_enum, engine="fst"))
    a, b = auto.score(refs, hyps), fst.score(refs, hyps)
    assert auto._fst is None  # no FST (every window here had at most max_enum combinations)
    many = same = 0
    for x, y in zip(a.utterances, b.utterances, strict=True):
        assert _counts(x) == _counts(y), (x.id, x.ops, y.ops)
        _is_reading(x)
        written = auto.normalize(hyps[x.id])
        found = auto.alternatives.split(written, x.ref) if written else None
        if found and np.prod([len(s.forms) for s in found[1]]) > max_enum:
            many += 1
            if x.hyp == y.hyp:
                same += 1
                assert x.ops == y.ops, x.id
    assert many >= 20 and same >= many // 2
