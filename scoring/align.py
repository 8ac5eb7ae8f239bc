"""Alignment: Levenshtein distance with a deterministic S/D/I split, two exact engines.

Cost model (both engines): each deletion and insertion costs K, each substitution K+1, a
match 0, with K larger than any possible number of substitutions. Minimising K*E + S therefore
minimises the number of edits E first (Levenshtein distance, the TER numerator) and, among
minimal paths, the number of substitutions S. Since D - I = |ref| - |hyp| is fixed, (E, S)
fixes all three counts: the S/D/I split is unique, whatever path an engine walks. This is also
sclite's preference (its weights sub 4, del 3, ins 3 favour a deletion+insertion pair over two
substitutions when the edit count is equal).

Two kinds of token change the cost model, each marked by a flag array beside the ids:

* a *strict* hypothesis token (a word of a DAE alternative the system did not write) may only
  be matched: substituting or inserting it is impossible, so an alternative form is taken only
  where every one of its words is correct (reference words between them may still be deleted);
  a pair that cannot match its strict tokens is infeasible (cost `INFEASIBLE`);
* an *optional* reference token (sclite's parenthesised, optionally deletable word) costs
  nothing to skip; it is then scored `O` (omitted, counted as correct, as sclite's `-D`).

* `align_batch` / `align_arrays` (the fast exact path): dynamic programming vectorised with
  numpy over a batch of utterances; the table holds U[i,j] = D[i,j] - j*K, so that U[i,j] =
  min(U[i-1,j-1] + sub - K, U[i-1,j] + K, U[i,j-1]) and the insertion term is a running minimum
  along the row. Edit positions come from one fixed back-trace rule: walking back from the end,
  take the diagonal (match/substitution) when it is optimal, else a deletion, else an insertion.
  Long pairs (more than `_ROW_CELLS` table cells) are aligned one at a time, row by row, with
  the same recurrence and back-trace rule; beyond `_LONG_CELLS` cells only every s-th row of
  the table is kept (s ~ sqrt(rows)) and each stretch of rows is recomputed during the
  back-trace, so memory grows with sqrt(n) * m instead of n * m, for the same ops.
* `scoring.wfst.FstAligner` (hypotheses with many DAE slot combinations): the shortest path
  through the edit transducer; its chosen linear hypothesis is re-aligned here and the two
  costs are checked equal, so both engines give identical counts and positions by construction.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

C, S, D, I, O = ord("C"), ord("S"), ord("D"), ord("I"), ord("O")  # noqa: E741 - edit letters
EPS, SUB, DEL, INS, BEGIN, END = 0, 1, 2, 3, 4, 5
FIRST_WORD = 6  # word ids start here; the ids below are FST specials
_CHUNK = 4096  # pairs a batch: numpy's per-call cost is spread over many pairs
_CELLS = 1 << 23  # table cells a batch at most (int16: 16 MiB of costs, 8 MiB of moves)
# A pair with more cells than this is aligned on its own, row by row (a whole row per numpy
# call beats the batch's column loop once rows are long), the whole table kept ...
_ROW_CELLS = 1 << 18
# ... up to this many cells; beyond, only every s-th row (linear memory in practice).
_LONG_CELLS = 1 << 22
INFEASIBLE = 1 << 62  # the cost of a pair whose strict tokens cannot all be matched
# Back-trace codes: 0 origin, 1 C, 2 S, 3 D, 4 I, 5 O (an optional reference word omitted).
_LETTERS = np.array([0, C, S, D, I, O], dtype=np.uint8)
_ONE, _FOUR = np.uint8(1), np.uint8(4)


def align_batch(pairs: list[tuple[list[int], list[int]]], k: int) -> tuple[list[str], list[int]]:
    """Align (ref ids, hyp ids) pairs; return the op string ('C','S','D','I') and cost of each."""
    ref_len = np.fromiter((len(r) for r, _ in pairs), dtype=np.int64, count=len(pairs))
    hyp_len = np.fromiter((len(h) for _, h in pairs), dtype=np.int64, count=len(pairs))
    ref = np.fromiter(
        itertools.chain.from_iterable(r for r, _ in pairs), dtype=np.int64, count=int(ref_len.sum())
    )
    hyp = np.fromiter(
        itertools.chain.from_iterable(h for _, h in pairs), dtype=np.int64, count=int(hyp_len.sum())
    )
    codes, costs = align_arrays(ref, _offsets(ref_len), ref_len, hyp, _offsets(hyp_len), hyp_len, k)
    return codes, costs.tolist()


def _offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=out[1:])
    return out


def align_arrays(
    ref: np.ndarray,
    ref_off: np.ndarray,
    ref_len: np.ndarray,
    hyp: np.ndarray,
    hyp_off: np.ndarray,
    hyp_len: np.ndarray,
    k: int,
    *,
    hyp_strict: np.ndarray | None = None,
    ref_optional: np.ndarray | None = None,
) -> tuple[list[str], np.ndarray]:
    """`align_batch` on flat id arrays: pair p is ref[ref_off[p]:][:ref_len[p]] against the
    same slice of hyp. Pairs may share a reference slice (DAE linearisations do).

    `hyp_strict` / `ref_optional`: boolean arrays beside `hyp` / `ref` marking strict
    hypothesis tokens and optional reference tokens (see the module docstring). Pairs with
    neither go through the plain (faster) recurrence.
    """
    n_pairs = len(ref_len)
    codes: list[str] = [""] * n_pairs
    costs = np.zeros(n_pairs, dtype=np.int64)
    if not n_pairs:
        return codes, costs
    ref_len = np.asarray(ref_len, dtype=np.int64)
    hyp_len = np.asarray(hyp_len, dtype=np.int64)
    ref_off = np.asarray(ref_off, dtype=np.int64)
    hyp_off = np.asarray(hyp_off, dtype=np.int64)
    # The narrowest integer type for the ids (and the -1/-2 pads): cheaper comparisons.
    top = max(int(ref.max(initial=0)), int(hyp.max(initial=0)))
    id_type = np.int16 if top < 2**15 else np.int32 if top < 2**31 else np.int64
    ref, hyp = np.asarray(ref).astype(id_type), np.asarray(hyp).astype(id_type)
    # Which pairs carry flags: they are batched apart, so plain batches keep the fast loop.
    flagged = np.zeros(n_pairs, dtype=bool)
    if hyp_strict is not None and hyp_strict.any():
        hyp_strict = np.asarray(hyp_strict, dtype=bool)
        flagged |= _any_in(hyp_strict, hyp_off, hyp_len)
    else:
        hyp_strict = None
    if ref_optional is not None and ref_optional.any():
        ref_optional = np.asarray(ref_optional, dtype=bool)
        flagged |= _any_in(ref_optional, ref_off, ref_len)
    else:
        ref_optional = None
    cells = (ref_len + 1) * (hyp_len + 1)
    for p in np.flatnonzero(cells > _ROW_CELLS).tolist():
        r = ref[ref_off[p] : ref_off[p] + ref_len[p]]
        h = hyp[hyp_off[p] : hyp_off[p] + hyp_len[p]]
        st = hyp_strict[hyp_off[p] : hyp_off[p] + hyp_len[p]] if hyp_strict is not None else None
        op = (
            ref_optional[ref_off[p] : ref_off[p] + ref_len[p]] if ref_optional is not None else None
        )
        codes[p], costs[p] = _align_long(r, h, k, st, op)
    # Sorted by length, a chunk's tables are barely larger than its longest pair needs.
    order = np.lexsort((hyp_len, ref_len, flagged))
    order = order[cells[order] <= _ROW_CELLS]
    split = int(np.count_nonzero(~flagged[order]))
    for part, with_flags in ((order[:split], False), (order[split:], True)):
        start = 0
        while start < len(part):
            # Up to _CHUNK pairs a batch, fewer for long ones: the tables stay within _CELLS.
            size = _CHUNK
            while True:
                idx = part[start : start + size]
                n_cells = (int(ref_len[idx[-1]]) + 1) * (int(hyp_len[idx].max()) + 1) * len(idx)
                if n_cells <= _CELLS or size <= 16:
                    break
                size //= 2
            start += len(idx)
            strict = opt = None
            if with_flags:
                if hyp_strict is not None:
                    strict = _padded(hyp_strict, hyp_off[idx], hyp_len[idx], False)
                if ref_optional is not None:
                    opt = _padded(ref_optional, ref_off[idx], ref_len[idx], False)
            _align_chunk(
                _padded(ref, ref_off[idx], ref_len[idx], -1),
                ref_len[idx],
                _padded(hyp, hyp_off[idx], hyp_len[idx], -2),
                hyp_len[idx],
                k,
                idx,
                codes,
                costs,
                strict,
                opt,
            )
    return codes, costs


def _any_in(flags: np.ndarray, off: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """For each slice (off, len) of `flags`: does it hold a True?"""
    csum = np.zeros(len(flags) + 1, dtype=np.int64)
    np.cumsum(flags, out=csum[1:])
    return csum[off + lens] > csum[off]


def _padded(flat: np.ndarray, off: np.ndarray, lens: np.ndarray, pad: int | bool) -> np.ndarray:
    """(longest, batch) matrix: column b holds the ids of pair b, then `pad` (never matches)."""
    rows = np.arange(max(int(lens.max()), 1))[:, None]
    if not len(flat):
        return np.full((len(rows), len(lens)), pad, dtype=flat.dtype)
    ids = flat[np.minimum(off[None, :] + rows, len(flat) - 1)]
    ids[rows >= lens[None, :]] = pad
    return ids


def _dtype(bound: int) -> type[np.signedinteger[Any]]:
    return np.int16 if bound < 2**15 else np.int32 if bound < 2**31 else np.int64


def _infeasible_at(nmax: int, mmax: int, k: int) -> int:
    """Above every feasible cost (K*E + S <= (n + m)(K + 1)) of a pair within these lengths."""
    return (nmax + mmax) * (k + 1) + 1


class _Table:
    """One batch's cost table and back-trace codes, filled row by row (`fill_row`).

    `ref` (nmax, b) and `hyp` (mmax, b) are padded position-major, so every step works on
    contiguous rows of the whole batch; `strict` (mmax, b) and `opt` (nmax, b) are the flags
    of the batch, or None. The table holds U[i, j] = D[i, j] - j*K, which makes the insertion
    term a plain running minimum: U[i, j] = min(U[i-1, j-1] + sub - K, U[i-1, j] + K,
    U[i, j-1]), with sub 0 on a match and K+1 otherwise. Layout [i, j, pair].
    """

    def __init__(
        self,
        n: np.ndarray,
        hyp: np.ndarray,
        m: np.ndarray,
        k: int,
        strict: np.ndarray | None,
        opt: np.ndarray | None,
    ) -> None:
        b = len(n)
        self.nmax, self.mmax = nmax, mmax = int(n.max()), int(m.max())
        self.hyp, self.k, self.w = hyp[:mmax], k, mmax + 1
        self.inf = inf = _infeasible_at(nmax, mmax, k)
        if strict is None:
            # Costs and the running-minimum terms stay within (nmax + mmax + 1) * (k + 2) in
            # absolute value: the narrowest exact integer type cuts the memory traffic.
            dtype = _dtype((nmax + mmax + 1) * (k + 2))
        else:
            # Impossible moves cost `inf`; every row is capped at `inf` (a cell at or above it
            # is unreachable), so no value exceeds 2*inf + k + 1 in absolute value.
            dtype = _dtype(2 * inf + k + 2 + (nmax + mmax) * k)
            strict = strict[:mmax]
        self.dist = np.empty((nmax + 1, self.w, b), dtype=dtype)
        self.dist[0] = 0
        # The back-trace rule, decided per cell while filling: 1 C / 2 S (the diagonal is
        # optimal), else 3 D (the cell above is; 5 when that row's word is optional), else 4
        # I; 0 at the origin. The comparisons hold in U as in D (both sides shift by j*K).
        self.dirs = np.empty((nmax + 1, self.w, b), dtype=np.uint8)
        self.dirs[0] = 4
        self.dirs[0, 0] = 0
        self.dirs[1:, 0] = 3
        self.sub_cost: np.ndarray | int = k + 1
        self.pen: np.ndarray | None = None
        if strict is not None:
            # A strict token can be neither substituted (sub = inf) nor inserted (+inf on the
            # running minimum); row 0 (all insertions) is unreachable after the first one.
            self.sub_cost = np.where(strict, inf, k + 1).astype(dtype)
            self.pen = np.where(strict, inf, 0).astype(dtype)
            np.minimum(
                np.cumsum(self.pen, axis=0, dtype=np.int64),
                inf,
                out=self.dist[0, 1:],
                casting="unsafe",
            )
        self.opt: np.ndarray | None = None
        self.del_cost: np.ndarray | None = None
        self.col0: np.ndarray | None = None
        if opt is not None:
            self.opt = opt = opt[:nmax]
            self.del_cost = np.where(opt, 0, k).astype(dtype)  # skipping an optional word
            self.col0 = np.cumsum(self.del_cost, axis=0, dtype=np.int64).astype(dtype)
            self.dirs[1:, 0][opt] = 5
        # work buffers, reused from row to row
        self.t = np.empty((self.w, b), dtype=dtype)
        self.differ = np.empty((mmax, b), dtype=bool)
        self.sub = np.empty((mmax, b), dtype=dtype)
        self.via_diag = np.empty((mmax, b), dtype=dtype)
        self.via_up = np.empty((mmax, b), dtype=dtype)
        self.ok = np.empty((mmax, b), dtype=bool)
        self.diag_code = np.empty((mmax, b), dtype=np.uint8)
        self.carry = np.empty(b, dtype=dtype)

    def fill_row(self, i: int, ref_row: np.ndarray) -> None:
        """Row i of the costs and of the back-trace codes, from row i-1."""
        self._candidates(i, ref_row)
        self._running_min(i)
        if self.mmax:
            self._codes(i)

    def _candidates(self, i: int, ref_row: np.ndarray) -> None:
        """t[j]: the best of the diagonal and the cell above (the insertion term comes next)."""
        k, prev, t = self.k, self.dist[i - 1], self.t
        np.not_equal(self.hyp, ref_row, out=self.differ)
        # sub - K: -K on a match, 1 on a substitution (same-type arithmetic: a lookup table
        # or mixed types cost several times more per element)
        np.copyto(self.sub, self.differ)
        np.multiply(self.sub, self.sub_cost, out=self.sub)
        np.add(prev[:-1], self.sub, out=self.via_diag)
        np.subtract(self.via_diag, k, out=self.via_diag)
        if self.del_cost is None or self.col0 is None:  # (both None, or neither)
            np.add(prev[1:], k, out=self.via_up)
            t[0] = i * k
        else:
            np.add(prev[1:], self.del_cost[i - 1], out=self.via_up)
            t[0] = self.col0[i - 1]
        np.minimum(self.via_diag, self.via_up, out=t[1:])

    def _running_min(self, i: int) -> None:
        """Row i = the running minimum of t along j (a strict token cannot be inserted). One
        row of the batch at a time: ~5x faster here than np.minimum.accumulate, which does
        not vectorise across the batch."""
        row, t, pen = self.dist[i], self.t, self.pen
        row[0] = t[0]
        if pen is None:
            for j in range(1, self.w):
                np.minimum(row[j - 1], t[j], out=row[j])
        else:
            carry = self.carry
            np.minimum(t, self.inf, out=t)
            for j in range(1, self.w):
                np.add(row[j - 1], pen[j - 1], out=carry)
                np.minimum(carry, t[j], out=row[j])

    def _codes(self, i: int) -> None:
        """Row i's back-trace codes: the diagonal if optimal, else up, else left."""
        row, code, ok, step = self.dist[i], self.dirs[i, 1:], self.ok, self.diag_code
        np.equal(row[1:], self.via_up, out=ok)
        np.subtract(_FOUR, ok.view(np.uint8), out=code)  # 4 (I), or 3 (D) where up is optimal
        if self.opt is not None and self.opt[i - 1].any():
            np.copyto(code, 5, where=ok & self.opt[i - 1])
        # code -= diagonal optimal * (code - (1 + differ)): 1 (C) or 2 (S) where the diagonal
        # is optimal. Arithmetic on uint8 rows: several times faster than copyto(where=).
        np.subtract(code, self.differ.view(np.uint8), out=step)
        np.subtract(step, _ONE, out=step)
        np.equal(row[1:], self.via_diag, out=ok)
        np.multiply(step, ok.view(np.uint8), out=step)
        np.subtract(code, step, out=code)

    def costs(self, n: np.ndarray, m: np.ndarray) -> np.ndarray:
        """Each pair's cost D[n, m] = U[n, m] + m*K (INFEASIBLE where it reached `inf`)."""
        b = len(n)
        here = (n * self.w + m) * b + np.arange(b, dtype=np.int64)
        found = self.dist.reshape(-1)[here].astype(np.int64)
        return np.where(found >= self.inf - m * self.k, INFEASIBLE, found + m * self.k)

    def walk_back(self, n: np.ndarray, m: np.ndarray) -> np.ndarray:
        """The op letters of every pair, walked back from (n, m) in lock-step on flat
        indexes (one gather a step): (steps, b), each column ending with zeros."""
        b, w = len(n), self.w
        moves = np.array([0, (w + 1) * b, (w + 1) * b, w * b, b, w * b], dtype=np.int64)
        flat_dirs = self.dirs.reshape(-1)
        here = (n * w + m) * b + np.arange(b, dtype=np.int64)
        steps = self.nmax + self.mmax
        ops = np.zeros((steps, b), dtype=np.uint8)
        for step in range(steps):
            d = flat_dirs[here]
            np.take(_LETTERS, d, out=ops[step])
            here -= moves[d]
            if step & 7 == 7 and not d.any():  # every path has reached the origin
                break
        return ops


def _align_chunk(
    ref: np.ndarray,
    n: np.ndarray,
    hyp: np.ndarray,
    m: np.ndarray,
    k: int,
    idx: np.ndarray,
    codes: list[str],
    costs: np.ndarray,
    strict: np.ndarray | None = None,
    opt: np.ndarray | None = None,
) -> None:
    """Align one batch (see `_Table`): fill the table row by row, read each pair's cost, walk
    back every path, and write the op strings of pairs `idx` into `codes`."""
    table = _Table(n, hyp, m, k, strict, opt)
    for i in range(1, table.nmax + 1):
        table.fill_row(i, ref[i - 1])
    costs[idx] = table.costs(n, m)
    _decode(table.walk_back(n, m), idx, codes)


def _decode(ops: np.ndarray, idx: np.ndarray, codes: list[str]) -> None:
    """One decode for the chunk: row r of the reversed transpose ends with pair r's ops."""
    steps = len(ops)
    lengths = np.count_nonzero(ops, axis=0).tolist()
    raw = np.ascontiguousarray(ops.T[:, ::-1]).tobytes().decode("ascii")
    for r, (pair, length) in enumerate(zip(idx.tolist(), lengths, strict=True)):
        end = (r + 1) * steps
        codes[pair] = raw[end - length : end]


class _Rows:
    """One pair's table, row by row, with whole-row numpy operations (for long pairs).

    The same recurrence, caps and back-trace codes as `_align_chunk`; the running minimum
    along a row is one `np.minimum.accumulate` (restarted after each strict token, where an
    insertion is impossible). Work buffers are reused from row to row.
    """

    def __init__(
        self,
        ref: np.ndarray,
        hyp: np.ndarray,
        k: int,
        strict: np.ndarray | None,
        opt: np.ndarray | None,
    ) -> None:
        n, m = len(ref), len(hyp)
        self.ref, self.hyp, self.k, self.m = ref, hyp, k, m
        self.inf = _infeasible_at(n, m, k)
        self.strict = strict if strict is not None and strict.any() else None
        self.opt = opt if opt is not None and opt.any() else None
        # the segment offsets of the restarted minimum need room: int64 with strict tokens
        dt = self.dtype = _dtype((n + m + 1) * (k + 2)) if self.strict is None else np.int64
        if self.strict is None:
            self.diag_step = np.array([-k, 1], dtype=dt)  # sub - K on a match, a substitution
        else:
            self.sub_cost = np.where(self.strict, self.inf, k + 1).astype(dt)
            # column j (hyp token j-1) strict starts a new segment of the running minimum
            seg = np.zeros(m + 1, dtype=np.int64)
            np.cumsum(self.strict, out=seg[1:])
            self.shift = seg * (4 * self.inf + 4 * k + 4)
        self.del_cost = np.where(self.opt, 0, k).astype(dt) if self.opt is not None else None
        self.col0 = (
            np.concatenate([[0], np.cumsum(self.del_cost, dtype=np.int64)]).astype(dt)
            if self.del_cost is not None
            else None
        )
        self.differ = np.empty(m, dtype=bool)
        self.via_diag = np.empty(m, dtype=dt)
        self.via_up = np.empty(m, dtype=dt)
        self.t = np.empty(m + 1, dtype=dt)
        self.ok = np.empty(m, dtype=bool)
        self.spare = [np.empty(m + 1, dtype=dt), np.empty(m + 1, dtype=dt)]

    def first(self) -> np.ndarray:
        row = np.zeros(self.m + 1, dtype=self.dtype)
        if self.strict is not None:
            row[1:] = np.where(np.cumsum(self.strict) > 0, self.inf, 0)
        return row

    def next(
        self,
        prev: np.ndarray,
        i: int,
        dirs: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Row i from row i-1 (into `out`, else a work buffer that the next call but one
        reuses); with `dirs` (a uint8 row), its back-trace codes too."""
        k = self.k
        differ, via_diag, via_up, t = self.differ, self.via_diag, self.via_up, self.t
        np.not_equal(self.hyp, self.ref[i - 1], out=differ)
        if self.strict is None:
            np.take(self.diag_step, differ.view(np.uint8), out=via_diag)
        else:
            np.multiply(differ, self.sub_cost, out=via_diag)
            np.subtract(via_diag, k, out=via_diag)
        np.add(via_diag, prev[:-1], out=via_diag)
        if self.del_cost is None or self.col0 is None:  # (both None, or neither)
            np.add(prev[1:], k, out=via_up)
            t[0] = i * k
        else:
            np.add(prev[1:], self.del_cost[i - 1], out=via_up)
            t[0] = self.col0[i]
        np.minimum(via_diag, via_up, out=t[1:])
        if out is None:
            out = self.spare[i & 1]
        if self.strict is None:
            np.minimum.accumulate(t, out=out)
        else:
            np.minimum(t, self.inf, out=t)
            # restart the minimum at each strict column: earlier segments sit higher
            np.subtract(t, self.shift, out=t)
            np.minimum.accumulate(t, out=out)
            np.add(out, self.shift, out=out)
        if dirs is not None:
            deleted = 5 if self.opt is not None and self.opt[i - 1] else 3
            dirs[0] = deleted
            code, ok = dirs[1:], self.ok
            np.equal(out[1:], via_up, out=ok)
            np.multiply(ok, deleted - 4, out=code, casting="unsafe")
            np.add(code, 4, out=code)  # 4 (I), or 3/5 where the cell above is optimal
            np.equal(out[1:], via_diag, out=ok)
            np.copyto(code, differ.view(np.uint8) + 1, where=ok)
        return out


def _align_long(
    ref: np.ndarray, hyp: np.ndarray, k: int, strict: np.ndarray | None, opt: np.ndarray | None
) -> tuple[str, int]:
    """One long pair: the same ops and cost as `_align_chunk`, in O(sqrt(n) * m) memory
    beyond `_LONG_CELLS` cells (every s-th row kept, the rows between recomputed)."""
    n, m = len(ref), len(hyp)
    rows = _Rows(ref, hyp, k, strict, opt)
    whole = (n + 1) * (m + 1) <= _LONG_CELLS
    step = n if whole else max(1, math.isqrt(n))
    kept = {0: rows.first()}
    row = kept[0]
    table: np.ndarray | None = None
    if whole:
        table = np.empty((n + 1, m + 1), dtype=np.uint8)
        table[0] = 4
        for i in range(1, n + 1):
            row = rows.next(row, i, table[i])
    else:
        for i in range(1, n + 1):
            row = rows.next(row, i, out=np.empty_like(row) if i % step == 0 else None)
            if i % step == 0:
                kept[i] = row
    found = int(row[m])
    cost = INFEASIBLE if found >= rows.inf - m * k else found + m * k
    out: list[int] = []
    i, j = n, m
    seg = np.empty((min(step, n) + 1, m + 1), dtype=np.uint8) if table is None else table
    while i > 0:
        base = 0
        if table is None:
            # recompute the stretch of rows above the last kept one, with their codes
            base = ((i - 1) // step) * step
            r = kept[base]
            for x in range(base + 1, i + 1):
                r = rows.next(r, x, seg[x - base])
        while i > base:
            d = int(seg[i - base, j])
            out.append(d)
            if d == 1 or d == 2:
                i, j = i - 1, j - 1
            elif d == 3 or d == 5:
                i -= 1
            else:
                j -= 1
    out.extend([4] * j)
    return _LETTERS[np.array(out[::-1], dtype=np.uint8)].tobytes().decode("ascii"), cost
