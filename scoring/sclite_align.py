"""sclite's alignment, exactly (`ScorerConfig(align="sclite")`, `--align sclite`).

NIST sclite (SCTK 2.4, Debian `sctk`) does not minimise the number of edits: it minimises a
weighted cost, substitution 4, deletion 3, insertion 3, a match 0, and, with `-D`, 2 for
leaving out an optionally deletable word (a parenthesised word, on either side), which it then
counts as correct. Among paths of equal weighted cost it walks back from the end of both
sequences preferring the diagonal (match or substitution), then an insertion, then a deletion.
Both the weights and that order were checked against the binary on tens of thousands of random
pairs over 3-5 word vocabularies (every other order of the three moves, and walking back from
the start, give different counts on some pairs); `tests/scoring/test_sclite_exact.py` keeps
checking it on 5,000 pairs with optional words.

The default aligner (`scoring.align`) takes the fewest edits instead; the two differ on 3 to 4
of 1,000 such random pairs (docs/SCORING.md), sclite's count never the lower. This module aligns
one pair at a time, used only in the exact mode: a short pair in plain Python over its whole
table, a long one (an hour-long call) in numpy rows keeping 2 bits a cell.

Below, the same for a reference holding alternations `{ a / b / @ }` and null words, and for
fragments and optional hypothesis words: sclite's network DP (`Net`, `net_align`, checked
against the binary by `tests/scoring/test_sclite_input.py`); with the `MINIMAL` weights it also
serves the default mode for such utterances.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from struct import Struct

import numpy as np

SUB, DEL, INS, OPT = 4, 3, 3, 2  # sclite's weights; OPT: skipping an optional word (`-D`)
_F32 = Struct("f")


def _skip_costs(n: int, optional: Sequence[bool] | None, cost: int) -> list[int]:
    if optional is None:
        return [cost] * n
    return [OPT if o else cost for o in optional]


def _table(
    ref: Sequence[Hashable], hyp: Sequence[Hashable], dc: list[int], ic: list[int]
) -> list[list[int]]:
    """The weighted-cost table: rows[i][j] aligns ref[:i] with hyp[:j]."""
    prev = [0]
    for c in ic:
        prev.append(prev[-1] + c)
    rows = [prev]
    for r, d in zip(ref, dc, strict=True):
        row = [prev[0] + d]
        for j, h in enumerate(hyp):
            row.append(min(prev[j] + (0 if r == h else SUB), prev[j + 1] + d, row[j] + ic[j]))
        rows.append(row)
        prev = row
    return rows


# Above this many cells a pair takes the numpy rows (`sclite_align_bits`); below, the plain
# Python table is faster (numpy's per-row calls cost more than a short row's loop).
SMALL_CELLS = 1 << 12
# The plain pair's bound: the rows keep 2 bits a cell (256 MB at 2^30 cells, ~32,000 x 32,000
# words); beyond it the exact mode refuses the utterance (scoring.scorer).
MAX_CELLS = 1 << 30


def sclite_align(
    ref: Sequence[Hashable],
    hyp: Sequence[Hashable],
    ref_optional: Sequence[bool] | None = None,
    hyp_optional: Sequence[bool] | None = None,
) -> tuple[str, int]:
    """sclite's alignment of two token sequences: its op string and weighted cost.

    Letters: C, S, D, I; `O` an optional reference word left out, `o` an optional hypothesis
    word left out (sclite counts both as correct). Tokens compare with `==`. Short pairs walk
    the whole table (`sclite_align_table`), longer ones numpy rows with 2 bits a cell kept
    (`sclite_align_bits`): the same path, the same string."""
    if len(ref) * len(hyp) <= SMALL_CELLS:
        return sclite_align_table(ref, hyp, ref_optional, hyp_optional)
    return sclite_align_bits(ref, hyp, ref_optional, hyp_optional)


def sclite_align_table(
    ref: Sequence[Hashable],
    hyp: Sequence[Hashable],
    ref_optional: Sequence[bool] | None = None,
    hyp_optional: Sequence[bool] | None = None,
) -> tuple[str, int]:
    """`sclite_align` keeping the whole table of Python ints (short pairs)."""
    dc = _skip_costs(len(ref), ref_optional, DEL)
    ic = _skip_costs(len(hyp), hyp_optional, INS)
    rows = _table(ref, hyp, dc, ic)
    i, j = len(ref), len(hyp)
    out: list[str] = []
    while i or j:
        here = rows[i][j]
        if i and j:
            same = ref[i - 1] == hyp[j - 1]
            if here == rows[i - 1][j - 1] + (0 if same else SUB):
                out.append("C" if same else "S")
                i, j = i - 1, j - 1
                continue
        if j and here == rows[i][j - 1] + ic[j - 1]:
            out.append("o" if ic[j - 1] == OPT else "I")
            j -= 1
        else:
            out.append("O" if dc[i - 1] == OPT else "D")
            i -= 1
    out.reverse()
    return "".join(out), rows[-1][-1]


def _token_ids(ref: Sequence[Hashable], hyp: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Both sides as int arrays, one id per distinct token (equal ids iff `==`)."""
    ids: dict[Hashable, int] = {}
    get = ids.setdefault
    r = np.fromiter((get(t, len(ids)) for t in ref), dtype=np.int64, count=len(ref))
    h = np.fromiter((get(t, len(ids)) for t in hyp), dtype=np.int64, count=len(hyp))
    return r, h


def _bit_rows(
    r: np.ndarray, h: np.ndarray, dc: list[int], ic: list[int]
) -> tuple[np.ndarray, np.ndarray, int]:
    """The table row by row, never kept: per cell (i, j >= 1) whether the walk back takes the
    diagonal there and whether an insertion reaches it, packed 8 cells a byte; the cost.

    Within a row, D[j] = min(A[j], D[j-1] + ic[j-1]) (A: the cheaper of the diagonal and the
    deletion) unrolls to D[j] = C[j] + min over k <= j of (A[k] - C[k]), C the running sum of
    the insertion costs: a cumulative minimum, exact in integers."""
    n, m = len(r), len(h)
    dtype = np.int32 if 4 * (n + m) < 2**31 else np.int64
    icd = np.array(ic, dtype=dtype)
    csum = np.zeros(m + 1, dtype=dtype)
    np.cumsum(icd, out=csum[1:])
    diag_bits = np.empty((n, (m + 7) // 8), dtype=np.uint8)
    ins_bits = np.empty_like(diag_bits)
    prev = csum.copy()
    a = np.empty(m + 1, dtype=dtype)
    diag = np.empty(m, dtype=dtype)
    for i in range(n):
        np.add(prev[:-1], SUB, out=diag)
        np.copyto(diag, prev[:-1], where=h == r[i])
        d = dc[i]
        a[0] = prev[0] + d
        np.add(prev[1:], d, out=a[1:])
        np.minimum(a[1:], diag, out=a[1:])
        np.subtract(a, csum, out=a)
        np.minimum.accumulate(a, out=a)
        np.add(a, csum, out=a)
        diag_bits[i] = np.packbits(a[1:] == diag)
        ins_bits[i] = np.packbits(a[1:] == np.add(a[:-1], icd))
        prev, a = a, prev
    return diag_bits, ins_bits, int(prev[-1])


def sclite_align_bits(
    ref: Sequence[Hashable],
    hyp: Sequence[Hashable],
    ref_optional: Sequence[bool] | None = None,
    hyp_optional: Sequence[bool] | None = None,
) -> tuple[str, int]:
    """`sclite_align` in bounded memory: numpy rows keeping 2 bits a cell (25 MB for a
    10,000 x 10,000-word pair), the walk back reading the same tests as the table's."""
    dc = _skip_costs(len(ref), ref_optional, DEL)
    ic = _skip_costs(len(hyp), hyp_optional, INS)
    r, h = _token_ids(ref, hyp)
    diag_bits, ins_bits, cost = _bit_rows(r, h, dc, ic)
    rl, hl = r.tolist(), h.tolist()
    i, j = len(ref), len(hyp)
    out: list[str] = []
    while i and j:
        byte, shift = (j - 1) >> 3, 7 - ((j - 1) & 7)
        if diag_bits[i - 1, byte] >> shift & 1:
            out.append("C" if rl[i - 1] == hl[j - 1] else "S")
            i, j = i - 1, j - 1
        elif ins_bits[i - 1, byte] >> shift & 1:
            out.append("o" if ic[j - 1] == OPT else "I")
            j -= 1
        else:
            out.append("O" if dc[i - 1] == OPT else "D")
            i -= 1
    out.extend("o" if ic[k] == OPT else "I" for k in range(j - 1, -1, -1))
    out.extend("O" if dc[k] == OPT else "D" for k in range(i - 1, -1, -1))
    out.reverse()
    return "".join(out), cost


def sclite_counts(codes: str) -> tuple[int, int, int, int]:
    """(C, S, D, I) as sclite reports them: omitted optional words count as correct."""
    s, d, i = codes.count("S"), codes.count("D"), codes.count("I")
    return len(codes) - s - d - i, s, d, i


# --- Networks: alternations, null words, fragments, optional words on either side ---------
#
# sclite aligns a reference holding alternations as a network of arcs (net_dp.c): a cell per
# (reference arc, hypothesis arc), each taking the cheapest of its predecessors' cells (the
# first one on equal cost), the diagonal preferred on ties, then a deletion, then an insertion
# (`<=` then `<`, as `calculate_internal_cells`). Its weights (`wwd_WORD`), in thousandths:
# the null word `@` costs 0.001 to skip, so a branch `@` loses every tie, and 1 against `@`.


def f32(x: float) -> float:
    """`x` rounded to a C float: sclite adds its costs in single precision."""
    return _F32.unpack(_F32.pack(x))[0]


@dataclass(frozen=True)
class Weights:
    """Costs of the network DP; `single`: sums rounded to single precision, as sclite's."""

    sub: float
    indel: float
    optional: float  # leaving out an optional word
    null: float  # leaving out `@`
    null_sub: float  # `@` against `@`
    single: bool = False


SCLITE = Weights(float(SUB), float(DEL), float(OPT), f32(0.001), 1.0, single=True)


class Net:
    """A reference as sclite's network: arc 0 the null head, each other arc a word (None: `@`)
    with its optional flag, its `strict` flag (a synonym's word, `Word.strict`: never
    substituted or deleted, 2: no insertion after it) and predecessors (in sclite's order);
    `finals` end the network."""

    __slots__ = ("words", "optional", "strict", "preds", "finals")

    def __init__(self) -> None:
        self.words: list[str | None] = [None]
        self.optional: list[bool] = [False]
        self.strict: list[int] = [0]
        self.preds: list[tuple[int, ...]] = [()]
        self.finals: tuple[int, ...] = (0,)

    @classmethod
    def of(cls, items: Sequence, labels: bool = False) -> Net:
        """The network of `scoring.normalize.alternation` items (`Word`, `Alt`). `labels`:
        each outermost alternation between two null words, as fstalign's graph holds an
        entity between an entry and an exit label (`_fst_table`)."""
        net = cls()
        if labels:
            from scoring.normalize.alternation import Word

            null = Word(None)
            items = [x for it in items for x in ((null, it, null) if _is_alt(it) else (it,))]
        net.finals = net._add(items, (0,))
        return net

    def _add(self, items: Sequence, preds: tuple[int, ...]) -> tuple[int, ...]:
        for item in items:
            branches = getattr(item, "branches", None)
            if branches is None:
                self.words.append(item.text)
                self.optional.append(item.optional)
                self.strict.append(item.strict)
                self.preds.append(preds)
                preds = (len(self.words) - 1,)
            else:
                ends: list[int] = []
                for branch in branches:
                    ends.extend(self._add(branch, preds))
                preds = tuple(ends)
        return preds


Equal = Callable[[str, str], bool]


def _is_alt(item: object) -> bool:
    return getattr(item, "branches", None) is not None


def frag_equal(marks: str) -> Equal:
    """sclite's `equal_WORD2` with `-F`. A fragment's hyphen is one of `marks`: the first a
    fragment's, the second a hyphen kept but not making a fragment (sclite's `(-c)`: an optional
    word is a fragment only when it ends in a hyphen). When either word is a fragment, a leading
    hyphen of the reference's word makes it match any word it ends, a trailing one any word it
    begins (then the same for the hypothesis's word); otherwise the words must be equal."""
    frag, weak = marks[0], marks[1]
    table = str.maketrans({frag: "-", weak: "-"})

    def equal(ref: str, hyp: str) -> bool:
        if not (_is_frag(ref, frag) or _is_frag(hyp, frag)):
            return ref == hyp
        r, h = ref.translate(table), hyp.translate(table)
        for x, y in ((r, h), (h, r)):
            if len(x) > 1 and x[0] == "-":
                return y.endswith(x[1:])
            if len(x) > 1 and x[-1] == "-":
                return y.startswith(x[:-1])
        return r == h

    return equal


def _is_frag(tok: str, frag: str) -> bool:
    return tok[:1] == frag or tok[-1:] == frag


def _plain_equal(ref: str, hyp: str) -> bool:
    return ref == hyp


def net_align(
    ref: Net,
    hyp: Net,
    weights: Weights = SCLITE,
    equal: Equal = _plain_equal,
    fst_ties: bool = False,
) -> tuple[list[tuple[int, int]], str, float]:
    """Align two networks (a plain hypothesis is a chain: `Net.of` its words): the path's
    columns as (reference arc, hypothesis arc) pairs, 0 for none, `@` columns left out; its
    op string (`C S D I`; `O`/`o` an optional reference/hypothesis word left out, counted
    correct) and its cost. `fst_ties`: of equally cheap paths, the one fstalign takes
    (`_fst_table`): the same cost and errors."""
    table = _fst_table if fst_ties else _net_table
    cost, back = table(ref, hyp, weights, equal)
    return _net_path(ref, hyp, cost, back, equal)


def _skip_costs_of(net: Net, w: Weights) -> list[float]:
    """Leaving out each arc: `@` 0.001, an optional word OPT, a synonym's word never, any
    other word DEL (= INS)."""
    return [0.0] + [
        _NEVER if s else w.null if x is None else w.optional if o else w.indel
        for x, o, s in zip(net.words[1:], net.optional[1:], net.strict[1:], strict=True)
    ]


_NEVER = float("inf")  # a move a synonym's words forbid


def _glue_costs(net: Net) -> list[float]:
    """Inserting a word after each arc: never inside a synonym, else nothing more."""
    return [_NEVER if s == 2 else 0.0 for s in net.strict]


def _add_f32(x: float, y: float) -> float:
    return _F32.unpack(_F32.pack(x + y))[0]


def _sub_cost(word: str | None, h: str | None, w: Weights, equal: Equal, strict: int = 0) -> float:
    if word is None or h is None:
        return w.null_sub if word is None and h is None else w.sub
    return 0 if equal(word, h) else _NEVER if strict else w.sub


def _first_min(cells: list[float], preds: tuple[int, ...]) -> int:
    """The first predecessor of least cost (sclite's strict `<` over its in-arcs)."""
    return min(preds, key=cells.__getitem__)


def _net_table(
    ref: Net, hyp: Net, w: Weights, equal: Equal
) -> tuple[list[list[float]], list[list[tuple[int, int]]]]:
    """The cells of `calculate_margin_cells` and `calculate_internal_cells`."""
    add = _add_f32 if w.single else float.__add__
    dele, ins, glue = _skip_costs_of(ref, w), _skip_costs_of(hyp, w), _glue_costs(ref)
    n_b = len(hyp.words)
    cost = [[0.0] * n_b for _ in ref.words]
    back = [[(-1, -1)] * n_b for _ in ref.words]
    row0 = cost[0]
    for b in range(1, n_b):
        pb = _first_min(row0, hyp.preds[b])
        row0[b], back[0][b] = add(row0[pb], ins[b]), (0, pb)
    for a in range(1, len(ref.words)):
        preds, word, row = ref.preds[a], ref.words[a], cost[a]
        p0 = min(preds, key=lambda p: cost[p][0])
        row[0], back[a][0] = add(cost[p0][0], dele[a]), (p0, 0)
        for b in range(1, n_b):
            hpreds = hyp.preds[b]
            ps, qs = min(((p, q) for p in preds for q in hpreds), key=lambda pq: cost[pq[0]][pq[1]])
            sub = add(cost[ps][qs], _sub_cost(word, hyp.words[b], w, equal, ref.strict[a]))
            pd = min(preds, key=lambda p: cost[p][b])
            d = add(cost[pd][b], dele[a])
            qi = _first_min(row, hpreds)
            i = add(row[qi], ins[b] + glue[a])
            if sub <= d and sub <= i:
                row[b], back[a][b] = sub, (ps, qs)
            elif d < i:
                row[b], back[a][b] = d, (pd, b)
            else:
                row[b], back[a][b] = i, (a, qi)
    return cost, back


# fstalign (src/Walker.cpp, src/PathHeap.h) walks its composed graph level by level (a level:
# one arc more), each level's partial paths in order of fewest errors, then least cost
# (substitution 1.5, insertion and deletion 1), and keeps the first path to reach a state at
# a level: of equally good paths into a cell, the one whose predecessor sorts first, i.e.
# whose last move is an error (a match's predecessor holds one error more), and of errors a
# substitution (its predecessor is the cheaper), then a deletion (its predecessor state is
# made first, src/AdaptedComposition.cpp), then an insertion. An entity's entry and exit are
# arcs of their own, a level each, where no word can be inserted: as null words here, a word
# inserted after an entity's last word goes after its exit, outside it ("per cent" against
# "... percent": "percent" substituted by "per", then "cent" inserted after the entity).
# Paths through readings of other lengths reach the end at other levels and are all kept;
# of its candidate paths fstalign takes the one of lowest WER (`sort_alignment`,
# src/fstalign.cpp), errors over the reference words read: at equal errors the longer reading
# ("75 percent" against the entity "75%" read "seventy five percent", not "75%").
def _fst_table(
    ref: Net, hyp: Net, w: Weights, equal: Equal
) -> tuple[list[list[float]], list[list[tuple[int, int]]]]:
    """`_net_table`'s cells (the same costs) with fstalign's choices among equally cheap
    paths: more reference words, then an error as the last move (above)."""
    dele, ins, glue = _skip_costs_of(ref, w), _skip_costs_of(hyp, w), _glue_costs(ref)
    n_b = len(hyp.words)
    cost = [[0.0] * n_b for _ in ref.words]
    words = [[0] * n_b for _ in ref.words]  # reference words on the cell's chosen path
    back = [[(-1, -1)] * n_b for _ in ref.words]

    def key(a: int, b: int) -> tuple[float, int]:
        return cost[a][b], -words[a][b]

    for b in range(1, n_b):
        pb = min(hyp.preds[b], key=lambda q: key(0, q))
        cost[0][b], back[0][b] = cost[0][pb] + ins[b], (0, pb)
    for a in range(1, len(ref.words)):
        preds, n = ref.preds[a], int(ref.words[a] is not None)
        p0 = min(preds, key=lambda p: key(p, 0))
        cost[a][0], words[a][0], back[a][0] = cost[p0][0] + dele[a], words[p0][0] + n, (p0, 0)
        for b in range(1, n_b):
            hpreds = hyp.preds[b]
            if len(preds) == 1 and len(hpreds) == 1:  # a word after a word: nothing to choose
                ps, qs, pd, qi = preds[0], hpreds[0], preds[0], hpreds[0]
            else:
                ps, qs = min(((p, q) for p in preds for q in hpreds), key=lambda pq: key(*pq))
                pd = min(preds, key=lambda p: key(p, b))
                qi = min(hpreds, key=lambda q: key(a, q))
            step = _sub_cost(ref.words[a], hyp.words[b], w, equal, ref.strict[a])
            moves = (  # cost, reference words (negated), no error, then in this order
                (cost[ps][qs] + step, -words[ps][qs] - n, step == 0, 0, (ps, qs)),
                (cost[pd][b] + dele[a], -words[pd][b] - n, dele[a] == 0, 1, (pd, b)),
                (cost[a][qi] + ins[b] + glue[a], -words[a][qi], ins[b] == 0, 2, (a, qi)),
            )
            c, minus, _, _, back[a][b] = min(moves)
            cost[a][b], words[a][b] = c, -minus
    return cost, back


def _net_path(
    ref: Net,
    hyp: Net,
    cost: list[list[float]],
    back: list[list[tuple[int, int]]],
    equal: Equal,
) -> tuple[list[tuple[int, int]], str, float]:
    """`extract_NET_ALIGN_result`: back from the cheapest pair of final arcs; `@` leaves no
    column."""
    a, b = min(((f, g) for f in ref.finals for g in hyp.finals), key=lambda fg: cost[fg[0]][fg[1]])
    total = cost[a][b]
    cols: list[tuple[int, int]] = []
    out: list[str] = []
    while a > 0 or b > 0:
        pa, pb = back[a][b]
        ra = a if pa != a and ref.words[a] is not None else 0
        hb = b if pb != b and hyp.words[b] is not None else 0
        if ra and hb:
            out.append("C" if equal(ref.words[a] or "", hyp.words[b] or "") else "S")
        elif ra:
            out.append("O" if ref.optional[a] else "D")
        elif hb:
            out.append("o" if hyp.optional[b] else "I")
        if ra or hb:
            cols.append((ra, hb))
        a, b = pa, pb
    out.reverse()
    cols.reverse()
    return cols, "".join(out), total


# The default mode's weights for the same networks: fewest edits, then fewest substitutions
# (the counts of `scoring.align`); optional words and `@` free to leave out.
_E = 1 << 20
MINIMAL = Weights(float(_E + 1), float(_E), 0.0, 0.0, 0.0)


def align_marked(
    ref: list[str],
    ref_optional: list[bool] | None,
    hyp: list[str],
    hyp_optional: list[bool] | None,
    exact: bool,
    fst_ties: bool = False,
) -> tuple[list[str], list[bool] | None, list[str], str]:
    """One utterance holding alternations (on either side), null words or fragments
    (`scoring.normalize.alternation`'s marks) or, in the exact mode, optional hypothesis
    words: the reference words of the chosen branches, their optional flags, the hypothesis
    words of the chosen branches and the op string. `exact`: sclite's weights and ties; else
    fewest edits (then fewest substitutions), on equal counts the earlier branch, the
    equally cheap paths chosen as fstalign chooses them with `fst_ties` (`_fst_table`)."""
    from scoring.normalize.alternation import FRAG, FRAG_WEAK, parse, shown

    net = Net.of(parse(ref, ref_optional), labels=fst_ties)
    hnet = Net.of(parse(hyp, hyp_optional))
    weights = SCLITE if exact else MINIMAL
    cols, codes, _ = net_align(net, hnet, weights, frag_equal(FRAG + FRAG_WEAK), fst_ties)
    ref_words = [shown(net.words[a] or "") for a, _ in cols if a]
    ropt = [net.optional[a] for a, _ in cols if a]
    hyp_words = [shown(hnet.words[b] or "") for _, b in cols if b]
    return ref_words, ropt if any(ropt) else None, hyp_words, codes
