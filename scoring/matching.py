"""difflib's matching blocks of two word sequences, found fast: the entity mapping's diff
(`scoring.nlp`). (A long NLP recording was cut at them too; `scoring.nlp_chunks` now cuts on
runs of one least-cost alignment.)"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Sequence


def matching_blocks(
    a: Sequence[Hashable], b: Sequence[Hashable], least: int = 1
) -> list[tuple[int, int, int]]:
    """difflib's `SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()` of at
    least `least` elements, without its closing (len(a), len(b), 0): the same blocks, found
    the same way (the longest match of a range, earliest in a then in b, then the ranges
    before and after it), in a fraction of difflib's time over long texts (`_longest`). A
    range whose longest match is shorter than `least` is not searched further (a match inside
    it is no longer). Without junk no block touches another, so difflib's joining of adjacent
    blocks never applies (`tests/scoring/test_nlp_chunks.py` compares the two on real and
    random sequences)."""
    where: dict[Hashable, list[int]] = {}
    for j, x in enumerate(b):
        where.setdefault(x, []).append(j)
    least = max(1, least)
    found: list[tuple[int, int, int]] = []
    queue = [(0, len(a), 0, len(b))]
    while queue:
        alo, ahi, blo, bhi = box = queue.pop()
        i, j, k = _longest(a, b, where, box, least)
        if k < least:
            continue
        found.append((i, j, k))
        if alo < i and blo < j:
            queue.append((alo, i, blo, j))
        if i + k < ahi and j + k < bhi:
            queue.append((i + k, ahi, j + k, bhi))
    found.sort()
    return found


SEED_STEPS = (64, 16, 4)  # seed spacings tried in turn before `least` itself


def _longest(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    where: dict[Hashable, list[int]],
    box: tuple[int, int, int, int],
    least: int,
) -> tuple[int, int, int]:
    """difflib's `find_longest_match` without junk (the longest a[i:i+k] == b[j:j+k] in the
    box, the earliest in a, then in b), or k < `least` when there is none that long. difflib
    extends every pair of equal words; here only pairs whose a-side sits every `step` words
    are extended to the whole match through them: any match of `step` words or more holds
    such a word, so a longest match found at least `step` long is the longest of all (ties
    kept by the same order). Smaller steps follow only when it is shorter; step 1 is every
    pair, difflib's own search."""
    for step in (*(s for s in SEED_STEPS if s > least), least):
        best = _seeded(a, b, where, box, step)
        if best[2] >= step:
            return best
    return box[0], box[2], 0


def _seeded(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    where: dict[Hashable, list[int]],
    box: tuple[int, int, int, int],
    step: int,
) -> tuple[int, int, int]:
    """The longest (then earliest in a, then in b) of the whole matches through a[i] == b[j],
    i every `step` words of the box."""
    alo, ahi, blo, bhi = box
    besti, bestj, bestsize = alo, blo, 0
    done: dict[int, int] = {}  # diagonal j - i -> end in a of the match last extended on it
    for i in range(alo, ahi, step):
        at = where.get(a[i])
        if not at:
            continue
        for n in range(bisect_left(at, blo), len(at)):
            j = at[n]
            if j >= bhi:
                break
            if done.get(j - i, -1) > i:
                continue  # inside a match already extended
            i0, j0 = i, j
            while i0 > alo and j0 > blo and a[i0 - 1] == b[j0 - 1]:
                i0, j0 = i0 - 1, j0 - 1
            i1, j1 = i + 1, j + 1
            while i1 < ahi and j1 < bhi and a[i1] == b[j1]:
                i1, j1 = i1 + 1, j1 + 1
            done[j - i] = i1
            k = i1 - i0
            if k > bestsize or (k == bestsize and (i0, j0) < (besti, bestj)):
                besti, bestj, bestsize = i0, j0, k
    return besti, bestj, bestsize
