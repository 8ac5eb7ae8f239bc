"""The campaign skeleton: models run over derived datasets, analysed into one typed record.

A campaign (ops/robustness, ops/fairness; next long-form, streaming and adversarial runs) is

    plan -> preflight -> derive -> run cells -> analyse -> write

The skeleton owns every step but two: the campaign checks its own options before it plans, and
turns the finished cells into its record when it analyses. The whole contract:

    plan = CampaignPlan(name="robustness", dataset=..., models=[...], specs=[...], ids=...,
                        seed=0, job=JobSpec(...), skip_underivable=True)
        # Planning is checking: the dataset, the selection, every condition's spec (kept in
        # canonical form, "clean" first), every model (resolved) and the job options. A campaign
        # checks its own options (robustness's --normaliser, fairness's --by...) before this.
        # When planning raises InputError nothing has been derived, run or written.
    record = run_campaign(plan, analyse, executor=..., cells=..., progress=True)
        # preflight: `benchmark.run.preflight` once for every model, before any audio is derived
        #   (the runner can be made; a cluster offers every model's needs);
        # derive: `derive(plan)`, each condition's dataset through the one derivation
        #   (`perturb.derive.derive_dataset`: one audio cache, one folder name per dataset x
        #   spec x seed x selection), so campaigns asking for the same condition on the same
        #   utterances share one folder; the clean condition is the dataset itself when it is the
        #   only condition and every utterance is selected;
        # run: every `CampaignCell` (by default each model on each derived condition; `cells`
        #   may map them, as fairness's --resample does) through `benchmark.run.run_matrix`;
        # analyse: the campaign's callback, `analyse(Finished) -> its record`.
        # One progress line per phase ("<name> <dataset>: derive", then "<name> <dataset>").
    write_outputs(target, {"robustness.json": record, "robustness.md": text})
        # the record and its readable views in one staged folder, moved into place whole.

Nothing here knows a campaign's analyses or its record's shape.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from asrbench.benchmark.progress import CampaignProgress
from asrbench.benchmark.provenance import provenance, utc_now
from asrbench.benchmark.request import JobSpec
from asrbench.benchmark.run import CellResult, preflight, run_matrix
from asrbench.dataset import Dataset, sample_utterances
from asrbench.errors import InputError
from asrbench.executors import Executor, LocalExecutor
from asrbench.fsio import atomic_write_text, replace_dir, stage_dir
from asrbench.perturb.derive import derive_dataset
from asrbench.perturb.dsp import PerturbError
from asrbench.perturb.spec import canonical_spec
from asrbench.resolve import model_name, resolve_dataset
from asrbench.results.records import Record, write_record

if TYPE_CHECKING:
    from asrbench.results.records import Provenance

R = TypeVar("R")


def select_utterances(ds: Dataset, utts: Sequence[str] | int | None, seed: int = 0) -> list[str]:
    """The selected utterance IDs in dataset order: every one (None), the seeded sample of N
    that `ops/benchmark --max-utts N --seed S` takes (the one sampler; until 2026-11-29 a
    campaign took the first N), or the IDs given (an ID not in the dataset is an input error)."""
    if utts is None or isinstance(utts, int):
        return [u.id for u in sample_utterances(ds.utterances, utts, seed)]
    known = {u.id for u in ds.utterances}
    unknown = [i for i in utts if i not in known]
    if unknown:
        raise InputError(
            f"--utts: not in dataset {ds.id}: {', '.join(unknown[:5])}"
            f"{' ...' if len(unknown) > 5 else ''}"
        )
    wanted = set(utts)
    return [u.id for u in ds.utterances if u.id in wanted]


def conditions_of(specs: Sequence[str]) -> tuple[str, ...]:
    """The clean condition, then every other spec once, canonical (SpecError for a bad one)."""
    canon = dict.fromkeys(canonical_spec(s) for s in specs)
    return ("clean", *(c for c in canon if c != "clean"))


@dataclass(frozen=True)
class CampaignPlan:
    """A checked campaign request: made only by checking it (see the module docstring)."""

    name: str  # "robustness", "fairness": progress lines and messages
    dataset: Dataset | str | Path  # an ID, folder or ID@VERSION; a Dataset once planned
    models: Sequence[str]  # model references as given, each run on every condition
    specs: Sequence[str] = ()  # perturbation specs; the clean condition is always there
    ids: Sequence[str] | int | None = None  # the selection: IDs, a seeded sample of N, None: all
    seed: int = 0  # the perturbations' seed and the sample's (--max-utts N --seed S)
    job: JobSpec = field(default_factory=lambda: JobSpec(progress=False))
    skip_underivable: bool = False  # skip (with a warning) a condition that cannot be made
    conditions: tuple[str, ...] = field(init=False)  # canonical, "clean" first
    selected: tuple[str, ...] = field(init=False)  # the selected utterance IDs, dataset order
    model_ids: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        if not self.models:
            raise InputError("give at least one model with -m")
        ds = self.dataset
        if not isinstance(ds, Dataset):
            ds = resolve_dataset(ds, check_audio=False)
        ids = select_utterances(ds, self.ids, self.seed)
        if not ids:
            raise InputError(f"no utterance of dataset {ds.id} is selected")
        object.__setattr__(self, "dataset", ds)
        object.__setattr__(self, "selected", tuple(ids))
        object.__setattr__(self, "models", tuple(str(m) for m in self.models))
        object.__setattr__(self, "specs", tuple(self.specs))
        object.__setattr__(self, "conditions", conditions_of(self.specs))
        object.__setattr__(self, "model_ids", tuple(model_name(m) for m in self.models))

    @property
    def ds(self) -> Dataset:
        """The planned dataset."""
        assert isinstance(self.dataset, Dataset)
        return self.dataset

    @property
    def is_subset(self) -> bool:
        return len(self.selected) < len(self.ds.utterances)

    @property
    def audio_s(self) -> float:
        """Seconds of audio in the selection (one condition)."""
        wanted = set(self.selected)
        return sum(u.duration for u in self.ds.utterances if u.id in wanted)


@dataclass
class Derived:
    """The dataset folder of every condition that could be made, in plan order, and why each
    skipped one could not be (only with `skip_underivable`)."""

    paths: dict[str, Path]
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CampaignCell:
    """One model on one condition's dataset folder."""

    model: str
    condition: str
    dataset: Path


@dataclass(frozen=True)
class Finished:
    """What `analyse` gets: the plan, the derived datasets and every cell with its result."""

    plan: CampaignPlan
    derived: Derived
    cells: list[tuple[CampaignCell, CellResult]]
    started: str
    t0: float

    def provenance(self, command: Sequence[str] | None = None) -> Provenance:
        """The campaign's provenance, from its start until now."""
        return provenance(command, self.started, self.t0)


def _progress(plan: CampaignPlan, phase: str, n_cells: int, enabled: bool) -> CampaignProgress:
    label = f"{plan.name} {plan.ds.id}" + (f": {phase}" if phase else "")
    n = len(plan.selected)
    return CampaignProgress(label, n_cells, n_cells * n, n_cells * plan.audio_s, enabled=enabled)


def derive(plan: CampaignPlan, progress: bool = True) -> Derived:
    """Every condition's dataset folder, derived (or found) through `derive_dataset`."""
    if plan.conditions == ("clean",) and not plan.is_subset:
        return Derived({"clean": Path(plan.ds.root)})
    out = Derived({})
    subset = list(plan.selected) if plan.is_subset else None
    with _progress(plan, "derive", len(plan.conditions), progress) as prog:
        for c in plan.conditions:
            prog.start_cell(c)
            try:
                r = derive_dataset(
                    plan.ds.root, c, seed=plan.seed, jobs=plan.job.jobs, utt_ids=subset
                )
            except PerturbError as exc:
                if c == "clean" or not plan.skip_underivable:
                    raise
                out.skipped[c] = str(exc)
                print(f"{plan.name}: warning: condition {c} skipped: {exc}", file=sys.stderr)
            else:
                out.paths[c] = r.path
            prog.cell_done(len(plan.selected), plan.audio_s)
    return out


def every_cell(plan: CampaignPlan, derived: Derived) -> list[CampaignCell]:
    """The default grid: each model on each derived condition, model by model."""
    return [CampaignCell(m, c, p) for m in plan.models for c, p in derived.paths.items()]


def _run_matrix(
    cells: Sequence[CampaignCell], plan: CampaignPlan, executor: Executor, prog: CampaignProgress
) -> list[CellResult]:
    """The one call into the benchmark (its signature changes here only)."""
    return run_matrix(
        [(c.model, c.dataset) for c in cells],
        plan.job,
        executor=executor,
        on_start=lambda i: prog.start_cell(f"{Path(cells[i].model).name} x {cells[i].condition}"),
        on_result=lambda i, _: prog.cell_done(len(plan.selected), plan.audio_s),
        raise_errors=True,
    )


def run_campaign(
    plan: CampaignPlan,
    analyse: Callable[[Finished], R],
    *,
    executor: Executor | None = None,
    cells: Callable[[CampaignPlan, Derived], list[CampaignCell]] = every_cell,
    progress: bool = True,
) -> R:
    """Preflight, derive, run every cell, analyse (see the module docstring)."""
    t0, started = time.monotonic(), utc_now()
    executor = executor or LocalExecutor()
    preflight(executor, plan.models, plan.job)  # before any audio is derived
    derived = derive(plan, progress)
    grid = cells(plan, derived)
    with _progress(plan, "", len(grid), progress) as prog:
        results = _run_matrix(grid, plan, executor, prog)
    done = list(zip(grid, results, strict=True))
    return analyse(Finished(plan, derived, done, started, t0))


def write_outputs(target: Path, files: Mapping[str, Record | str]) -> Path:
    """Write a campaign's files (a record as JSON, a text as is; names may hold a folder) into
    one staged folder and move it into place whole. A `target` that holds other files than a
    campaign writes is refused: a non-empty folder is replaced only when it holds one of the
    same files (an earlier run's), so `--out` never replaces a folder of something else."""
    target = Path(target)
    if target.is_dir():
        there = sorted(p.name for p in target.iterdir() if not p.name.startswith("."))
        if there and not set(there) & set(files):
            raise InputError(
                f"{target} holds other files ({', '.join(there[:3])}); give --out a new or "
                "empty folder (or the folder of an earlier run of this command)"
            )
    stage = stage_dir(target)
    for name, content in files.items():
        if isinstance(content, str):
            atomic_write_text(stage / name, content)
        else:
            write_record(stage / name, content)
    return replace_dir(stage, target)
