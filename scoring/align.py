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
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

try:  # the compiled DP (scoring/_dp.pyx); where it was not built, the numpy loops below
    import scoring._dp as _dp
except ImportError:  # pragma: no cover - an install without a C compiler
    _dp = None

from scoring.errors import ScoringError

C, S, D, I, O = ord("C"), ord("S"), ord("D"), ord("I"), ord("O")  # noqa: E741 - edit letters
EPS, SUB, DEL, INS, BEGIN, END = 0, 1, 2, 3, 4, 5
FIRST_WORD = 6  # word ids start here; the ids below are FST specials
_CHUNK = 4096  # pairs a batch: numpy's per-call cost is spread over many pairs
_CELLS = 1 << 23  # table cells a batch at most (int16: 16 MiB of costs, 8 MiB of moves)
# A pair with more cells than this is aligned on its own, row by row (a whole row per numpy
# call beats the batch's column loop once rows are long), the whole table kept ...
_ROW_CELLS = 1 << 18
# A batch of at most this many pairs runs each row's running minimum as one accumulate along
# the row (a few ns a cell) rather than one numpy call per column (~1.5 us each, whatever the
# batch): measured faster up to a few hundred pairs, several times at 32-128 (DAE windows).
_NARROW = 128
# ... up to this many cells; beyond, only every s-th row (linear memory in practice).
_LONG_CELLS = 1 << 22
# A band (`_Band`) keeps its whole table of back-trace codes up to this many cells (32 MiB),
# beyond, every s-th row as above: a second pass over the rows costs more than the memory.
_BAND_CELLS = 1 << 25
INFEASIBLE = 1 << 62  # the cost of a pair whose strict tokens cannot all be matched
# The most table cells one computation may fill (ORC-WER's table too: scoring.meeting). A pair's
# alignment grows with n x m: every long pair's bit-parallel distance fills (n + 1) x
# ceil((m + 1) / 64) machine words, which this bounds (`check_pair`): a 30,000-word pair needs
# 14 million, 113,000 x 113,000 characters (about two hours of speech; 10-15 s here) the most;
# a 1,000,000-character utterance under `--unit char` (15.6 billion words, some 12 minutes
# here by the measured growth: 200,000 characters took 28 s) is refused at once.
MAX_CELLS = 200_000_000


class PairTooLong(ScoringError):
    """A pair beyond `MAX_CELLS`; `pair` is its index in `align_arrays` (-1 elsewhere)."""

    def __init__(self, message: str, pair: int = -1) -> None:
        super().__init__(message)
        self.pair = pair


def check_pair(n: int, m: int, pair: int = -1) -> None:
    """PairTooLong when an n x m pair's bit-parallel table exceeds `MAX_CELLS` words."""
    words = (n + 1) * (-(-(m + 1) // 64))
    if words > MAX_CELLS:
        raise PairTooLong(
            f"{n:,} reference x {m:,} hypothesis tokens are too long to align ({words:,} "
            f"table words, more than {MAX_CELLS:,}); split it into shorter utterances",
            pair,
        )


_FLOAT32_EXACT = 1 << 24  # the FST's tropical weights are float32: integers exact below 2**24


def check_exact(k: int, n_ref: int, n_hyp: int) -> bool:
    """True when float32 FST weights (`scoring.wfst`) represent every cost of this pair
    exactly. Here, not there: the Scorer asks it of every long pair, and importing
    `scoring.wfst` loads OpenFST (~12 ms of a process that may need no FST)."""
    return (k + 1) * (n_ref + n_hyp + 1) < _FLOAT32_EXACT


# Back-trace codes: 0 origin, 1 C, 2 S, 3 D, 4 I, 5 O (an optional reference word omitted).
_LETTERS = np.array([0, C, S, D, I, O], dtype=np.uint8)
_ONE, _FOUR = np.uint8(1), np.uint8(4)
# A batch aligned by scoring/_dp.pyx where it is built (a narrow batch's table by `fill_table`,
# a wide batch pair by pair by `align_pairs`); False: numpy's row loop (the same costs and
# codes: tests/scoring/test_align_compiled.py runs both)
COMPILED = _dp is not None
_NO_DIAG, _ONE_CODE = np.array([1 << 60], dtype=np.int64), np.array([1], dtype=np.uint8)


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


@dataclass(frozen=True, slots=True)
class Marks:
    """What `align_arrays` reads beside the pairs' ids (each optional).

    `hyp_strict` / `ref_optional`: boolean arrays beside `hyp` / `ref` marking strict
    hypothesis tokens and optional reference tokens (see the module docstring). Pairs with
    neither go through the plain (faster) recurrence.

    `edits`: a guess at each pair's least edit count (-1: none), where the caller has one (a
    DAE window's written forms' distance): where the extension is built, each pair is
    aligned over the band of cells a path of that many edits can reach (`_dp.align_banded`,
    checked and widened where the guess was short: the same ops and cost whatever the guess;
    a close upper bound is the least work). The numpy path fills whole tables.
    """

    hyp_strict: np.ndarray | None = None
    ref_optional: np.ndarray | None = None
    edits: np.ndarray | None = None


_UNMARKED = Marks()


def align_arrays(
    ref: np.ndarray,
    ref_off: np.ndarray,
    ref_len: np.ndarray,
    hyp: np.ndarray,
    hyp_off: np.ndarray,
    hyp_len: np.ndarray,
    k: int,
    marks: Marks = _UNMARKED,
) -> tuple[list[str], np.ndarray]:
    """`align_batch` on flat id arrays: pair p is ref[ref_off[p]:][:ref_len[p]] against the
    same slice of hyp. Pairs may share a reference slice (DAE linearisations do). `marks`:
    strict and optional tokens, and a guess at each pair's edits (`Marks`).
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
    flat = _Flat(ref, ref_off, ref_len, hyp, hyp_off, hyp_len, k, marks.edits)
    ref, hyp = np.asarray(ref).astype(id_type), np.asarray(hyp).astype(id_type)
    # Which pairs carry flags: they are batched apart, so plain batches keep the fast loop.
    flagged = np.zeros(n_pairs, dtype=bool)
    hyp_strict, ref_optional = marks.hyp_strict, marks.ref_optional
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
    for p in _long_pairs(cells, ref_len, hyp_len):
        r = ref[ref_off[p] : ref_off[p] + ref_len[p]]
        h = hyp[hyp_off[p] : hyp_off[p] + hyp_len[p]]
        st = hyp_strict[hyp_off[p] : hyp_off[p] + hyp_len[p]] if hyp_strict is not None else None
        op = (
            ref_optional[ref_off[p] : ref_off[p] + ref_len[p]] if ref_optional is not None else None
        )
        codes[p], costs[p] = _align_one(r, h, k, st, op)
    # Sorted by length, a chunk's tables are barely larger than its longest pair needs.
    order = np.lexsort((hyp_len, ref_len, flagged))
    order = order[cells[order] <= _ROW_CELLS]
    split = int(np.count_nonzero(~flagged[order]))
    for part, with_flags in ((order[:split], False), (order[split:], True)):
        for idx in _batches(part, ref_len, hyp_len):
            if COMPILED and (len(idx) > _NARROW or flat.edits is not None):  # pair by pair
                flat.align(idx, with_flags, hyp_strict, ref_optional, codes, costs)
                continue
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


def _batches(part: np.ndarray, ref_len: np.ndarray, hyp_len: np.ndarray) -> Iterator[np.ndarray]:
    """`part` (sorted by length) in batches of up to _CHUNK pairs, fewer for long ones: the
    tables stay within _CELLS."""
    start = 0
    while start < len(part):
        size = _CHUNK
        while True:
            idx = part[start : start + size]
            n_cells = (int(ref_len[idx[-1]]) + 1) * (int(hyp_len[idx].max()) + 1) * len(idx)
            if n_cells <= _CELLS or size <= 16:
                break
            size //= 2
        start += len(idx)
        yield idx


class _Flat:
    """`align_arrays`' inputs as `_dp.align_pairs` takes them, for its wide batches (and,
    with `edits`, `_dp.align_banded` for every batch)."""

    def __init__(self, *arrays: Any) -> None:
        *sides, self.k, edits = arrays
        self.sides = [np.ascontiguousarray(x, dtype=np.int64) for x in sides]
        self.edits = None if edits is None else np.ascontiguousarray(edits, dtype=np.int64)

    def align(
        self,
        idx: np.ndarray,
        with_flags: bool,
        strict: np.ndarray | None,
        opt: np.ndarray | None,
        codes: list[str],
        costs: np.ndarray,
    ) -> None:
        """`_align_chunk` on pairs `idx` (one batch: its `inf`, its flags), pair by pair."""
        assert _dp is not None
        ref, ref_off, ref_len, hyp, hyp_off, hyp_len = self.sides
        nmax, mmax = int(ref_len[idx].max()), int(hyp_len[idx].max())
        flags = [
            None if x is None or not with_flags else np.ascontiguousarray(x).view(np.uint8)
            for x in (strict, opt)
        ]
        args = (
            np.ascontiguousarray(idx, dtype=np.int64),
            *self.sides,
            self.k,
            _infeasible_at(nmax, mmax, self.k),
            *flags,
            codes,
            costs,
            INFEASIBLE,
        )
        if self.edits is None:
            _dp.align_pairs(*args)
        else:
            _dp.align_banded(*args, self.edits)


def _long_pairs(cells: np.ndarray, ref_len: np.ndarray, hyp_len: np.ndarray) -> list[int]:
    """The pairs aligned one at a time (more than `_ROW_CELLS` cells), every one checked
    against `MAX_CELLS` before any is aligned."""
    out = np.flatnonzero(cells > _ROW_CELLS).tolist()
    for p in out:
        check_pair(int(ref_len[p]), int(hyp_len[p]), p)
    return out


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
        self.strict = strict
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
        # A narrow batch (DAE windows of a long pair: tens of linearisations, hundreds of words
        # each) takes one running minimum along each row instead of a numpy call per column.
        self.narrow = b <= _NARROW
        self.shift: np.ndarray | None = None
        if self.narrow and strict is not None:
            # restart the minimum after each strict token (as `_Rows`): earlier segments sit
            # higher by more than any row's spread, in int64
            seg = np.zeros((self.w, b), dtype=np.int64)
            np.cumsum(strict, axis=0, out=seg[1:])
            self.shift = seg * (4 * inf + 4 * k + 4)
            self.wide = np.empty((self.w, b), dtype=np.int64)

    def fill(self, ref: np.ndarray) -> None:
        """Rows 1.. of the costs and codes: scoring/_dp.pyx's loop over every cell for a
        narrow batch where it is built (`COMPILED`), else `fill_row` row by row; the same
        values. (Where it is built, a wide batch never comes here: `_dp.align_pairs` aligns
        its pairs one by one, `_Flat.align`.)"""
        if not (COMPILED and _dp is not None and self.narrow):
            for i in range(1, self.nmax + 1):
                self.fill_row(i, ref[i - 1])
            return
        flags = [
            None if x is None else np.ascontiguousarray(x, dtype=np.uint8)
            for x in (self.strict, self.opt)
        ]
        wide = [
            None if x is None else np.ascontiguousarray(x, dtype=np.int64)
            for x in (self.col0, self.shift)
        ]
        _dp.fill_table(
            self.dist,
            self.dirs,
            np.ascontiguousarray(ref[: self.nmax], dtype=np.int64),
            np.ascontiguousarray(self.hyp, dtype=np.int64),
            self.k,
            self.inf,
            *flags,
            *wide,
        )

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
        if self.narrow:
            self._running_min_narrow(row)
            return
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

    def _running_min_narrow(self, row: np.ndarray) -> None:
        """`_running_min` as one accumulate along j (the same values: integer minima)."""
        t = self.t
        if self.shift is None:
            np.fmin.accumulate(t, axis=0, out=row)  # (fmin: a faster loop, the same on integers)
            return
        np.minimum(t, self.inf, out=t)
        wide = self.wide
        np.subtract(t, self.shift, out=wide)
        np.fmin.accumulate(wide, axis=0, out=wide)
        np.add(wide, self.shift, out=wide)
        np.copyto(row, wide, casting="unsafe")  # back within row's range: each is <= t

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
    table.fill(ref)
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


def _align_one(
    ref: np.ndarray, hyp: np.ndarray, k: int, strict: np.ndarray | None, opt: np.ndarray | None
) -> tuple[str, int]:
    """One long pair: over its band when it has no strict or optional token (`_align_band`),
    else over the whole table (`_align_long`)."""
    plain = (strict is None or not strict.any()) and (opt is None or not opt.any())
    if plain and len(ref) and len(hyp):
        return _align_anchored(ref, hyp, k)
    return _align_long(ref, hyp, k, strict, opt)


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


def levenshtein(ref: np.ndarray | list[int], hyp: np.ndarray | list[int]) -> int:
    """The edit distance (insertions, deletions, substitutions, each 1) of two id sequences.

    rapidfuzz's (compiled; bit-parallel, Myers/Hyyro as `_myers`, which gives the same
    count 5-8x slower in Python integers and, with `_dp.myers_band`, the deltas `_anchors`
    reads). Used to bound the band of the exact aligner (`_align_band`, `_anchors`) and of
    the DAE windows' pass, and as the distance of the speaker assignments
    (`scoring.meeting`), which need the count only.
    PairTooLong beyond `MAX_CELLS`.

    With a cutoff k, rapidfuzz computes only the band of k diagonals (k*n/64 words, not
    n*m/64) and returns k + 1 beyond it; so the cutoff doubles from a 32nd of the longer side
    (the length difference at least) until the distance fits: the same count, ~5-9x less work
    on a long pair of ~12% errors (docs/MEASUREMENTS.md).
    """
    from rapidfuzz.distance import Levenshtein  # (imported where a long pair needs it)

    check_pair(len(ref), len(hyp))
    a, b = (x.tolist() if isinstance(x, np.ndarray) else list(x) for x in (ref, hyp))
    longest = max(len(a), len(b))
    cutoff = max(abs(len(a) - len(b)), longest // 32, 64)
    while cutoff < longest:
        found = int(Levenshtein.distance(a, b, score_cutoff=cutoff))
        if found <= cutoff:
            return found
        cutoff *= 2
    return int(Levenshtein.distance(a, b))


def _peq(ref: np.ndarray, hyp: np.ndarray) -> dict[int, int]:
    """The position mask (an int, bit j for hyp[j]) of every hypothesis word the reference
    holds (the others never match)."""
    shared = np.isin(hyp, ref)
    order = np.argsort(hyp, kind="stable")
    order = order[shared[order]]
    words = hyp[order]
    peq: dict[int, int] = {}
    if not len(words):
        return peq
    starts = np.flatnonzero(np.r_[True, words[1:] != words[:-1]]).tolist()
    bits = np.zeros(len(hyp), dtype=bool)
    for a, b in zip(starts, [*starts[1:], len(words)], strict=True):
        pos = order[a:b]
        bits[pos] = True
        peq[int(words[a])] = int.from_bytes(
            np.packbits(bits, bitorder="little").tobytes(), "little"
        )
        bits[pos] = False
    return peq


def _myers(
    ref: np.ndarray, hyp: np.ndarray, keep: Collection[int] = ()
) -> tuple[int, dict[int, tuple[int, int]]]:
    """The edit distance, and the vertical deltas (vp, vn: bit j set where D(i, j + 1) -
    D(i, j) is +1 / -1) after each reference word i in `keep`."""
    n, m = len(ref), len(hyp)
    if not m or not n:
        return n + m, {}
    if COMPILED and _dp is not None:  # the same in 64-bit words, compiled
        as64 = [np.ascontiguousarray(x, dtype=np.int64) for x in (ref, hyp)]
        return _dp.myers(as64[0], as64[1], keep)
    mask = (1 << m) - 1
    top = 1 << (m - 1)
    vp, vn, score = mask, 0, m
    get = _peq(ref, hyp).get
    kept: dict[int, tuple[int, int]] = {}
    for i, c in enumerate(ref.tolist(), 1):
        x = get(c, 0) | vn
        d0 = ((((x & vp) + vp) ^ vp) | x) & mask
        hp = vn | (mask ^ (d0 | vp))
        hn = vp & d0
        if hp & top:
            score += 1
        elif hn & top:
            score -= 1
        x = ((hp << 1) | 1) & mask
        vp = ((hn << 1) & mask) | (mask ^ (d0 | x))
        vn = x & d0
        if i in keep:
            kept[i] = (vp, vn)
    return score, kept


def _column(row: tuple[int, int, int, int], lo: int, hi: int) -> np.ndarray:
    """D(i, lo..hi) from row i's kept deltas (d0, c0, vp, vn): D(i, c0) = d0, bit t of vp / vn
    for column c0 + t (`_deltas`)."""
    d0, c0, vp, vn = row
    lo, hi = lo - c0, hi - c0
    below = (1 << lo) - 1
    start = d0 + (vp & below).bit_count() - (vn & below).bit_count()
    width = hi - lo
    size = (width + 7) // 8
    window = (1 << width) - 1
    up = np.frombuffer(((vp >> lo) & window).to_bytes(size, "little"), np.uint8)
    down = np.frombuffer(((vn >> lo) & window).to_bytes(size, "little"), np.uint8)
    steps = np.unpackbits(up, bitorder="little")[:width].astype(np.int64)
    steps -= np.unpackbits(down, bitorder="little")[:width]
    out = np.empty(width + 1, dtype=np.int64)
    out[0] = start
    np.cumsum(steps, out=out[1:])
    out[1:] += start
    return out


def _diagonals(e: int, n: int, m: int) -> tuple[int, int]:
    """The band of an n x m pair of distance e: the diagonals j - i of its cells through which
    a path of e edits can pass (see `_Band`)."""
    return -((e - (m - n)) // 2), (m - n + e) // 2


Kept = dict[int, tuple[int, int, int, int]]  # row i: (D(i, c0), c0, vp, vn), see `_column`


def _deltas(ref: np.ndarray, hyp: np.ndarray, rows: set[int]) -> tuple[int, Kept, Kept]:
    """The distance E, and the deltas of each of `rows` forward and of each row n - i of the
    reversed pair (the backward distances of row i). Compiled: E by `levenshtein`, then the
    bit-parallel passes on the band's words only (`_dp.myers_band`: values at least the
    table's, equal on every cell of a path of E edits, which is all `_anchors` compares); else
    `_myers` over whole rows."""
    n, m = len(ref), len(hyp)
    back_rows = {n - i for i in rows}
    if COMPILED and _dp is not None:
        e = levenshtein(ref, hyp)
        dlo, dhi = _diagonals(e, n, m)
        r64, h64 = (np.ascontiguousarray(x, dtype=np.int64) for x in (ref, hyp))
        fwd = _dp.myers_band(r64, h64, rows, dlo, dhi)
        back = _dp.myers_band(r64[::-1].copy(), h64[::-1].copy(), back_rows, dlo, dhi)
        return e, fwd, back
    e, whole = _myers(ref, hyp, rows)
    _, whole_back = _myers(ref[::-1], hyp[::-1], back_rows)
    return (
        e,
        {i: (i, 0, vp, vn) for i, (vp, vn) in whole.items()},
        {i: (i, 0, vp, vn) for i, (vp, vn) in whole_back.items()},
    )


# Rows between the anchors that `_anchors` tests: each test reads two rows of m bits.
_ANCHOR_EVERY = 32
_PIECES = 256  # pieces between anchors aligned a batch


def _anchors(ref: np.ndarray, hyp: np.ndarray) -> tuple[int, list[tuple[int, int]]]:
    """The distance E and cells (i, j) that every alignment of E edits goes through: at
    every `_ANCHOR_EVERY`-th row, the one cell where the forward distance D(i, j) plus the
    backward one (of ref[i:] and hyp[j:]) make E, when only one cell does. Two bit-parallel
    passes (the reversed pair's row n - i gives the backward distances of row i)."""
    n, m = len(ref), len(hyp)
    e, fwd, back = _deltas(ref, hyp, set(range(_ANCHOR_EVERY, n, _ANCHOR_EVERY)))
    # only the band's columns can hold a cell of E edits (see `_Band`)
    dlo, dhi = _diagonals(e, n, m)
    out = []
    for i in sorted(fwd):
        lo, hi = max(0, i + dlo), min(m, i + dhi)
        total = _column(fwd[i], lo, hi) + _column(back[n - i], m - hi, m - lo)[::-1]
        on = np.flatnonzero(total == e)
        if len(on) == 1:
            out.append((i, lo + int(on[0])))
    return e, out


def _align_anchored(ref: np.ndarray, hyp: np.ndarray, k: int) -> tuple[str, int]:
    """A plain long pair cut at its anchors (`_anchors`): every least-cost alignment goes
    through them, so each piece is aligned on its own (short ones batched, long ones over
    their band) and the ops joined are those of the whole table (see docs/SCORING.md)."""
    e, cuts = _anchors(ref, hyp)
    if not cuts:
        return _align_band(ref, hyp, k, e)
    bounds = [(0, 0), *cuts, (len(ref), len(hyp))]
    pieces = [(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    ops: list[str] = [""] * len(pieces)
    total = 0
    short = []
    for p, ((i0, j0), (i1, j1)) in enumerate(pieces):
        r, h = ref[i0:i1], hyp[j0:j1]
        if (len(r) + 1) * (len(h) + 1) > _ROW_CELLS and len(r) and len(h):
            ops[p], cost = _align_band(r, h, k, None)
            total += cost
        else:
            short.append(p)
    # the short pieces in batches of a few hundred: small tables (a whole batch of _CELLS
    # would add ~24 MB to the peak for no speed)
    for at in range(0, len(short), _PIECES):
        group = short[at : at + _PIECES]
        rl = np.array([pieces[p][1][0] - pieces[p][0][0] for p in group], dtype=np.int64)
        hl = np.array([pieces[p][1][1] - pieces[p][0][1] for p in group], dtype=np.int64)
        ro = np.array([pieces[p][0][0] for p in group], dtype=np.int64)
        ho = np.array([pieces[p][0][1] for p in group], dtype=np.int64)
        codes, costs = align_arrays(ref, ro, rl, hyp, ho, hl, k)
        for p, c in zip(group, codes, strict=True):
            ops[p] = c
        total += int(costs.sum())
    return "".join(ops), total


class _Band:
    """One plain long pair's table restricted to its band: the cells (i, j) whose fewest
    edits through them, |j - i| + |(m - j) - (n - i)|, is at most the pair's distance E.

    Every path of the least cost K*E + S has exactly E edits, so it lies in the band, and
    so does every cell that the back-trace visits: the band's values equal the whole
    table's there and the same back-trace rule picks the same ops (cells outside cost
    `inf`). A row holds the band's W = dhi - dlo + 1 diagonals: column c of row i is cell
    (i, i + dlo + c), so the diagonal move keeps c, a deletion comes from c + 1 of the row
    above and an insertion from c - 1. Values are U = D - j*K, as in `_Rows`.
    """

    def __init__(self, ref: np.ndarray, hyp: np.ndarray, k: int, e: int) -> None:
        n, m = len(ref), len(hyp)
        self.ref, self.k, self.n, self.m = ref, k, n, m
        self.dlo, self.dhi = _diagonals(e, n, m)
        self.w = w = self.dhi - self.dlo + 1
        # int64 always: numpy's fmin.accumulate has a several times faster loop for it than
        # minimum.accumulate, or than either on narrower types (the same minimum on integers)
        dt = self.dtype = np.int64
        self.inf = int(np.iinfo(dt).max) // 4
        # hyp[j - 1] for column c of row i is padded[i + dlo + c - 1 + w]: -1 never matches
        self.padded = np.concatenate([np.full(w, -1), hyp, np.full(w + 1, -1)]).astype(hyp.dtype)
        self.diag_step = np.array([-k, 1], dtype=dt)  # sub - K on a match, a substitution
        self.k64 = dt(k)
        self.differ = np.empty(w, dtype=bool)
        self.via_diag = np.empty(w, dtype=dt)
        self.via_up = np.empty(w, dtype=dt)
        self.t = np.empty(w, dtype=dt)
        self.ok = np.empty(w, dtype=bool)
        self.spare = [np.empty(w, dtype=dt), np.empty(w, dtype=dt)]

    def advance(
        self, row: np.ndarray, i0: int, i1: int, codes: np.ndarray | None = None, base: int = 0
    ) -> np.ndarray:
        """Row i1 (a new array) from row i0, with rows i0+1..i1's back-trace codes into
        codes[x - base] where given: one compiled call (`COMPILED`), else `next` row by row."""
        if COMPILED and _dp is not None:
            out = row.copy()
            as64 = [np.ascontiguousarray(x, dtype=np.int64) for x in (self.ref, self.padded)]
            _dp.band_rows(*as64, self.k, self.dlo, self.m, self.inf, out, i0, i1, codes, base)
            return out
        for x in range(i0 + 1, i1 + 1):
            row = self.next(row, x, None if codes is None else codes[x - base])
        return row.copy()

    def valid(self, i: int) -> tuple[int, int]:
        """The columns c of row i that are cells of the table (0 <= j <= m): [lo, hi)."""
        lo = max(0, -(i + self.dlo))
        hi = min(self.w, self.m - i - self.dlo + 1)
        return lo, max(lo, hi)

    def first(self) -> np.ndarray:
        row = np.full(self.w, self.inf, dtype=self.dtype)
        lo, hi = self.valid(0)
        row[lo:hi] = 0
        return row

    def next(
        self,
        prev: np.ndarray,
        i: int,
        dirs: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Row i from row i-1 (into `out`, else a work buffer that the next call but one
        reuses); with `dirs` (a uint8 row of W), its back-trace codes too."""
        k, w, inf = self.k, self.w, self.inf
        differ, via_diag, via_up, t = self.differ, self.via_diag, self.via_up, self.t
        at = i + self.dlo - 1 + w
        np.not_equal(self.padded[at : at + w], self.ref[i - 1], out=differ)
        np.take(self.diag_step, differ.view(np.uint8), out=via_diag)  # sub - K
        np.add(via_diag, prev, out=via_diag)
        np.add(prev[1:], self.k64, out=via_up[:-1])
        via_up[-1] = inf
        np.minimum(via_diag, via_up, out=t)
        lo, hi = self.valid(i)
        t[:lo] = inf
        t[hi:] = inf
        if lo < hi and lo == -(i + self.dlo):  # column j = 0: i deletions
            t[lo] = i * k
            via_up[lo] = i * k
        if out is None:
            out = self.spare[i & 1]
        np.fmin.accumulate(t, out=out)
        out[hi:] = inf
        if dirs is not None:
            code, ok = dirs, self.ok
            np.equal(out, via_up, out=ok)
            np.subtract(_FOUR, ok.view(np.uint8), out=code)  # 4 (I), or 3 (D)
            np.equal(out, via_diag, out=ok)
            np.copyto(code, differ.view(np.uint8) + 1, where=ok)
            if lo < hi and lo == -(i + self.dlo):
                code[lo] = 3
        return out


def _align_band(ref: np.ndarray, hyp: np.ndarray, k: int, e: int | None) -> tuple[str, int]:
    """`_align_long` for a plain pair (no strict or optional token): the same ops and cost,
    over the band of `_Band` only (its width is the distance E + 1, from `levenshtein` when
    `e` is None)."""
    n, m = len(ref), len(hyp)
    band = _Band(ref, hyp, k, levenshtein(ref, hyp) if e is None else e)
    w = band.w
    whole = (n + 1) * w <= _BAND_CELLS
    step = n if whole else max(1, math.isqrt(n))
    kept = {0: band.first()}
    row = kept[0]
    table: np.ndarray | None = None
    if whole:
        table = np.empty((n + 1, w), dtype=np.uint8)
        table[0] = 4
        row = band.advance(row, 0, n, table)
    else:
        for i in range(0, n, step):
            end = min(n, i + step)
            row = kept[end] = band.advance(row, i, end)
    c = m - n - band.dlo
    cost = int(row[c]) + m * k  # before the back-trace reuses the work rows
    return _band_trace(band, kept, table, step, c), cost


def _band_trace(
    band: _Band, kept: dict[int, np.ndarray], table: np.ndarray | None, step: int, c: int
) -> str:
    """`_align_band`'s back-trace from (n, m) (column c of row n): from the whole table, or
    recomputing each stretch of rows above a kept one."""
    n, w = band.n, band.w
    out: list[int] = []
    i = n
    seg = np.empty((min(step, n) + 1, w), dtype=np.uint8) if table is None else table
    while i > 0:
        base = 0
        if table is None:
            base = ((i - 1) // step) * step
            band.advance(kept[base], base, i, seg, base)
        while i > base:
            d = int(seg[i - base, c])
            out.append(d)
            if d == 1 or d == 2:
                i -= 1
            elif d == 3:
                i, c = i - 1, c + 1
            else:
                c -= 1
    out.extend([4] * (c + band.dlo))  # row 0: the insertions left
    return _LETTERS[np.array(out[::-1], dtype=np.uint8)].tobytes().decode("ascii")


def _timed_windows(ref_times: np.ndarray, hyp_times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns [a_i, b_i] that row i (1..n; index 0 unused) of a time-constrained table
    computes: every column whose cell may take a diagonal move (the words' intervals overlap),
    widened so that a_i and b_i never decrease (see `align_timed`)."""
    n, m = len(ref_times), len(hyp_times)
    rs, re = ref_times[:, 0], ref_times[:, 1]
    # word j may overlap word i only if hs_j < re_i and he_j > rs_i: a prefix maximum of the
    # ends and a suffix minimum of the starts are monotone, so two searches bound the columns
    # (also when the hypothesis words are not in time order)
    end_max = np.maximum.accumulate(hyp_times[:, 1])
    start_min = np.minimum.accumulate(hyp_times[::-1, 0])[::-1]
    lo = np.searchsorted(end_max, rs, side="right") + 1  # first column (1-based) ending after
    hi = np.searchsorted(start_min, re, side="left")  # last column starting before
    empty = lo > hi
    lo = np.where(empty, m + 1, lo)
    hi = np.where(empty, 0, hi)
    first = np.minimum.accumulate(lo[::-1])[::-1]  # no later row reaches further left
    last = np.maximum.accumulate(hi)  # no earlier row reached further right
    a = np.zeros(n + 1, dtype=np.int64)
    b = np.zeros(n + 1, dtype=np.int64)
    a[1:] = np.maximum(first - 1, 0)
    b[1:] = np.minimum(np.maximum(last, a[1:]), m)
    a[1:] = np.minimum(a[1:], b[1:])
    b[0] = b[1] if n else 0
    return a, b


def align_timed(
    ref: np.ndarray,
    ref_times: np.ndarray,
    hyp: np.ndarray,
    hyp_times: np.ndarray,
    k: int,
    ops: bool = True,
) -> tuple[str, int]:
    """Time-constrained alignment (MeetEval's tcpWER): word i and word j may be matched or
    substituted only when their intervals overlap (`ref_times[i]` (start, end) and
    `hyp_times[j]`, the collar already added: start_i < end_j and end_i > start_j); any pair
    may be deleted and inserted. The same cost model as `align_batch` (fewest edits, then
    fewest substitutions); returns the op string ('' unless `ops`) and the cost K*E + S.

    Only the columns near each row's overlapping words are computed (`_timed_windows`):
    outside them a path moves by insertions and deletions alone, whose cost depends only on
    where it enters and leaves, so a cell right of row i's window is the window's last cell
    plus insertions, and the window's first cell is the cell above plus a deletion.
    """
    n, m = len(ref), len(hyp)
    if not n or not m:
        return ("D" * n + "I" * m) if ops else "", (n + m) * k
    a, b = _timed_windows(np.asarray(ref_times, np.float64), np.asarray(hyp_times, np.float64))
    inf = np.int64(1 << 60)
    k64 = np.int64(k)
    rs, re = ref_times[:, 0], ref_times[:, 1]
    hs, he = hyp_times[:, 0], hyp_times[:, 1]
    kcols = np.arange(m + 1, dtype=np.int64) * k64  # j*K: insertions up to column j
    prev = kcols[: b[0] + 1].copy()  # row 0: insertions
    pa, pb = 0, int(b[0])
    codes: list[np.ndarray] = []
    for i in range(1, n + 1):
        ai, bi = int(a[i]), int(b[i])
        width = bi - ai + 1
        p = _timed_above(prev, pa, pb, ai, bi, kcols)
        up = p[1:] + k64
        j0 = max(ai, 1)  # column 0 has no diagonal
        near = slice(j0 - 1, bi)  # (empty where the row's window is column 0 alone)
        allowed = (rs[i - 1] < he[near]) & (re[i - 1] > hs[near])
        differ = hyp[near] != ref[i - 1]
        diag = np.where(allowed, p[j0 - ai : width] + np.where(differ, k64 + 1, 0), inf)
        # 1 (C) / 2 (S): the back-trace code of a diagonal move into each column
        diag_code = np.add(differ, _ONE, dtype=np.uint8)
        if j0 > ai:  # column 0 takes no diagonal move
            diag = np.concatenate((_NO_DIAG, diag))
            diag_code = np.concatenate((_ONE_CODE, diag_code))
        t = np.minimum(up, diag)
        if ai == 0:
            t[0] = i * k64
        # insertions: a running minimum of t - j*K (then back)
        shift = kcols[ai : bi + 1]
        row = np.fmin.accumulate(t - shift) + shift
        if ops:
            # the diagonal where optimal (a finite cell: an allowed move), else up (3), else 4
            code = np.subtract(_FOUR, row == up, dtype=np.uint8)
            np.copyto(code, diag_code, where=row == diag)
            if ai == 0:
                code[0] = 3
            codes.append(code)
        prev, pa, pb = row, ai, bi
    cost = int(prev[-1]) + (m - pb) * k
    if not ops:
        return "", cost
    return _timed_trace(codes, a, b, n, m), cost


def _timed_above(
    prev: np.ndarray, pa: int, pb: int, ai: int, bi: int, kcols: np.ndarray
) -> np.ndarray:
    """Row i-1 (computed over columns pa..pb) over columns ai-1 .. bi: right of its window, its
    last cell plus insertions; column ai-1 left of it (ai == pa: the windows never move left)
    is `inf`, never read (column ai takes no diagonal move there). Slices, not a gather: this
    runs once a reference word."""
    lo = ai - 1
    p = np.empty(bi - lo + 1, dtype=np.int64)
    start, stop = max(lo, pa), min(bi, pb)
    if lo < pa:
        p[0] = 1 << 60
    if start <= stop:
        p[start - lo : stop - lo + 1] = prev[start - pa : stop - pa + 1]
    if bi > pb:
        ext = max(pb + 1, lo)
        np.add(kcols[ext : bi + 1], int(prev[-1]) - int(kcols[pb]), out=p[ext - lo :])
    return p


def _timed_trace(codes: list[np.ndarray], a: np.ndarray, b: np.ndarray, n: int, m: int) -> str:
    """Walk `align_timed`'s codes back from (n, m); right of a row's window, insertions."""
    out: list[int] = []
    i, j = n, m
    while i > 0:
        if j > b[i]:
            out.extend([4] * (j - int(b[i])))
            j = int(b[i])
            continue
        d = int(codes[i - 1][j - a[i]])
        out.append(d)
        if d == 1 or d == 2:
            i, j = i - 1, j - 1
        elif d == 3:
            i -= 1
        else:
            j -= 1
    out.extend([4] * j)
    return _LETTERS[np.array(out[::-1], dtype=np.uint8)].tobytes().decode("ascii")
