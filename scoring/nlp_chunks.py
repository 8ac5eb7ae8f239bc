"""Long NLP recordings scored in chunks: an hour-long reference holding alternations.

A reference with alternations is aligned by the network DP (`scoring.sclite_align`), whose
table is bounded (`SCLITE_MAX_CELLS`, about 2,000 x 2,000 words): an Earnings-21 call has
~10,000. `split` cuts the reference and hypothesis at anchors, the middle of a run of at least
`ANCHOR` words matched in a row on one least-cost plain alignment of the two (written forms,
lower-cased, punctuation dropped, the reference's first readings: `_matched_runs`), about
every `TARGET` reference words and only between pieces; `merge` joins the chunks' results back
into one result per recording, so every metric, the entity ones included, sees whole
recordings. A cut on an optimal plain path is where the whole alignment passes unless its
readings move it; runs shared apart from the alignment (difflib's matching blocks, used
before) could pair words it leaves apart.
`tests/scoring/test_nlp_chunks.py` checks that chunked and whole counts agree on a real
Earnings-21 excerpt cut every 60 words, and on two planted stretches that broke that rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from scoring.align import FIRST_WORD, align_batch
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
    ids: dict[str, int] = {}
    ref_ids = [ids.setdefault(w, FIRST_WORD + len(ids)) for w in ref_words]
    hyp_ids = [ids.setdefault(_plain(w), FIRST_WORD + len(ids)) for w in hyp_words]
    cuts, last = [], 0
    for a, b, size in _matched_runs(ref_ids, hyp_ids):
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


def _matched_runs(ref: list[int], hyp: list[int]) -> list[tuple[int, int, int]]:
    """(reference start, hypothesis start, size) of each run of at least `ANCHOR` words matched
    in a row on one least-cost plain alignment of the two (`scoring.align`): a cut there lies
    on an optimal path. Shared runs found apart from the alignment (difflib's longest matches)
    can pair words it leaves apart: Rev Kaldi's 4359971 ("stopping the loan for" twice, 4
    errors more than fstalign) and, in a call whose hold message repeats, whole repetitions
    (Rev ESPnet's 4387383: 344 more)."""
    k = max(len(ref), len(hyp)) + 1  # above any substitution count
    (ops,), _ = align_batch([(ref, hyp)], k)  # word ids from FIRST_WORD
    runs, i, j, size = [], 0, 0, 0
    for c in ops + "X":
        if c == "C":
            size += 1
        else:
            if size >= ANCHOR:
                runs.append((i - size, j - size, size))
            size = 0
        i += c in "CSD"
        j += c in "CSI"
    return runs


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
