"""The WFST engine: DAE hypotheses with too many slot combinations to enumerate.

The shortest path of R o L o H where R is the reference, H the hypothesis lattice (a sausage
with begin/end markers around each slot) and the edit transducer L = Ll o Lr is factored
through auxiliary symbols <sub>, <del>, <ins>, so each factor has O(V) arcs and is built once.
The path picks one whole branch per slot. Same cost model as `scoring.align` (see there).
Imported only when a hypothesis needs it, so OpenFST is not loaded for plain corpora.

Word ids come in three ranges of `vocab_size` each: plain words, then *strict* hypothesis words
(`strict_id`: the words of an alternative the system did not write, which Lr can only match,
as SpeechColab's `WORD#` symbols), then *optional* reference words (`optional_id`: sclite's
parenthesised words, which Ll can also drop for free).
"""

from __future__ import annotations

import pywrapfst as fst

from scoring.align import _FLOAT32_EXACT, BEGIN, DEL, END, EPS, FIRST_WORD, INS, SUB


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
        # Ll: a->a, a-><sub>, a-><del>, eps-><ins>, all free; Lr carries the costs. An
        # optional word o(a) maps to a, <sub> or nothing (a free deletion).
        left = fst.VectorFst()
        s = left.add_state()
        left.set_start(s)
        left.set_final(s)
        for a in words:
            left.add_arc(s, _arc(a, a, 0, s))
            left.add_arc(s, _arc(a, SUB, 0, s))
            left.add_arc(s, _arc(a, DEL, 0, s))
            o = a + 2 * vocab_size
            left.add_arc(s, _arc(o, a, 0, s))
            left.add_arc(s, _arc(o, SUB, 0, s))
            left.add_arc(s, _arc(o, EPS, 0, s))
        left.add_arc(s, _arc(EPS, INS, 0, s))
        left.arcsort("ilabel")  # R o Ll matches on Ll's input side
        # Lr: b->b free, <sub>->b costs K+1, <ins>->b and <del>->eps cost K, markers are free;
        # a strict word s(b) is reached from b only (matched, never substituted or inserted).
        right = fst.VectorFst()
        s = right.add_state()
        right.set_start(s)
        right.set_final(s)
        for b in words:
            right.add_arc(s, _arc(b, b, 0, s))
            right.add_arc(s, _arc(b, b + vocab_size, 0, s))
            right.add_arc(s, _arc(SUB, b, sub_w, s))
            right.add_arc(s, _arc(INS, b, ins_w, s))
        right.add_arc(s, _arc(DEL, EPS, del_w, s))
        right.add_arc(s, _arc(EPS, BEGIN, 0, s))
        right.add_arc(s, _arc(EPS, END, 0, s))
        right.arcsort("olabel")  # Lr o H matches on Lr's output side
        self.left, self.right = left, right

    def strict_id(self, word: int) -> int:
        """The id of `word` as a strict hypothesis word (it can only be matched)."""
        return word + self.vocab_size

    def optional_id(self, word: int) -> int:
        """The id of `word` as an optional reference word (dropping it is free)."""
        return word + 2 * self.vocab_size

    def plain_id(self, x: int) -> int:
        """A word id of any range back to the plain word."""
        return FIRST_WORD + (x - FIRST_WORD) % self.vocab_size

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
    def _lattice(segments: list) -> fst.VectorFst:
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
    ) -> tuple[tuple[int, int], list[int], list[tuple[int, ...]], list[int]]:
        """(E, S), chosen hypothesis ids, the chosen form of each slot in order, and the
        positions in the chosen hypothesis of strict words.

        Ids may be strict (hypothesis) or optional (reference) ones; the returned ids are
        plain."""
        left = fst.compose(self._linear(ref), self.left)
        left.arcsort("olabel")
        right = fst.compose(self.right, self._lattice(segments))
        lattice = fst.compose(left, right)
        if self.three_level:
            path = fst.shortestpath(lattice)
            cost = round(float(fst.shortestdistance(path, reverse=True)[path.start()]))
            hyp, chosen, strict = self._read(path)
            return (cost // self.e, (cost % self.e) // self.m), hyp, chosen, strict
        # Among paths of minimal K*E + S, prefer the fewest insertions (so, with E and S fixed,
        # the S/D/I split is fixed even when alternative forms differ in length): keep only the
        # optimal paths, then weigh each insertion 1 and everything else 0.
        best = fst.prune(lattice, weight=0.5)  # integer costs: keeps exactly the optimal paths
        # The optimum read on the pruned lattice (every path left has it; its costs are exact
        # integers, so the same float): the whole lattice's distances (one Python Weight a
        # state, ~750,000 for an 850-word chunk) took 2/3 of this method's time.
        weight = float(fst.shortestdistance(best, reverse=True)[best.start()])
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
        hyp, chosen, strict = self._read(fst.shortestpath(best))
        return divmod(round(weight), self.e), hyp, chosen, strict

    def _read(self, path: fst.Fst) -> tuple[list[int], list[tuple[int, ...]], list[int]]:
        """Walk a single-path FST: hypothesis ids, the chosen form of each slot, and the
        positions of strict words."""
        hyp: list[int] = []
        chosen: list[tuple[int, ...]] = []
        strict: list[int] = []
        state = path.start()
        current: list[int] | None = None
        top = FIRST_WORD + self.vocab_size
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
                if label >= top:
                    strict.append(len(hyp))
                label = self.plain_id(label)
                hyp.append(label)
                if current is not None:
                    current.append(label)
            state = arc.nextstate
        return hyp, chosen, strict
