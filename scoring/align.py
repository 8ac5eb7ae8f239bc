"""Alignment: Levenshtein distance with a deterministic S/D/I split, two exact engines.

Cost model (both engines): each deletion and insertion costs K, each substitution K+1, a
match 0, with K larger than any possible number of substitutions. Minimising K*E + S therefore
minimises the number of edits E first (Levenshtein distance, the TER numerator) and, among
minimal paths, the number of substitutions S. Since D - I = |ref| - |hyp| is fixed, (E, S)
fixes all three counts: the S/D/I split is unique, whatever path an engine walks. This is also
sclite's preference (its weights sub 4, del 3, ins 3 favour a deletion+insertion pair over two
substitutions when the edit count is equal).

* `align_batch` (the fast exact path): dynamic programming vectorised with numpy over a batch
  of utterances; the table holds U[i,j] = D[i,j] - j*K, so that U[i,j] = min(U[i-1,j-1] + sub
  - K, U[i-1,j] + K, U[i,j-1]) and the insertion term is a running minimum along the row. Edit
  positions come from one fixed back-trace rule: walking back from the end, take the diagonal
  (match/substitution) when it is optimal, else a deletion, else an insertion.
* `FstAligner` (hypotheses with DAE slots): the shortest path of R o L o H where R is the
  reference, H the hypothesis lattice (a sausage with begin/end markers around each slot) and
  the edit transducer L = Ll o Lr is factored through auxiliary symbols <sub>, <del>, <ins>, so
  each factor has O(V) arcs and is built once. The path picks one whole branch per slot; the
  chosen linear hypothesis is then re-aligned by `align_batch`, and the two costs are checked
  equal, so both engines give identical counts and positions by construction.
"""

from __future__ import annotations

import itertools

import numpy as np
import pywrapfst as fst

C, S, D, I = ord("C"), ord("S"), ord("D"), ord("I")  # noqa: E741 - the usual edit letters
EPS, SUB, DEL, INS, BEGIN, END = 0, 1, 2, 3, 4, 5
FIRST_WORD = 6  # word ids start here; the ids below are FST specials
_CHUNK = 2048
_FLOAT32_EXACT = 1 << 24  # tropical weights are float32: integers are exact below 2**24


def align_batch(pairs: list[tuple[list[int], list[int]]], k: int) -> tuple[list[str], list[int]]:
    """Align (ref ids, hyp ids) pairs; return the op string ('C','S','D','I') and cost of each."""
    codes: list[str] = [""] * len(pairs)
    costs: list[int] = [0] * len(pairs)
    order = sorted(range(len(pairs)), key=lambda b: (len(pairs[b][0]), len(pairs[b][1])))
    for start in range(0, len(order), _CHUNK):
        idx = order[start : start + _CHUNK]
        _align_chunk([pairs[b] for b in idx], k, idx, codes, costs)
    return codes, costs


def _align_chunk(chunk, k, idx, codes, costs) -> None:  # noqa: ANN001 - internal helper
    b = len(chunk)
    n = np.fromiter((len(r) for r, _ in chunk), dtype=np.int64, count=b)
    m = np.fromiter((len(h) for _, h in chunk), dtype=np.int64, count=b)
    nmax, mmax = int(n.max()), int(m.max())
    # Costs and the running-minimum terms stay within (nmax + mmax + 1) * (k + 2) in absolute
    # value: the narrowest exact integer type cuts the memory traffic.
    bound = (nmax + mmax + 1) * (k + 2)
    dtype = np.int16 if bound < 2**15 else np.int32 if bound < 2**31 else np.int64
    ref = np.full((b, max(nmax, 1)), -1, dtype=np.int64)  # pads never match anything
    hyp = np.full((b, max(mmax, 1)), -2, dtype=np.int64)
    # Fill the rows from one flat array each (row-major boolean masks keep the order).
    ref[np.arange(ref.shape[1]) < n[:, None]] = np.fromiter(
        itertools.chain.from_iterable(r for r, _ in chunk), dtype=np.int64, count=int(n.sum())
    )
    hyp[np.arange(hyp.shape[1]) < m[:, None]] = np.fromiter(
        itertools.chain.from_iterable(h for _, h in chunk), dtype=np.int64, count=int(m.sum())
    )
    # Per (ref position, hyp position): 1 on a match, 2 otherwise (the back-trace letter code of
    # the diagonal), and the substitution cost 0 or K+1 less K (see U below).
    diag_code = (ref[:, :, None] != hyp[:, None, :]).view(np.uint8)
    sub_k = diag_code.astype(dtype)
    sub_k *= k + 1
    sub_k -= k
    diag_code += 1
    # The table holds U[i, j] = D[i, j] - j*K, which makes the insertion term a plain running
    # minimum: U[i, j] = min(U[i-1, j-1] + sub - K, U[i-1, j] + K, U[i, j-1]).
    dist = np.empty((b, nmax + 1, mmax + 1), dtype=dtype)
    dist[:, 0, :] = 0
    # The back-trace rule, decided per cell while filling: 1 C / 2 S (the diagonal is
    # optimal), else 3 D (the cell above is), else 4 I; 0 at the origin. The comparisons hold
    # in U as in D (both sides shift by the same j*K).
    w = mmax + 1
    dirs = np.empty((b, nmax + 1, w), dtype=np.uint8)
    dirs[:, 0, :] = 4
    dirs[:, 0, 0] = 0
    dirs[:, 1:, 0] = 3
    t = np.empty((b, mmax + 1), dtype=dtype)
    via_diag = np.empty((b, mmax), dtype=dtype)
    via_up = np.empty((b, mmax), dtype=dtype)
    ok = np.empty((b, mmax), dtype=bool)
    four = np.uint8(4)
    for i in range(1, nmax + 1):
        prev = dist[:, i - 1, :]
        t[:, 0] = i * k
        np.add(prev[:, :-1], sub_k[:, i - 1, :mmax], out=via_diag)
        np.add(prev[:, 1:], k, out=via_up)
        np.minimum(via_diag, via_up, out=t[:, 1:])
        row = dist[:, i, :]
        np.minimum.accumulate(t, axis=1, out=row)
        if mmax:
            code = dirs[:, i, 1:]
            np.equal(row[:, 1:], via_up, out=ok)
            np.subtract(four, ok.view(np.uint8), out=code)
            np.equal(row[:, 1:], via_diag, out=ok)
            np.copyto(code, diag_code[:, i - 1, :mmax], where=ok)
    # Walk back all utterances of the chunk in lock-step on flat indexes: one gather a step.
    letters = np.array([0, C, S, D, I], dtype=np.uint8)
    moves = np.array([0, w + 1, w + 1, w, 1], dtype=np.int64)
    flat_dirs = dirs.reshape(-1)
    here = np.arange(b, dtype=np.int64) * ((nmax + 1) * w) + n * w + m
    total = dist.reshape(-1)[here].astype(np.int64) + m * k  # D = U + j*K
    ops = np.zeros((b, nmax + mmax + 1), dtype=np.uint8)
    for step in range(nmax + mmax):
        d = flat_dirs[here]
        ops[:, step] = letters[d]
        here -= moves[d]
    lengths = (ops != 0).sum(axis=1)
    for row in range(b):
        codes[idx[row]] = ops[row, : lengths[row]][::-1].tobytes().decode("ascii")
        costs[idx[row]] = int(total[row])


def _arc(i: int, o: int, w: float, nxt: int) -> fst.Arc:
    return fst.Arc(i, o, fst.Weight("tropical", w), nxt)


class FstAligner:
    """Factored edit transducer Ll o Lr over a vocabulary of word ids, built once."""

    def __init__(self, vocab_size: int, k: int) -> None:
        """`k` bounds every utterance length (and so every count) in the run, as for the DP.

        When float32 allows it, the weights encode all three tie-break levels at once:
        cost = E*e + S*m + I with m = k+1 > I and e = m*(k+1) > S*m + I, so one shortest path
        gives (min E, then min S, then min I). Otherwise two levels (K*E + S) are used and the
        insertion level is applied by pruning to the optimal paths and searching again.
        """
        self.vocab_size, self.k = vocab_size, k
        self.m = k + 1
        self.e = self.m * (k + 1)
        self.three_level = (self.e + self.m) * (2 * k + 1) < _FLOAT32_EXACT
        if not self.three_level:
            self.m, self.e = 1, k
        sub_w, ins_w, del_w = self.e + self.m, self.e + (1 if self.three_level else 0), self.e
        words = range(FIRST_WORD, FIRST_WORD + vocab_size)
        # Ll: a->a, a-><sub>, a-><del>, eps-><ins>, all free; Lr carries the costs.
        left = fst.VectorFst()
        s = left.add_state()
        left.set_start(s)
        left.set_final(s)
        for a in words:
            left.add_arc(s, _arc(a, a, 0, s))
            left.add_arc(s, _arc(a, SUB, 0, s))
            left.add_arc(s, _arc(a, DEL, 0, s))
        left.add_arc(s, _arc(EPS, INS, 0, s))
        left.arcsort("ilabel")  # R o Ll matches on Ll's input side
        # Lr: b->b free, <sub>->b costs K+1, <ins>->b and <del>->eps cost K, markers are free.
        right = fst.VectorFst()
        s = right.add_state()
        right.set_start(s)
        right.set_final(s)
        for b in words:
            right.add_arc(s, _arc(b, b, 0, s))
            right.add_arc(s, _arc(SUB, b, sub_w, s))
            right.add_arc(s, _arc(INS, b, ins_w, s))
        right.add_arc(s, _arc(DEL, EPS, del_w, s))
        right.add_arc(s, _arc(EPS, BEGIN, 0, s))
        right.add_arc(s, _arc(EPS, END, 0, s))
        right.arcsort("olabel")  # Lr o H matches on Lr's output side
        self.left, self.right = left, right

    @staticmethod
    def _linear(ids: list[int]) -> fst.VectorFst:
        f = fst.VectorFst()
        s = f.add_state()
        f.set_start(s)
        for x in ids:
            t = f.add_state()
            f.add_arc(s, _arc(x, x, 0, t))
            s = t
        f.set_final(s)
        return f

    @staticmethod
    def _lattice(segments: list) -> fst.VectorFst:  # noqa: ANN001 - ints and (forms) tuples
        f = fst.VectorFst()
        s = f.add_state()
        f.set_start(s)
        for seg in segments:
            if isinstance(seg, int):
                t = f.add_state()
                f.add_arc(s, _arc(seg, seg, 0, t))
                s = t
                continue
            begin, end, out = f.add_state(), f.add_state(), f.add_state()
            f.add_arc(s, _arc(BEGIN, BEGIN, 0, begin))
            for form in seg:
                cur = begin
                for pos, x in enumerate(form):
                    nxt = end if pos == len(form) - 1 else f.add_state()
                    f.add_arc(cur, _arc(x, x, 0, nxt))
                    cur = nxt
            f.add_arc(end, _arc(END, END, 0, out))
            s = out
        f.set_final(s)
        return f

    def best_path(
        self, ref: list[int], segments: list
    ) -> tuple[tuple[int, int], list[int], list[tuple[int, ...]]]:  # noqa: ANN001
        """(E, S), chosen hypothesis ids and the chosen form of each slot, in order."""
        left = fst.compose(self._linear(ref), self.left)
        left.arcsort("olabel")
        right = fst.compose(self.right, self._lattice(segments))
        lattice = fst.compose(left, right)
        if self.three_level:
            path = fst.shortestpath(lattice)
            cost = round(float(fst.shortestdistance(path, reverse=True)[path.start()]))
            hyp, chosen = self._read(path)
            return (cost // self.e, (cost % self.e) // self.m), hyp, chosen
        # Among paths of minimal K*E + S, prefer the fewest insertions (so, with E and S fixed,
        # the S/D/I split is fixed even when alternative forms differ in length): keep only the
        # optimal paths, then weigh each insertion 1 and everything else 0.
        cost = float(fst.shortestdistance(lattice, reverse=True)[lattice.start()])
        best = fst.prune(lattice, weight=0.5)  # integer costs: keeps exactly the optimal paths
        free, one = fst.Weight.one("tropical"), fst.Weight("tropical", 1)
        no_path = fst.Weight.zero("tropical")
        for state in best.states():
            arcs = best.mutable_arcs(state)
            while not arcs.done():
                arc = arcs.value()
                arc.weight = one if arc.ilabel == EPS and arc.olabel >= FIRST_WORD else free
                arcs.set_value(arc)
                arcs.next()
            if best.final(state) != no_path:
                best.set_final(state, free)
        hyp, chosen = self._read(fst.shortestpath(best))
        return divmod(round(cost), self.e), hyp, chosen

    @staticmethod
    def _read(path: fst.VectorFst) -> tuple[list[int], list[tuple[int, ...]]]:
        """Walk a single-path FST: hypothesis ids and the chosen form of each slot."""
        hyp: list[int] = []
        chosen: list[tuple[int, ...]] = []
        state = path.start()
        current: list[int] | None = None
        while True:
            arcs = list(path.arcs(state))
            if not arcs:
                break
            arc = arcs[0]
            label = arc.olabel
            if label == BEGIN:
                current = []
            elif label == END:
                chosen.append(tuple(current or ()))
                current = None
            elif label >= FIRST_WORD:
                hyp.append(label)
                if current is not None:
                    current.append(label)
            state = arc.nextstate
        return hyp, chosen


def check_exact(k: int, n_ref: int, n_hyp: int) -> bool:
    """True when float32 FST weights represent every cost of this pair exactly."""
    return (k + 1) * (n_ref + n_hyp + 1) < _FLOAT32_EXACT
