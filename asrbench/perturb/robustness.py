"""Robustness runs: derive each condition's dataset, benchmark each model on it, tabulate.

The model runner lives in `asrbench.benchmark` (another area); this module only calls
`run_benchmark(model=..., dataset=...)` (or, for an executor that keeps many cells in flight,
such as Ray, `run_matrix`) and turns the WERs into WERD/NWERD with `metrics`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from asrbench.errors import InputError
from asrbench.perturb import metrics
from asrbench.perturb.derive import derive_dataset
from asrbench.perturb.spec import canonical_spec, parse_spec
from asrbench.resolve import resolve_dir, resolve_model

if TYPE_CHECKING:
    from asrbench.executors import Executor

# Perturbations that mix in other talkers (the babble pool): named so a fallback is reported.
BABBLE_USERS = ("crosstalk", "babble")


def check_request(models: list[str], normaliser: str) -> None:
    """What `ops/robustness` checks before anything is derived or run, besides what `run_grid`
    checks itself: every model, and the normaliser's base model, resolve."""
    base = check_normaliser(normaliser)
    for m in models:
        resolve_model(m)
    if base:
        try:
            resolve_model(base)
        except InputError as exc:
            raise InputError(f"--normaliser {normaliser}: {exc}") from None


def check_normaliser(normaliser: str) -> str | None:
    """The NWERD normaliser's form: a quality metric, `none`, or `model:ID` (the ID is
    returned, None otherwise)."""
    from asrbench.perturb.quality import METRICS

    if normaliser.startswith("model:"):
        base = normaliser[6:]
        if not base:
            raise InputError(
                "--normaliser model: give the base model's ID, e.g. model:whisper_tiny_en"
            )
        return base
    if normaliser != "none" and normaliser not in METRICS:
        raise InputError(
            f"--normaliser {normaliser!r}: unknown; use one of "
            f"{', '.join(METRICS)}, model:ID or none"
        )
    return None


def _selected(ds: Any, utt_ids: list[str] | None) -> list[Any]:
    if utt_ids is None:
        return list(ds.utterances)
    known = {u.id for u in ds.utterances}
    unknown = [i for i in utt_ids if i not in known]
    if unknown:
        raise InputError(
            f"--utts: not in dataset {ds.id}: {', '.join(unknown[:5])}"
            f"{' ...' if len(unknown) > 5 else ''}"
        )
    wanted = set(utt_ids)
    return [u for u in ds.utterances if u.id in wanted]


def run_grid(
    models: list[str],
    dataset: str,
    specs: list[str],
    seed: int = 0,
    runner: str = "auto",
    jobs: int = 2,
    normaliser: str = "dnsmos_ovrl",
    utt_ids: list[str] | None = None,
    results_root: Path | None = None,
    progress: bool = True,
    executor: Executor | None = None,
) -> dict[str, Any]:
    """Benchmark every model on the clean condition and on each spec's derived dataset.

    The clean condition is derived too (identity spec), so a subset run (`utt_ids`) compares
    the same utterances everywhere and every condition's audio went through the same writer.
    A condition whose perturbation cannot be made (a missing noise folder, say) is skipped with
    a warning kept in the report; the rest of the grid runs. One progress line covers the
    grid: derivation, then every model x condition cell. `executor` says where the model
    cells' shards run (default: this machine); a cluster executor is checked (preflight)
    before anything is derived, and its cells run concurrently.
    """
    from asrbench.benchmark.progress import CampaignProgress
    from asrbench.benchmark.run import preflight, run_cells
    from asrbench.dataset import load_dataset
    from asrbench.executors import LocalExecutor
    from asrbench.perturb.dsp import PerturbError

    executor = executor or LocalExecutor()
    conditions = [c for c in dict.fromkeys(canonical_spec(s) for s in specs) if c != "clean"]
    parent = resolve_dir("dataset", dataset)
    ds = load_dataset(parent, check_audio=False)
    utts = _selected(ds, utt_ids)
    audio_s = sum(u.duration for u in utts)
    base = check_normaliser(normaliser)
    runs = list(dict.fromkeys([*models, *([base] if base else [])]))
    if jobs < 1:
        raise InputError(f"--jobs {jobs}: give at least 1")
    # The runner is made and a cluster is checked before anything is derived or run (the
    # CLI resolves every model first: check_request).
    preflight(executor, runs, runner)
    n_cells = len(conditions) + 1
    warnings: list[str] = []
    derived: dict[str, Path] = {}
    with CampaignProgress(
        f"robustness {ds.id}: derive",
        n_cells,
        n_cells * len(utts),
        n_cells * audio_s,
        enabled=progress,
    ) as prog:
        for c in ["clean", *conditions]:
            prog.start_cell(c)
            try:
                r = derive_dataset(parent, c, seed=seed, jobs=jobs, utt_ids=utt_ids)
            except PerturbError as exc:
                if c == "clean":
                    raise
                warnings.append(f"condition {c} skipped: {exc}")
                print(f"robustness: warning: condition {c} skipped: {exc}", file=sys.stderr)
            else:
                derived[c] = r.path
                pool = yaml.safe_load((r.path / "dataset.yaml").read_text())["derived_from"][
                    "babble_pool"
                ]
                if "fallback" in pool and any(n in c for n in BABBLE_USERS):
                    warnings.append(f"condition {c}: babble from the {pool}")
            prog.cell_done(len(utts), audio_s)
    conditions = [c for c in conditions if c in derived]
    quality: dict[str, dict] = {}
    if normaliser != "none" and not normaliser.startswith("model:"):
        from asrbench.perturb.quality import dataset_quality

        quality = {c: dataset_quality(parent, p)["mean"] for c, p in derived.items()}
    wers: dict[str, dict[str, float]] = {m: {} for m in runs}
    cells = [(m, c, path) for m in runs for c, path in derived.items()]
    with CampaignProgress(
        f"robustness {ds.id}",
        len(cells),
        len(cells) * len(utts),
        len(cells) * audio_s,
        enabled=progress,
    ) as prog:
        results = run_cells(
            [(m, path) for m, _, path in cells],
            executor,
            on_start=lambda i: prog.start_cell(f"{cells[i][0]} x {cells[i][1]}"),
            on_done=lambda i: prog.cell_done(len(utts), audio_s),
            runner=runner,
            jobs=jobs,
            results_root=results_root,
            progress=False,
        )
        for (m, c, _), cell in zip(cells, results, strict=True):
            wers[m][c] = cell.metrics.ter
    rows: list[dict[str, Any]] = []
    for m in models:
        norm = None
        if base:
            norm = metrics.base_model_normaliser(wers[base]["clean"], wers[base])
        elif quality:
            norm = metrics.quality_normaliser(
                quality["clean"][normaliser], {c: q.get(normaliser) for c, q in quality.items()}
            )
        for r in metrics.robustness_rows(
            wers[m]["clean"], {c: wers[m][c] for c in conditions}, norm
        ):
            rows.append(
                {
                    "model": m,
                    "wer_clean": wers[m]["clean"],
                    **r,
                    **{
                        k: quality.get(r["condition"], {}).get(k)
                        for k in ("pesq", "stoi", "dnsmos_ovrl")
                    },
                }
            )
    for r in rows:
        step = parse_spec(r["condition"])
        r["perturbation"] = "+".join(s.name for s in step)
        r["severity"] = step[0].severity if len(step) == 1 else None
    aurora = {}
    for m in models:
        keyed = {}
        for c in conditions:
            s = parse_spec(c)[0]
            if s.name == "aurora" and s.params["snr"] != "clean":
                keyed[(s.params["set"], s.params["noise"], float(s.params["snr"]))] = wers[m][c]
        aurora[m] = metrics.aurora_average_accuracy(keyed)
    cols = [
        "model",
        "condition",
        "wer_clean",
        "wer",
        "werd",
        "nwerd",
        "pesq",
        "stoi",
        "dnsmos_ovrl",
    ]
    summary = [
        {"model": m, "mean_werd": metrics.mean_werd([r for r in rows if r["model"] == m])}
        for m in models
    ]
    md = (
        f"Dataset {dataset}, seed {seed}, NWERD normaliser {normaliser}\n\n"
        + metrics.markdown_table(rows, cols)
        + "\n"
        + metrics.markdown_table(summary, ["model", "mean_werd"])
    )
    if any(aurora.values()):
        md += "\nAurora-2 average word accuracy (%), 0-20 dB:\n\n" + metrics.markdown_table(
            [{"model": m, **{f"set {k}": v for k, v in a.items()}} for m, a in aurora.items()],
            ["model", *sorted({f"set {k}" for a in aurora.values() for k in a})],
        )
    if warnings:
        md += "\nWarnings:\n\n" + "".join(f"- {w}\n" for w in warnings)
    return {
        "dataset": dataset,
        "seed": seed,
        "conditions": conditions,
        "normaliser": normaliser,
        "rows": rows,
        "summary": summary,
        "aurora_average_accuracy": aurora,
        "severity_curves": metrics.severity_curves(rows),
        "warnings": warnings,
        "markdown": md,
    }
