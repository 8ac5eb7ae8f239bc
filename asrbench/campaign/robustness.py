"""ops/robustness as a campaign: models over a perturbation grid, WER/WERD/NWERD.

`plan_grid` checks the request (the normaliser and its base model included) before anything is
derived; `run_planned` runs it through the skeleton (`campaign.base`) and tabulates the WERs
with `perturb.robustness` into a `RobustnessRecord`. `run_grid` does both.

`run_languages` runs the same grid on datasets of different languages (SRB's cross-language
comparison): one campaign per dataset, every request checked before any runs, then one record
holding every dataset's rows, each language's WERD and each pair's difference with bootstrap
CIs (`perturb.robustness.language_disparity`), from the cells' utterances.jsonl.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from asrbench.benchmark.language import plan_language
from asrbench.benchmark.provenance import provenance, utc_now
from asrbench.benchmark.request import JobSpec
from asrbench.campaign.base import CampaignPlan, Derived, Finished, run_campaign
from asrbench.errors import InputError
from asrbench.executors import Executor
from asrbench.perturb.attack_table import attack_rows, companions
from asrbench.perturb.quality import dataset_quality
from asrbench.perturb.robustness import (
    BABBLE_USERS,
    Counts,
    LanguageSample,
    check_normaliser,
    language_disparity,
    tabulate,
)
from asrbench.resolve import resolve_model, resolve_models
from asrbench.results.records import RobustnessRecord
from asrbench.results.summary import session_figures


@dataclass(frozen=True)
class RobustnessOptions:
    """What `ops/robustness` was asked besides the models, dataset and grid."""

    seed: int = 0
    runner: str = "auto"
    jobs: int = 2
    normaliser: str = "dnsmos_ovrl"
    utts: Sequence[str] | int | None = None  # IDs, or N: the seeded sample (--max-utts)
    results_root: Path | None = None
    force_language: bool = False  # run a card on a language it does not list (--force)


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
        runner=opts.runner,
        jobs=opts.jobs,
        results_root=opts.results_root,
        progress=False,
        force_language=opts.force_language,
    )
    runs = list(dict.fromkeys([*models, *([base] if base else [])]))
    campaign = CampaignPlan(
        "robustness",
        dataset,
        runs if models else [],
        companions(specs),  # every attack gets Gaussian noise at its SNR beside it
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
    for m in campaign.models:  # a card without the dataset's language: refused before deriving
        for part in resolve_models(m):  # both models of an ASR+DIARIZER combination
            plan_language(part, campaign.ds, force=opts.force_language)
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
        attacks=_attacks(p, f, conditions, wers),
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
        sessions=_sessions(f),
    )


def _sessions(f: Finished) -> list[dict]:
    """Each long-form cell's session metrics (DER, cpWER...: `session_figures`), clean first
    as the grid ran them; [] for an utterance dataset."""
    return [
        {"model": cell.model, "condition": cell.condition, "metrics": figs}
        for cell, res in f.cells
        if (figs := session_figures(res.summary.session_metrics))
    ]


def _attacks(
    p: RobustnessPlan, f: Finished, conditions: list[str], wers: dict[str, dict[str, float]]
) -> list[dict]:
    """The white-box vs transfer rows of the attack conditions (none: an empty list)."""
    rows = attack_rows(list(p.models), conditions, wers, {}, p.campaign.seed)
    if not rows:
        return rows
    counts: dict[str, dict[str, Counts]] = {m: {} for m in p.models}
    for cell, res in f.cells:
        if cell.model in counts:
            counts[cell.model][cell.condition] = cell_counts(res.out_dir)
    return attack_rows(list(p.models), conditions, wers, counts, p.campaign.seed)


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


def run_languages(
    models: Sequence[str],
    datasets: Sequence[str | Path],
    specs: Sequence[str],
    opts: RobustnessOptions | None = None,
    executor: Executor | None = None,
    progress: bool = True,
) -> RobustnessRecord:
    """The same grid on each dataset (of different languages): every request is checked
    (`plan_grid`) before any is derived or run, then one record of them all, with each
    language's WERD and each pair's difference (bootstrap CIs, resampling utterances within
    each language)."""
    opts = opts or RobustnessOptions()
    if len(set(map(str, datasets))) < 2:
        raise InputError("a cross-language comparison needs two datasets or more (-d A -d B)")
    t0, started = time.monotonic(), utc_now()
    plans = [plan_grid(models, d, specs, opts) for d in datasets]
    records = [run_planned(p, executor, progress) for p in plans]
    merged = merge_languages(plans, records, opts.seed)
    return RobustnessRecord(**{**merged, "provenance": provenance(None, started, t0)})


def cell_counts(folder: Path) -> Counts:
    """Utterance ID -> (errors, reference words) from a result cell's utterances.jsonl."""
    path = Path(folder) / "utterances.jsonl"
    out = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc}); rerun ops/robustness") from None
    for line in lines:
        u = json.loads(line)
        out[u["id"]] = (int(u["sub"]) + int(u["del"]) + int(u["ins"]), int(u["n_ref"]))
    return out


def merge_languages(
    plans: Sequence[RobustnessPlan], records: Sequence[RobustnessRecord], seed: int
) -> dict:
    """The fields of one RobustnessRecord (all but provenance) from each dataset's: rows,
    summary, cells and warnings tagged with their dataset and language, the per-model curves
    keyed `model (dataset)`, and the cross-language tables over the conditions every dataset
    has."""
    tags = [(p.dataset, p.campaign.ds.language) for p in plans]
    shared = [c for c in records[0].conditions if all(c in r.conditions for r in records)]
    out: dict = {"rows": [], "summary": [], "cells": [], "warnings": [], "attacks": []}
    out |= {"aurora_average_accuracy": {}, "severity_curves": {}, "languages": []}
    for (ds, lang), r in zip(tags, records, strict=True):
        for key in ("rows", "summary", "cells", "attacks"):
            out[key] += [{"dataset": ds, "language": lang, **x} for x in getattr(r, key)]
        out["warnings"] += [f"{ds}: {w}" for w in r.warnings]
        out["aurora_average_accuracy"] |= {
            f"{m} ({ds})": v for m, v in r.aurora_average_accuracy.items()
        }
        out["severity_curves"] |= {f"{m} ({ds})": v for m, v in r.severity_curves.items()}
    out["language_disparity"] = []
    for model in plans[0].models:
        samples = [
            LanguageSample(ds, lang, _model_counts(r, model))
            for (ds, lang), r in zip(tags, records, strict=True)
        ]
        per_lang, between = language_disparity(model, samples, shared, seed)
        out["languages"] += per_lang
        out["language_disparity"] += between
    return out | {
        "dataset": "+".join(ds for ds, _ in tags),
        "seed": seed,
        "normaliser": plans[0].normaliser,
        "conditions": shared,
    }


def _model_counts(record: RobustnessRecord, model: str) -> dict[str, Counts]:
    """Condition -> per-utterance counts of `model`, from the record's result cells."""
    return {c["condition"]: cell_counts(c["folder"]) for c in record.cells if c["model"] == model}
