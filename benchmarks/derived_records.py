"""What storing the report's records costs the benchmark: `derive` against one scoring.

`ops/benchmark` writes `ablation.json` (and, for long-form cells, `timeline.json`) when a cell
is written (asrbench/results/derived.py), so that the report renders stored records only. The
ablation scores the cell once per applied step of the ladder; this script measures that cost on
a stored cell, its utterances repeated `--times` times under new IDs (a larger cell of the same
texts), against one scoring of the same texts with the cell's own options (what the benchmark's
`score_s` measures). Nothing is written into the cell: the records go to a temporary folder.

    .venv/bin/python benchmarks/derived_records.py results/sloppy/mini_en [--times 100]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _copy(cell: Path, out: Path, times: int) -> None:
    """The cell's summary.json and utterances.jsonl into `out`, its utterances `times` over."""
    out.mkdir(parents=True)
    shutil.copy(cell / "summary.json", out / "summary.json")
    lines = (cell / "utterances.jsonl").read_text(encoding="utf-8").splitlines()
    with open(out / "utterances.jsonl", "w", encoding="utf-8") as f:  # a scratch copy
        for k in range(times):
            for line in lines:
                rec = json.loads(line)
                rec["id"] = f"{rec['id']}~{k}"
                f.write(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cell", type=Path, help="a stored, scored benchmark cell folder")
    ap.add_argument("--times", type=int, default=100, help="repeat its utterances this often")
    args = ap.parse_args()

    from asrbench.results.derived import derive
    from asrbench.results.store import read_cell, read_utterances
    from asrbench.scorers import get_scorer

    cell = read_cell(args.cell)
    run = cell.run
    assert run is not None and run.dataset_folder, f"{args.cell}: no run.json dataset folder"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "cell"
        _copy(args.cell, work, args.times)
        utts = read_utterances(work / "utterances.jsonl")
        refs = {u["id"]: u.get("ref") or "" for u in utts}
        hyps = {u["id"]: u["hyp"] for u in utts if u.get("hyp") is not None}
        lang = str(cell.summary.scorer.get("lang") or "en")
        opts = {k: v for k, v in run.scorer_options.items() if k != "bootstrap"}
        scorer = get_scorer(lang, {**opts, "bootstrap": 0})
        scorer.score(refs, hyps)  # warm: the scorer's caches as a benchmark run has them
        t = time.perf_counter()
        scorer.score(refs, hyps)
        score_s = time.perf_counter() - t
        meta = dict(run.dataset_meta)
        meta.pop("derived_from", None)
        t = time.perf_counter()
        dataset = (Path(run.dataset_folder), meta)
        written, _ = derive(work, cell.summary, run.scorer_options, dataset)
        derive_s = time.perf_counter() - t
        stages = sum(
            1 for r in json.loads((work / "ablation.json").read_text())["rows"] if r.get("applied")
        )
    print(
        json.dumps(
            {
                "cell": str(args.cell),
                "utterances": len(utts),
                "written": written,
                "stages_scored": stages,
                "score_s": round(score_s, 3),
                "derive_s": round(derive_s, 3),
                "ratio": round(derive_s / score_s, 2) if score_s else None,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
