# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The scorer's hot dynamic programs compiled (docs/SCORING.md, "The compiled DP"): the same
values, cell for cell, as the numpy and Python code they replace, which stays as the fallback
where this extension is not built (no C compiler), chosen at import.

- `lattice_run`: `scoring.dae_windows._Lattice.run`, the DAE lattice's banded pass. A column
  holds the cost of every reference prefix against the hypothesis so far; a token's column is
  computed on the band's rows lo..hi only, every other row INF. Where numpy needs a dozen calls
  per token (each a pass over the band, ~1 us of overhead apiece), this is one C loop: the
  diagonal and the insertion, then the deletions as a running minimum of (cost - cum), then the
  clip at INF, so every cell is the numpy path's integer. The band's updates (`_alive`, every
  `_STRIDE` items; with the pass's `bound`, `_suffix` and `_last_within`: `dae_windows._Bound`)
  are compiled too; the kept columns (`_trimmed`) are called back in Python.
- `steps`: `dae_windows._step` token after token, the same cell function on every slot
  combination's row; with a band, only the rows within it of each column's diagonal.
- `fill_table`: `align._Table.fill_row` over a whole (narrow) batch's table.
- `align_pairs`: `align._align_chunk` on a wide batch, pair by pair (short utterances);
  `align_banded` the same over each pair's Ukkonen band, checked (a long pair's DAE windows).
- `myers`: `align._myers`, the bit-parallel distance and deltas in 64-bit words; `myers_band`
  the same on the band's words only (`align._anchors`: the same anchors), `myers_band_words`
  its kept rows as arrays (`dae_windows.suffix_bound`).
- `band_rows`: `align._Band.next` over a stretch of rows (a plain long pair's band)."""

import numpy as np

from libc.stdint cimport int16_t, int32_t, int64_t, uint64_t

cdef int64_t INF = (<int64_t>1) << 60  # scoring.dae_windows.INF
cdef int NBUF = 5  # three columns (current, next plain, next slot) and two branch scratches


# The columns' cells are left unclipped (a cell the numpy path clips to INF may hold more
# here) and clipped where a column leaves (`_clip`): every cell is a minimum of a column's cells
# plus non-negative costs, so a cell at or above INF only ever yields cells at or above INF,
# and the clipped result is numpy's cell for cell, with one instruction pair less per cell.
# Unclipped cells stay below INF + (rows + tokens) x (sub + ins), far from int64's limit.


cdef inline int64_t _cell(
    int64_t diag, int64_t up, bint same, int64_t dele, int64_t* run, int64_t sub, int64_t ins
) noexcept nogil:
    """One cell of a plain (not strict) token's column: the diagonal (+ sub unless the words
    are the `same`), the cell above + ins, or the cell before it in this column (`run`,
    updated) + its row's deletion cost."""
    cdef int64_t v = diag if same else diag + sub, u = up + ins, d = run[0] + dele
    v = u if u < v else v
    run[0] = d if d < v else v
    return run[0]


cdef inline void _clip(int64_t* col, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Rows lo..hi of a column clipped at INF (the numpy path's cells)."""
    cdef Py_ssize_t r
    for r in range(lo, hi + 1):
        col[r] = col[r] if col[r] < INF else INF


cdef inline void _token(
    const int64_t* col,
    int64_t* new,
    const int64_t* ids,
    const int64_t* cum,
    int64_t tok,
    bint strict,
    Py_ssize_t lo,
    Py_ssize_t hi,
    int64_t sub,
    int64_t ins,
) noexcept nogil:
    """`dae_windows._token`: rows lo..hi of the column after `tok` (rows outside untouched),
    unclipped. One pass: each cell's diagonal and insertion, then the deletions as a running
    minimum down the column from row lo (numpy's three passes fused: a cell's minimum reads
    only the rows above it)."""
    cdef Py_ssize_t r, start = lo
    cdef int64_t v, d, run = INF  # no cell above row lo: its deletion path costs INF or more
    if lo == 0 and hi >= 0:
        run = INF if strict else col[0] + ins
        new[0] = run
        start = 1
    if not strict:
        for r in range(start, hi + 1):
            new[r] = _cell(
                col[r - 1], col[r], ids[r - 1] == tok, cum[r] - cum[r - 1], &run, sub, ins
            )
        return
    for r in range(start, hi + 1):  # a strict token may only be matched
        v = col[r - 1] if ids[r - 1] == tok else INF
        d = run + cum[r] - cum[r - 1]
        run = d if d < v else v
        new[r] = run


cdef enum:
    FUSED = 4  # plain tokens computed together by `_tokens4`


cdef void _tokens4(
    const int64_t* col,
    int64_t* new,
    const int64_t* ids,
    const int64_t* cum,
    const int64_t* tok,
    Py_ssize_t lo,
    Py_ssize_t hi,
    int64_t sub,
    int64_t ins,
) noexcept nogil:
    """`_token` for four plain tokens in turn on the same rows lo..hi, row by row: the three
    columns between are never stored (each cell reads its column's predecessor's rows r - 1
    and r, held in registers), and the four running minima are independent chains the CPU
    overlaps, where one token's column is one serial chain. The same cells: a middle column
    is INF above lo (as `_Columns.prepare` leaves it) and row 0 is `_token`'s."""
    cdef Py_ssize_t r
    cdef int64_t t1 = tok[0], t2 = tok[1], t3 = tok[2], t4 = tok[3]
    cdef int64_t p0, p1, p2, p3, x0, w, dele, run1, run2, run3, run4
    if hi < lo:
        return
    if lo == 0:
        p0 = col[0]
        run1 = p1 = p0 + ins
        run2 = p2 = p1 + ins
        run3 = p3 = p2 + ins
        run4 = new[0] = p3 + ins
    else:
        p0, p1, p2, p3 = col[lo - 1], INF, INF, INF
        run1 = run2 = run3 = run4 = INF
    for r in range(lo if lo > 0 else 1, hi + 1):
        x0, w, dele = col[r], ids[r - 1], cum[r] - cum[r - 1]
        p0, x0 = x0, _cell(p0, x0, w == t1, dele, &run1, sub, ins)
        p1, x0 = x0, _cell(p1, x0, w == t2, dele, &run2, sub, ins)
        p2, x0 = x0, _cell(p2, x0, w == t3, dele, &run3, sub, ins)
        p3, x0 = x0, _cell(p3, x0, w == t4, dele, &run4, sub, ins)
        new[r] = x0


cdef inline int64_t _floordiv(int64_t a, int64_t b) noexcept nogil:
    """Python's a // b (b > 0): C's division truncates toward zero."""
    cdef int64_t q = a // b
    return q - 1 if (a % b != 0 and a < 0) else q


cdef bint _alive(
    const int64_t* col,
    Py_ssize_t* lo,
    Py_ssize_t* hi,
    Py_ssize_t n,
    int64_t rest0,
    int64_t rest1,
    int64_t upper,
    int64_t e,
    int64_t free,
    int64_t ahead,
    const int64_t* bound,
    int64_t* least,
) noexcept nogil:
    """`_Lattice._alive` and `_reach` in one pass over the band: lo..hi become the first row
    that can lie on a path within `upper` and the furthest row such rows reach in `ahead`
    tokens (unchanged where no row can: returns whether one can). With `bound` (each row's
    `_Bound.rows`, NULL without), a row's edits still to come are at least its bound too;
    `least` gets the least cost of the rows that can."""
    cdef Py_ssize_t r, first = -1
    cdef int64_t left, short, cost, budget, g, extra, reach = 0
    least[0] = INF
    for r in range(lo[0], hi[0] + 1):
        left = n - r
        short = rest0 - left if rest0 > left else 0
        if not free and left - rest1 > short:
            short = left - rest1
        if bound != NULL and bound[r] > short:
            short = bound[r]
        cost = col[r]
        if cost + short * e > upper:
            continue
        least[0] = cost if cost < least[0] else least[0]
        budget = _floordiv(upper - cost, e) + free
        g = rest0 - left
        extra = budget if budget <= -g else _floordiv(budget - g, 2)
        if first < 0 or r + extra > reach:
            reach = r + extra
        if first < 0:
            first = r
    if first < 0:
        return False
    lo[0] = first
    hi[0] = n if reach + ahead > n else reach + ahead
    return True


cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil


cdef inline int64_t _popcount(uint64_t v) noexcept nogil:
    return __builtin_popcountll(v)


cdef void _suffix(
    const uint64_t* vp,
    const uint64_t* vn,
    int64_t words,
    int64_t base,
    int64_t c0,
    int64_t off,
    const int64_t* opt_after,
    Py_ssize_t n,
    Py_ssize_t lo,
    Py_ssize_t hi,
    int64_t* out,
) noexcept nogil:
    """`_Bound.rows` of one stride column into out[lo..hi]: D' read from the deltas row by
    row (row r is the reversed reference's column n - r, one delta bit below row r - 1's),
    less the optional words left; `off` where the deltas hold no column (NO_BOUND where they
    hold none at all)."""
    cdef int64_t cmax = c0 + 64 * words - 1, t, d = base, miss = off if words > 0 else -INF
    cdef Py_ssize_t r, b, r_lo, r_hi
    cmax = n if n < cmax else cmax
    r_lo = lo if lo > n - cmax else n - cmax
    r_hi = hi if hi < n - c0 else n - c0
    for r in range(lo, hi + 1):
        if r < r_lo or r > r_hi:
            out[r] = miss
    if r_lo > r_hi:
        return
    t = n - r_lo - c0  # D' at row r_lo: base plus the deltas of the t bits below its column
    for b in range(t >> 6):
        d += _popcount(vp[b]) - _popcount(vn[b])
    if t & 63:
        b = t >> 6
        d += _popcount(vp[b] & ((<uint64_t>1 << (t & 63)) - 1))
        d -= _popcount(vn[b] & ((<uint64_t>1 << (t & 63)) - 1))
    for r in range(r_lo, r_hi + 1):
        out[r] = d - opt_after[r]
        t = n - r - 1 - c0  # the delta between this row's column and the next row's
        if t >= 0:
            d -= <int64_t>((vp[t >> 6] >> (t & 63)) & 1) - <int64_t>((vn[t >> 6] >> (t & 63)) & 1)


cdef inline int64_t _bits(const uint64_t* v, int64_t lo, int64_t hi) noexcept nogil:
    """How many bits of v are set from bit lo to bit hi - 1."""
    cdef int64_t count = 0, b
    if hi <= lo:
        return 0
    if (lo >> 6) == ((hi - 1) >> 6):
        return _popcount((v[lo >> 6] >> (lo & 63)) & (~(<uint64_t>0) >> (63 - ((hi - 1) & 63) + (lo & 63))))
    count = _popcount(v[lo >> 6] >> (lo & 63))
    for b in range((lo >> 6) + 1, (hi - 1) >> 6):
        count += _popcount(v[b])
    count += _popcount(v[(hi - 1) >> 6] & (~(<uint64_t>0) >> (63 - ((hi - 1) & 63))))
    return count


cdef Py_ssize_t _last_within(
    const uint64_t* vp,
    const uint64_t* vn,
    int64_t words,
    int64_t base,
    int64_t c0,
    const int64_t* opt_after,
    Py_ssize_t n,
    Py_ssize_t first,
    Py_ssize_t hi,
    int64_t least,
    int64_t tokens,
    int64_t upper,
    int64_t e,
) noexcept nogil:
    """`dae_windows._last_within` on the stride column's `_Bound` (its deltas, as `_suffix`
    reads them): the last row of first..hi whose bound, less the stride's tokens, still
    allows a path within `upper` from the least cost (`first` if none below it does), found
    without reading every row: a row's bound exceeding that by x > 0, the next x - 1 rows'
    exceed it too (down a row, D' falls by at most one, the optional words left never
    rise), so the scan jumps x rows. Rows whose column the deltas do not hold are `off`
    (never within: `suffix_bound`'s `off` exceeds every path's edits plus a stride); with no
    deltas at all (NO_BOUND), every row is."""
    cdef int64_t cmax = c0 + 64 * words - 1, t, d = base, cap, x
    cdef Py_ssize_t r, r_lo, r_hi, best = first, step
    if words == 0:
        return hi
    cap = _floordiv(upper - least, e)
    cmax = n if n < cmax else cmax
    r_lo = first if first > n - cmax else n - cmax
    r_hi = hi if hi < n - c0 else n - c0
    if r_lo > r_hi:
        return first
    t = n - r_lo - c0  # D' at row r_lo: base plus the deltas of the t bits below its column
    d += _bits(vp, 0, t) - _bits(vn, 0, t)
    r = r_lo
    while r <= r_hi:
        x = d - opt_after[r] - tokens - cap
        if x <= 0:
            best = r
            step = 1
        else:
            step = x if x < r_hi + 1 - r else r_hi + 1 - r
        if r + step > r_hi:
            break
        # D' at row r + step: the deltas of the columns between the two rows' taken off
        d -= _bits(vp, n - r - step - c0, n - r - c0) - _bits(vn, n - r - step - c0, n - r - c0)
        r += step
    return best


cdef class _Columns:
    """NBUF columns of n + 1 rows, each INF outside the rows it may hold (`dlo`..`dhi`), so
    that preparing one for a band clears only the rows it last held outside it (a fresh
    column per token would be a whole reference's rows for a band's work)."""

    cdef public list arrays
    cdef int64_t* ptr[5]
    cdef Py_ssize_t dlo[5]
    cdef Py_ssize_t dhi[5]

    def __init__(self, Py_ssize_t rows):
        cdef int64_t[::1] view
        self.arrays = []
        for k in range(NBUF):
            a = np.full(rows, INF, dtype=np.int64)
            view = a
            self.arrays.append(a)
            self.ptr[k] = &view[0]
            self.dlo[k], self.dhi[k] = 0, -1

    cdef void prepare(self, int k, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
        """Column k INF outside lo..hi (its rows inside are about to be written)."""
        cdef Py_ssize_t r
        cdef int64_t* p = self.ptr[k]
        for r in range(self.dlo[k], min(self.dhi[k], lo - 1) + 1):
            p[r] = INF
        for r in range(max(self.dlo[k], hi + 1), self.dhi[k] + 1):
            p[r] = INF
        self.dlo[k], self.dhi[k] = lo, hi

    cdef void fill(self, int k, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
        """Column k INF everywhere but holding lo..hi (about to be min-accumulated)."""
        cdef Py_ssize_t r
        self.prepare(k, lo, hi)
        for r in range(lo, hi + 1):
            self.ptr[k][r] = INF


cdef inline int _other(int cur, int a, int b) noexcept nogil:
    return b if cur == a else a


cdef int _slot(
    _Columns cols,
    int cur,
    tuple item,
    const int64_t* ids,
    const int64_t* cum,
    Py_ssize_t lo,
    Py_ssize_t hi,
    int64_t sub,
    int64_t ins,
) except -1:
    """The column after a slot: the least over its branches (each its tokens in turn), in a
    column other than `cur`; returns its index."""
    cdef int out = 0 if cur != 0 else 1
    cdef int src, dst, k
    cdef Py_ssize_t r, j, nt
    cdef int64_t[::1] toks
    cdef const unsigned char[::1] strict
    cdef int64_t* o
    cdef int64_t* s
    cols.fill(out, lo, hi)
    o = cols.ptr[out]
    for branch in item:
        toks = np.ascontiguousarray(branch[0], dtype=np.int64)
        strict = np.ascontiguousarray(branch[1], dtype=np.uint8)
        nt = toks.shape[0]
        src = cur
        for j in range(nt):
            dst = _other(src, 3, 4)
            cols.prepare(dst, lo, hi)
            _token(cols.ptr[src], cols.ptr[dst], ids, cum, toks[j], strict[j], lo, hi, sub, ins)
            src = dst
        s = cols.ptr[src]
        if nt == 0:
            # an empty branch is the column itself, every row of it (as numpy's minimum over
            # whole columns): widen the output to the rows the column may hold
            for r in range(cols.dlo[cur], cols.dhi[cur] + 1):
                if s[r] < o[r]:
                    o[r] = s[r]
            cols.dlo[out] = min(cols.dlo[out], cols.dlo[cur])
            cols.dhi[out] = max(cols.dhi[out], cols.dhi[cur])
            continue
        for r in range(lo, hi + 1):
            if s[r] < o[r]:
                o[r] = s[r]
    return out


def lattice_run(
    lat,
    list items,
    frozenset keep,
    const int64_t[::1] ids,
    const int64_t[::1] cum,
    const int64_t[::1] lmin,
    const int64_t[::1] lmax,
    const int64_t[:, ::1] rest,
    Py_ssize_t stride,
):
    """`_Lattice.run` on the compiled columns: (the last column, {kept item: (first row,
    values)}). `ids`, `cum`: the reference's token ids and cumulative deletion costs; `lmin`,
    `lmax`: each item's fewest and most tokens; `rest`: tokens from item p on (`run`'s)."""
    cdef Py_ssize_t n = ids.shape[0], p, nitems = len(items), lo, hi, hmin = 0, hmax = 0
    cdef int64_t e0 = lat.e0, sub = lat.w.e + lat.w.m, ins = lat.w.e + 1
    cdef bint banded = lat.upper is None
    cdef int64_t upper = 0 if banded else lat.upper, e = lat.w.e, free = lat.ref.free, ahead
    cdef int cur = 2, nxt
    cdef _Columns cols = _Columns(n + 1)
    cdef const int64_t* pi = &ids[0] if n else NULL
    cdef const int64_t* pc = &cum[0]
    cdef int64_t toks[FUSED]
    cdef int64_t least
    bound = lat.bound
    cdef bint bounded = bound is not None and not banded
    cdef const uint64_t[:, ::1] bvp, bvn
    cdef const int64_t[::1] bbase, bc0, bwords, btok, bopt
    cdef int64_t boff = 0
    cdef int64_t[::1] rows_bound
    cdef int64_t* pb = NULL
    cdef Py_ssize_t k
    if bounded:
        bvp, bvn, bbase, bc0 = bound.vp, bound.vn, bound.base, bound.c0
        bwords, boff, btok, bopt = bound.words, bound.off, bound.tokens, bound.opt_after
        rows_bound = np.empty(n + 1, dtype=np.int64)
        pb = &rows_bound[0]
    lo, hi = 0, min(n, e0)
    cols.prepare(cur, 0, hi)
    for p in range(hi + 1):
        cols.ptr[cur][p] = pc[p]
    kept = {}
    p = 0
    while p < nitems:
        if banded:
            lo, hi = max(0, hmin - e0), min(n, hmax + lmax[p] + e0)
        elif p % stride == 0:
            ahead = rest[p, 1] - rest[min(p + stride, nitems), 1]
            if not bounded:
                _alive(cols.ptr[cur], &lo, &hi, n, rest[p, 0], rest[p, 1], upper, e, free, ahead,
                       NULL, &least)
            else:
                k = p // stride
                _suffix(&bvp[k, 0], &bvn[k, 0], bwords[k], bbase[k], bc0[k], boff, &bopt[0],
                        n, lo, hi, pb)
                if _alive(cols.ptr[cur], &lo, &hi, n, rest[p, 0], rest[p, 1], upper, e, free,
                          ahead, pb, &least):
                    # the band's upper end: read on the rows the new band may hold, by jumps
                    hi = _last_within(&bvp[k, 0], &bvn[k, 0], bwords[k], bbase[k], bc0[k],
                                      &bopt[0], n, lo, hi, least, btok[k], upper, e)
        if p in keep:
            _clip(cols.ptr[cur], lo, hi)
            kept[p] = lat._trimmed(cols.arrays[cur], lo, hi)
        item = items[p]
        if not isinstance(item, int):
            hmin, hmax = hmin + lmin[p], hmax + lmax[p]
            cur = _slot(cols, cur, item, pi, pc, lo, hi, sub, ins)
            p += 1
            continue
        nxt = _other(cur, 0, 1)
        cols.prepare(nxt, lo, hi)
        if not banded and _plain_run(items, keep, p, stride, toks):
            # the next FUSED items keep this band (no update, no kept column among them)
            _tokens4(cols.ptr[cur], cols.ptr[nxt], pi, pc, toks, lo, hi, sub, ins)
            hmin, hmax = hmin + FUSED, hmax + FUSED
            p += FUSED
        else:
            _token(cols.ptr[cur], cols.ptr[nxt], pi, pc, item, False, lo, hi, sub, ins)
            hmin, hmax = hmin + 1, hmax + 1
            p += 1
        cur = nxt
    _clip(cols.ptr[cur], cols.dlo[cur], cols.dhi[cur])
    return cols.arrays[cur], kept


cdef bint _plain_run(list items, frozenset keep, Py_ssize_t p, Py_ssize_t stride, int64_t* toks):
    """Whether items p..p + FUSED - 1 are plain tokens in one stride of the forward pass's band
    with no kept column before any but the first (their ids then in `toks`)."""
    cdef Py_ssize_t q
    if p + FUSED > len(items) or (p % stride) + FUSED > stride:
        return False
    for q in range(FUSED):
        item = items[p + q]
        if not isinstance(item, int) or (q and (p + q) in keep):
            return False
        toks[q] = item
    return True


def steps(
    const int64_t[:, ::1] cols,
    const int64_t[::1] ids,
    const int64_t[::1] cum,
    const int64_t[::1] toks,
    const unsigned char[::1] strict,
    int64_t sub,
    int64_t ins,
    const int64_t[::1] at=None,
    Py_ssize_t band=-1,
):
    """`dae_windows._step` for each of `toks` in turn (a run, or a slot's branch; at least
    one), on every row of `cols` (a DAE window's combinations, one column each, every
    reference row): `_token` on each row (`_tokens4` for four plain tokens in a row), into
    new arrays (two, used in turn).

    With `at` (the tokens each combination has consumed before `toks`) and `band` >= 0, only
    the rows i within `band` of the column's tokens j (|i - j| <= band, where a path of at
    most `band` edits can be: each of its cells has |i - j| indels behind it) are computed,
    every other row INF (`best_combination`'s `band`): each value a path's cost or INF, so
    never below the whole column's, and equal on every cell of such a path."""
    cdef Py_ssize_t k, t = 0, c, nt = toks.shape[0], rows = cols.shape[0], n = ids.shape[0]
    cdef Py_ssize_t width = cols.shape[1], lo = 0, hi = n, j
    cdef bint banded = at is not None and band >= 0
    bufs = [np.empty((rows, width), dtype=np.int64), np.empty((rows, width), dtype=np.int64)]
    cdef int64_t[:, ::1] a = bufs[0], b = bufs[1], last
    cdef const int64_t* pi = &ids[0] if n else NULL
    cdef const int64_t* src
    cdef int64_t* dst
    cdef bint four
    c = 0
    while t < nt:
        four = t + FUSED <= nt
        for k in range(FUSED if four else 0):
            four = four and not strict[t + k]
        for k in range(rows):
            src = &cols[k, 0] if c == 0 else (&a[k, 0] if c % 2 == 0 else &b[k, 0])
            dst = &b[k, 0] if c % 2 == 0 else &a[k, 0]
            if banded:
                # the new columns' rows: j + 1 - band .. j + (1 or 4) + band (reading the
                # previous column's rows from j - band, inside its own band)
                j = at[k] + t
                lo = j + 1 - band
                lo = lo if lo > 0 else 0
                hi = j + (FUSED if four else 1) + band
                hi = hi if hi < n else n
            if four:
                _tokens4(src, dst, pi, &cum[0], &toks[t], lo, hi, sub, ins)
            elif lo <= hi:
                _token(src, dst, pi, &cum[0], toks[t], strict[t], lo, hi, sub, ins)
            if banded:  # the rows the next step reads above this band: INF
                for j in range(hi + 1, min(hi + FUSED, n) + 1):
                    dst[j] = INF
        t += FUSED if four else 1
        c += 1
    last = b if c % 2 == 1 else a  # the last step's output
    for k in range(rows):
        if banded:  # rows outside the last band (earlier columns' cells, or never written)
            lo = min(max(at[k] + nt - band, 0), n + 1)
            hi = max(min(at[k] + nt + band, n), lo - 1)
            for j in range(lo):
                last[k, j] = INF
            for j in range(hi + 1, n + 1):
                last[k, j] = INF
        _clip(&last[k, 0], 0, n)
    return bufs[c % 2 == 1]


ctypedef fused dist_t:
    int16_t
    int32_t
    int64_t


cdef void _plain_cells(
    const dist_t* diag_row,
    dist_t* row,
    unsigned char* code,
    const int64_t* hyp,
    const int64_t* ref,
    Py_ssize_t b,
    int64_t k,
) noexcept nogil:
    """Cell j of every pair of a batch without flags: `diag_row` is row i-1 from column j-1
    (its cell j at + b), `row` row i from column j-1 (the cell to the left, then the one
    written at + b); straight-line code over the pairs, which the compiler vectorises."""
    cdef Py_ssize_t p
    cdef int64_t diag, up, t, c
    cdef unsigned char differ
    for p in range(b):
        differ = hyp[p] != ref[p]
        diag = <int64_t>diag_row[p] + differ * (k + 1) - k
        up = <int64_t>diag_row[b + p] + k
        t = diag if diag < up else up
        c = row[p] if row[p] < t else t
        row[b + p] = <dist_t>c
        code[p] = (1 + differ) if c == diag else (3 if c == up else 4)


cdef void _strict_cells(
    const dist_t* diag_row,
    const dist_t* up_row,
    dist_t* row,
    unsigned char* code,
    const int64_t* hyp,
    const int64_t* ref,
    const unsigned char* strict,
    const int64_t* shift,
    int64_t* run,
    Py_ssize_t b,
    int64_t k,
    int64_t inf,
) noexcept nogil:
    """`fill_table`'s cell j of every pair of a narrow batch with strict tokens and no optional
    word (a long pair's DAE windows), as `_plain_cells`: without a branch (the codes' choice
    and a strict token's substitution are data, mispredicted where they were branches)."""
    cdef Py_ssize_t p
    cdef int64_t diag, up, t, rn, c, sub
    cdef int64_t strict_sub = inf - k - 1
    cdef unsigned char differ
    for p in range(b):
        differ = hyp[p] != ref[p]
        sub = differ * (k + 1 + strict[p] * strict_sub)  # inf if strict, k + 1, or 0 on a match
        diag = <int64_t>diag_row[p] + sub - k
        up = <int64_t>up_row[p] + k
        t = diag if diag < up else up
        t = (t if t < inf else inf) - shift[p]
        rn = run[p]
        rn = t if t < rn else rn
        run[p] = rn
        row[p] = <dist_t>(rn + shift[p])
        c = row[p]
        code[p] = (1 + differ) if c == <dist_t>diag else (3 if c == <dist_t>up else 4)


def fill_table(
    dist_t[:, :, ::1] dist,
    unsigned char[:, :, ::1] dirs,
    const int64_t[:, ::1] ref,
    const int64_t[:, ::1] hyp,
    int64_t k,
    int64_t inf,
    const unsigned char[:, ::1] strict,
    const unsigned char[:, ::1] opt,
    const int64_t[:, ::1] col0,
    const int64_t[:, ::1] shift,
):
    """`align._Table.fill_row` on rows 1.. of the table, every pair of the batch: the same
    costs (in the table's integer type) and back-trace codes. `strict` (mmax, b), `opt` and
    `col0` (nmax, b) as the table's, or None; `shift` (the narrow table's restart of the
    running minimum after each strict token), or None for the other form of that minimum
    (`_running_min`: the previous cell plus `pen`, capped candidates)."""
    cdef Py_ssize_t i, j, p, b = dist.shape[2], nmax = dist.shape[0] - 1, w = dist.shape[1]
    cdef int64_t r, h, sub, diag, up, t, cell, prev_cell, carry
    cdef bint differ, has_strict = strict is not None, has_opt = opt is not None
    cdef bint narrow_strict = shift is not None
    cdef int64_t[::1] run = np.empty(b, dtype=np.int64)
    cdef unsigned char code, s
    for i in range(1, nmax + 1):
        for p in range(b):
            # column 0: deletions only (`_candidates`' t[0]); its code was set with the table
            t = col0[i - 1, p] if has_opt else i * k
            dist[i, 0, p] = <dist_t>t
            if narrow_strict:
                run[p] = t if t < inf else inf  # (shift[0] is 0)
        if not has_strict and not has_opt:
            for j in range(1, w):
                _plain_cells(
                    &dist[i - 1, j - 1, 0], &dist[i, j - 1, 0], &dirs[i, j, 0],
                    &hyp[j - 1, 0], &ref[i - 1, 0], b, k,
                )
            continue
        if narrow_strict and not has_opt:
            for j in range(1, w):
                _strict_cells(
                    &dist[i - 1, j - 1, 0], &dist[i - 1, j, 0], &dist[i, j, 0], &dirs[i, j, 0],
                    &hyp[j - 1, 0], &ref[i - 1, 0], &strict[j - 1, 0], &shift[j, 0], &run[0],
                    b, k, inf,
                )
            continue
        for j in range(1, w):
            for p in range(b):
                r = ref[i - 1, p]
                h = hyp[j - 1, p]
                differ = h != r
                s = strict[j - 1, p] if has_strict else 0
                sub = (inf if s else k + 1) if differ else 0
                diag = <int64_t>dist[i - 1, j - 1, p] + sub - k
                if has_opt:
                    up = <int64_t>dist[i - 1, j, p] + (0 if opt[i - 1, p] else k)
                else:
                    up = <int64_t>dist[i - 1, j, p] + k
                t = diag if diag < up else up
                prev_cell = dist[i, j - 1, p]
                if not has_strict:
                    cell = prev_cell if prev_cell < t else t
                elif narrow_strict:
                    t = t if t < inf else inf
                    carry = t - shift[j, p]
                    if carry < run[p]:
                        run[p] = carry
                    cell = run[p] + shift[j, p]
                else:
                    t = t if t < inf else inf
                    carry = prev_cell + (inf if s else 0)
                    cell = carry if carry < t else t
                dist[i, j, p] = <dist_t>cell
                cell = dist[i, j, p]
                # the back-trace rule (`_codes`): diagonal, else up (5: an optional word), else left
                if cell == <dist_t>diag:
                    code = 2 if differ else 1
                elif cell == <dist_t>up:
                    code = 5 if (has_opt and opt[i - 1, p]) else 3
                else:
                    code = 4
                dirs[i, j, p] = code



cdef struct _Carries:
    uint64_t add  # the addition's carry into the next word up
    uint64_t hp  # the horizontal deltas' top bits, shifted into the next word up
    uint64_t hn


cdef inline void _word(
    uint64_t* vp, uint64_t* vn, uint64_t eq, _Carries* c, uint64_t* hp, uint64_t* hn
) noexcept nogil:
    """One 64-bit word of a Myers row (`myers`, `myers_band`): its vertical deltas vp, vn
    updated in place for the word's matches `eq`, with the carries of the words below (`c`,
    left holding this word's for the next); `hp`, `hn` get its horizontal deltas (before
    the shift)."""
    cdef uint64_t vpb = vp[0], vnb = vn[0], x = eq | vnb, sum_, d0, h_p, h_n
    cdef bint overflow
    # ((x & vp) + vp) with the carry of the words below
    sum_ = (x & vpb) + vpb
    overflow = sum_ < vpb
    sum_ += c.add
    c.add = 1 if (overflow or sum_ < c.add) else 0
    d0 = (sum_ ^ vpb) | x
    h_p = vnb | ~(d0 | vpb)
    h_n = vpb & d0
    x = (h_p << 1) | c.hp
    vp[0] = ((h_n << 1) | c.hn) | ~(d0 | x)
    vn[0] = x & d0
    c.hp, c.hn = h_p >> 63, h_n >> 63
    hp[0], hn[0] = h_p, h_n


def myers(const int64_t[::1] ref, const int64_t[::1] hyp, keep):
    """`align._myers` in 64-bit words (Myers' bit-parallel columns, Hyyro's blocks): the
    edit distance and the vertical deltas (vp, vn as Python ints of m bits) after each
    reference row in `keep`. The addition's carry and the shifts' top bits pass from word to
    word, upward only, so the bits above m in the last word never reach those below it."""
    cdef Py_ssize_t n = ref.shape[0], m = hyp.shape[0], i, b, q, nb = (m + 63) // 64
    cdef Py_ssize_t top_word = (m - 1) // 64
    cdef uint64_t top_bit = (<uint64_t>1) << ((m - 1) % 64)
    cdef uint64_t hp, hn
    cdef _Carries c
    cdef int64_t score = m
    # the hypothesis positions of each distinct id (CSR), and each reference word's id there
    ids, inverse = np.unique(np.asarray(hyp), return_inverse=True)
    order = np.argsort(inverse, kind="stable").astype(np.int64)
    starts = np.searchsorted(inverse[order], np.arange(len(ids) + 1)).astype(np.int64)
    at = np.searchsorted(ids, np.asarray(ref)).astype(np.int64)
    found = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == np.asarray(ref))
    cdef const int64_t[::1] pos = order, start = starts
    cdef int64_t[::1] word = np.where(found, at, -1).astype(np.int64)
    cdef uint64_t[::1] vp = np.full(nb, ~(<uint64_t>0), dtype=np.uint64)
    cdef uint64_t[::1] vn = np.zeros(nb, dtype=np.uint64)
    cdef uint64_t[::1] peq = np.zeros(nb, dtype=np.uint64)
    cdef object mask = (<object>1 << m) - 1  # a Python int of m bits (the C shift would wrap)
    kept = {}
    for i in range(n):
        if word[i] >= 0:
            for q in range(start[word[i]], start[word[i] + 1]):
                peq[pos[q] >> 6] |= (<uint64_t>1) << (pos[q] & 63)
        c.add, c.hp, c.hn = 0, 1, 0
        for b in range(nb):
            _word(&vp[b], &vn[b], peq[b], &c, &hp, &hn)
            if b == top_word:
                if hp & top_bit:
                    score += 1
                elif hn & top_bit:
                    score -= 1
        if word[i] >= 0:
            for q in range(start[word[i]], start[word[i] + 1]):
                peq[pos[q] >> 6] = 0
        if i + 1 in keep:
            kept[i + 1] = (
                int.from_bytes(np.asarray(vp).tobytes(), "little") & mask,
                int.from_bytes(np.asarray(vn).tobytes(), "little") & mask,
            )
    return score, kept


def band_rows(
    const int64_t[::1] ref,
    const int64_t[::1] padded,
    int64_t k,
    Py_ssize_t dlo,
    Py_ssize_t m,
    int64_t inf,
    int64_t[::1] row,
    Py_ssize_t i0,
    Py_ssize_t i1,
    unsigned char[:, ::1] codes,
    Py_ssize_t base,
):
    """`align._Band.next` for rows i0+1..i1: `row` holds row i0 and is left holding row i1;
    with `codes`, row x's back-trace codes go to codes[x - base]. Cell for cell numpy's
    values (the diagonal, the cell above + K, the clip to the row's cells, column 0's i
    deletions, the running minimum) and codes (4 - (cell == up), the diagonal's where it is
    optimal, 3 in column 0), on every column of the band, outside the table's cells too."""
    cdef Py_ssize_t w = row.shape[0], i, c, lo, hi, at
    cdef int64_t r, vd, vu, t, run, cell
    cdef bint differ, zero, with_codes = codes is not None
    cdef int64_t[::1] prev = np.empty(w, dtype=np.int64)
    cdef unsigned char code
    for i in range(i0 + 1, i1 + 1):
        prev[:] = row
        r = ref[i - 1]
        at = i + dlo - 1 + w
        lo = -(i + dlo)
        lo = lo if lo > 0 else 0
        hi = m - i - dlo + 1
        hi = hi if hi < w else w
        hi = hi if hi > lo else lo
        zero = lo < hi and lo == -(i + dlo)  # column j = 0 is in the band
        run = inf  # above every cell: numpy's fmin.accumulate from the first column
        for c in range(w):
            differ = padded[at + c] != r
            vd = prev[c] + (1 if differ else -k)
            vu = prev[c + 1] + k if c + 1 < w else inf
            t = vd if vd < vu else vu
            if c < lo or c >= hi:
                t = inf
            elif zero and c == lo:
                t = i * k
                vu = t
            if c == 0 or t < run:
                run = t
            cell = run if c < hi else inf
            row[c] = cell
            if with_codes:
                code = 3 if cell == vu else 4
                if cell == vd:
                    code = 2 if differ else 1
                if zero and c == lo:
                    code = 3
                codes[i - base, c] = code


def myers_band(
    const int64_t[::1] ref, const int64_t[::1] hyp, keep, Py_ssize_t dlo, Py_ssize_t dhi
):
    """`myers`' deltas on the band dlo <= j - i <= dhi only (`align._anchors`): row i runs the
    64-bit words holding columns i + dlo - 1..i + dhi (within 0..m). The first word's column c0
    (left of the band, or column 0) is taken as reached straight down, D(i, c0) = D(i - 1, c0) +
    1 (the first word's usual carry-in); a word newly above starts from the row before plus
    insertions. Each is a real path, so every value is at least the table's; and every cell of
    a path of E edits lies in the band with its predecessors on that path computed cells (never
    c0), so there the values are the table's: all that `_anchors` compares. Returns {kept row i:
    (D(i, c0), c0, vp, vn)}, vp / vn the deltas of the words from c0 on (bit t: column c0 + t)."""
    rows = np.array(sorted(i for i in keep if 1 <= i <= ref.shape[0]), dtype=np.int64)
    base, c0, words, vp, vn = myers_band_words(ref, hyp, rows, dlo, dhi)
    return {
        int(i): (
            int(base[k]),
            int(c0[k]),
            int.from_bytes(vp[k, : words[k]].tobytes(), "little"),
            int.from_bytes(vn[k, : words[k]].tobytes(), "little"),
        )
        for k, i in enumerate(rows.tolist())
    }


cdef inline void _peq_set(
    uint64_t[::1] peq,
    int64_t w,
    int64_t[::1] first,
    const int64_t[::1] start,
    const int64_t[::1] pos,
    Py_ssize_t f,
    Py_ssize_t last,
    bint on,
) noexcept nogil:
    """Sets (`on`) or clears id w's match bits in the band's words f..last of `peq`, from
    its first position in the band on (`first[w]`, advanced past the words below it: the
    band only moves right)."""
    cdef Py_ssize_t q
    if w < 0:
        return
    q = first[w]
    if on:
        while q < start[w + 1] and pos[q] < 64 * f:
            q += 1
        first[w] = q
    while q < start[w + 1] and pos[q] < 64 * (last + 1):
        if on:
            peq[pos[q] >> 6] |= (<uint64_t>1) << (pos[q] & 63)
        else:
            peq[pos[q] >> 6] = 0
        q += 1


def myers_band_words(
    const int64_t[::1] ref,
    const int64_t[::1] hyp,
    const int64_t[::1] rows,
    Py_ssize_t dlo,
    Py_ssize_t dhi,
    extra_start=None,
    extra_ids=None,
    free=None,
):
    """`myers_band` with its kept rows (`rows`, increasing; one outside 1..n keeps nothing) as
    arrays, k for rows[k]: D(i, c0), c0, how many words, and the words of vp and vn (rows of
    a 2-D array, zeros past them), as `dae_windows.suffix_bound` reads them.

    With `extra_start` / `extra_ids` (CSR over the rows: row i's ids at extra_ids[
    extra_start[i - 1]:extra_start[i]]), row i also matches those ids (a class of tokens);
    with `free` (one flag a row), a flagged row may be skipped at no cost: its row is the
    least of the row before and the usual one (`dae_windows._gadget`), in the deltas: each
    column's value drops by one where the usual row's is one below the row before's."""
    cdef Py_ssize_t n = ref.shape[0], m = hyp.shape[0], i, b, q, nb = (m + 63) // 64
    cdef Py_ssize_t f = 0, last, new_f, new_last, lo, hi, xq, x_lo, x_hi
    cdef uint64_t hp, hn, old_p, old_n, down, below, same
    cdef uint64_t carry_down
    cdef _Carries c
    cdef int64_t base = 0
    cdef bint classes = extra_start is not None, skips = free is not None, skip
    cdef const int64_t[::1] x_start = (
        np.ascontiguousarray(extra_start, dtype=np.int64) if classes else np.zeros(1, np.int64)
    )
    cdef const unsigned char[::1] frees = (
        np.ascontiguousarray(free, dtype=np.uint8) if skips else np.zeros(1, np.uint8)
    )
    if classes:  # every id a row can match is a row id of the CSR below
        ref_all = np.concatenate((np.asarray(ref), np.asarray(extra_ids, dtype=np.int64)))
    else:
        ref_all = np.asarray(ref)
    ids, inverse = np.unique(np.asarray(hyp), return_inverse=True)
    order = np.argsort(inverse, kind="stable").astype(np.int64)
    starts = np.searchsorted(inverse[order], np.arange(len(ids) + 1)).astype(np.int64)
    at = np.searchsorted(ids, ref_all).astype(np.int64)
    found = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == ref_all)
    cdef const int64_t[::1] pos = order, start = starts
    cdef int64_t[::1] word = np.where(found, at, -1).astype(np.int64)  # (then the extras')
    cdef uint64_t[::1] vp = np.full(nb, ~(<uint64_t>0), dtype=np.uint64)  # row 0: D(0, j) = j
    cdef uint64_t[::1] vn = np.zeros(nb, dtype=np.uint64)
    cdef uint64_t[::1] peq = np.zeros(nb, dtype=np.uint64)
    cdef int64_t[::1] first = starts[: len(ids)].copy()
    cdef int64_t w
    cdef Py_ssize_t q_lo, q_end, kq = 0, nk = rows.shape[0]
    cdef Py_ssize_t width = min(nb, (dhi - dlo + 2) // 64 + 2) if nb else 1
    out_base = np.zeros(nk, dtype=np.int64)
    out_c0 = np.zeros(nk, dtype=np.int64)
    out_words = np.zeros(nk, dtype=np.int64)
    out_vp = np.zeros((nk, width), dtype=np.uint64)
    out_vn = np.zeros((nk, width), dtype=np.uint64)
    cdef int64_t[::1] ob = out_base, oc = out_c0, ow = out_words
    cdef uint64_t[:, ::1] op = out_vp, on = out_vn
    hi = m if dhi > m else dhi
    last = (hi - 1) // 64 if hi > 0 else 0
    while kq < nk and rows[kq] < 1:
        kq += 1
    for i in range(1, n + 1):
        lo = i + dlo if i + dlo > 0 else 0
        hi = i + dhi if i + dhi < m else m
        # the first word holds a column left of the band: a band cell's diagonal predecessor
        # (row i - 1, column lo - 1) then is computed, not the boundary column
        new_f = (lo - 1) // 64 if lo > 0 else 0
        new_last = (hi - 1) // 64 if hi > 0 else 0
        new_last = new_last if new_last > new_f else new_f
        new_last = new_last if new_last < nb else nb - 1
        for b in range(f, new_f):  # words dropped below the band: D(i - 1, 64 new_f)
            base += _popcount(vp[b]) - _popcount(vn[b])
        f = new_f if new_f > f else f
        for b in range(last + 1, new_last + 1):  # words entering above: insertions
            vp[b], vn[b] = ~(<uint64_t>0), 0
        last = new_last if new_last > last else last
        # the word's positions in the band's words only (each id's from `first` on: the band
        # only moves right, so positions below it are passed once)
        x_lo = x_hi = 0
        if classes:
            x_lo, x_hi = x_start[i - 1], x_start[i]
        _peq_set(peq, word[i - 1], first, start, pos, f, last, 1)
        for xq in range(x_lo, x_hi):
            _peq_set(peq, word[n + xq], first, start, pos, f, last, 1)
        skip = skips and frees[i - 1]
        c.add, c.hp, c.hn = 0, 1, 0
        carry_down = 0
        for b in range(f, last + 1):
            old_p, old_n = vp[b], vn[b]
            _word(&vp[b], &vn[b], peq[b], &c, &hp, &hn)
            if skip:
                # the least of the row before (deltas old_p, old_n) and the usual row: column
                # j's value drops by one where the usual one is below (hn's bit j - 1; none at
                # the word's first column's carry-in, whose usual value is one above), so
                # the delta j - 1 -> j changes by (drop j-1) - (drop j), in -1..1
                down = (hn << 1) | carry_down  # drop at column j: bit j
                below = hn  # drop at column j + 1: bit j
                carry_down = hn >> 63
                same = ~(down ^ below)
                vp[b] = (old_p & same) | (~old_p & ~old_n & down & ~below)
                vn[b] = (old_n & same) | (~old_p & ~old_n & below & ~down)
        if not skip:
            base += 1  # the first word's column, reached straight down (skipped: the same)
        _peq_set(peq, word[i - 1], first, start, pos, f, last, 0)
        for xq in range(x_lo, x_hi):
            _peq_set(peq, word[n + xq], first, start, pos, f, last, 0)
        while kq < nk and rows[kq] == i:
            if last + 1 - f > width:  # never: the band's words fit `width`
                raise RuntimeError(f"myers_band_words: {last + 1 - f} words > {width}")
            ob[kq], oc[kq], ow[kq] = base, 64 * f, last + 1 - f
            for b in range(f, last + 1):
                op[kq, b - f], on[kq, b - f] = vp[b], vn[b]
            kq += 1
    return out_base, out_c0, out_words, out_vp, out_vn




cdef struct _Pair:
    const int64_t* ref
    const int64_t* hyp
    const unsigned char* strict  # NULL: none (a pair without a strict token)
    const unsigned char* opt  # NULL: none
    Py_ssize_t n
    Py_ssize_t m
    int64_t k
    int64_t inf


cdef inline int64_t _diag_of(const _Pair* q, int64_t before, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    """The diagonal's candidate into cell (i, j) (`_Table._candidates`' via_diag): sub - K,
    -K on a match, +1 on a substitution, inf - K substituting a strict token."""
    if q.hyp[j - 1] == q.ref[i - 1]:
        return before - q.k
    if q.strict != NULL and q.strict[j - 1]:
        return before + q.inf - q.k
    return before + 1


cdef inline int64_t _up_cost(const _Pair* q, Py_ssize_t i) noexcept nogil:
    return 0 if (q.opt != NULL and q.opt[i - 1]) else q.k


cdef void _pair_table(int64_t* dist, const _Pair* q) noexcept nogil:
    """One pair's cells of a wide batch's `_Table` (`_candidates`, `_running_min`): its own
    (n + 1, m + 1) table in int64, the same integers (the batch's type holds each exactly);
    with a strict token, `_running_min`'s capped form. The codes are read on the way back
    (`_pair_codes`), from the same cells, for the n + m cells of the path only."""
    cdef Py_ssize_t i, j, w = q.m + 1
    cdef int64_t k = q.k, inf = q.inf, up_cost, diag, up, t, cell, r, strict_sub = q.inf - q.k - 1
    cdef int64_t* prev
    cdef int64_t* row
    cdef const int64_t* hyp = q.hyp
    cdef const unsigned char* strict = q.strict
    dist[0] = 0
    cell = 0
    for j in range(1, w):  # row 0: insertions only (a strict token cannot be inserted)
        if strict != NULL and strict[j - 1]:
            cell = inf
        dist[j] = cell
    for i in range(1, q.n + 1):
        prev = dist + (i - 1) * w
        row = dist + i * w
        up_cost = _up_cost(q, i)
        r = q.ref[i - 1]
        cell = prev[0] + up_cost
        row[0] = cell
        if strict == NULL:
            for j in range(1, w):
                diag = prev[j - 1] + (hyp[j - 1] != r) * (k + 1) - k
                up = prev[j] + up_cost
                t = diag if diag < up else up
                cell = cell if cell < t else t
                row[j] = cell
            continue
        for j in range(1, w):
            diag = prev[j - 1] + (hyp[j - 1] != r) * (k + 1 + strict[j - 1] * strict_sub) - k
            up = prev[j] + up_cost
            t = diag if diag < up else up
            t = t if t < inf else inf
            cell = cell + strict[j - 1] * inf
            cell = cell if cell < t else t
            row[j] = cell


cdef inline Py_ssize_t _pair_codes(const int64_t* dist, const _Pair* q, char* out) noexcept nogil:
    """One pair's op letters walked back from (n, m) by `_Table`'s codes (`_codes`: the
    diagonal if optimal, else up, O for an optional word, else left), written forwards at the
    end of `out` (n + m bytes): returns where they start."""
    cdef Py_ssize_t i = q.n, j = q.m, at = q.n + q.m, w = q.m + 1
    cdef int64_t cell
    while i > 0 or j > 0:
        at -= 1
        if i == 0:
            out[at] = b"I"
            j -= 1
            continue
        cell = dist[i * w + j]
        if j > 0 and cell == _diag_of(q, dist[(i - 1) * w + j - 1], i, j):
            out[at] = b"C" if q.hyp[j - 1] == q.ref[i - 1] else b"S"
            i -= 1
            j -= 1
        elif j == 0 or cell == dist[(i - 1) * w + j] + _up_cost(q, i):
            out[at] = b"O" if (q.opt != NULL and q.opt[i - 1]) else b"D"
            i -= 1
        else:
            out[at] = b"I"
            j -= 1
    return at


def align_pairs(
    const int64_t[::1] pairs,
    const int64_t[::1] ref,
    const int64_t[::1] ref_off,
    const int64_t[::1] ref_len,
    const int64_t[::1] hyp,
    const int64_t[::1] hyp_off,
    const int64_t[::1] hyp_len,
    int64_t k,
    int64_t inf,
    const unsigned char[::1] strict,
    const unsigned char[::1] opt,
    list codes,
    int64_t[::1] costs,
    int64_t infeasible,
):
    """`align._align_chunk` on a wide batch, pair by pair: each pair's table on its own (no
    padding, no lock-step walk), the same costs and op strings into `codes[p]`, `costs[p]`.
    `strict` / `opt`: the flat flags where the batch has them, else None; `inf` the batch's."""
    cdef Py_ssize_t x, p, nmax = 0, mmax = 0, start, j
    cdef int64_t found
    cdef _Pair q
    for x in range(pairs.shape[0]):
        p = pairs[x]
        nmax = max(nmax, ref_len[p])
        mmax = max(mmax, hyp_len[p])
    cdef int64_t[::1] dist = np.empty((nmax + 1) * (mmax + 1), dtype=np.int64)
    cdef bytearray text = bytearray(nmax + mmax + 1)
    cdef char* out = text
    q.k, q.inf = k, inf
    for x in range(pairs.shape[0]):
        p = pairs[x]
        q.n, q.m = ref_len[p], hyp_len[p]
        q.ref = &ref[ref_off[p]] if q.n else NULL
        q.hyp = &hyp[hyp_off[p]] if q.m else NULL
        q.opt = &opt[ref_off[p]] if opt is not None and q.n else NULL
        q.strict = NULL
        if strict is not None:  # a pair without a strict token: the plain cells, the same
            for j in range(q.m):
                if strict[hyp_off[p] + j]:
                    q.strict = &strict[hyp_off[p]]
                    break
        _pair_table(&dist[0], &q)
        found = dist[q.n * (q.m + 1) + q.m]
        costs[p] = infeasible if found >= inf - q.m * k else found + q.m * k
        start = _pair_codes(&dist[0], &q, out)
        codes[p] = out[start : q.n + q.m].decode("ascii")


cdef inline int64_t _banded(
    const int64_t* dist, Py_ssize_t w, Py_ssize_t dlo, Py_ssize_t i, Py_ssize_t j
) noexcept nogil:
    """Cell (i, j) of a band's table (column j - i - dlo of row i); INF outside the band."""
    cdef Py_ssize_t c = j - i - dlo
    if c < 0 or c >= w:
        return INF
    return dist[i * w + c]


cdef void _band_table(int64_t* dist, const _Pair* q, Py_ssize_t dlo, Py_ssize_t w) noexcept nogil:
    """`_pair_table` on the cells (i, j) with dlo <= j - i < dlo + w only (column j - i - dlo
    of row i); every other cell, in the table or not, INF. A band cell's candidates are the
    same as the whole table's, less those outside (INF, above every cell of the table):
    each cell is the least cost over the paths inside the band, at least the whole table's."""
    cdef Py_ssize_t i, j, c, lo, hi, hmax, first
    cdef int64_t k = q.k, inf = q.inf, up_cost, diag, up, t, cell, r, strict_sub = q.inf - q.k - 1
    cdef int64_t* prev
    cdef int64_t* row
    cdef const int64_t* hyp = q.hyp
    cdef const unsigned char* strict = q.strict
    cell = 0
    for c in range(w):  # row 0: insertions only (a strict token cannot be inserted)
        j = dlo + c
        if j < 0 or j > q.m:
            dist[c] = INF
            continue
        if j > 0 and strict != NULL and strict[j - 1]:
            cell = inf
        dist[c] = cell
    for i in range(1, q.n + 1):
        prev = dist + (i - 1) * w
        row = dist + i * w
        up_cost = _up_cost(q, i)
        r = q.ref[i - 1]
        # the row's cells: columns lo..hi-1 (0 <= j <= m)
        lo = -(i + dlo)
        lo = lo if lo > 0 else 0
        hmax = q.m - i - dlo + 1
        hi = hmax if hmax < w else w
        for c in range(lo):
            row[c] = INF
        for c in range(hi if hi > lo else lo, w):
            row[c] = INF
        if hi <= lo:
            continue
        first = lo
        if i + dlo + lo == 0:  # column j = 0: deletions only, from the cell above (lo + 1)
            cell = prev[lo + 1] + up_cost
            row[lo] = cell
            first = lo + 1
        else:
            cell = INF  # the cell to the left is outside the band
        if strict == NULL:
            for c in range(first, hi):
                j = i + dlo + c
                diag = prev[c] + (hyp[j - 1] != r) * (k + 1) - k
                up = (prev[c + 1] if c + 1 < w else INF) + up_cost
                t = diag if diag < up else up
                cell = cell if cell < t else t
                row[c] = cell
            continue
        for c in range(first, hi):
            j = i + dlo + c
            diag = prev[c] + (hyp[j - 1] != r) * (k + 1 + strict[j - 1] * strict_sub) - k
            up = (prev[c + 1] if c + 1 < w else INF) + up_cost
            t = diag if diag < up else up
            t = t if t < inf else inf
            cell = cell + strict[j - 1] * inf
            cell = cell if cell < t else t
            row[c] = cell


cdef inline Py_ssize_t _band_codes(
    const int64_t* dist, const _Pair* q, Py_ssize_t dlo, Py_ssize_t w, char* out
) noexcept nogil:
    """`_pair_codes` read from a band's table (`_band_table`): the same rule, cells outside the
    band INF (never equal to a cell of a feasible path)."""
    cdef Py_ssize_t i = q.n, j = q.m, at = q.n + q.m
    cdef int64_t cell
    while i > 0 or j > 0:
        at -= 1
        if i == 0:
            out[at] = b"I"
            j -= 1
            continue
        cell = _banded(dist, w, dlo, i, j)
        if j > 0 and cell == _diag_of(q, _banded(dist, w, dlo, i - 1, j - 1), i, j):
            out[at] = b"C" if q.hyp[j - 1] == q.ref[i - 1] else b"S"
            i -= 1
            j -= 1
        elif j == 0 or cell == _banded(dist, w, dlo, i - 1, j) + _up_cost(q, i):
            out[at] = b"O" if (q.opt != NULL and q.opt[i - 1]) else b"D"
            i -= 1
        else:
            out[at] = b"I"
            j -= 1
    return at


def align_banded(
    const int64_t[::1] pairs,
    const int64_t[::1] ref,
    const int64_t[::1] ref_off,
    const int64_t[::1] ref_len,
    const int64_t[::1] hyp,
    const int64_t[::1] hyp_off,
    const int64_t[::1] hyp_len,
    int64_t k,
    int64_t inf,
    const unsigned char[::1] strict,
    const unsigned char[::1] opt,
    list codes,
    int64_t[::1] costs,
    int64_t infeasible,
    const int64_t[::1] edits,
):
    """`align_pairs` with each pair's table cut to a band (Ukkonen's): the cells through
    which a path of at most t edits and the pair's o optional words omitted can pass,
    |j - i| + |(m - j) - (n - i)| <= t + o (every move off the diagonal is an insertion, a
    deletion or an omission), t = `edits[p]` (a guess; < 0: none, the whole table).

    Exact whatever the guess, because the band's result is checked: its cost C is a path's,
    so the least cost is at most C, and a least-cost path has at most floor(C / K) edits
    (each costs K or more). Where that is within t, every least-cost path lies in the band,
    and so does every cell of it: there the band's values are the whole table's (a cell's
    least-cost path to it is part of a least-cost path, all inside the band), elsewhere they
    are only ever higher. The back-trace, from (n, m), takes a move where the cell equals
    that predecessor's value plus the move's cost: the predecessor is then on a least-cost
    path (exact in both tables), and where it is not, its value in the band is at least the
    table's, above the cell in both. So it walks the same cells and writes the same ops, and
    the cost is the table's. Where floor(C / K) exceeds t the pair is filled again with
    t = floor(C / K) (then within it); where the band holds no feasible path (a strict token
    it cannot match), or is no narrower than the table, the whole table (`_pair_table`, as
    `align_pairs`). tests/scoring/test_align_banded.py compares the three."""
    cdef Py_ssize_t x, p, i, nmax = 0, mmax = 0, start, j, dlo, dhi, w, free
    cdef int64_t found, t, need
    cdef _Pair q
    cdef bint banded
    for x in range(pairs.shape[0]):
        p = pairs[x]
        nmax = max(nmax, ref_len[p])
        mmax = max(mmax, hyp_len[p])
    cdef int64_t[::1] dist = np.empty((nmax + 1) * (mmax + 1), dtype=np.int64)
    cdef bytearray text = bytearray(nmax + mmax + 1)
    cdef char* out = text
    q.k, q.inf = k, inf
    for x in range(pairs.shape[0]):
        p = pairs[x]
        q.n, q.m = ref_len[p], hyp_len[p]
        q.ref = &ref[ref_off[p]] if q.n else NULL
        q.hyp = &hyp[hyp_off[p]] if q.m else NULL
        q.opt = NULL
        free = 0
        if opt is not None:
            for i in range(q.n):
                free += opt[ref_off[p] + i]
            if free:
                q.opt = &opt[ref_off[p]]
        q.strict = NULL
        if strict is not None:
            for j in range(q.m):
                if strict[hyp_off[p] + j]:
                    q.strict = &strict[hyp_off[p]]
                    break
        t = edits[p]
        while True:
            banded = False
            if t >= 0:
                # the band's diagonals j - i (`align._diagonals` of t + o edits, at least |m - n|)
                need = t + free
                if need < (q.m - q.n if q.m > q.n else q.n - q.m):
                    need = q.m - q.n if q.m > q.n else q.n - q.m
                dlo = -((need - (q.m - q.n)) // 2)
                dhi = (q.m - q.n + need) // 2
                w = dhi - dlo + 1
                banded = w < q.m + 1
            if not banded:
                _pair_table(&dist[0], &q)
                found = dist[q.n * (q.m + 1) + q.m]
                costs[p] = infeasible if found >= inf - q.m * k else found + q.m * k
                start = _pair_codes(&dist[0], &q, out)
                break
            _band_table(&dist[0], &q, dlo, w)
            found = dist[q.n * w + q.m - q.n - dlo]
            if found >= inf - q.m * k:
                t = -1  # no feasible path in the band: the whole table
                continue
            need = (found + q.m * k) // k
            if need > t:
                t = need  # then every least-cost path lies in the band
                continue
            costs[p] = found + q.m * k
            start = _band_codes(&dist[0], &q, dlo, w, out)
            break
        codes[p] = out[start : q.n + q.m].decode("ascii")
