"""Robustness runs: derive each condition's dataset, benchmark each model on it, tabulate.

The model runner lives in `asrbench.benchmark` (another area); this module only calls
`run_benchmark(model=..., dataset=...)` and turns the WERs into WERD/NWERD with `metrics`.
"""

from __future__ import annotations

from typing import Any

from asrbench.perturb import metrics
from asrbench.perturb.derive import _resolve, derive_dataset
from asrbench.perturb.spec import canonical_spec


def run_grid(models: list[str], dataset: str, specs: list[str], seed: int = 0,
             runner: str = "auto", jobs: int = 2,
             normaliser: str = "dnsmos_ovrl") -> dict[str, Any]:
    """Benchmark every model on the clean dataset and on each spec's derived dataset."""
    from asrbench.benchmark import run_benchmark

    conditions = [canonical_spec(s) for s in specs if canonical_spec(s) != "clean"]
    parent = _resolve(dataset)
    derived = {c: derive_dataset(parent, c, seed=seed, jobs=jobs).path for c in conditions}
    quality: dict[str, dict] = {}
    if normaliser not in ("none",) and not normaliser.startswith("model:"):
        from asrbench.perturb.quality import dataset_quality

        quality = {c: dataset_quality(parent, p)["mean"] for c, p in derived.items()}
    wers: dict[str, dict[str, float]] = {}
    for m in list(models) + ([normaliser[6:]] if normaliser.startswith("model:") else []):
        if m in wers:
            continue
        wers[m] = {"clean": run_benchmark(model=m, dataset=parent, runner=runner)["wer"]}
        for c, path in derived.items():
            wers[m][c] = run_benchmark(model=m, dataset=path, runner=runner)["wer"]
    rows: list[dict[str, Any]] = []
    for m in models:
        norm = None
        if normaliser.startswith("model:"):
            base = wers[normaliser[6:]]
            norm = metrics.base_model_normaliser(base["clean"], base)
        elif quality:
            clean_q = {"pesq": 4.64, "stoi": 1.0}.get(normaliser)  # scores of a perfect copy
            if clean_q is None:
                from asrbench.perturb.quality import dataset_quality

                clean_q = dataset_quality(parent, parent)["mean"][normaliser]
            norm = metrics.quality_normaliser(clean_q, {c: q.get(normaliser)
                                                        for c, q in quality.items()})
        for r in metrics.robustness_rows(wers[m]["clean"],
                                         {c: wers[m][c] for c in conditions}, norm):
            rows.append({"model": m, "wer_clean": wers[m]["clean"], **r,
                         **{k: quality.get(r["condition"], {}).get(k)
                            for k in ("pesq", "stoi", "dnsmos_ovrl")}})
    cols = ["model", "condition", "wer_clean", "wer", "werd", "nwerd", "pesq", "stoi",
            "dnsmos_ovrl"]
    summary = [{"model": m, "mean_werd": metrics.mean_werd([r for r in rows if r["model"] == m])}
               for m in models]
    md = (f"Dataset {dataset}, seed {seed}, NWERD normaliser {normaliser}\n\n"
          + metrics.markdown_table(rows, cols) + "\n" + metrics.markdown_table(
              summary, ["model", "mean_werd"]))
    return {"dataset": dataset, "seed": seed, "conditions": conditions, "normaliser": normaliser,
            "rows": rows, "summary": summary, "markdown": md}
