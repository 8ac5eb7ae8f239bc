"""nemo's English tagger with its arc chains joined: the same weighted paths, composed with a
text at about a tenth of the cost (docs/SCORING.md, "The tagger compacted").

Almost all of NSW's time on a cold cache is one composition, `text @ tagger` (nemo's
`Normalizer.find_tags`): the tagger (161,184 states) inserts its markup (`tokens { cardinal {
integer: "`) one byte a state along arcs that read nothing, so composing even `25` with it
visits ~10,000 states. `compact` joins each arc that reads nothing into its neighbour when one
of the two states between them has no other arc, its output bytes becoming one label that
`Compact.table` spells out. Two arcs are joined only where the joined arc reads at most one
input label and one of the two weights is exactly zero, so every path keeps its input, its
output bytes and its float32 weight bit for bit; the best path's tags are read back through
the table and nemo's own steps (parsing, verbaliser, post-processing) run on them unchanged.
Where two tag strings tie exactly in weight, the search may pick the other: their readings are
equal on every piece of the 44 Earnings-21 calls and every embedded reference (the tests).

The compacted tagger is built once (about 4 CPU s) and kept beside nemo's grammar archive.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Bump when `compact` changes: a kept file of another format is rebuilt.
FORMAT = 1
# Joined output labels are numbered from here (nemo's labels are bytes, below 256).
FIRST_LABEL = 1_000_000


class _Graph:
    """A mutable copy of an FST's arcs, with each state's incoming arcs, for `compact`."""

    def __init__(self, fst: Any) -> None:
        self.start = fst.start()
        n = fst.num_states()
        # arc: [source, ilabel, output labels, weight, destination]
        self.arcs: list[list[Any]] = []
        self.out: list[list[int]] = [[] for _ in range(n)]
        self.inn: list[list[int]] = [[] for _ in range(n)]
        self.final = [float(fst.final(s)) for s in range(n)]
        for s in range(n):
            for a in fst.arcs(s):
                i = len(self.arcs)
                outs = (a.olabel,) if a.olabel else ()
                self.arcs.append([s, a.ilabel, outs, float(a.weight), a.nextstate])
                self.out[s].append(i)
                self.inn[a.nextstate].append(i)
        self.dead = [False] * n

    @staticmethod
    def _joinable(first: list[Any], second: list[Any]) -> bool:
        # at most one input label, and a weight sum that is exact (one of them zero)
        return (first[1] == 0 or second[1] == 0) and (first[3] == 0 or second[3] == 0)

    def _join_forward(self, s: int) -> list[int]:
        """Remove `s` (one arc out): each arc into it now goes on to that arc's end."""
        e = self.arcs[self.out[s][0]]
        t = e[4]
        incoming = [self.arcs[a] for a in self.inn[s]]
        if t == s or any(a[0] == s or not self._joinable(a, e) for a in incoming):
            return []
        self.inn[t].remove(self.out[s][0])
        for i, a in zip(self.inn[s], incoming, strict=True):
            a[1], a[2], a[3], a[4] = a[1] or e[1], a[2] + e[2], a[3] + e[3], t
            self.inn[t].append(i)
        return [a[0] for a in incoming] + [t]

    def _join_backward(self, s: int) -> list[int]:
        """Remove `s` (one arc in): each arc out of it now starts at that arc's start."""
        ei = self.inn[s][0]
        e = self.arcs[ei]
        p = e[0]
        outgoing = [self.arcs[b] for b in self.out[s]]
        if p == s or any(b[4] == s or not self._joinable(e, b) for b in outgoing):
            return []
        self.out[p].remove(ei)
        for i, b in zip(self.out[s], outgoing, strict=True):
            b[0], b[1], b[2], b[3] = p, e[1] or b[1], e[2] + b[2], e[3] + b[3]
            self.out[p].append(i)
        return [p] + [b[4] for b in outgoing]

    def join_all(self) -> None:
        """Remove every state that a join can remove, until none is left."""
        work = list(range(len(self.out)))
        while work:
            s = work.pop()
            if self.dead[s] or s == self.start or self.final[s] != float("inf"):
                continue
            touched: list[int] = []
            if len(self.out[s]) == 1:
                touched = self._join_forward(s)
            if not touched and len(self.inn[s]) == 1:
                touched = self._join_backward(s)
            if touched:
                self.dead[s] = True
                self.out[s], self.inn[s] = [], []
                work.extend(touched)


def compact(fst: Any) -> tuple[Any, dict[int, bytes]]:
    """The tagger with its chains joined, and the bytes of each joined output label."""
    import pynini
    import pywrapfst

    g = _Graph(fst)
    g.join_all()
    keep = [s for s in range(len(g.out)) if not g.dead[s]]
    index = {s: i for i, s in enumerate(keep)}
    labels: dict[tuple[int, ...], int] = {}
    out = pynini.Fst()
    wt = fst.weight_type()
    out.add_states(len(keep))
    out.set_start(index[g.start])
    for s in keep:
        if g.final[s] != float("inf"):
            out.set_final(index[s], pywrapfst.Weight(wt, g.final[s]))
        for ai in g.out[s]:
            _, ilabel, outs, w, dest = g.arcs[ai]
            olabel = outs[0] if len(outs) == 1 else 0
            if len(outs) > 1:
                olabel = labels.setdefault(outs, FIRST_LABEL + len(labels))
            arc = pywrapfst.Arc(ilabel, olabel, pywrapfst.Weight(wt, w), index[dest])
            out.add_arc(index[s], arc)
    out.arcsort("ilabel")
    return out, {label: bytes(outs) for outs, label in labels.items()}


def path_text(path: Any, table: dict[int, bytes]) -> str:
    """The output of a one-path FST (a shortest path), joined labels spelled out."""
    buf = bytearray()
    s = path.start()
    while True:
        arcs = list(path.arcs(s))
        if not arcs:
            return buf.decode("utf-8")
        arc = arcs[0]
        if arc.olabel:
            buf += table[arc.olabel] if arc.olabel >= FIRST_LABEL else bytes((arc.olabel,))
        s = arc.nextstate


class Compact:
    """A compacted FST and its label table; `best` stands in for nemo's composition."""

    def __init__(self, fst: Any, table: dict[int, bytes]) -> None:
        self.fst = fst
        self.table = table

    def best(self, text: str) -> Any:
        """nemo's `find_tags(text)` (or `find_verbalizer`) as the one-path lattice of its
        best path, which nemo's `select_tag` (`select_verbalizer`) then reads; a text with no
        path gives the empty lattice, as nemo's does."""
        import pynini

        lattice = pynini.compose(pynini.accep(text), self.fst)
        best = pynini.shortestpath(lattice, nshortest=1, unique=True)
        if best.start() < 0:  # no path: nemo's select_tag fails on it as before
            return lattice
        return pynini.accep(pynini.escape(path_text(best, self.table)))


def _source_key(far: Path) -> dict[str, Any]:
    """What the kept file was built from: the archive by name, size and CRC-32 (a copy of the
    grammar folder keeps its compacted tagger), this format and pynini's version."""
    import zlib
    from importlib import metadata

    data = far.read_bytes()
    return {
        "format": FORMAT,
        "far": far.name,
        "size": len(data),
        "crc32": zlib.crc32(data),
        "pynini": metadata.version("pynini"),
    }


def load(far: Path, tagger: Callable[[], Any]) -> Compact:
    """The compacted form of the tagger in archive `far` (`tagger()` gives nemo's FST), read
    from beside the archive where it was built for that very file, else built and kept."""
    import pynini

    key = _source_key(far)
    fst_path = far.with_name(far.stem + ".compact.fst")
    table_path = far.with_name(far.stem + ".compact.json")
    try:
        saved = json.loads(table_path.read_text(encoding="utf-8"))
        if saved["source"] == key:
            table = {int(k): bytes.fromhex(v) for k, v in saved["labels"].items()}
            return Compact(pynini.Fst.read(str(fst_path)), table)
    except (OSError, ValueError, KeyError, RuntimeError):
        pass  # not built yet for this archive, or unreadable: build it again
    fst, table = compact(tagger())
    try:
        _keep(fst, table, key, fst_path, table_path)
    except OSError:  # a read-only grammar folder: used from memory, built again next time
        pass
    return Compact(fst, table)


def _keep(fst: Any, table: dict[int, bytes], key: dict, fst_path: Path, table_path: Path) -> None:
    """Write the compacted FST and its table; under temporary names first and then renamed,
    so a concurrent reader sees whole files."""
    tmp = f".{os.getpid()}.tmp"
    fst.write(str(fst_path) + tmp)
    os.replace(str(fst_path) + tmp, fst_path)
    labels = {str(k): v.hex() for k, v in table.items()}
    Path(str(table_path) + tmp).write_text(json.dumps({"source": key, "labels": labels}))
    os.replace(str(table_path) + tmp, table_path)
