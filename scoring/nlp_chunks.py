"""Long NLP recordings scored in chunks: an hour-long reference holding alternations.

A reference with alternations is aligned by the network DP (`scoring.sclite_align`), whose
table is bounded (`SCLITE_MAX_CELLS`, about 2,000 x 2,000 words): an Earnings-21 call has
~10,000. `split` cuts the reference and hypothesis at anchors, the middle of a run of at least
`ANCHOR` words the two share (written forms, lower-cased, punctuation dropped: difflib's
matching blocks, found by `matching_blocks`), about every `TARGET` reference words and only
between pieces; `merge` joins the chunks' results back into one result per recording, so
every metric, the entity ones included, sees whole recordings. A cut inside a shared run is
where the whole alignment also passes unless an optimal path leaves that run unmatched (a
short run repeated nearby): a cut is kept only where the alignment of the `CHECK` words
either side may pass through it at no cost (`_passes`).
`tests/scoring/test_nlp_chunks.py` checks that chunked and whole counts agree on a real
Earnings-21 excerpt cut every 60 words, and on the run that broke that rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from scoring.align import levenshtein
from scoring.matching import matching_blocks
from scoring.metrics import UtteranceResult
from scoring.nlp import Piece, pieces_text

TARGET = 100  # reference words a chunk: the network DP costs ~ words x chunk (800: 8x the time)
ANCHOR = 4  # shared words a cut sits in the middle of
CHECK = 50  # words either side of a cut whose alignment must pass through it (`_passes`)

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
    ids: dict[str, int] = {}
    ref_ids = [ids.setdefault(w, len(ids)) for w in ref_words]
    hyp_ids = [ids.setdefault(_plain(w), len(ids)) for w in hyp_words]
    cuts, last = [], 0
    for a, b, size in matching_blocks(ref_ids, hyp_ids, ANCHOR):
        mid = a + size // 2
        cut = next((i for i in range(mid, a + size) if i in starts), None)
        if cut is not None and cut - last >= target and _passes(ref_ids, hyp_ids, cut, b + cut - a):
            cuts.append((owner[cut], b + cut - a))
            last = cut
    out, p0, h0 = [], 0, 0
    for piece, h in [*cuts, (len(pieces), len(hyp_words))]:
        out.append((list(pieces[p0:piece]), " ".join(hyp_words[h0:h])))
        p0, h0 = piece, h
    return out


def _passes(ref: list[int], hyp: list[int], i: int, j: int) -> bool:
    """Whether an alignment of the `CHECK` words either side of a cut (ref[i], hyp[j]) may
    pass through it at no cost: a shared run can pair words the whole alignment leaves apart
    (Earnings-21's 4359971, Rev Kaldi: the hypothesis's second "stopping the loan for" with
    the reference's first, 4 errors more), and a cut there binds the chunks to it."""
    r, h = ref[max(0, i - CHECK) : i + CHECK], hyp[max(0, j - CHECK) : j + CHECK]
    ri, hj = i - max(0, i - CHECK), j - max(0, j - CHECK)
    forced = levenshtein(r[:ri], h[:hj]) + levenshtein(r[ri:], h[hj:])
    return forced <= levenshtein(r, h)


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
