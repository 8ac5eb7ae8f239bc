"""The scorer's plan with its compiled parts against the Python they replace where the
extension is not built: token ids looked up in C (`scoring._fast.token_ids`, `_Plan.start` and
`_Plan.add_plain`) against the `map` over the vocabulary (the same ids in the same order, a new
token given the next id by the vocabulary's own `__missing__` where it is first met), the
pairs' ids as one int64 array (`_fast.int64s`) against numpy's, and the same scores end to end
with DAE slots. And the cheapest DAE combination (`_cheapest`) against the one `min` over
(cost, insertions, index) it replaces."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from scoring import scorer as scorer_module
from scoring.scorer import Scorer, ScorerConfig, _cheapest, _Vocab

_fast = scorer_module._fast
pytestmark = pytest.mark.skipif(
    _fast is None, reason="scoring/_fast.pyx not built (pip install -e ., make ext)"
)


def _lists(rng: random.Random, n: int) -> list[list[str]]:
    words = [f"w{i}" for i in range(40)] + ["", "é", "ü" * 3]
    return [[rng.choice(words) for _ in range(rng.choice((0, 1, 5, 30)))] for _ in range(n)]


def test_token_ids_equal_the_vocabularys_lookups() -> None:
    rng = random.Random(43)
    lists = _lists(rng, 400)
    for start, stop in ((0, 400), (0, 0), (7, 9), (150, 400)):
        vocab_py, vocab_c = _Vocab([]), _Vocab([])
        for vocab in (vocab_py, vocab_c):  # some words known beforehand, others met here
            vocab["w3"], vocab["w17"] = 6, 7
        want = list(map(vocab_py.__getitem__, itertools.chain.from_iterable(lists[start:stop])))
        got = _fast.token_ids(lists, start, stop, vocab_c)
        assert got == want
        assert list(vocab_c.items()) == list(vocab_py.items())
        assert vocab_c.words == vocab_py.words
        as_array = _fast.token_ids(lists, start, stop, _Vocab([]), True)
        assert as_array.dtype == np.int64
        assert as_array.tolist() == _fast.token_ids(lists, start, stop, _Vocab([]))


def test_token_ids_refuse_a_non_dict() -> None:
    with pytest.raises(TypeError):
        _fast.token_ids([["a"]], 0, 1, [("a", 6)])


def test_scores_equal_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    words = "okay ok alright all right color colour the a of to in".split()
    refs = {
        f"u{i}": " ".join(rng.choice(words) for _ in range(rng.randrange(12))) for i in range(300)
    }
    hyps = {k: " ".join(rng.choice(words) for _ in range(rng.randrange(12))) for k in refs}

    def run() -> list[tuple[str, str, str]]:
        utts = Scorer(ScorerConfig()).utterances(refs, hyps)
        return [(u.codes, " ".join(u.hyp), repr(u.alternatives)) for u in utts]

    compiled = run()
    monkeypatch.setattr(scorer_module, "_fast", None)
    assert run() == compiled
    assert any(alts != "[]" for _, _, alts in compiled)  # DAE slots among them


def test_int64s_equal_numpys() -> None:
    rng = random.Random(5)
    for n in (0, 1, 1000):
        values = [rng.randrange(-(2**63), 2**63) for _ in range(n)]
        values[: n // 2] = [np.int64(v) for v in values[: n // 2]]  # numpy's integers too
        assert _fast.int64s(values).tolist() == np.array(values, dtype=np.int64).tolist()
    with pytest.raises(OverflowError):
        _fast.int64s([2**63])


def test_cheapest_combination_is_the_min_of_cost_insertions_index() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        n = rng.randrange(1, 8)
        costs = [rng.choice((3, 4, 5)) for _ in range(n + 4)]
        codes = ["".join(rng.choice("CSDI") for _ in range(rng.randrange(5))) for _ in costs]
        a, b = 2, 2 + n
        want = min(range(a, b), key=lambda c: (costs[c], codes[c].count("I"), c))
        assert _cheapest(costs, codes, a, b) == want
