"""ops/robustness as a campaign: models over a perturbation grid, WER/WERD/NWERD.

`plan_grid` checks the request (the normaliser and its base model included) before anything is
derived; `run_planned` runs it through the skeleton (`campaign.base`) and tabulates the WERs
with `perturb.robustness` into a `RobustnessRecord`. `run_grid` does both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from asrbench.benchmark.request import JobSpec
from asrbench.campaign.base import CampaignPlan, Derived, Finished, run_campaign
from asrbench.errors import InputError
from asrbench.executors import Executor
from asrbench.perturb.quality import dataset_quality
from asrbench.perturb.robustness import BABBLE_USERS, check_normaliser, tabulate
from asrbench.resolve import resolve_model
from asrbench.results.records import RobustnessRecord


@dataclass(frozen=True)
class RobustnessOptions:
    """What `ops/robustness` was asked besides the models, dataset and grid."""

    seed: int = 0
    runner: str = "auto"
    jobs: int = 2
    normaliser: str = "dnsmos_ovrl"
    utts: Sequence[str] | int | None = None  # IDs, or N for the first N utterances
    results_root: Path | None = None


@dataclass(frozen=True)
class RobustnessPlan:
    """A checked robustness request: the campaign plan (whose models include the normaliser's
    base model) and what the tables need."""

    campaign: CampaignPlan
    dataset: str  # as given: the record names it so
    models: tuple[str, ...]  # the models tabulated (the base model only when also given)
    normaliser: str
    base: str | None


def plan_grid(
    models: Sequence[str], dataset: str | Path, specs: Sequence[str], opts: RobustnessOptions
) -> RobustnessPlan:
    """Check everything about the request; InputError names what is wrong, before anything is
    derived or run. Every condition is derived (the clean one too, so every condition's audio
    went through the same writer); one that cannot be made is skipped with a warning."""
    base = check_normaliser(opts.normaliser)
    if base:
        try:
            resolve_model(base)
        except InputError as exc:
            raise InputError(f"--normaliser {opts.normaliser}: {exc}") from None
    job = JobSpec(
        runner=opts.runner, jobs=opts.jobs, results_root=opts.results_root, progress=False
    )
    runs = list(dict.fromkeys([*models, *([base] if base else [])]))
    campaign = CampaignPlan(
        "robustness",
        dataset,
        runs if models else [],
        specs,
        ids=opts.utts,
        seed=opts.seed,
        job=job,
        skip_underivable=True,
    )
    if campaign.ds.reference_free:
        raise InputError(
            f"dataset {campaign.ds.id} is reference-free (no TEXT): WERD needs references; "
            "for reference-free robustness use ops/fairness --analyses metamorphic"
        )
    return RobustnessPlan(campaign, str(dataset), tuple(models), opts.normaliser, base)


def _warnings(conditions: Sequence[str], derived: Derived) -> list[str]:
    """Skipped conditions, and babble taken from the shipped fallback pool, in grid order."""
    out = []
    for c in conditions:
        if c in derived.skipped:
            out.append(f"condition {c} skipped: {derived.skipped[c]}")
        elif any(n in c for n in BABBLE_USERS):
            meta = yaml.safe_load((derived.paths[c] / "dataset.yaml").read_text())
            pool = meta["derived_from"]["babble_pool"]
            if "fallback" in pool:
                out.append(f"condition {c}: babble from the {pool}")
    return out


def _analyse(p: RobustnessPlan, f: Finished) -> RobustnessRecord:
    derived = f.derived
    conditions = [c for c in p.campaign.conditions[1:] if c in derived.paths]
    quality: dict[str, dict] = {}
    if p.normaliser != "none" and not p.base:
        parent = p.campaign.ds.root
        quality = {c: dataset_quality(parent, path)["mean"] for c, path in derived.paths.items()}
    wers: dict[str, dict[str, float]] = {m: {} for m in p.campaign.models}
    for cell, res in f.cells:
        ter = res.metrics.ter if res.metrics else None  # reference-free: refused by plan_grid
        if ter is None:
            raise InputError(
                f"{cell.model} on {cell.condition}: no reference words in the selection, so no "
                "WER; choose utterances with references (--utts)"
            )
        wers[cell.model][cell.condition] = ter
    return RobustnessRecord(
        dataset=p.dataset,
        seed=p.campaign.seed,
        normaliser=p.normaliser,
        conditions=conditions,
        **tabulate(list(p.models), conditions, wers, quality, p.normaliser, p.base),
        warnings=_warnings(p.campaign.conditions[1:], derived),
        cells=[
            {
                "model": cell.model,
                "condition": cell.condition,
                "result_key": res.summary.result_key,
                "folder": str(res.out_dir),
            }
            for cell, res in f.cells
        ],
        provenance=f.provenance(),
    )


def run_planned(
    p: RobustnessPlan, executor: Executor | None = None, progress: bool = True
) -> RobustnessRecord:
    """Run a checked request: derive, benchmark every model on every condition, tabulate.

    `executor` says where the model cells' shards run (default: this machine); it is checked
    (preflight) before anything is derived. One progress line covers the derivation, then one
    every model x condition cell."""
    return run_campaign(p.campaign, lambda f: _analyse(p, f), executor=executor, progress=progress)


def run_grid(
    models: Sequence[str],
    dataset: str | Path,
    specs: Sequence[str],
    opts: RobustnessOptions | None = None,
    executor: Executor | None = None,
    progress: bool = True,
) -> RobustnessRecord:
    """Benchmark every model on the clean condition and on each spec's derived dataset
    (`plan_grid`, then `run_planned`)."""
    plan = plan_grid(models, dataset, specs, opts or RobustnessOptions())
    return run_planned(plan, executor, progress)
