"""Rows the DAE forward lattice pass computes per stride column, unpruned and pruned (issue 43
item 1; docs/SCORING.md, "The forward pass pruned by a gadget suffix bound").

For each long pair of `benchmarks/scoring_scale.py` (the seeded corpus joined), the arguments
`Scorer` gives `dae_windows.cut_rows` are captured (a pair over `scoring.align.MAX_CELLS`, which
`ops/score` refuses, e.g. 300,000 words, by the same Scorer with that check off), then the
forward pass runs three ways on them: bounded by the written form's edit count E0 (as before
the pruning), by the chunks' path weight alone, and by that weight with the gadget suffix
bound. Printed per pair: E0, the optimum's edits, the chunks' path's, the slots' whole saving
(what the earlier bound subtracted), the mean kept rows per stride column (every 16th item,
the first excluded: it holds the start's rows) of each pass, and the CPU seconds of the
bound's bit-parallel pass and of the pruned forward pass; every pass's optimum is checked
equal.

    .venv/bin/python benchmarks/dae_prune_rows.py [--words 10000,30000,100000,300000]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring import align  # noqa: E402
from scoring import dae_windows as dw  # noqa: E402
from scoring.scorer import Scorer, ScorerConfig  # noqa: E402


def _long_pair(words: int) -> tuple[dict[str, str], dict[str, str]]:
    spec = importlib.util.spec_from_file_location("scale", ROOT / "benchmarks" / "scoring_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.long_pair(words)


def _captured(words: int) -> dict:
    """`cut_rows`' arguments as the Scorer passes them for the pair (the call runs as usual)."""
    seen: dict = {}
    original = dw.cut_rows

    def capture(ref, optional, items, cuts, e0, compiled=dw._dp is not None):  # type: ignore[no-untyped-def]
        seen.update(ref=ref, optional=optional, items=items, e0=e0)
        return original(ref, optional, items, cuts, e0, compiled)

    def unchecked(n: int, m: int, pair: int = -1) -> None:
        """No refusal over MAX_CELLS: the arguments are all this needs."""

    check = align.check_pair
    dw.cut_rows = capture  # type: ignore[assignment]
    align.check_pair = unchecked
    try:
        Scorer(ScorerConfig(nsw=False, bootstrap=0)).utterances(*_long_pair(words))
    finally:
        dw.cut_rows = original  # type: ignore[assignment]
        align.check_pair = check
    return seen


def rows(words: int) -> str:
    """One pair's line: the counts, the three passes' mean rows per stride column, and the
    bound's and the pruned pass's CPU seconds."""
    c = _captured(words)
    ref, optional, items, e0 = c["ref"], c["optional"], c["items"], c["e0"]
    lens = dw.item_lengths(items)
    w = dw.Weights.for_pair(len(ref), int(lens[:, 1].sum()))
    plain = dw._Plain.of(items, lens)
    written = (e0 + 1) * w.e - 1
    path = dw.chunk_upper(ref, optional, items, plain, w) or written
    t0 = time.process_time()
    bound = dw.suffix_bound(ref, optional, items, lens, path // w.e)
    seconds = [time.process_time() - t0]
    keep = frozenset(range(dw._STRIDE, len(items), dw._STRIDE))
    means, best = [], set()
    for upper, b in ((written, None), (path, None), (path, bound)):
        lattice = dw._Lattice(dw._Ref.make(ref, optional, w), w, e0, upper, bound=b)
        t0 = time.process_time()
        last, kept = lattice.run(items, keep, lens)
        seconds.append(time.process_time() - t0)
        best.add(int(last[len(ref)]))
        means.append(sum(len(band) for _, band in kept.values()) / len(kept))
    assert len(best) == 1, best
    return (
        f"{words} words: E0 {e0}, optimum {w.counts(best.pop())[0]}, chunks' path "
        f"{w.counts(path)[0]}, slots' saving {int(plain.red.sum())}; rows per stride column: "
        f"E0 {means[0]:.0f} ({means[0] / e0:.2f} E0), path {means[1]:.0f}, path and bound "
        f"{means[2]:.1f} ({means[0] / means[2]:.0f}x fewer); CPU s: bound {seconds[0]:.3f}, "
        f"pruned pass {seconds[3]:.3f} (E0's {seconds[1]:.2f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", default="10000,30000,100000,300000", help="long pairs' sizes")
    for words in map(int, ap.parse_args().words.split(",")):
        print(rows(words), flush=True)


if __name__ == "__main__":
    main()
