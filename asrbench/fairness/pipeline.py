"""`run_fairness`: ops/fairness as a campaign (`asrbench.campaign.base`): plan, derive, run
the cells, run every analysis that applies.

Order matters for users: everything that can be wrong with the request (a column that does not
exist, a reference-based analysis on a reference-free dataset, one model where two are needed,
a bad spec, an unknown group) fails before any model runs or any audio is derived. Conditions
are derived by the skeleton (the folders ops/robustness uses for the same condition and
utterances); model runs go through `run_matrix`, so hypotheses already computed for the same
model and audio are reused from the cache and nothing runs twice.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from asrbench.benchmark.request import JobSpec
from asrbench.campaign.base import (
    CampaignCell,
    CampaignPlan,
    Derived,
    Finished,
    run_campaign,
    select_utterances,
)
from asrbench.errors import InputError
from asrbench.fairness import accuracy as acc_mod
from asrbench.fairness import differential as diff_mod
from asrbench.fairness import localiser as loc_mod
from asrbench.fairness.groups import SPEAKER, Grouping, make_grouping, rows_from
from asrbench.fairness.inputs import Cell, at_rate, read_cell, tokens
from asrbench.fairness.report import assemble, localiser_rows
from asrbench.fairness.robustness import Condition, robustness_disparity
from asrbench.fairness.tokens import Vocab, edit_distance
from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.settings import settings
from scoring.metrics import group_rates

if TYPE_CHECKING:
    from asrbench.results.records import FairnessRecord

ANALYSES = ("accuracy", "lwerr", "robustness", "metamorphic", "differential", "localiser")
REFERENCE_BASED = ("accuracy", "lwerr", "robustness")
NEED_GRID = ("robustness", "metamorphic", "differential", "localiser")


@dataclass
class FairnessOptions:
    """What `ops/fairness` was asked; defaults are the documented ones."""

    by: str
    analyses: Sequence[str] | None = None  # None: every analysis that applies
    metric: str | None = None  # "ter" or "mter_utt" (None: ter, where references exist)
    specs: Sequence[str] = ()
    grid_label: str | None = None
    tau: float = 0.1
    omega: float = 0.0
    min_count: int = 3
    base: str | None = None
    compare: Sequence[str] = ()
    cluster: str = SPEAKER
    min_speakers: int = 3
    min_utts: int = 20
    reps: int = 1000
    perms: int = 10000
    level: float = 0.95
    seed: int = 0
    utts: Sequence[str] | int | None = None  # IDs, or N: the seeded sample (--max-utts)
    per_speaker: int | None = None
    runner: str = "auto"
    jobs: int = 2
    resample: str = "never"  # "auto": give a model a copy at its card's rate
    force_language: bool = False  # run cards that do not list the dataset's language (marked)

    def to_dict(self) -> dict[str, Any]:
        d = {
            k: (list(v) if isinstance(v, (list, tuple)) else v)
            for k, v in self.__dict__.items()
            if k not in ("runner", "jobs")
        }
        if not self.force_language:  # the default: fairness.json keeps its bytes
            del d["force_language"]
        return d


class _Resampling(TypedDict):
    """The bootstrap and permutation settings every analysis takes as keywords."""

    reps: int
    perms: int
    level: float
    seed: int


@dataclass
class Plan:
    """The checked request: dataset, selection, grouping, analyses, conditions."""

    dataset: Any
    ids: list[str]
    grouping: Grouping
    analyses: list[str]
    conditions: list[Condition]
    transformations: dict[str, list[tuple[int | None, str]]]
    metric: str
    base: int | None
    compares: list[int]
    notes: list[str] = field(default_factory=list)
    model_ids: list[str] = field(default_factory=list)  # of the models given, in order
    campaign: CampaignPlan | None = None  # what the skeleton derives and runs


def _transformations(specs: Sequence[str]) -> tuple[list[Condition], dict]:
    from asrbench.perturb.spec import canonical_spec, parse_spec

    conds: list[Condition] = [Condition("clean", "clean", 0)]
    trans: dict[str, list[tuple[int | None, str]]] = {}
    for spec in dict.fromkeys(canonical_spec(s) for s in specs):
        if spec == "clean":
            continue
        steps = parse_spec(spec)
        if len(steps) == 1 and steps[0].severity is not None:
            name, sev = steps[0].name, steps[0].severity
        else:
            name, sev = spec, None
        conds.append(Condition(spec, name, sev))
        trans.setdefault(name, []).append((sev, spec))
    for points in trans.values():
        points.sort(key=lambda p: (p[0] is None, p[0] or 0))
    return conds, trans


def _select(ds: Any, opts: FairnessOptions) -> list[str]:
    wanted = set(select_utterances(ds, opts.utts, opts.seed))
    utts = [u for u in ds.utterances if u.id in wanted]
    if opts.per_speaker is not None:
        if SPEAKER not in ds.columns:
            raise InputError(f"--per-speaker: dataset {ds.id} has no SPEAKER column")
        # N evenly spaced utterances of each speaker, in dataset order: deterministic, and
        # spread over a speaker's recordings (FSDD lists each speaker's digits in order).
        by_spk: dict[str, list[int]] = {}
        for k, u in enumerate(utts):
            by_spk.setdefault(u.extra.get(SPEAKER, ""), []).append(k)
        keep: set[int] = set()
        for idx in by_spk.values():
            n = min(opts.per_speaker, len(idx))
            keep.update(idx[int(j)] for j in np.floor(np.arange(n) * len(idx) / n))
        utts = [u for k, u in enumerate(utts) if k in keep]
    if not utts:
        raise InputError(f"no utterance of dataset {ds.id} is selected")
    return [u.id for u in utts]


def model_ids(models: Sequence[str]) -> list[str]:
    """The IDs of the models given with -m (an ID, a folder or ID@VERSION): what reports name
    them by and what output folders are made of; the same model twice is an input error."""
    ids = [resolve_model(m).id for m in models]
    seen: dict[str, str] = {}
    for m, i in zip(models, ids, strict=True):
        if i in seen:
            raise InputError(f"model {i} is given twice with -m ({seen[i]!r} and {m!r})")
        seen[i] = m
    return ids


def _check_options(opts: FairnessOptions) -> None:
    """The options that need no dataset: metric, analyses, level, replicates, jobs."""
    if opts.metric not in (None, *group_rates()):
        raise InputError(f"--metric {opts.metric!r}: use {' or '.join(group_rates())}")
    unknown = [a for a in (opts.analyses or ()) if a not in ANALYSES]
    if unknown:
        raise InputError(
            f"--analyses: unknown {', '.join(unknown)}; choose from {', '.join(ANALYSES)}"
        )
    if not 0 < opts.level < 1:
        raise InputError(f"--level {opts.level}: must be between 0 and 1")
    if opts.reps < 1 or opts.perms < 1:
        raise InputError("--bootstrap and --permutations must be positive")
    if opts.jobs < 1:
        raise InputError(f"--jobs {opts.jobs}: give at least 1")


def plan(
    models: Sequence[str],
    dataset: str | Path,
    opts: FairnessOptions,
    results_root: Path | None = None,
) -> Plan:
    """Check everything about the request; raise InputError naming what is wrong (nothing is
    derived or run before this returns)."""
    if not models:
        raise InputError("give at least one model with -m")
    _check_options(opts)
    ds = resolve_dataset(dataset, check_audio=False)
    ref_free = ds.reference_free
    ids = _select(ds, opts)
    wanted = set(ids)
    selected = [u for u in ds.utterances if u.id in wanted]
    rows = rows_from(selected, opts.by, ds.id, ds.columns, opts.cluster)
    grouping = make_grouping(rows, opts.by, ds.id, opts.min_speakers, opts.min_utts)
    conditions, trans = _transformations(opts.specs)
    has_grid = len(conditions) > 1
    notes: list[str] = []
    if opts.analyses:
        analyses = list(dict.fromkeys(opts.analyses))
        bad = [a for a in analyses if a in REFERENCE_BASED]
        if ref_free and bad:
            raise InputError(
                f"dataset {ds.id} is reference-free (no TEXT), but "
                f"{' and '.join(bad)} need{'s' if len(bad) == 1 else ''} "
                "references; use metamorphic, differential or localiser"
            )
        if "differential" in analyses and len(models) < 2:
            raise InputError(
                "differential testing compares two recognisers: give two models "
                "(-m A -m B); with one model use --analyses metamorphic (its "
                "output on the original vs on the transformed speech)"
            )
        need = [a for a in analyses if a in NEED_GRID]
        if need and not has_grid:
            raise InputError(f"{', '.join(need)} need transformations: give --grid or -t")
    else:
        analyses = [] if ref_free else ["accuracy", "lwerr"]
        if has_grid:
            analyses += ([] if ref_free else ["robustness"]) + ["metamorphic"]
            analyses += ["differential"] if len(models) >= 2 else []
            analyses += ["localiser"]
        if not analyses:
            raise InputError(
                f"dataset {ds.id} is reference-free (no TEXT): per-group error "
                "rates need references; give transformations (--grid or -t) for "
                "the reference-free differential testing and fault localiser"
            )
    if ref_free and opts.metric is not None:
        raise InputError(
            f"--metric {opts.metric}: dataset {ds.id} is reference-free (no "
            "TEXT), so no error rate can be computed; leave --metric out"
        )
    base = grouping.index(opts.base, "--base") if opts.base is not None else None
    compares = [grouping.index(c, "--compare") for c in opts.compare]
    if base is not None and base in compares:
        raise InputError(f"--base {opts.base} is also given as --compare")
    if "lwerr" in analyses and base is None:
        if opts.by == "GENDER" and {"F", "M"} <= set(grouping.names):
            base = grouping.index("M")
            compares = compares or [grouping.index("F")]
        elif opts.analyses:
            raise InputError(
                f"LWERR compares two groups: give --base (and --compare) among "
                f"{opts.by} values {', '.join(grouping.names)}"
            )
        else:
            analyses.remove("lwerr")
            notes.append(
                f"LWERR skipped: give --base and --compare (values of {opts.by}: "
                f"{', '.join(grouping.names)}); by default it is F vs M on GENDER"
            )
    if base is not None and not compares:
        compares = [g for g in range(grouping.n_groups) if g != base]
    names = model_ids(models)  # an unknown or repeated model fails here, before anything runs
    job = JobSpec(
        runner=opts.runner,
        jobs=opts.jobs,
        results_root=results_root,
        progress=False,
        force_language=opts.force_language,
    )
    campaign = CampaignPlan("fairness", ds, models, opts.specs, ids, opts.seed, job)
    return Plan(
        ds,
        ids,
        grouping,
        analyses,
        conditions,
        trans,
        opts.metric or "ter",
        base,
        compares,
        notes,
        names,
        campaign,
    )


def _cells_at_rate(opts: FairnessOptions) -> Any:
    """The skeleton's grid of cells, with `--resample auto`: a model whose card declares another
    sample rate gets a copy of each condition's dataset at its rate."""

    def cells(plan: CampaignPlan, derived: Derived) -> list[CampaignCell]:
        out = []
        for ref in plan.models:
            rate = resolve_model(ref).card.sample_rate
            for cond, path in derived.paths.items():
                src = at_rate(path, rate, settings().cache) if opts.resample == "auto" else path
                out.append(CampaignCell(ref, cond, Path(src)))
        return out

    return cells


def _read_cells(
    f: Finished, names: dict[str, str]
) -> tuple[dict[tuple[str, str], Cell], list[dict]]:
    """The stored cells the analyses read, keyed by model ID (`names` maps each reference given
    to its ID), and fairness.json's `inputs`."""
    cells: dict[tuple[str, str], Cell] = {}
    inputs = []
    for cell, res in f.cells:
        m, cond = names.get(cell.model, cell.model), cell.condition
        cells[(m, cond)] = read_cell(m, cond, res.out_dir)
        s = res.summary
        resampled = cell.dataset != f.derived.paths[cond]
        inputs.append(
            {
                "model": m,
                "condition": cond,
                "dataset": s.dataset,
                "dataset_hash": s.dataset_hash,
                "result_dir": str(res.out_dir),
                "result_key": s.result_key,
                "hyps_key": s.hyps_key,
                "model_identity": s.model_identity,
                "runner": s.runner,
                "cache_hit": res.cache_hit,
                "n_failed": s.n_failed,
                "resampled_to": resolve_model(cell.model).card.sample_rate if resampled else None,
            }
        )
    return cells, inputs


def analyse(
    models: Sequence[str], p: Plan, cells: dict[tuple[str, str], Cell], opts: FairnessOptions
) -> dict[str, Any]:
    """Every planned analysis from the cells (no model runs here: tests call this directly)."""
    g = p.grouping
    ids = g.ids
    lang = p.dataset.language  # the tag as written, as the cells are scored
    out: dict[str, Any] = {
        k: []
        for k in ("accuracy", "lwerr", "robustness", "metamorphic", "differential", "localiser")
    }
    warnings = list(g.warnings)
    for (m, c), cell in cells.items():
        lost = cell.missing(ids)
        if lost:
            raise InputError(
                f"result {cell.path} ({m}, {c}) lacks {len(lost)} selected "
                f"utterance(s) ({', '.join(lost[:3])}); rerun ops/fairness"
            )
    unit = "word"
    common = _Resampling(reps=opts.reps, perms=opts.perms, level=opts.level, seed=opts.seed)
    for m in models:
        clean = cells[(m, "clean")]
        if "accuracy" in p.analyses or "lwerr" in p.analyses:
            unit = clean.summary.metrics.unit if clean.summary.metrics else "word"
            counts = clean.counts(ids)
            section, fit = acc_mod.group_accuracy(
                g, counts, unit=unit, metric=p.metric, name=f"accuracy/{m}", **common
            )
            if "accuracy" in p.analyses:
                out["accuracy"].append({"model": m, **section})
            if "lwerr" in p.analyses and p.base is not None:  # the plan keeps LWERR with a base
                out["lwerr"].append(
                    {"model": m, "rows": acc_mod.lwerr(fit, p.base, p.compares, name=f"lwerr/{m}")}
                )
        if "robustness" in p.analyses:
            err, den = [], []
            for cond in p.conditions:
                k = cells[(m, cond.spec)].counts(ids)
                err.append(k["sub"] + k["ins"] + k["del"])
                den.append(acc_mod.unit_den(p.metric, k))
            base = p.base if p.base is not None else _best_clean(g, err[0], den[0])
            compares = p.compares or [k for k in range(g.n_groups) if k != base]
            out["robustness"].append(
                {
                    "model": m,
                    "metric": p.metric,
                    **robustness_disparity(
                        g,
                        p.conditions,
                        np.stack(err, 1),
                        np.stack(den, 1),
                        base,
                        compares,
                        name=f"robustness/{m}",
                        **common,
                    ),
                }
            )
    grid_analyses = {"metamorphic", "differential", "localiser"} & set(p.analyses)
    if grid_analyses:
        vocab = Vocab()
        specs = [c.spec for c in p.conditions]
        tables = {
            m: dict(
                zip(specs, tokens([cells[(m, s)] for s in specs], ids, vocab, lang), strict=True)
            )
            for m in models
        }
        ok = np.ones(len(ids), dtype=bool)
        for m in models:
            for t in tables[m].values():
                ok &= t.present
        if not ok.all():
            bad = [i for i, k in zip(ids, ok, strict=True) if not k]
            warnings.append(
                f"{len(bad)} utterance(s) failed in at least one model or "
                f"condition ({', '.join(bad[:3])}): left out of the differential "
                "tests and the localiser"
            )
        gk = g.restricted(ok)
        tk = {m: {s: t.take(ok) for s, t in tables[m].items()} for m in models}
        if "metamorphic" in p.analyses:
            for m in models:
                dist, longer = {}, {}
                for s in specs[1:]:
                    dist[s] = edit_distance(tk[m]["clean"], tk[m][s])
                    longer[s] = np.maximum(tk[m]["clean"].lengths, tk[m][s].lengths)
                out["metamorphic"].append(
                    {
                        "model": m,
                        "kind": "single-recogniser",
                        **(
                            diff_mod.differential(
                                gk,
                                p.transformations,
                                dist,
                                longer,
                                None,
                                tau=opts.tau,
                                name=f"metamorphic/{m}",
                                **common,
                            )
                        ),
                    }
                )
        if "differential" in p.analyses:
            for i, a in enumerate(models):
                for b in models[i + 1 :]:
                    dist = {s: edit_distance(tk[a][s], tk[b][s]) for s in specs}
                    longer = {s: np.maximum(tk[a][s].lengths, tk[b][s].lengths) for s in specs}
                    out["differential"].append(
                        {
                            "models": [a, b],
                            "kind": "two-recognisers",
                            **diff_mod.differential(
                                gk,
                                p.transformations,
                                dist,
                                longer,
                                "clean",
                                tau=opts.tau,
                                name=f"differential/{a}/{b}",
                                **common,
                            ),
                        }
                    )
        if "localiser" in p.analyses:
            for m in models:
                for tname, points in p.transformations.items():
                    sevs = [s for s, _ in points]
                    trans = [tk[m][c] for _, c in points]
                    rows = loc_mod.localise(
                        gk, tk[m]["clean"], trans, sevs, vocab.words, opts.omega, opts.min_count
                    )
                    entry = {
                        "model": m,
                        "transformation": tname,
                        "severities": sevs,
                        "omega": opts.omega,
                        "min_count": opts.min_count,
                        "rows": rows,
                        "validation": None,
                    }
                    if not p.dataset.reference_free:
                        ops = [cells[(m, c)].ref_ops(gk.ids, vocab) for _, c in points]
                        entry["validation"] = loc_mod.validate(
                            gk,
                            tk[m]["clean"],
                            trans,
                            sevs,
                            vocab.words,
                            ops,
                            opts.omega,
                            opts.min_count,
                            opts.reps,
                            opts.level,
                            opts.seed,
                        )
                    out["localiser"].append(entry)
    out["warnings"] = warnings
    return out


def _best_clean(g: Grouping, err: np.ndarray, den: np.ndarray) -> int:
    """The group with the lowest clean rate among those not flagged small (all if none)."""
    rates = []
    for k in range(g.n_groups):
        m = g.group == k
        rates.append(err[m].sum() / den[m].sum() if den[m].sum() else np.inf)
    pool = [k for k in range(g.n_groups) if not g.info[k]["small"]] or list(range(g.n_groups))
    return min(pool, key=lambda k: (rates[k], g.names[k]))


def run_fairness(
    models: Sequence[str],
    dataset: str | Path,
    opts: FairnessOptions,
    results_root: Path | None = None,
    progress: bool = True,
    executor: Any = None,
) -> tuple[Plan, FairnessRecord, dict[str, list[dict]]]:
    """Plan, derive and run (cached) through the campaign skeleton, analyse: the plan, the
    fairness.json record and the localiser's per-word rows by model (written by `report.write`).
    `executor` says where the shards run (default: this machine); a cluster is checked
    (preflight) before any audio is derived."""
    p = plan(models, dataset, opts, results_root)
    for n in p.notes:
        print(f"fairness: note: {n}", file=sys.stderr)
    names = dict(zip(models, p.model_ids, strict=True))
    assert p.campaign is not None

    def finish(f: Finished) -> tuple[FairnessRecord, dict[str, list[dict]]]:
        cells, inputs = _read_cells(f, names)
        ids = [names[m] for m in models]
        results = analyse(ids, p, cells, opts)
        record = assemble(ids, p, opts, results, inputs, f.provenance())
        return record, localiser_rows(results["localiser"])

    record, rows = run_campaign(
        p.campaign, finish, executor=executor, cells=_cells_at_rate(opts), progress=progress
    )
    return p, record, rows
