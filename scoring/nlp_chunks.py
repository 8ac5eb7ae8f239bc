"""Long NLP recordings scored in chunks: an hour-long reference holding alternations.

A reference with alternations is aligned by the network DP (`scoring.sclite_align`), whose
table is bounded (`SCLITE_MAX_CELLS`, about 2,000 x 2,000 words): an Earnings-21 call has
~10,000. `split` cuts the reference and hypothesis at anchors, the middle of a run of at least
`ANCHOR` words the two share (written forms, lower-cased, punctuation dropped: difflib's
matching blocks, found by `matching_blocks`), about every `TARGET` reference words and only
between pieces; `merge` joins the chunks' results back into one result per recording, so
every metric, the entity ones included, sees whole recordings. A cut inside a shared run is
where the whole alignment also passes unless an optimal path leaves that run unmatched;
`tests/scoring/test_nlp_chunks.py` checks that chunked and whole counts agree on a real
Earnings-21 excerpt cut every 60 words.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Sequence

from scoring.metrics import UtteranceResult
from scoring.nlp import Piece, pieces_text

TARGET = 100  # reference words a chunk: the network DP costs ~ words x chunk (800: 8x the time)
ANCHOR = 4  # shared words a cut sits in the middle of

_STRIP = ".,;:!?\"'()[]"


def _plain(word: str) -> str:
    return word.lower().strip(_STRIP)


def split(
    pieces: Sequence[Piece], hyp_text: str, target: int = TARGET
) -> list[tuple[list[Piece], str]]:
    """(pieces, hypothesis text) chunks; one chunk when the reference is short or no anchor
    is found."""
    ref_words, owner = [], []
    for k, p in enumerate(pieces):
        for w in p.branches[0].split():
            ref_words.append(_plain(w))
            owner.append(k)
    hyp_words = hyp_text.split()
    if len(ref_words) <= target or not hyp_words:
        return [(list(pieces), hyp_text)]
    starts = {i for i in range(len(owner)) if i == 0 or owner[i] != owner[i - 1]}
    cuts, last = [], 0
    for a, b, size in matching_blocks(ref_words, [_plain(w) for w in hyp_words], ANCHOR):
        mid = a + size // 2
        cut = next((i for i in range(mid, a + size) if i in starts), None)
        if cut is not None and cut - last >= target:
            cuts.append((owner[cut], b + cut - a))
            last = cut
    out, p0, h0 = [], 0, 0
    for piece, h in [*cuts, (len(pieces), len(hyp_words))]:
        out.append((list(pieces[p0:piece]), " ".join(hyp_words[h0:h])))
        p0, h0 = piece, h
    return out


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


def chunk_texts(
    ident: str, pieces: Sequence[Piece], hyp_text: str | None, target: int = TARGET
) -> tuple[dict[str, str], dict[str, str]]:
    """The chunks of a recording as reference and hypothesis texts keyed `ID#k` (one chunk
    keyed by the ID itself); a recording without a hypothesis is not cut."""
    if hyp_text is None:
        return {ident: pieces_text(pieces)}, {}
    chunks = split(pieces, hyp_text, target)
    if len(chunks) == 1:
        return {ident: pieces_text(pieces)}, {ident: hyp_text}
    refs = {f"{ident}#{k}": pieces_text(p) for k, (p, _) in enumerate(chunks)}
    hyps = {f"{ident}#{k}": h for k, (_, h) in enumerate(chunks)}
    return refs, hyps


def merge(utts: Sequence[UtteranceResult]) -> list[UtteranceResult]:
    """Chunk results (`ID#k`, in order) joined into one result a recording."""
    out: list[UtteranceResult] = []
    groups: dict[str, list[UtteranceResult]] = {}
    for u in utts:
        ident = u.id.rsplit("#", 1)[0] if "#" in u.id else u.id
        if ident not in groups:
            groups[ident] = []
        groups[ident].append(u)
    for ident, parts in groups.items():
        if len(parts) == 1 and parts[0].id == ident:
            out.append(parts[0])
            continue
        out.append(_joined(ident, parts))
    return out


def _joined(ident: str, parts: list[UtteranceResult]) -> UtteranceResult:
    ref: list[str] = []
    hyp: list[str] = []
    codes = ""
    alts: list[tuple[int, int, str, str]] = []
    optional: list[bool] = []
    for u in parts:
        shift = len(hyp)
        alts += [
            (a + shift, b + shift, chosen, written) for a, b, chosen, written in u.alternatives
        ]
        optional += u.optional if u.optional is not None else [False] * len(u.ref)
        ref += u.ref
        hyp += u.hyp
        codes += u.codes
    return UtteranceResult(
        id=ident,
        ref=ref,
        hyp=hyp,
        codes=codes,
        missing=all(u.missing for u in parts),
        alternatives=alts,
        optional=optional if any(optional) else None,
    )
