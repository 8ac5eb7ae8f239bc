"""difflib's matching blocks found fast (scoring/matching.py): the same blocks as difflib's
`SequenceMatcher(autojunk=False)` on the Earnings-21 excerpt (tests/fixtures/earnings21) and on
seeded random sequences."""

from __future__ import annotations

import random
from difflib import SequenceMatcher

import pytest

from asrbench.settings import REPO_ROOT
from scoring.matching import matching_blocks
from scoring.nlp import hypothesis_text, read_nlp
from scoring.nlp_chunks import ANCHOR, _plain

E21 = REPO_ROOT / "tests" / "fixtures" / "earnings21"


def _difflib_blocks(a: list, b: list, least: int) -> list[tuple[int, int, int]]:
    blocks = SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    return [(i, j, k) for i, j, k in blocks if k >= least]


@pytest.mark.parametrize("least", [1, ANCHOR])
def test_matching_blocks_equal_difflib_on_the_earnings21_excerpt(least: int) -> None:
    """The excerpt's reference against Google's output, and against itself cut up: the same
    blocks as difflib's, the ones `split` cuts at (least ANCHOR) and all of them."""
    ref = [_plain(t.token) for t in read_nlp(E21 / "4320211.nlp")]
    hyp = [_plain(w) for w in hypothesis_text(read_nlp(E21 / "google" / "4320211.nlp")).split()]
    shuffled = ref[200:] + ref[:150] + ref[100:300]  # long repeats: seeds 64 words apart
    for b in (hyp, shuffled):
        found = matching_blocks(ref, b, least)
        assert found == _difflib_blocks(ref, b, least)
        assert any(k >= 64 for _, _, k in found) or b is hyp


def test_matching_blocks_equal_difflib_on_random_sequences() -> None:
    """Seeded random pairs: small alphabets (many ties, short matches) and edited copies
    (matches longer than every seed step), each least from 1 to 5."""
    rng = random.Random(7)
    for _ in range(200):
        size = rng.randrange(1, 6)
        a = [rng.randrange(size) for _ in range(rng.randrange(0, 300))]
        if rng.random() < 0.5:
            b = [rng.randrange(size) for _ in range(rng.randrange(0, 300))]
        else:  # a copy with words dropped, added and swapped
            b = [x if rng.random() > 0.02 else size for x in a if rng.random() > 0.03]
            for _ in range(rng.randrange(4)):
                b.insert(rng.randrange(len(b) + 1), rng.randrange(size + 1))
        every = _difflib_blocks(a, b, 1)
        for least in range(1, 6):
            expected = [x for x in every if x[2] >= least]
            assert matching_blocks(a, b, least) == expected, (a, b, least)
