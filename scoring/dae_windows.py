"""DAE on a long pair, window by window: where to cut so that the windows' best sum is the whole's.

A hypothesis with DAE slots is a lattice (a sausage): plain tokens, and slots whose branches
are token runs, some of them strict (scoring.dae). The whole pair's objective is the fewest
edits E, then the fewest substitutions S, then the fewest insertions I. With integer weights
sub = e + m, ins = e + 1, del = e (0 for an optional reference word), match 0, where m exceeds
every possible I and e every possible S*m + I, the weight W = E*e + S*m + I orders alignments
exactly as (E, S, I), in int64 (no float32 limit, unlike the FST's).

`cut_rows` runs that DP over the lattice once forward, column by column (a column is the cost
of every reference prefix against the hypothesis up to an item boundary), keeping the columns
at the chosen cut boundaries; then, from the end, for each cut it runs the DP backward over the
items between that cut and the next one from the cell already chosen there, and picks the row
where forward + backward cost equals the cost already fixed. Every chosen cell lies on one and
the same optimal path, so the best alignments of the windows between them, summed, have the
whole pair's optimal W, hence its (E, S, I): each window is small enough for the Scorer's usual
engines (enumeration by the DP, or the FST). The forward pass computes only the rows that can
lie on a path of at most E0 edits (E0: the written hypothesis's edit distance, so no optimal
path has more): every `_STRIDE` items, the rows whose cost so far plus the insertions or
deletions the lengths still to consume force stays within it, and the rows those reach; the
backward pass only the rows between the cut's first such row and the cell fixed at its end.
On a long pair the forward rows are also bounded by one path's weight (`chunk_upper`) and
pruned by a lower bound on the edits still to come (`suffix_bound`: the lattice's `_Gadget`,
each slot as positions matching any of its branches' tokens, its extra lengths free to skip):
a few rows a column, however long the pair (docs/SCORING.md).

`best_combination` then finds a window's winning slot combination without aligning every
combination: its slots' combinations in two halves, met in the middle (docs/SCORING.md).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np

from scoring.align import _diagonals, _myers, _peq, check_pair, levenshtein

try:  # the compiled DP (scoring/_dp.pyx); where it was not built, the numpy DP below
    import scoring._dp as _dp
except ImportError:  # pragma: no cover - an install without a C compiler
    _dp = None

INF = 1 << 60  # beyond every weight of a feasible path (W < 2**47 for pairs of 10**5 words)

Branch = tuple[np.ndarray, np.ndarray]  # token ids, strict flags
Item = int | tuple[Branch, ...]  # a plain token id, or a slot's branches


@dataclass(frozen=True, slots=True)
class Weights:
    """Integer costs ordering alignments as (E, S, I): sub = e + m, ins = e + 1, del = e."""

    e: int
    m: int

    @classmethod
    def for_pair(cls, n_ref: int, n_hyp: int) -> Weights:
        """Weights exact for any path of a pair whose hypothesis has at most n_hyp tokens."""
        m = n_hyp + 1  # > I
        return cls(m * (min(n_ref, n_hyp) + 1), m)  # e > S*m + I

    def counts(self, w: int) -> tuple[int, int, int]:
        """(E, S, I) of a weight."""
        edits, rest = divmod(w, self.e)
        subs, ins = divmod(rest, self.m)
        return edits, subs, ins


@dataclass(frozen=True, slots=True)
class _Ref:
    """The reference side: token ids and cumulative deletion costs (cum[i] for ref[:i])."""

    ids: np.ndarray
    cum: np.ndarray
    free: int  # optional words (free to skip)
    w: Weights  # the weights `cum` was made with

    @classmethod
    def make(cls, ids: np.ndarray, optional: np.ndarray | None, w: Weights) -> _Ref:
        dels = np.full(len(ids), w.e, dtype=np.int64)
        if optional is not None:
            dels[optional] = 0
        free = int(optional.sum()) if optional is not None else 0
        return cls(ids, np.concatenate(([0], np.cumsum(dels))).astype(np.int64), free, w)


def _token(
    col: np.ndarray,
    ref: _Ref,
    tok: int,
    strict: bool,
    band: tuple[int, int],
    new: np.ndarray | None = None,
) -> np.ndarray:
    """The next column after hypothesis token `tok`, rows lo..hi only (INF elsewhere). Into
    `new` where given: INF outside lo..hi already (`_Pool`), its rows lo..hi overwritten."""
    lo, hi = band
    w = ref.w
    if new is None:
        new = np.full_like(col, INF)
    elif lo == 0:
        new[0] = INF  # (row 0 is written below unless the token is strict)
    a = max(lo, 1)
    if hi >= a:
        eq = ref.ids[a - 1 : hi] == tok
        prev = col[a - 1 : hi]
        if strict:  # a strict token may only be matched
            new[a : hi + 1] = np.where(eq, prev, INF)
        else:
            # the diagonal: prev on a match, prev + sub; then the cell above, + ins
            out = new[a : hi + 1]
            np.add(prev, w.e + w.m, out=out)
            np.copyto(out, prev, where=eq)
            up = col[a : hi + 1] + (w.e + 1)
            np.minimum(out, up, out=out)
    if lo == 0 and not strict:
        new[0] = col[0] + w.e + 1
    part = new[lo : hi + 1]
    cum = ref.cum[lo : hi + 1]
    part -= cum  # deletions: a running minimum of (cost - cum) along the column
    np.fmin.accumulate(part, out=part)  # on int64 several times faster than np.minimum's
    part += cum
    np.minimum(part, INF, out=part)
    return new


class _Pool:
    """Two reusable columns for the plain tokens' DP (one read, one written): a fresh column
    per token would clear the whole reference's rows for a band's worth of work (quadratic on
    a long pair). Each buffer is INF outside the rows last written (`dirty`)."""

    def __init__(self, like: np.ndarray) -> None:
        self.bufs = [np.full_like(like, INF), np.full_like(like, INF)]
        self.dirty = [(0, -1), (0, -1)]

    def column(self, avoid: np.ndarray, band: tuple[int, int]) -> np.ndarray:
        """A buffer other than `avoid`, INF outside the band's rows."""
        k = 1 if self.bufs[0] is avoid else 0
        buf, (dlo, dhi) = self.bufs[k], self.dirty[k]
        lo, hi = band
        if dlo <= dhi:  # rows written before and not in this band go back to INF
            buf[dlo : min(dhi, lo - 1) + 1] = INF
            buf[max(dlo, hi + 1) : dhi + 1] = INF
        self.dirty[k] = band
        return buf


_STRIDE = 16  # items between two updates of the forward pass's band

NO_BOUND = -INF  # a row's suffix bound where the bound's pass kept no column (no pruning)


@dataclass(frozen=True, slots=True)
class _Bound:
    """A lower bound on the edits still to come from each cell of the forward pass's stride
    columns (docs/SCORING.md, "The forward pass pruned by a gadget suffix bound"): the
    distance D'(r, j) of ref[r:] and the lattice's `_Gadget` from position j on, less the
    optional reference words left (free to skip in the lattice, a deletion in D').

    Stride column k (item k * _STRIDE, gadget position j): D' kept as the reversed pair's
    bit-parallel deltas along the reference, `vp[k]` / `vn[k]` (bit t: column c0[k] + t of
    the reversed reference, i.e. row n - c0[k] - t), `base[k]` = D' at column c0[k];
    `words[k]` 64-bit words of them hold (0: no bound there). A row whose column those words
    do not hold is off the band that holds the gadget's image of every least-cost path and
    the cells a stride beside it (`suffix_bound`): no least-cost path passes there, and its
    bound is `off` (more edits than any path has), so the pass drops it. `tokens[k]`: the
    gadget's positions in the stride."""

    base: np.ndarray
    c0: np.ndarray
    words: np.ndarray
    vp: np.ndarray
    vn: np.ndarray
    off: int
    tokens: np.ndarray
    opt_after: np.ndarray  # optional reference words in ref[r:], for every r

    def rows(self, k: int, lo: int, hi: int) -> np.ndarray:
        """The bound (edits) of rows lo..hi at stride column k; NO_BOUND where none."""
        n = len(self.opt_after) - 1
        nw = int(self.words[k])
        out = np.full(hi - lo + 1, self.off if nw else NO_BOUND, dtype=np.int64)
        c0 = int(self.c0[k])
        cmax = min(n, c0 + 64 * nw - 1)
        r_lo, r_hi = max(lo, n - cmax), min(hi, n - c0)  # rows whose column is held
        if nw == 0 or r_lo > r_hi:
            return out
        bits = nw * 64
        up = np.unpackbits(self.vp[k, :nw].view(np.uint8), bitorder="little")[:bits]
        down = np.unpackbits(self.vn[k, :nw].view(np.uint8), bitorder="little")[:bits]
        d = np.empty(bits + 1, dtype=np.int64)  # D' at columns c0 .. c0 + bits
        d[0] = self.base[k]
        np.cumsum(up.astype(np.int64) - down, out=d[1:])
        d[1:] += d[0]
        cols = n - np.arange(r_lo, r_hi + 1) - c0
        out[r_lo - lo : r_hi - lo + 1] = d[cols] - self.opt_after[r_lo : r_hi + 1]
        return out


def _distinct(ids: np.ndarray) -> np.ndarray:
    """np.unique's values (sorted, int64), without its first call's import of numpy.ma
    (`np.ma.is_masked`: ~8 ms of a process that needs nothing else of it)."""
    out = np.sort(np.asarray(ids, dtype=np.int64))
    return out[np.r_[True, out[1:] != out[:-1]]] if len(out) else out


@dataclass(frozen=True, slots=True)
class _Gadget:
    """The lattice relaxed into one sequence of positions that the bit-parallel pass can run
    (docs/SCORING.md, "The forward pass pruned by a gadget suffix bound"): a plain token is
    one position matching its id; a slot whose branches hold l_min..l_max tokens is l_max
    positions, each matching any token of any of its branches (a class), the last l_max -
    l_min of them free to skip (no insertion cost). A branch b aligned to reference words R
    maps to its first |b| positions, each match still a match (the class holds b's token),
    the rest skipped free: the gadget's distance is at most lev(b, R), hence at most every
    lattice path's cost (strict words only ever cost more), slot by slot, with no saving to
    subtract. `tokens`: each position's first id; `extra_start` / `extra_ids` its
    other ids (CSR); `free` its flag; `starts` where each item starts (and the end)."""

    tokens: np.ndarray
    extra_start: np.ndarray
    extra_ids: np.ndarray
    free: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, items: list[Item], lens: np.ndarray) -> _Gadget:
        starts = np.concatenate(([0], np.cumsum(lens[:, 1]))).astype(np.int64)
        tokens = np.empty(int(starts[-1]), dtype=np.int64)
        free = np.zeros(len(tokens), dtype=np.uint8)
        extras = np.zeros(len(tokens), dtype=np.int64)
        ids = np.array([x if isinstance(x, int) else -1 for x in items], dtype=np.int64)
        plain = np.flatnonzero(ids >= 0)
        tokens[starts[plain]] = ids[plain]
        classes: list[np.ndarray] = []
        made: dict[int, np.ndarray] = {}  # each distinct slot's class, made once
        for p in np.flatnonzero(ids < 0).tolist():
            a, b = int(starts[p]), int(starts[p + 1])
            if a == b:
                continue
            members = made.get(id(items[p]))
            if members is None:
                branch_ids = [br[0] for br in items[p]]  # type: ignore[union-attr]
                members = made[id(items[p])] = _distinct(np.concatenate(branch_ids))
            tokens[a:b] = members[0]
            extras[a:b] = len(members) - 1
            free[a + int(lens[p, 0]) : b] = 1
            classes.extend([members[1:]] * (b - a))
        extra_start = np.concatenate(([0], np.cumsum(extras))).astype(np.int64)
        extra_ids = np.zeros(int(extra_start[-1]), dtype=np.int64)
        if len(extra_ids):
            extra_ids[:] = np.concatenate(classes)
        return cls(tokens, extra_start, extra_ids, free, starts)

    def reversed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The positions from the end (the reversed pair's rows): tokens, CSR, free flags."""
        counts = np.diff(self.extra_start)
        rows = np.repeat(np.arange(len(counts)), counts)
        order = np.argsort(len(counts) - 1 - rows, kind="stable")
        start = np.concatenate(([0], np.cumsum(counts[::-1]))).astype(np.int64)
        return (
            np.ascontiguousarray(self.tokens[::-1]),
            start,
            np.ascontiguousarray(self.extra_ids[order]),
            np.ascontiguousarray(self.free[::-1]),
        )


@dataclass(frozen=True, slots=True)
class _Plain:
    """A plain hypothesis through the lattice (each slot read as the branch whose largest
    distance to the others is least): its `tokens`, where each item starts in it (`starts`,
    and the end), what each item can save against it at most (`red`, 0 for a plain token),
    each item's token id (-1 for a slot) and its fewest and most tokens."""

    tokens: np.ndarray
    starts: np.ndarray
    red: np.ndarray
    ids: np.ndarray
    lens: np.ndarray  # `item_lengths`

    @classmethod
    def of(cls, items: list[Item], lens: np.ndarray) -> _Plain:
        ids = np.array([x if isinstance(x, int) else -1 for x in items], dtype=np.int64)
        slots = np.flatnonzero(ids < 0)
        red = np.zeros(len(items), dtype=np.int64)
        lengths = np.ones(len(items), dtype=np.int64)
        reads = []
        made: dict[int, tuple[int, np.ndarray]] = {}  # a distinct slot's (the Scorer's walk
        for p in slots.tolist():  # makes each once: a few distinct slots among hundreds)
            slot = items[p]
            got = made.get(id(slot))
            if got is None:
                got = made[id(slot)] = _central(slot)  # type: ignore[arg-type]
            red[p], lengths[p] = got[0], len(got[1])
            reads.append(got[1])
        starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        tokens = np.empty(int(starts[-1]), dtype=np.int64)
        plain = np.flatnonzero(ids >= 0)
        tokens[starts[plain]] = ids[plain]
        for p, read in zip(slots.tolist(), reads, strict=True):
            tokens[starts[p] : starts[p + 1]] = read
        return cls(tokens, starts, red, ids, lens)


def _central(slot: tuple[Branch, ...]) -> tuple[int, np.ndarray]:
    """A slot's branch whose largest distance to the others is least (the first such), and
    that distance: `_Plain`'s reading of it and what the slot can save against it at most."""
    branches = [b[0] for b in slot]
    far = [0] * len(branches)
    for a in range(len(branches)):
        for b in range(a + 1, len(branches)):
            d = levenshtein(branches[a], branches[b])
            far[a], far[b] = max(far[a], d), max(far[b], d)
    best = int(np.argmin(far))
    return far[best], branches[best]


def suffix_bound(
    ref: np.ndarray,
    optional: np.ndarray | None,
    items: list[Item],
    lens: np.ndarray,
    upper_edits: int,
    compiled: bool = _dp is not None,
) -> _Bound | None:
    """The forward pass's `_Bound`: one bit-parallel pass over the reversed pair, the
    lattice's `_Gadget` against the reference, keeping its stride columns. The gadget's
    distance is at most every lattice path's cost from that cell on, the slots included, so
    nothing is subtracted for what the slots still to come could save: the bound's slack on
    a least-cost path does not grow with them. `lens`: the items' `item_lengths`. Banded
    (compiled): the band holds every cell of the gadget's image of every path of
    `upper_edits` + the optional words + the gadget's free positions (a free skip moves the
    diagonal at no cost), and a stride's positions each side: the image of every least-cost
    lattice path and the cells the pass reads beside it, where the values are then the whole
    table's (`_dp.myers_band_words`); off those, values only ever too high, which no
    least-cost path meets, and rows off the band are `off` (docs/SCORING.md). None when a
    side is empty."""
    gadget = _Gadget.of(items, lens)
    n, m, nitems = len(ref), int(gadget.starts[-1]), len(items)
    if not n or not m:
        return None
    strides = np.arange(0, nitems, _STRIDE)
    j = gadget.starts[strides]
    tokens = gadget.starts[np.minimum(strides + _STRIDE, nitems)] - j
    opt = np.zeros(n, dtype=np.int64) if optional is None else optional.astype(np.int64)
    opt_after = np.concatenate((np.cumsum(opt[::-1])[::-1], [0]))
    # the reversed pair, the gadget's rows: a kept row is a column of the forward pass
    rows_h, x_start, x_ids, free = gadget.reversed()
    cols_r = np.ascontiguousarray(np.asarray(ref, dtype=np.int64)[::-1])
    keep = m - j  # row 0 (no position left) keeps nothing: no bound there
    # a stride's positions on each side: `_last_within` reads the rows a path reaches in the
    # stride at its first column
    width = upper_edits + int(gadget.free.sum()) + int(opt.sum()) + 2 * int(tokens.max())
    dlo, dhi = _diagonals(width, m, n)
    if compiled and _dp is not None:
        # `keep` decreases (the items' starts do not): the pass takes its rows increasing
        rows = np.ascontiguousarray(keep[::-1])
        arrays = list(_dp.myers_band_words(rows_h, cols_r, rows, dlo, dhi, x_start, x_ids, free))
        for a in range(len(arrays)):  # one at a time: the peak holds one copy more, not five
            arrays[a] = np.ascontiguousarray(arrays[a][::-1])
        base, c0, nw, vp, vn = arrays
    else:
        base, c0, nw, vp, vn = _whole_rows(rows_h, cols_r, keep, dlo, dhi, (x_start, x_ids, free))
    return _Bound(base, c0, nw, vp, vn, 2 * (n + m) + 2, tokens, opt_after)


def _gadget_myers(
    rows: np.ndarray,
    cols: np.ndarray,
    classes: tuple[np.ndarray, np.ndarray, np.ndarray],
    keep: Collection[int],
) -> tuple[dict[int, tuple[int, int]], np.ndarray]:
    """`align._myers`' kept rows (vp, vn as Python integers) for rows that match a class of
    ids and may be skipped free (`_Gadget.reversed`'s CSR and flags), and D(i, 0) for every
    row i (the rows not free among the first i): `_dp.myers_band_words`' rows, whole."""
    x_start, x_ids, free = classes
    m = len(cols)
    mask = (1 << m) - 1
    peq = _peq(np.concatenate((rows, x_ids)), cols)
    vp, vn = mask, 0
    kept: dict[int, tuple[int, int]] = {}
    for i, c in enumerate(rows.tolist(), 1):
        eq = peq.get(c, 0)
        for x in x_ids[x_start[i - 1] : x_start[i]].tolist():
            eq |= peq.get(x, 0)
        x = eq | vn
        d0 = ((((x & vp) + vp) ^ vp) | x) & mask
        hp = vn | (mask ^ (d0 | vp))
        hn = vp & d0
        x = ((hp << 1) | 1) & mask
        new_p, new_n = ((hn << 1) & mask) | (mask ^ (d0 | x)), x & d0
        if free[i - 1]:  # the least of the row before and this one (see `_dp`)
            down, same = (hn << 1) & mask, mask ^ ((hn << 1) ^ hn) & mask
            zero = mask ^ (vp | vn)
            new_p = (vp & same) | (zero & down & ~hn)
            new_n = (vn & same) | (zero & hn & ~down)
        vp, vn = new_p & mask, new_n & mask
        if i in keep:
            kept[i] = (vp, vn)
    d_col0 = np.concatenate(([0], np.cumsum(1 - free.astype(np.int64))))
    return kept, d_col0


def _whole_rows(
    ref: np.ndarray,
    hyp: np.ndarray,
    keep: np.ndarray,
    dlo: int,
    dhi: int,
    classes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`_dp.myers_band_words`' arrays from `align._myers`' whole rows (without the extension;
    `_gadget_myers`' with `classes`), each cut to the words of the band's columns (exact
    values, and no more memory than the compiled pass's)."""
    if classes is None:
        kept = _myers(ref, hyp, set(keep.tolist()))[1]
        d_col0 = np.arange(len(ref) + 1)
    else:
        kept, d_col0 = _gadget_myers(ref, hyp, classes, set(keep.tolist()))
    cells = np.zeros((len(keep), 3), dtype=np.int64)  # D(i, c0), c0, words
    for k, i in enumerate(keep.tolist()):
        if i in kept:
            c0 = 64 * (max(0, i + dlo - 1) // 64)
            cells[k, 1], cells[k, 2] = c0, (max(c0, min(len(hyp), i + dhi)) - c0) // 64 + 1
    vp = np.zeros((len(keep), max(1, int(cells[:, 2].max(initial=0)))), dtype=np.uint64)
    vn = np.zeros_like(vp)
    for k, i in enumerate(keep.tolist()):
        if i in kept:
            c0, size = int(cells[k, 1]), int(cells[k, 2]) * 64
            below, window = (1 << c0) - 1, (1 << size) - 1
            up, down = kept[i]
            cells[k, 0] = int(d_col0[i]) + (up & below).bit_count() - (down & below).bit_count()
            row_p = ((up >> c0) & window).to_bytes(size // 8, "little")
            row_n = ((down >> c0) & window).to_bytes(size // 8, "little")
            vp[k, : size // 64] = np.frombuffer(row_p, np.uint64)
            vn[k, : size // 64] = np.frombuffer(row_n, np.uint64)
    return cells[:, 0].copy(), cells[:, 1].copy(), cells[:, 2].copy(), vp, vn


def _last_within(bound: np.ndarray, first: int, least: int, tokens: int, upper: int, e: int) -> int:
    """The last row of the band from `first` (`bound`: its rows' `_Bound.rows`) that a path
    within `upper` can reach in the stride: the least cost at its start plus the row's bound
    less the stride's tokens (a plain distance moves by at most one a token) stays within it;
    `first` if none below it does."""
    ok = np.flatnonzero(least + np.maximum(bound - tokens, 0) * e <= upper)
    return first + int(ok[-1]) if len(ok) else first


@dataclass
class _Lattice:
    """A DP over the items of a lattice hypothesis against one reference, banded: with
    `upper` (a weight no optimal path exceeds), rows are pruned every `_STRIDE` items to
    those whose cost so far plus the least cost of the length left to balance stays within
    it, plus the rows such a cell reaches; without, rows within `e0` of the tokens consumed."""

    ref: _Ref
    w: Weights
    e0: int  # a bound on the edits of any optimal path (+ the optional words, free to skip)
    upper: int | None = None
    compiled: bool = _dp is not None  # scoring/_dp.pyx's loop (the same columns) or numpy's
    bound: _Bound | None = None  # with `upper`: rows pruned by it too (`suffix_bound`)

    def run(
        self, items: list[Item], keep: frozenset[int] = frozenset(), lens: np.ndarray | None = None
    ) -> tuple[np.ndarray, dict[int, tuple[int, np.ndarray]]]:
        """The last column, and the band of the column before each item index in `keep`
        (its first row, its values). `lens`: the items' `item_lengths`, where known."""
        bounds = item_lengths(items) if lens is None else lens
        rest = np.zeros((len(items) + 1, 2), dtype=np.int64)  # tokens from item p on
        rest[:-1] = np.cumsum(bounds[::-1], axis=0)[::-1]
        if not self.compiled or _dp is None:
            return self._run_numpy(items, keep, bounds, rest)
        return _dp.lattice_run(
            self,
            items,
            keep,
            np.ascontiguousarray(self.ref.ids, dtype=np.int64),
            np.ascontiguousarray(self.ref.cum, dtype=np.int64),
            np.ascontiguousarray(bounds[:, 0]),
            np.ascontiguousarray(bounds[:, 1]),
            np.ascontiguousarray(rest),
            _STRIDE,
        )

    def _run_numpy(
        self,
        items: list[Item],
        keep: frozenset[int],
        lens: np.ndarray,
        rest: np.ndarray,
    ) -> tuple[np.ndarray, dict[int, tuple[int, np.ndarray]]]:
        """`run` in numpy, a few calls per token: where scoring/_dp.pyx is not built."""
        n = len(self.ref.ids)
        col = self.ref.cum.copy()
        lo, hi = 0, min(n, self.e0)
        col[hi + 1 :] = INF
        kept: dict[int, tuple[int, np.ndarray]] = {}
        pool = _Pool(col)
        hmin = hmax = 0
        for p, item in enumerate(items):
            if self.upper is None:
                lo, hi = max(0, hmin - self.e0), min(n, hmax + int(lens[p, 1]) + self.e0)
            elif p % _STRIDE == 0:
                ahead = int(rest[p][1] - rest[min(p + _STRIDE, len(items))][1])
                lo, hi = self._alive(col, lo, hi, rest[p], ahead, p // _STRIDE)
            if p in keep:
                kept[p] = self._trimmed(col, lo, hi)
            hmin, hmax = hmin + int(lens[p, 0]), hmax + int(lens[p, 1])
            if isinstance(item, int):
                col = _token(col, self.ref, item, False, (lo, hi), pool.column(col, (lo, hi)))
                continue
            outs = []
            for ids, strict in item:
                c = col
                for tok, s in zip(ids.tolist(), strict.tolist(), strict=True):
                    c = _token(c, self.ref, tok, s, (lo, hi))
                outs.append(c)
            col = np.minimum.reduce(outs)
        return col, kept

    def _trimmed(self, col: np.ndarray, lo: int, hi: int) -> tuple[int, np.ndarray]:
        """The column's rows lo..hi that can still lie on a path within `upper` (cost so far
        at most it), as (first row, values): what `cut_rows` keeps of a cut."""
        part = col[lo : hi + 1]
        if self.upper is not None:
            ok = np.flatnonzero(part <= self.upper)
            if len(ok):
                return lo + int(ok[0]), part[ok[0] : ok[-1] + 1].copy()
        return lo, part.copy()

    def _alive(
        self, col: np.ndarray, lo: int, hi: int, rest: np.ndarray, ahead: int, k: int
    ) -> tuple[int, int]:
        """The rows to compute for the next `_STRIDE` items (stride column k): from the first
        row that can lie on a path within `upper`, to the furthest row such rows reach (`ahead`
        tokens, and the deletions the weight left allows; with `bound`, the last row whose
        own bound still allows a path within `upper`)."""
        assert self.upper is not None
        e, n = self.w.e, len(self.ref.ids)
        rows = np.arange(lo, hi + 1)
        left = n - rows  # reference words still to align, against rest[0]..rest[1] tokens
        # at least this many insertions (or deletions) to come; skipped optional words cost
        # nothing, so with any of them, no bound from deletions
        short = np.maximum(int(rest[0]) - left, 0)
        if not self.ref.free:
            short = np.maximum(short, left - int(rest[1]))
        if self.bound is not None:
            short = np.maximum(short, self.bound.rows(k, lo, hi))
        cost = col[lo : hi + 1]
        ok = np.flatnonzero(cost + short * e <= self.upper)
        if not len(ok):
            return lo, hi
        first = lo + int(ok[0])
        last = min(n, int(self._reach(rows[ok], cost[ok], rest[0])) + ahead)
        if self.bound is not None:
            least, tokens = int(cost[ok].min()), int(self.bound.tokens[k])
            rows_bound = self.bound.rows(k, first, last)
            last = _last_within(rows_bound, first, least, tokens, self.upper, e)
        return first, last

    def _reach(self, rows: np.ndarray, cost: np.ndarray, rest_min: int) -> int:
        """The furthest row past the diagonal (`ahead` added by the caller) that a path within
        `upper` reaches from these rows in the next `_STRIDE` items. D deletions beyond the
        diagonal cost D*e (less the free optional words: `budget` = B edits); the cell then
        still faces g + D insertions, g = the fewest tokens left minus the reference words
        left (the tokens of the stride are counted as consumed). So D + max(0, g + D) <= B:
        D <= B where B <= -g, else D <= (B - g) / 2 (a path's last cells are always within
        it; the bare deletions' reach B alone kept ~40% more rows, none of them alive)."""
        assert self.upper is not None
        budget = (self.upper - cost) // self.w.e + self.ref.free
        g = rest_min - (len(self.ref.ids) - rows)
        extra = np.where(budget <= -g, budget, (budget - g) // 2)
        return int((rows + extra).max())


def _lengths(slot: tuple[Branch, ...]) -> tuple[int, int]:
    return min(len(b[0]) for b in slot), max(len(b[0]) for b in slot)


def item_lengths(items: list[Item]) -> np.ndarray:
    """Each item's fewest and most tokens, an (items, 2) array."""
    out = np.ones((len(items), 2), dtype=np.int64)
    for p, x in enumerate(items):
        if not isinstance(x, int):
            out[p] = _lengths(x)
    return out


def _reversed(items: list[Item]) -> list[Item]:
    return [
        x if isinstance(x, int) else tuple((a[::-1], s[::-1]) for a, s in x) for x in items[::-1]
    ]


# n x E0 from which the forward pass is pruned: below it (a 10,000-word pair has 12 M) the
# bound and the path's weight cost about what they save (docs/MEASUREMENTS.md)
_PRUNE_CELLS = 1 << 25
_CHUNK_CELLS = 1 << 22  # the most cells of one piece of `chunk_upper`'s path (~2 ms)
_CHUNK = 256  # reference words between two cuts of `chunk_upper`'s path, at least
_GRAM = 4  # plain tokens of a match that cuts it


def _gram_keys(seq: np.ndarray) -> np.ndarray:
    """A key for each run of `_GRAM` ids from each position (a hash: two runs that share a
    key only make `chunk_upper`'s path worse, never wrong); ids < 0 are not tokens."""
    out = np.zeros(max(0, len(seq) - _GRAM + 1), dtype=np.uint64)
    for t in range(_GRAM):
        out = out * np.uint64(1_000_003) + seq[t : t + len(out)].astype(np.uint64)
    return out


def _once(keys: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The keys that occur once among the valid ones, and where."""
    at = np.flatnonzero(valid)
    # (as np.unique's values, indices and counts; its index needs a stable sort, ~3x slower
    # on a long pair's keys, where a key found once has one index whatever the sort)
    order = np.argsort(keys[at])
    ordered = keys[at][order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    single = starts[np.diff(np.r_[starts, len(ordered)]) == 1]
    return ordered[single], at[order[single]]


def _anchor_cells(ref: np.ndarray, plain: np.ndarray) -> list[tuple[int, int]]:
    """Cells (reference row, item index) where `_GRAM` plain tokens (`plain`: each item's id,
    -1 for a slot) match words found once on each side, and the next tokens too, about every
    `_CHUNK` reference words, increasing."""
    hyp_keys, ref_keys = _gram_keys(plain), _gram_keys(np.asarray(ref, dtype=np.int64))
    if not len(hyp_keys) or not len(ref_keys):
        return []
    windows = np.lib.stride_tricks.sliding_window_view(plain, _GRAM)
    hk, hp = _once(hyp_keys, np.asarray((windows >= 0).all(axis=1)))
    rk, ri = _once(ref_keys, np.ones(len(ref_keys), dtype=bool))
    # the keys on both sides (as np.intersect1d's, both sorted and unique)
    b = np.minimum(np.searchsorted(hk, rk), max(0, len(hk) - 1))
    a = np.flatnonzero(hk[b] == rk) if len(hk) else np.zeros(0, dtype=np.int64)
    b = b[a]
    order = np.argsort(ri[a])
    i, p = ri[a][order], hp[b][order]
    # confirmed: the match one token on is found once on each side too
    sure = np.flatnonzero((i[1:] == i[:-1] + 1) & (p[1:] == p[:-1] + 1))
    i, p = i[sure], p[sure]
    _, every = np.unique(i // _CHUNK, return_index=True)
    cells: list[tuple[int, int]] = []
    for row, item in zip(i[every].tolist(), p[every].tolist(), strict=True):
        if row > 0 and (not cells or (row > cells[-1][0] and item > cells[-1][1])):
            cells.append((row, item))
    return cells


# tokens from which `written_edits` cuts the pair at `_anchor_cells` (below, one distance)
_PIECES_FROM = 1 << 14


def written_edits(ref: np.ndarray, written: np.ndarray) -> int:
    """An upper bound on the written hypothesis's edit distance to the reference, as
    `cut_rows`' `e0` (so on the optimum's edits): on a long pair, the sum of the distances of
    its pieces between `_anchor_cells`' matches, an alignment of the whole (on the benchmark
    pairs the distance itself: 3,754 at 30,000 words, 12,405 at 100,000), in about half the
    CPU of the whole pair's `levenshtein` (its cutoff doubled from a 32nd of the length until
    the distance fits); the exact distance below `_PIECES_FROM` tokens, where it is cheaper.
    Any alignment's count is a valid `e0`: the same rows (only bands and the pruning's
    decisions read it). PairTooLong as `levenshtein`."""
    from rapidfuzz.distance import Levenshtein  # (as `levenshtein`'s)

    check_pair(len(ref), len(written))
    if max(len(ref), len(written)) < _PIECES_FROM:
        return levenshtein(ref, written)
    cells = [(0, 0), *_anchor_cells(ref, written), (len(ref), len(written))]
    a, b = np.asarray(ref).tolist(), np.asarray(written).tolist()
    return sum(
        int(Levenshtein.distance(a[i0:i1], b[p0:p1]))
        for (i0, p0), (i1, p1) in zip(cells, cells[1:], strict=False)
    )


def chunk_upper(
    ref: np.ndarray,
    optional: np.ndarray | None,
    items: list[Item],
    plain: _Plain,
    w: Weights,
    compiled: bool = _dp is not None,
) -> int | None:
    """The weight of one path through the lattice, so at least the optimum's, and close to it
    where the pair has plain stretches matched word for word: the pair cut at such matches
    (`_anchor_cells`), each piece's lattice solved over the rows within its plain reading's
    distance. None where a piece finds no path there (its reading may hold strict words), or
    would cost more than `_CHUNK_CELLS` cells (text without such matches, e.g. repetitive:
    the whole pair's band would cost more than the pass it bounds)."""
    cells = [(0, 0), *_anchor_cells(ref, plain.ids), (len(ref), len(items))]
    total = 0
    for (i0, p0), (i1, p1) in zip(cells, cells[1:], strict=False):
        seg, sub = items[p0:p1], ref[i0:i1]
        opt = None if optional is None else optional[i0:i1]
        reading = plain.tokens[plain.starts[p0] : plain.starts[p1]]
        edits = levenshtein(sub, reading) + (0 if opt is None else int(opt.sum()))
        if len(sub) * (2 * edits + 1) > _CHUNK_CELLS:
            return None
        lattice = _Lattice(_Ref.make(sub, opt, w), w, edits, None, compiled)
        last, _ = lattice.run(seg, lens=plain.lens[p0:p1])
        if int(last[len(sub)]) >= INF:
            return None
        total += int(last[len(sub)])
    return total


def cut_rows(
    ref: np.ndarray,
    optional: np.ndarray | None,
    items: list[Item],
    cuts: list[int],
    e0: int,
    compiled: bool = _dp is not None,
) -> tuple[int, list[int], Weights]:
    """The optimal weight of the whole pair and, for each cut (an item index, increasing), the
    reference row where one optimal path crosses it. `e0`: an upper bound on the optimal edit
    count (the written hypothesis's edit distance); `compiled`: scoring/_dp.pyx's DP (the
    default where it is built) or numpy's, the same rows. Where the forward pass's band would
    hold `_PRUNE_CELLS` cells or more, it is bounded by one path's weight and pruned by
    `suffix_bound` (where the slots can save less than half the edits): the same rows, fewer
    cells."""
    n = len(ref)
    # the most tokens of items[:p], for every p: each segment's longest reading in O(1)
    lens = item_lengths(items)
    most = np.concatenate(([0], np.cumsum(lens[:, 1])))
    w = Weights.for_pair(n, int(most[-1]))
    opt_n = int(optional.sum()) if optional is not None else 0
    # no optimal path weighs more than e0 + 1 edits (the written forms' path has e0), nor
    # more than any one path's weight (`chunk_upper`)
    upper, bound = (e0 + 1) * w.e - 1, None
    if n * e0 >= _PRUNE_CELLS:
        plain = _Plain.of(items, lens)
        upper = min(upper, chunk_upper(ref, optional, items, plain, w, compiled) or upper)
        # where the slots could save half the edits, the bound is too low to prune (its pass
        # would cost more than it saves: measured on such generated pairs)
        if 2 * int(plain.red.sum()) < upper // w.e:
            bound = suffix_bound(ref, optional, items, lens, upper // w.e, compiled)
    fwd = _Lattice(_Ref.make(ref, optional, w), w, e0 + opt_n, upper, compiled, bound)
    last, kept = fwd.run(items, frozenset(cuts), lens)
    best = int(last[n])
    rows: list[int] = []
    row, value, stop = n, best, len(items)
    budget = w.counts(best)[0] + opt_n  # no optimal path has more edits (+ free deletions)
    for p in reversed(cuts):
        seg = items[p:stop]
        # only rows whose forward cost is within the value still to reach can be on the path
        first, band = kept[p]
        fwd_col = np.full(row + 1, INF, dtype=np.int64)
        take = max(0, min(len(band), row + 1 - first))
        fwd_col[first : first + take] = band[:take]
        longest = int(most[stop] - most[p])
        lo = max(0, row - longest - budget)
        lo += int(np.argmax(fwd_col[lo : row + 1] <= value))
        back_ref = _Ref.make(
            ref[lo:row][::-1], None if optional is None else optional[lo:row][::-1], w
        )
        width = min(row - lo + longest, _back_band(fwd_col[lo:], value, back_ref))
        back, _ = _Lattice(back_ref, w, width, None, compiled).run(
            _reversed(seg), lens=lens[p:stop][::-1]
        )
        total = fwd_col[lo : row + 1] + back[::-1]
        i = int(np.argmin(total))
        if int(total[i]) != value:  # the forward and backward passes disagree: a bug
            raise RuntimeError(f"DAE windows: no optimal row at cut {p} ({total[i]} != {value})")
        row, value, stop = lo + i, int(fwd_col[lo + i]), p
        rows.append(row)
    rows.reverse()
    return best, rows, w


def _back_band(fwd: np.ndarray, value: int, back_ref: _Ref) -> int:
    """The band (rows within it of the tokens consumed) of a cut's backward pass: the edits
    of a path from the cell fixed at the window's end back to any row whose forward cost
    `fwd` is finite, within the weight left, `value` less the least of them, plus the window's
    optional words (a free deletion moves off the diagonal too). A row where forward +
    backward equals `value` has its backward path within that weight, so within the band with
    every cell of it: its backward cost is exact; every other row's is only ever higher, never
    `value`. So the same rows as every row of the window (the band before), fewer cells."""
    least = int(fwd.min())
    return INF if least >= INF else (value - least) // back_ref.w.e + back_ref.free


def plan_cuts(readings: list[int], max_enum: int, max_items: int = 256) -> list[int]:
    """Item indexes where windows start (0 excluded). `readings[p]` is 1 for a plain token,
    else the number of branches of slot p. A window's slots allow at most `max_enum`
    combinations, or it holds one slot (which has more); a cut falls in the middle of the
    plain run between two slots (between them when they are adjacent). A window holds at most
    `max_items` items where a cut can keep a quarter of that away from a slot."""
    cuts: list[int] = []
    start, combos, last_slot = 0, 1, -1
    for p, r in enumerate(readings):
        if r > 1:
            if combos * r > max_enum and last_slot >= start:
                # the middle of the run between the slots (before this one if there is none)
                cut = (last_slot + p + 2) // 2
                cuts.append(cut)
                start, combos = cut, 1
            combos *= r
            last_slot = p
        elif p - start >= max_items and (last_slot < start or p - last_slot > max_items // 4):
            cuts.append(p)
            start, combos = p, 1
    return cuts


def _step(
    cols: np.ndarray,
    ref: np.ndarray,
    cum: np.ndarray,
    tok: int,
    strict: bool,
    w: Weights,
) -> np.ndarray:
    """`_token` on every row of `cols` (one column per combination so far), all reference
    rows (a window's reference has no optional word here: `cum` is plain deletions)."""
    new = np.empty_like(cols)
    prev = cols[:, :-1]
    eq = ref == tok
    if strict:  # a strict token may only be matched
        np.copyto(new[:, 1:], np.where(eq, prev, INF))
        new[:, 0] = INF
    else:
        out = new[:, 1:]
        np.add(prev, w.e + w.m, out=out)
        np.copyto(out, prev, where=eq)
        np.minimum(out, cols[:, 1:] + (w.e + 1), out=out)
        new[:, 0] = cols[:, 0] + (w.e + 1)
    new -= cum
    np.fmin.accumulate(new, axis=1, out=new)
    new += cum
    np.minimum(new, INF, out=new)
    return new


def _steps(
    cols: np.ndarray,
    ref: np.ndarray,
    cum: np.ndarray,
    toks: np.ndarray,
    strict: np.ndarray,
    w: Weights,
) -> np.ndarray:
    """`_step` for each of `toks` in turn (a run, or a slot's branch)."""
    for tok, s in zip(toks.tolist(), strict.tolist(), strict=True):
        cols = _step(cols, ref, cum, tok, s, w)
    return cols


def _steps_compiled(
    cols: np.ndarray,
    ref: np.ndarray,
    cum: np.ndarray,
    toks: np.ndarray,
    strict: np.ndarray,
    w: Weights,
) -> np.ndarray:
    """`_steps` by scoring/_dp.pyx (C-contiguous int64 `cols` and `ref`): the same columns,
    one call a run or branch instead of a few numpy calls a token."""
    assert _dp is not None
    if not len(toks):
        return cols
    flags = np.ascontiguousarray(strict, dtype=np.uint8)
    return _dp.steps(cols, ref, cum, toks.astype(np.int64), flags, w.e + w.m, w.e + 1)


def _banded_steps(
    cols: np.ndarray,
    ref: np.ndarray,
    cum: np.ndarray,
    branch: Branch,
    w: Weights,
    band: tuple[np.ndarray, int],
) -> np.ndarray:
    """`_steps_compiled` for a run or branch's tokens and strict flags on the rows within a
    band only: `band` holds each column's tokens consumed so far and the band (`_dp.steps`'
    `at` and `band`: the rows a path of that many edits can reach, the others INF)."""
    assert _dp is not None
    toks, strict = branch
    if not len(toks):
        return cols
    flags = np.ascontiguousarray(strict, dtype=np.uint8)
    args = (cols, ref, cum, toks.astype(np.int64), flags, w.e + w.m, w.e + 1)
    return _dp.steps(*args, *band)


def _half(
    ref: np.ndarray,
    runs: list[np.ndarray],
    slots: list[list[Branch]],
    w: Weights,
    first_slowest: bool,
    compiled: bool,
) -> np.ndarray:
    """The last columns of `runs[0], slots[0], runs[1], ...` for every combination of the
    slots' branches, combinations sharing their prefixes (one row each, numbered as
    itertools.product numbers them when `first_slowest`, else with the last slot slowest)."""
    if compiled and _dp is not None:
        return _half_banded(ref, runs, slots, _Half(w, first_slowest))
    return _passes(ref, runs, slots, _Half(w, first_slowest), _steps)


@dataclass(frozen=True, slots=True)
class _Half:
    """How `_half` runs: the weights, the order of its combinations, and a band (the rows
    a path of at most that many edits can reach; None: every row)."""

    w: Weights
    first_slowest: bool
    band: int | None = None


def _half_banded(
    ref: np.ndarray, runs: list[np.ndarray], slots: list[list[Branch]], how: _Half
) -> np.ndarray:
    """`_half` compiled (`_steps_compiled`); with `how.band`, only the rows within it of each
    column's tokens (`_dp.steps`' band), the others INF: every value a path's cost or INF,
    never below the whole column's, equal on every cell of a path within the band."""
    return _passes(np.ascontiguousarray(ref, dtype=np.int64), runs, slots, how, _steps_compiled)


def _passes(
    ref: np.ndarray,
    runs: list[np.ndarray],
    slots: list[list[Branch]],
    how: _Half,
    steps: Callable[..., np.ndarray],
) -> np.ndarray:
    """`_half`'s passes, run by run and branch by branch, by `steps` (`_steps`, or
    `_steps_compiled`); with a band, each combination's tokens consumed kept beside it."""
    w = how.w
    cum = np.arange(len(ref) + 1, dtype=np.int64) * w.e
    cols = cum[None, :].copy()
    at = np.zeros(1, dtype=np.int64)

    def step(cols: np.ndarray, toks: np.ndarray, strict: np.ndarray) -> np.ndarray:
        if how.band is None:
            return steps(cols, ref, cum, toks, strict, w)
        return _banded_steps(cols, ref, cum, (toks, strict), w, (at, how.band))

    axis = 1 if how.first_slowest else 0  # a new slot's branch: the fastest index, or slowest
    for p, run in enumerate(runs):
        cols = step(cols, run, np.zeros(len(run), dtype=bool))
        at = at + len(run)
        if p == len(slots):
            break
        outs = [step(cols, ids, strict) for ids, strict in slots[p]]
        cols = np.stack(outs, axis=axis).reshape(-1, len(ref) + 1)
        at = np.stack([at + len(ids) for ids, _ in slots[p]], axis=axis).reshape(-1)
    return cols


def best_combination(
    ref: np.ndarray,
    runs: list[np.ndarray],
    slots: list[list[Branch]],
    compiled: bool = _dp is not None,
    band: int | None = None,
) -> int:
    """The index, in itertools.product order over the slots' branches (as listed), of the
    first combination with the fewest (E, S, I): what aligning every combination and taking
    the first cheapest gives (`Scorer._enumerate`), where no reference word is optional (then
    every optimal path of a combination has the same I: D - I is fixed).

    Meet in the middle: the first half of the slots' combinations run forward from the
    start (sharing prefixes), the second half's backward from the end over the reversed
    reference, and a combination's weight is the least sum of the two over the reference row
    where they meet: (a + b) half-tables of work, not a * b whole ones.

    `band` (compiled only; a guess, e.g. the written forms' edit distance, at least the
    winner's edits): only the cells within it of each column's diagonal are computed
    (`_half_banded`). The same winner whatever the guess: a combination's banded weight is a
    path's (or INF), never below its own; where the least banded weight has at most `band`
    edits, every least-cost path of every combination that ties with it lies in the band
    (each has that many edits at most, so |i - j| <= band on all its cells), exact there;
    otherwise the halves run again on whole columns."""
    h = len(slots) // 2
    longest = sum(len(r) for r in runs) + sum(max(len(b[0]) for b in s) for s in slots)
    w = Weights.for_pair(len(ref), longest)
    banded = band is not None and compiled and _dp is not None

    def half(
        r: np.ndarray, rs: list[np.ndarray], ss: list[list[Branch]], first: bool
    ) -> np.ndarray:
        if banded:
            return _half_banded(r, rs, ss, _Half(w, first, band))
        return _half(r, rs, ss, w, first, compiled)

    fwd = half(ref, runs[: h + 1], slots[:h], True)
    # the reversed suffix: runs[k], slots[k - 1], ..., runs[h + 1], slots[h], then nothing
    back_runs = [r[::-1] for r in runs[h + 1 :][::-1]] + [runs[0][:0]]
    back_slots = [[(a[::-1], s[::-1]) for a, s in slot] for slot in slots[h:][::-1]]
    back = half(ref[::-1], back_runs, back_slots, False)[:, ::-1]
    # weight of (a, b) = min over the meeting row of forward + backward; in blocks of
    # prefixes so the (a, b, row) sums stay small
    total = np.empty((len(fwd), len(back)), dtype=np.int64)
    for a in range(len(fwd)):
        np.min(fwd[a][None, :] + back, axis=1, out=total[a])
    best = int(np.argmin(total.reshape(-1)))
    if banded and int(total.reshape(-1)[best]) // w.e > (band or 0):
        return best_combination(ref, runs, slots, compiled)  # the band was too narrow
    return best
