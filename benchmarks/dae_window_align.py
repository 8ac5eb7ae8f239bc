"""The DAE windows' alignment of a long pair, whole tables against Ukkonen bands (issue 43 item
1; docs/SCORING.md, "The compiled DP": `align_banded`).

For each long pair of `benchmarks/scoring_scale.py` (the seeded corpus joined), the arguments
`Scorer._windowed` gives `align_arrays` for its windows are captured, then the windows are
aligned three ways, interleaved, best of `--repeats` (CPU seconds, in-process): whole tables
(the compiled narrow batches, `_dp.fill_table`, padded to each batch's longest pair, as before
the bands), bands (`_dp.align_banded`, each window's guess its written forms' distance) and
numpy's whole tables (the fallback where the extension is not built). Printed per pair: the
windows, the table cells of each way (whole: padded batches; bands: each window's (n + 1) x
band width), the times, and whether the three gave the same ops and costs.

    .venv/bin/python benchmarks/dae_window_align.py [--words 10000,30000,100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring import align  # noqa: E402
from scoring import scorer as scorer_module  # noqa: E402
from scoring.scorer import Scorer, ScorerConfig  # noqa: E402


def _long_pair(words: int) -> tuple[dict[str, str], dict[str, str]]:
    spec = importlib.util.spec_from_file_location("scale", ROOT / "benchmarks" / "scoring_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.long_pair(words)


def _captured(words: int) -> tuple:
    """`align_arrays`' arguments for the windows (the call that carries a guess)."""
    seen: list = []
    original = scorer_module.align_arrays

    def capture(*args):  # type: ignore[no-untyped-def]
        if args[-1].edits is not None:
            seen.append(args)
        return original(*args)

    scorer_module.align_arrays = capture  # type: ignore[assignment]
    try:
        Scorer(ScorerConfig(nsw=False, bootstrap=0)).utterances(*_long_pair(words))
    finally:
        scorer_module.align_arrays = original  # type: ignore[assignment]
    return seen[0]


def _cells(args: tuple) -> tuple[int, int]:
    """Cells of the whole tables (the narrow batches as `align_arrays` forms them: windows
    with flags apart, each batch padded to its longest pair) and of the bands (each window's
    rows times its band's width, as `align_banded` first fills it)."""
    _, ref_off, n, _, hyp_off, m, _, marks = args
    flagged = np.zeros(len(n), dtype=bool)
    if marks.hyp_strict is not None:
        flagged |= align._any_in(marks.hyp_strict, hyp_off, m)
    if marks.ref_optional is not None:
        flagged |= align._any_in(marks.ref_optional, ref_off, n)
    order = np.lexsort((m, n, flagged))
    split = int(np.count_nonzero(~flagged))
    whole = 0
    for part in (order[:split], order[split:]):
        for idx in align._batches(part, n, m):
            whole += (int(n[idx].max()) + 1) * (int(m[idx].max()) + 1) * len(idx)
    width = np.minimum(np.maximum(marks.edits, np.abs(m - n)) + 1, m + 1)
    return whole, int(((n + 1) * width).sum())


def row(words: int, repeats: int) -> str:
    """One pair's line: windows, cells, best CPU s of each way, and whether they agree."""
    args = _captured(words)
    *sides, marks = args
    plain = align.Marks(marks.hyp_strict, marks.ref_optional)
    ways = {"whole": (True, plain), "banded": (True, marks), "numpy": (False, plain)}
    out: dict[str, tuple] = {}
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(repeats):
        for name, (compiled, m) in ways.items():
            align.COMPILED = compiled
            t0 = time.process_time()
            codes, costs = align.align_arrays(*sides, m)
            best[name] = min(best[name], time.process_time() - t0)
            out[name] = (tuple(codes), tuple(costs.tolist()))
    align.COMPILED = align._dp is not None
    same = len(set(out.values())) == 1
    whole, band = _cells(args)
    return (
        f"{words:>7,} words: {len(sides[2]):,} windows; cells whole {whole:,}, bands {band:,} "
        f"({whole / band:.1f}x fewer); CPU s whole {best['whole']:.4f}, bands "
        f"{best['banded']:.4f} ({best['whole'] / best['banded']:.1f}x), numpy "
        f"{best['numpy']:.4f}; same ops and costs: {same}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--words", default="10000,30000,100000")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    if align._dp is None:
        raise SystemExit("scoring/_dp.pyx is not built (make ext)")
    for words in map(int, a.words.split(",")):
        print(row(words, a.repeats), flush=True)


if __name__ == "__main__":
    main()
