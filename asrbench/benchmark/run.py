"""The benchmark job: resolve model and dataset, run through a runner, write results.

Results land in `<results>/<model>/<dataset>/`: `hyp.raw.tsv` (what the model wrote),
`failed.tsv`, `timing.tsv`, `run.log` and `summary.json`.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

from asrbench.dataset import load_dataset
from asrbench.fsio import atomic_write_json, atomic_write_text
from asrbench.modelcard import load_model
from asrbench.paths import REPO_ROOT
from asrbench.runners import RunOptions, get_runner, read_tsv_pairs


class BenchmarkError(RuntimeError):
    """A benchmark that could not run; the message says why and what to do."""


def resolve_dataset_dir(dataset: str | Path) -> Path:
    path = Path(dataset)
    if (path / "metadata.tsv").is_file():
        return path.resolve()
    candidate = REPO_ROOT / "datasets" / str(dataset)
    if (candidate / "metadata.tsv").is_file():
        return candidate
    raise BenchmarkError(f"dataset {dataset!r} not found (looked for {candidate}/metadata.tsv)")


_PUNCT = re.compile(r"[^\w\s']")


def _words(text: str) -> list[str]:
    # Placeholder normalisation until the full scorer (scoring/) is wired in.
    return _PUNCT.sub(" ", text.lower()).split()


def _edits(ref: list[str], hyp: list[str]) -> int:
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def run_benchmark(
    model: str | Path,
    dataset: str | Path,
    runner: str = "auto",
    results_root: Path | None = None,
    options: RunOptions | None = None,
) -> dict:
    """Run `model` on `dataset` and return the summary written to summary.json."""
    ds = load_dataset(resolve_dataset_dir(dataset))
    mdl = load_model(model)
    out = (results_root or REPO_ROOT / "results") / mdl.id / ds.id
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run = get_runner(runner)
    start = time.time()
    result = run.run(mdl, ds, work, options=options)
    hyps = read_tsv_pairs(result.hyp_path)
    refs = ds.references()
    errors = sum(_edits(_words(refs[u]), _words(hyps.get(u, ""))) for u in refs)
    n_words = sum(len(_words(t)) for t in refs.values())
    for name in ("hyp.tsv", "timing.tsv", "failed.tsv"):
        src = result.result_dir / name
        if src.exists():
            atomic_write_text(out / (name if name != "hyp.tsv" else "hyp.raw.tsv"),
                              src.read_text(encoding="utf-8"))
    shutil.copy2(result.log_path, out / "run.log")
    summary = {
        "model": mdl.id,
        "dataset": ds.id,
        "dataset_hash": ds.content_hash(),
        "runner": result.runner,
        "model_identity": result.model_identity,
        "n_utts": len(refs),
        "n_hyps": sum(1 for u in refs if u in hyps),
        "ref_words": n_words,
        "errors": errors,
        "wer": errors / n_words if n_words else None,
        "wall_s": round(time.time() - start, 3),
    }
    atomic_write_json(out / "summary.json", summary)
    return summary
