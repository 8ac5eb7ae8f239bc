"""Time-constrained ORC-WER's assignment (MeetEval's `tcorcwer`): the DP over the states a
reference segment's time admits, checkpointed.

Exact ORC-WER (`scoring.meeting._orc_assign`) keeps one state per combination of positions in
the hypothesis streams: the product of the streams' lengths + 1, for every reference segment.
Here a reference word may be matched or substituted only by a hypothesis word whose time
overlaps its own (the hypothesis word's widened by the collar, as in tcpWER), so before
reference segment u each stream's position is only needed between two bounds:

* `lo`: the words before it end before segment u and every later one begins (a running
  maximum of the words' ends against a suffix minimum of the segments' starts): no later
  reference word can match them, so they are insertions and are taken before u;
* `hi`: the words after it begin after segment u and every earlier one ends (a suffix minimum
  of the words' starts against a running maximum of the segments' ends): no reference word up
  to u can match them, so they are taken after u.

The state of segment u is the box of positions lo..hi on every stream (MeetEval's bounds, so
the same box); a path leaving it only moves insertions earlier or later, at the same cost, so
the least cost over the boxes is the least over all assignments: the same count as MeetEval's
tcORC-WER. Between boxes a position beyond the previous box's end is its end plus insertions.
The cost is K*E + S (fewest edits, then fewest substitutions), as the other aligners'.

Memory: the forward pass keeps the box before each stretch of segments only (stretches of
about sqrt(U) segments' worth of states); the walk back recomputes one stretch at a time,
as `_orc_assign` does. Refused (`TcorcTooLarge`) where one box or the work exceeds the bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scoring.errors import ScoringError

# One box (the states of one reference segment): 8 bytes a state, several tables of it at a
# time (about 60 bytes a state of the largest box at peak: 1.5 GB at 2.4 x 10^7 states).
TCORC_MAX_STATES = 1 << 25
# The work: the reference words times the states of their box times the streams tried, over
# the session (each counted twice: the forward pass and the walk back's recomputation); about
# 0.6 ns each here, so this bound is 2-3 minutes.
TCORC_MAX_WORK = 1 << 38
_NO_MATCH = np.int64(1 << 50)  # a diagonal move between words whose times do not overlap


class TcorcTooLarge(ScoringError):
    """A session whose time-constrained ORC table exceeds the bounds (the message says why)."""


@dataclass(frozen=True)
class Words:
    """Word IDs and their (start, end) times, one row a word."""

    ids: np.ndarray
    times: np.ndarray


@dataclass(frozen=True)
class Boxes:
    """Each segment's box: positions lo[u, s] .. hi[u, s] on stream s (inclusive)."""

    lo: np.ndarray
    hi: np.ndarray

    def shape(self, u: int) -> tuple[int, ...]:
        return tuple((self.hi[u] - self.lo[u] + 1).tolist())

    def states(self) -> np.ndarray:
        """Each box's number of states, as floats (a product of many streams' lengths may
        exceed int64; `check_size` refuses long before)."""
        return np.prod((self.hi - self.lo + 1).astype(np.float64), axis=1)


def boxes(utts: list[Words], streams: list[Words]) -> Boxes:
    """MeetEval's bounds: per stream, the first position whose words' running maximum of ends
    reaches the suffix minimum of the segments' starts (lo), and the first from there whose
    suffix minimum of starts reaches the running maximum of the segments' ends (hi)."""
    begin = np.array([u.times[:, 0].min() for u in utts], dtype=np.float64)
    end = np.array([u.times[:, 1].max() for u in utts], dtype=np.float64)
    begin = np.minimum.accumulate(begin[::-1])[::-1]
    end = np.maximum.accumulate(end)
    lo = np.zeros((len(utts), len(streams)), dtype=np.int64)
    hi = np.zeros_like(lo)
    for s, h in enumerate(streams):
        if not len(h.ids):
            continue
        ends = np.maximum.accumulate(h.times[:, 1])
        starts = np.minimum.accumulate(h.times[::-1, 0])[::-1]
        lo[:, s] = np.searchsorted(ends, begin, side="left")
        hi[:, s] = np.maximum(lo[:, s], np.searchsorted(starts, end, side="left"))
    return Boxes(lo, hi)


def _enter(
    d: np.ndarray, old: tuple[np.ndarray, np.ndarray], new: tuple[np.ndarray, np.ndarray], k: int
) -> np.ndarray:
    """The table `d` over box `old` (lo, hi) carried into box `new`: each position's value at
    the old box's end where it lies beyond, plus one insertion a word past it (the old box's
    start is never after the new one's)."""
    index, extra = [], np.int64(0)
    for t, (a, b, c, e) in enumerate(zip(*old, *new, strict=True)):
        pos = np.arange(c, e + 1, dtype=np.int64)
        clamped = np.minimum(pos, b)
        index.append(clamped - a)
        shape = [1] * len(old[0])
        shape[t] = -1
        extra = extra + (k * (pos - clamped)).reshape(shape)
    out = d[np.ix_(*index)]
    out += extra
    return out


def _costs(utt: Words, hyp: Words, lo: int, hi: int, k: int) -> np.ndarray:
    """The diagonal move's cost into each position lo+1..hi of a stream, one row a reference
    word: 0 (same word), K+1 (substitution), or _NO_MATCH where the times do not overlap."""
    ids, times = hyp.ids[lo:hi], hyp.times[lo:hi]
    span = utt.times
    allowed = (span[:, :1] < times[:, 1]) & (span[:, 1:] > times[:, 0])
    return np.where(allowed, np.where(ids == utt.ids[:, None], 0, k + 1), _NO_MATCH)


def _along(x: np.ndarray, utt: Words, hyp: Words, box: tuple[int, int], k: int) -> np.ndarray:
    """One segment aligned along the first axis of `x` (positions box[0]..box[1] of `hyp`)
    from every state: the edit recurrence word by word.

    Kept as y = x - j*K - w*K along the axis (w: the words done): the insertions' running
    minimum is then a plain one, a deletion everywhere costs nothing, a diagonal move c - 2K,
    and y never grows along the axis (the table is closed under insertions), so a word
    changes only the positions from its first overlapping hypothesis word on: a diagonal
    move and a running minimum over the band of its overlapping words, then the band's last
    value caps the rest. The axis first and contiguous, so each step is a few vectorised
    passes over whole slabs."""
    lo, hi = box
    if hi == lo:  # no hypothesis word in the box: every word deleted
        return x + k * len(utt.ids)
    g = (k * np.arange(hi - lo + 1, dtype=np.int64)).reshape((-1,) + (1,) * (x.ndim - 1))
    y = np.subtract(x, g, order="C")
    costs = _costs(utt, hyp, lo, hi, k)
    near = costs < _NO_MATCH
    firsts = near.argmax(axis=1).tolist()
    lasts = (near.shape[1] - near[:, ::-1].argmax(axis=1)).tolist()
    anys: list[bool] = np.any(near, axis=1).tolist()
    for row, any_near, a, b in zip(costs, anys, firsts, lasts, strict=True):
        if not any_near:  # no overlapping word: a deletion everywhere (w*K, added below)
            continue
        # the diagonal moves into positions a+1..b (the first and last overlapping words)
        diag = y[a:b] + (row[a:b] - 2 * k).reshape(g[a:b].shape)
        np.minimum(y[a + 1 : b + 1], diag, out=y[a + 1 : b + 1])
        _running_min(y[a : b + 1])
        if b + 1 < len(y):
            np.minimum(y[b + 1 :], y[b], out=y[b + 1 :])
    y += g + k * len(costs)
    return y


def _running_min(y: np.ndarray) -> None:
    """The running minimum of `y` along its first axis, in place: numpy's accumulate where the
    other axes are few states, else one vectorised minimum per position (numpy's accumulate
    walks the first axis state by state, 10-15x slower on thousands of states)."""
    if y.size < 256 * len(y):
        np.minimum.accumulate(y, axis=0, out=y)
        return
    for j in range(1, len(y)):
        np.minimum(y[j - 1], y[j], out=y[j])


def _tried(bx: Boxes, u: int) -> list[int]:
    """The streams a segment is tried on: those with a word in its box (on the others it can
    only be deleted, never cheaper); with none, the last (MeetEval's choice)."""
    wide = np.flatnonzero(bx.hi[u] > bx.lo[u]).tolist()
    return wide or [len(bx.lo[u]) - 1]


def _step(
    d: np.ndarray, u: int, utt: Words, streams: list[Words], bx: Boxes, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Segment u from the table before it (over box u-1; the start for u = 0): each state's
    least cost over the streams tried (ties: the first) and that stream."""
    prev = _prev_box(bx, u)
    t = _enter(d, prev, (bx.lo[u], bx.hi[u]), k)
    best = choice = None
    for s in _tried(bx, u):
        box = (int(bx.lo[u, s]), int(bx.hi[u, s]))
        e = np.moveaxis(_along(np.moveaxis(t, s, 0), utt, streams[s], box, k), 0, s)
        if best is None or choice is None:
            best, choice = e, np.full(e.shape, s, dtype=np.int16)
        else:
            better = e < best
            np.copyto(best, e, where=better)
            choice[better] = s
    assert best is not None and choice is not None
    return best, choice


def _prev_box(bx: Boxes, u: int) -> tuple[np.ndarray, np.ndarray]:
    if u == 0:
        zero = np.zeros(bx.lo.shape[1], dtype=np.int64)
        return zero, zero
    return bx.lo[u - 1], bx.hi[u - 1]


def _stretches(states: np.ndarray) -> list[int]:
    """Where each stretch of segments starts: stretches of about sqrt(U) segments' worth of
    states (never less than the largest box), so the checkpoints and one stretch's tables
    both stay near sqrt(U) tables."""
    total = int(states.sum())
    per = max(int(states.max()), math.isqrt(total * max(1, total // len(states))))
    starts, acc = [0], 0
    for u, n in enumerate(states.astype(np.int64).tolist()):
        if acc and acc + n > per:
            starts.append(u)
            acc = 0
        acc += n
    return starts


def check_size(sid: str, utts: list[Words], streams: list[Words], bx: Boxes, names) -> None:
    """Refuse a session whose largest box or whole work exceeds the bounds, naming it, the
    segment and what to do."""
    states = bx.states()
    u = int(states.argmax())
    work = 2 * sum(
        len(x.ids) * float(n) * len(_tried(bx, i))
        for i, (x, n) in enumerate(zip(utts, states, strict=True))
    )
    if states[u] <= TCORC_MAX_STATES and work <= TCORC_MAX_WORK:
        return
    near = {n: int(w) for n, w in zip(names, bx.hi[u] - bx.lo[u], strict=True) if w}
    raise TcorcTooLarge(
        f"session {sid!r}: time-constrained ORC-WER needs {states[u]:,.0f} states for the "
        f"reference segment at {float(utts[u].times[:, 0].min()):g} s (hypothesis words within "
        f"its time and the collar, per stream: {near}; at most {TCORC_MAX_STATES:,}) and "
        f"{work:,.0f} steps in all (at most {TCORC_MAX_WORK:,}); lower --collar, cut long "
        "reference segments, or score with --metric tcpwer"
    )


def tcorc_assign(utts: list[Words], streams: list[Words], bx: Boxes, k: int) -> list[int]:
    """The stream of each reference segment minimising K*E + S over all streams at once, the
    time-constrained way (`check_size` first). Forward pass keeping the table before each
    stretch; then each stretch, last first, recomputed from its checkpoint and walked back."""
    starts = _stretches(bx.states())
    checkpoints = []
    d = np.zeros((1,) * len(streams), dtype=np.int64)
    for u, utt in enumerate(utts):
        if u in starts:
            checkpoints.append(d)
        d = _step(d, u, utt, streams, bx, k)[0]
    pos = bx.hi[-1].copy()
    out = [0] * len(utts)
    for a in range(len(starts) - 1, -1, -1):
        b = starts[a + 1] if a + 1 < len(starts) else len(utts)
        tables, choices = [checkpoints.pop()], []
        for u in range(starts[a], b):
            best, choice = _step(tables[-1], u, utts[u], streams, bx, k)
            tables.append(best)
            choices.append(choice)
        for u in range(b - 1, starts[a] - 1, -1):
            i = u - starts[a]
            out[u] = _walk(tables[i], choices[i], u, (utts[u], streams, bx, k), pos)
    return out


def _walk(d: np.ndarray, choice: np.ndarray, u: int, ctx, pos: np.ndarray) -> int:
    """Back through segment u from `pos` (in its box; moved into the previous one): its
    stream, then where its alignment along that stream began, then the previous box's end
    where `pos` lies beyond it (insertions between segments). `d`: the table before u."""
    utt, streams, bx, k = ctx
    lo, hi = bx.lo[u], bx.hi[u]
    s = int(choice[tuple((pos - lo).tolist())])
    prev_lo, prev_hi = _prev_box(bx, u)
    at = pos.copy()  # the entered table's line along s through pos: d where inside, + insertions
    index: list = (np.minimum(at, prev_hi) - prev_lo).tolist()
    along = np.arange(lo[s], hi[s] + 1, dtype=np.int64)
    index[s] = np.minimum(along, prev_hi[s]) - prev_lo[s]
    at[s] = prev_hi[s]
    row = d[tuple(index)] + k * (
        int((at - np.minimum(at, prev_hi)).sum()) + (along - np.minimum(along, prev_hi[s]))
    )
    pos[s] = _start(row, utt, streams[s], (int(lo[s]), int(pos[s])), k)
    np.minimum(pos, prev_hi, out=pos)
    return s


def _start(row: np.ndarray, utt: Words, hyp: Words, where: tuple[int, int], k: int) -> int:
    """Where on the stream the segment's alignment ending at position where[1] began: the
    rows recomputed from `row` (positions where[0] .. of the box), then traced back."""
    lo, end = where
    g = k * np.arange(len(row), dtype=np.int64)
    rows, costs = [row], []
    for c in _costs(utt, hyp, lo, lo + len(row) - 1, k):
        x = rows[-1]
        new = x + k
        np.minimum(new[1:], x[:-1] + c, out=new[1:])
        rows.append(np.minimum.accumulate(new - g) + g)
        costs.append(c)
    i, j = len(costs), end - lo
    while i > 0:
        if j and rows[i][j] == rows[i - 1][j - 1] + costs[i - 1][j - 1]:
            i, j = i - 1, j - 1
        elif rows[i][j] == rows[i - 1][j] + k:
            i -= 1
        else:
            j -= 1
    return lo + j
