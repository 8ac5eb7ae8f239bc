"""The benchmark job: resolve, sample, run the missing utterances in shards, score, write.

    run_benchmark("pocketsphinx_en", "mini_en", JobSpec(runner="docker", jobs=2))

One frozen `JobSpec` (request.py: a request file's options under the command line's flags)
says how every cell runs; it is carried through prepare, run and finish unchanged.

Raw hypotheses come from the cache (see cache.py) whenever the same model identity, dataset
content and runtime options were run before, so re-scoring never re-runs a model. Results land
in `<results>/<model>/<dataset>/` (see asrbench/results/layout.py and docs/BENCHMARK.md).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, overload

from asrbench.benchmark.cache import HypCache, cache_key
from asrbench.benchmark.cell import check_writable, cost_stats, timing_stats, write_cell_files
from asrbench.benchmark.errors import BenchmarkError
from asrbench.benchmark.language import LanguagePlan, plan_language
from asrbench.benchmark.output import Records
from asrbench.benchmark.pieces import (
    Plan,
    SegmentRequest,
    build_pieces,
    plan_segmentation,
    provenance,
    reassemble,
)
from asrbench.benchmark.progress import Progress
from asrbench.benchmark.provenance import git_state, host_info, package_versions, utc_now
from asrbench.benchmark.request import JobSpec
from asrbench.benchmark.sessions import (
    group_lines,
    session_groups,
    session_line,
    session_metrics,
)
from asrbench.benchmark.shard import split_shards
from asrbench.benchmark.speakers import RULE, UNATTRIBUTED, attribute_all
from asrbench.dataset import Dataset, Utterance, sample_utterances
from asrbench.errors import AsrbenchError, InputError, InternalError
from asrbench.executors import Executor, LocalExecutor, ShardJob, needs_for
from asrbench.fsio import disk_full_is_one_line, stage_dir
from asrbench.ids import COMBINE
from asrbench.modelcard import Model, for_gpus
from asrbench.resolve import model_parts, resolve_dataset, resolve_model
from asrbench.results import layout
from asrbench.results.derived import derive
from asrbench.results.records import (
    RunCache,
    RunDataset,
    RunGit,
    RunHost,
    RunJobOptions,
    RunModel,
    RunPlacement,
    RunRecord,
    RunTimes,
    write_record,
)
from asrbench.results.summary import Selection, Summary, new_summary
from asrbench.results.timed import TIMED_FILE, write_hyp_timed
from asrbench.runners import Runner, RunOptions, shared_runner
from asrbench.runners.leftovers import kill_leftovers
from asrbench.scorers import get_scorer, scorer_config, scorer_identity
from asrbench.secrets import Redactor, for_models, weak_secrets
from asrbench.settings import settings
from scoring.metrics import Metrics
from scoring.scorer import Scorer, ScoreResult

__all__ = ["BenchmarkError", "CellResult", "JobSpec", "preflight", "run_benchmark", "run_matrix"]

UTT_TIMEOUT_ENV = "ASRBENCH_UTT_TIMEOUT"
# Cells of a matrix may run in threads (a remote executor keeps many in flight); what they do
# on this machine besides waiting for shards (resolving, building, hashing, scoring, writing)
# runs one cell at a time, so runners, scorers and the zoo client are never shared concurrently.
_DRIVER = threading.RLock()


@dataclass(frozen=True)
class CellResult:
    """What one model x dataset run produced: its summary, where it went, how it ran."""

    summary: Summary
    placement: layout.Placement
    n_hyps: int
    cache_hit: bool
    wall_s: float
    run_s: float

    @property
    def metrics(self) -> Metrics | None:
        """None for a reference-free dataset (hypotheses only)."""
        return self.summary.metrics

    @property
    def out_dir(self) -> Path:
        return self.placement.path

    def line(self) -> str:
        """The one-line report printed per cell."""
        s, m = self.summary, self.metrics
        sample = (
            f", sample of {s.selection.n_utts}/{s.selection.n_dataset_utts}"
            if s.selection.is_sample
            else ""
        )
        where = f"{self.out_dir}" + (f" ({self.placement.note})" if self.placement.note else "")
        if s.forced_language:
            where += " [forced: the card does not list the dataset's language]"
        tail = (
            f"{self.n_hyps}/{s.selection.n_utts} utterances, {s.n_failed} failed, RTF "
            f"{(s.timing or {}).get('rtf')}, runner {s.runner}, "
            f"{'cache hit' if self.cache_hit else 'ran'}{sample}) -> {where}"
        )
        if m is None and s.hallucination:
            h = s.hallucination["overall"]
            return (
                f"{s.model} on {s.dataset}: non-speech, {h['words_per_min']:.1f} words/min "
                f"hallucinated, {h['clips_with_output']}/{h['clips']} clips with output ({tail}"
            )
        if m is None:
            return (
                f"{s.model} on {s.dataset}: hypotheses only (reference-free dataset, no "
                f"error rate; {tail}"
            )
        rate = f"{100 * m.ter:.2f}%" if m.ter is not None else "undefined"
        # a long-form cell: its session metrics on a line of their own
        sessions = f"\n  {session_line(s.session_metrics)}" if s.session_metrics else ""
        # and per group of sessions the dataset declares (session_groups:), a line each
        sessions += "".join(f"\n    {line}" for line in group_lines(s.session_groups or {}))
        return (
            f"{s.model} on {s.dataset}: {m.name} {rate} ({m.errors} errors in {m.n_ref} "
            f"{m.tokens_name}, "
            f"coverage {m.coverage}, {tail}{sessions}"
        )


def _runner(runner: str | Runner) -> Runner:
    return runner if isinstance(runner, Runner) else shared_runner(runner)


def run_benchmark(
    model: str | Path,
    dataset: str | Path,
    spec: JobSpec | None = None,
    *,
    executor: Executor | None = None,
) -> CellResult:
    """Run `model` on `dataset` as `spec` says (cached, sharded, resumable), score it, store
    the cell.

    `executor` says where the shards run: threads here (default, `LocalExecutor`) or a cluster
    (`asrbench.executors.get_executor("ray", address=...)`); the result is the same.
    Raises an AsrbenchError (BenchmarkError, DatasetError, ModelCardError, RunnerError...)
    whose message names what failed and what to do.
    """
    t_start, started = time.monotonic(), utc_now()
    spec = spec or JobSpec()
    executor = executor or LocalExecutor()
    parts = model_parts(model)  # `ASR+DIARIZER`: two stages, each its own cache entry
    with _DRIVER:
        specs = _part_specs(spec, parts)
        preps = [
            _prepare(m, dataset, sp, executor.runs_here) for m, sp in zip(parts, specs, strict=True)
        ]
    rans = [_run_prepared(prep, executor) for prep in preps]
    with _DRIVER:
        rans = [
            _whole_recordings(p, r) if p.pieces else r for p, r in zip(preps, rans, strict=True)
        ]
        prep, ran = _combined(preps, rans) if len(preps) == 2 else (preps[0], rans[0])
        return _finish(prep, ran, executor, t_start, started)


def _part_specs(spec: JobSpec, parts: list[str]) -> list[JobSpec]:
    """Each part's spec. A combination's diarizer gets the `--env` settings its card declares,
    the ASR the others (so a diarizer knob never changes the ASR's cache key), and the
    diarizer always hears whole recordings (its clustering must see every window of a session
    to name its speakers consistently)."""
    if len(parts) == 1:
        return [spec]
    knobs = set(resolve_model(parts[1]).card.settings)
    env = {k: v for k, v in spec.env.items() if k not in knobs}
    diar_env = {k: v for k, v in spec.env.items() if k in knobs}
    return [
        replace(spec, env=env),
        replace(spec, env=diar_env, segment="none", segment_options={}),
    ]


def _combined(preps: list[_Prepared], rans: list[_Ran]) -> tuple[_Prepared, _Ran]:
    """`ASR+DIARIZER`'s cell: the ASR's hypotheses, its words given the diarizer's speakers
    (speakers.py), keyed by both stages' keys and the rule."""
    (asr, diar), (ran_a, ran_d) = preps, rans
    name = f"{asr.mdl.id}{COMBINE}{diar.mdl.id}"
    for rid in sorted(set(ran_d.rec.failed) & set(ran_a.rec.hyp)):
        print(f"{name}: {rid}: the diarizer failed; its words are {UNATTRIBUTED}", file=sys.stderr)
    identity = f"{asr.identity}{COMBINE}{diar.identity}"
    runtime = {"asr_hyps": asr.key, "diarizer_hyps": diar.key, "speakers": RULE}
    key, inputs = cache_key(identity, asr.ds_hash, {**asr.key_inputs["runtime"], **runtime})
    mdl = replace(asr.mdl, card=asr.mdl.card.model_copy(update={"id": name}))
    prep = replace(asr, mdl=mdl, label=f"{name} x {asr.ds.id}", identity=identity, key=key)
    prep = replace(prep, key_inputs=inputs, parts=(asr, diar))
    durations = {u.id: u.duration for u in asr.selection}
    asr_timed = {
        rid: _cell_timed(ran_a, asr.selection).get(rid) or _whole_segment(rid, text, durations)
        for rid, text in ran_a.rec.hyp.items()
        if rid in durations
    }
    ids = [u.id for u in asr.selection]
    timed = attribute_all(asr_timed, _cell_timed(ran_d, diar.selection), ids, diar.mdl.id)
    ran = _Ran(
        ran_a.rec,
        [*ran_a.logs, *ran_d.logs],
        [*ran_a.shard_info, *ran_d.shard_info],
        [*ran_a.problems, *ran_d.problems],
        [*ran_a.todo, *ran_d.todo],
        ran_a.run_s + ran_d.run_s,
        timed,
    )
    return prep, ran


def _whole_segment(rid: str, text: str, durations: dict[str, float]) -> dict[str, Any]:
    """A recording the ASR gave no times for: its whole text as one segment of the recording."""
    return {"id": rid, "segments": [{"start": 0.0, "end": durations[rid], "text": text}]}


Outcome = CellResult | AsrbenchError


@overload
def run_matrix(
    cells: Sequence[tuple[str | Path, str | Path]],
    spec: JobSpec | None = None,
    *,
    executor: Executor | None = None,
    on_start: Callable[[int], None] | None = None,
    on_result: Callable[[int, Outcome], None] | None = None,
    raise_errors: Literal[False] = False,
) -> list[Outcome]: ...


@overload
def run_matrix(
    cells: Sequence[tuple[str | Path, str | Path]],
    spec: JobSpec | None = None,
    *,
    executor: Executor | None = None,
    on_start: Callable[[int], None] | None = None,
    on_result: Callable[[int, Outcome], None] | None = None,
    raise_errors: Literal[True],
) -> list[CellResult]: ...


def run_matrix(
    cells: Sequence[tuple[str | Path, str | Path]],
    spec: JobSpec | None = None,
    *,
    executor: Executor | None = None,
    on_start: Callable[[int], None] | None = None,
    on_result: Callable[[int, Outcome], None] | None = None,
    raise_errors: bool = False,
) -> list[Outcome] | list[CellResult]:
    """Run every (model, dataset) cell as `spec` says, through one executor: the one entry
    point of `ops/benchmark` and of the campaigns (robustness, fairness).

    Before any cell starts, `preflight` checks the runner and, for a remote executor, that
    every model's needs (CPUs, GPU, Docker) can be met where the shards will run. The local
    executor runs the cells one after another (each with `spec.jobs` parallel shards); a
    remote one keeps `executor.cells_in_flight` cells in flight, so their shards queue on the
    cluster together. `on_start(i)` is called as cell i starts (from a worker thread when
    cells are in flight together), `on_result(i, outcome)` as it ends.

    Returns each cell's CellResult, or the AsrbenchError that stopped it, in the order of
    `cells`. With `raise_errors`, the first error in that order is raised instead: one cell
    at a time, the cells after it do not start. Ctrl-C stops what runs (finished shards are
    kept in the cache for the rerun) and propagates.
    """
    spec = spec or JobSpec()
    executor = executor or LocalExecutor()
    # A campaign has preflighted before deriving its audio; the second call is cheap (the
    # runner is shared, a remote executor remembers what it checked, secrets are pure checks).
    preflight(executor, [m for m, _ in cells], spec)

    def one(i: int) -> Outcome:
        if on_start:
            on_start(i)
        return _cell(cells[i], spec, executor)

    if executor.cells_in_flight <= 1 or len(cells) <= 1:
        outcomes = _one_at_a_time(one, len(cells), on_result, raise_errors)
    else:
        outcomes = _in_flight(one, len(cells), executor, on_result)
    return _or_raise(outcomes) if raise_errors else outcomes


def _cell(cell: tuple[str | Path, str | Path], spec: JobSpec, executor: Executor) -> Outcome:
    """One cell's CellResult, or the AsrbenchError that stopped it (`run_benchmark` is looked
    up when called, so a test can stand in for it)."""
    try:
        return run_benchmark(cell[0], cell[1], spec=spec, executor=executor)
    except AsrbenchError as exc:
        return exc


def _one_at_a_time(
    one: Callable[[int], Outcome],
    n: int,
    on_result: Callable[[int, Outcome], None] | None,
    raise_errors: bool,
) -> list[Outcome]:
    """Cells 0..n-1 in order; with `raise_errors`, the first error stops the rest."""
    outcomes = []
    for i in range(n):
        outcome = one(i)
        if raise_errors and isinstance(outcome, AsrbenchError):
            raise outcome
        if on_result:
            on_result(i, outcome)
        outcomes.append(outcome)
    return outcomes


def _in_flight(
    one: Callable[[int], Outcome],
    n: int,
    executor: Executor,
    on_result: Callable[[int, Outcome], None] | None,
) -> list[Outcome]:
    """Cells 0..n-1 through `one`, `executor.cells_in_flight` at a time, in cell order."""
    outcomes: dict[int, Outcome] = {}
    pool = ThreadPoolExecutor(min(executor.cells_in_flight, n), thread_name_prefix="cell")
    try:
        futures = {pool.submit(one, i): i for i in range(n)}
        for fut in as_completed(futures):
            i = futures[fut]
            outcomes[i] = fut.result()
            if on_result:
                on_result(i, outcomes[i])
    except BaseException:
        executor.cancel()  # the cell threads stop waiting and cancel their shards
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return [outcomes[i] for i in range(n)]


def _or_raise(outcomes: list[Outcome]) -> list[CellResult]:
    """The CellResults, or the first error (in cell order) raised."""
    for o in outcomes:
        if isinstance(o, AsrbenchError):
            raise o
    return [o for o in outcomes if not isinstance(o, AsrbenchError)]


def preflight(
    executor: Executor, models: Sequence[str | Path], spec: JobSpec | None = None
) -> None:
    """The checks for every model of a grid, before any work starts: the runner can be made
    (a known name; for Docker, an engine that answers: InputError or RunnerError otherwise),
    and, for a remote executor, the cluster answers, offers every model's CPUs/GPU/Docker and
    its nodes can reach the zoo (PreflightError naming the cause); every model's declared
    secrets are checked (`check_secrets`) before any cell of the grid starts."""
    spec = spec or JobSpec()
    run = _runner(spec.runner)
    resolved = []
    for model in dict.fromkeys(part for m in models for part in _parts_or_whole(m)):
        try:
            with _DRIVER:
                mdl = resolve_model(model)
        except InputError:
            continue  # its cells fail on their own with the resolver's message
        check_secrets(mdl, spec)
        resolved.append(mdl)
    if type(executor).preflight is Executor.preflight:
        return

    needs = []
    for mdl in resolved:
        model_opts = spec.run_options()
        if spec.gpus and mdl.card.gpu != "none":
            model_opts.gpus = spec.gpus
        needs.append(needs_for(mdl, run.name, model_opts))
    executor.preflight(needs)


def _parts_or_whole(model: str | Path) -> list[str]:
    """The models of a spec; a malformed combination is left whole: its cells fail alone."""
    try:
        return model_parts(model)
    except InputError:
        return [str(model)]


@dataclass(frozen=True)
class _Stage:
    """What the model runs on and where its hypotheses are cached: the cell's own utterances,
    or, for a segmented cell, the pieces of its recordings (their own dataset and entry)."""

    ds: Dataset
    selection: list[Utterance]
    ds_hash: str
    key: str
    cache: HypCache


@dataclass(frozen=True)
class _Prepared:
    """A cell resolved and keyed, before any shard runs, and the spec it runs by.

    `ds`, `selection`, `ds_hash`, `key` and `key_inputs` are the cell's identity from the
    start (a segmented cell's: the recordings, keyed with the segmentation); `stage` is what
    the model runs on (the same utterances, or the pieces), never swapped in for the cell."""

    spec: JobSpec
    results_root: Path
    mdl: Model
    ds: Dataset
    label: str
    selection: list[Utterance]
    language: LanguagePlan
    scorer: Scorer | None  # None: a reference-free dataset
    run: Runner
    identity: str
    prepare_s: float
    red: Redactor
    opts: RunOptions
    ds_hash: str
    hash_s: float
    key: str
    key_inputs: dict
    stage: _Stage
    pieces: _Pieces | None = None  # segmented: the model runs on pieces of the recordings
    segmentation: dict | None = None  # run.json's options.segmentation
    parts: tuple[_Prepared, _Prepared] | None = None  # `ASR+DIARIZER`: the two stages


@dataclass(frozen=True)
class _Pieces:
    """A segmented cell's stage: the pieces dataset the model runs on, and how it was cut."""

    plan: Plan
    dataset: Dataset
    segment_s: float  # VAD (or window layout) and cutting, when the pieces were built


def _staged(
    identity: str, cell: tuple[Dataset, list[Utterance], str], runtime: dict, cache_root: Path
) -> tuple[_Stage, str, dict]:
    """An unsegmented cell's stage (its own utterances and cache entry), and the cell's key and
    key inputs (the same as the stage's)."""
    ds, selection, ds_hash = cell
    key, inputs = cache_key(identity, ds_hash, runtime)
    return _Stage(ds, selection, ds_hash, key, HypCache(cache_root, key, inputs)), key, inputs


def _pieces_stage(
    identity: str, pieces: _Pieces, ds_hash: str, runtime: dict, cache_root: Path
) -> tuple[_Stage, str, dict, dict]:
    """A segmented cell's stage (the pieces, their own cache entry), the cell's key and key
    inputs (the recordings' dataset, the segmentation in the runtime) and its provenance."""
    p_hash = pieces.dataset.content_hash()
    p_key, p_inputs = cache_key(identity, p_hash, runtime)
    stage = _Stage(
        pieces.dataset,
        pieces.dataset.utterances,
        p_hash,
        p_key,
        HypCache(cache_root, p_key, p_inputs),
    )
    key, inputs = cache_key(
        identity, ds_hash, {**p_inputs["runtime"], "segmentation": pieces.plan.identity()}
    )
    return stage, key, inputs, provenance(pieces.plan, pieces.dataset, p_hash, p_key)


def check_secrets(mdl: Model, spec: JobSpec) -> None:
    """A model's declared secrets are strong enough to redact and are not passed as settings
    (both checked for every model of a grid by `preflight`, and again per cell)."""
    for model_id, name, why in weak_secrets([mdl]):
        # A value this weak would be found in ordinary text: redacting it would alter logs
        # and errors at random, and flag transcripts that merely contain the word.
        raise InputError(
            f"model {model_id}: the value of its declared secret {name} is too "
            f"weak to be a credential ({why}); set the real credential in the "
            "host environment (or unset it)"
        )
    leaked = sorted(set(spec.env) & set(mdl.card.secrets))
    if leaked:
        # Settings are written to run.json and hashed into the cache key; secrets never are.
        raise BenchmarkError(
            f"model {mdl.id}: {', '.join(leaked)} is a declared secret; set it "
            "in the host environment instead of passing it as a setting"
        )


def _prepare(
    model: str | Path, dataset: str | Path, spec: JobSpec, runs_here: bool = True
) -> _Prepared:
    """Checks, resolution, model identity and cache key: everything before shards run."""
    cfg = settings()
    results_root = spec.results_root or cfg.results
    cache_root = spec.cache_root or cfg.cache / "hyps"
    check_writable(results_root, "results folder", cfg.min_free_mb)
    check_writable(cache_root, "hypothesis cache", cfg.min_free_mb)
    # --gpus: the card's CUDA image variant, where it has one (image.cuda)
    mdl = for_gpus(resolve_model(model), spec.gpus)
    check_secrets(mdl, spec)
    ds = resolve_dataset(dataset)
    label = f"{mdl.id} x {ds.id}"
    selection = sample_utterances(ds.utterances, spec.max_utts, spec.seed)
    # A card without the dataset's language is refused before any image is built or model run.
    language = plan_language(mdl, ds, force=spec.force_language, user_env=spec.env)
    # A bad scorer option fails before any model runs; a reference-free dataset is not scored.
    # The scorer gets the dataset's tag as written (`fr-CA`, `zh-Hans`).
    scorer = None if ds.reference_free else get_scorer(ds.language, dict(spec.scorer_options))
    # Segmentation is decided (and its options checked) before any image is built.
    segment = SegmentRequest(spec.segment, spec.segment_options)
    plan = plan_segmentation(ds, selection, mdl.card.max_input_s, segment)
    run = _runner(spec.runner)
    t_prep = time.monotonic()
    # Shards elsewhere: the local runner's identity is a digest of the model's source and
    # environment; its virtualenv is built on the nodes, not here. An image is built here
    # either way (the nodes fetch it from the zoo).
    identity = run.prepare(mdl) if runs_here else run.identity(mdl)
    prepare_s = time.monotonic() - t_prep
    red = for_models([mdl])  # this model's declared secrets, as the runner will pass them
    opts = spec.run_options()
    opts.env.update(language.env)  # none for the card's default language: keys unchanged
    if spec.utt_timeout_s:
        opts.env[UTT_TIMEOUT_ENV] = f"{spec.utt_timeout_s:g}"
    if spec.gpus and mdl.card.gpu == "none":
        # The card says the program cannot use a GPU: passing one would only change the key.
        print(f"{label}: --gpus ignored: model card says gpu: none", file=sys.stderr)
    elif spec.gpus:
        opts.gpus = spec.gpus
    # What can change the model's output: env settings and GPU use. Memory, CPU limit and the
    # whole-run timeout change only whether it finishes, so they stay out of the key.
    runtime = {"env": dict(sorted(opts.env.items())), "gpus": opts.gpus or None}
    t_hash = time.monotonic()
    ds_hash = ds.content_hash()
    t_seg = time.monotonic()
    pieces = None
    if plan is not None:  # the run's segmentation cuts a recording (pieces.py)
        pieces = _Pieces(plan, build_pieces(ds, ds_hash, plan, mdl.card.sample_rate), 0.0)
    segment_s = time.monotonic() - t_seg
    segmentation = None
    if pieces:  # the model runs on the pieces: their dataset, their cache entry
        pieces = replace(pieces, segment_s=segment_s)
        stage, key, key_inputs, segmentation = _pieces_stage(
            identity, pieces, ds_hash, runtime, cache_root
        )
    else:
        stage, key, key_inputs = _staged(identity, (ds, selection, ds_hash), runtime, cache_root)
    hash_s = time.monotonic() - t_hash - segment_s
    return _Prepared(
        spec,
        results_root,
        mdl,
        ds,
        label,
        selection,
        language,
        scorer,
        run,
        identity,
        prepare_s,
        red,
        opts,
        ds_hash,
        hash_s,
        key,
        key_inputs,
        stage,
        pieces,
        segmentation,
    )


@dataclass(frozen=True)
class _Ran:
    """What the shards left for one cell: its records and how they came about."""

    rec: Records
    logs: list[Path]
    shard_info: list[dict]
    problems: list[str]
    todo: list[Utterance]  # the utterances this run had to do (none: a cache hit)
    run_s: float
    timed: dict[str, dict] | None = None  # segmented: each recording's timed hypothesis

    @property
    def cache_hit(self) -> bool:
        return not self.todo


def _run_prepared(p: _Prepared, executor: Executor) -> _Ran:
    """Harvest what earlier runs left and run the stage's rest through the executor."""
    st, label = p.stage, p.label
    selection = st.selection
    shard_info: list[dict] = []
    logs: list[Path] = []
    problems: list[str] = []
    run_s = 0.0
    with st.cache.locked(label):
        leftovers = kill_leftovers(st.cache.attempts)
        rec, recovered, _, _ = st.cache.harvest(p.red)
        todo = [u for u in selection if u.id not in rec.hyp]  # failures are always retried
        if recovered or leftovers:
            print(
                f"{label}: resumed: {recovered} utterance(s) recovered from an interrupted run"
                f"{f', {leftovers} leftover program(s) stopped' if leftovers else ''}",
                file=sys.stderr,
            )
        if todo:
            t_run = time.monotonic()
            job = ShardJob(
                runner=p.run,
                model=p.mdl,
                dataset=st.ds,
                identity=p.identity,
                dataset_hash=st.ds_hash,
                cache_key=st.key,
                options=p.opts,
                label=label,
            )
            rec, logs, shard_info, problems = _run_until_settled(executor, job, p, todo)
            run_s = time.monotonic() - t_run
            for problem in problems:
                print(f"{label}: model output breaks the contract: {problem}", file=sys.stderr)
            if not any(u.id in rec.hyp for u in selection):
                detail = "\n".join(
                    f"--- shard {o['shard']} ({o['n_utts']} utts): {o['error']}"
                    for o in shard_info
                    if o["error"]
                )
                raise BenchmarkError(
                    f"model {p.mdl.id} on dataset {st.ds.id}: none of the {len(selection)} "
                    f"utterance(s) has a result (e.g. {rec.failed.get(selection[0].id)}); "
                    "nothing was written. Fix the cause and rerun the same command to "
                    f"continue.\n{detail or '(no shard reported an error)'}"
                )
    return _Ran(rec, logs, shard_info, problems, todo, run_s)


def _whole_recordings(p: _Prepared, ran: _Ran) -> _Ran:
    """A segmented cell's records: the pieces' joined per recording (a recording with a failed
    piece is failed); the cell itself (its recordings, key and hash) is unchanged."""
    pc = p.pieces
    assert pc is not None
    done = reassemble(pc.dataset, pc.plan, p.selection, ran.rec)
    return replace(ran, rec=done.records, timed=done.timed)


def _cell_timed(ran: _Ran, selection: Sequence[Utterance]) -> dict[str, dict]:
    """The cell's timed hypotheses: a segmented cell's (pieces or the model's times, shifted),
    else the model's own timed output where it wrote any (`source: model`)."""
    if ran.timed is not None:
        return ran.timed
    ids = {u.id for u in selection}
    return {k: {**t, "source": "model"} for k, t in ran.rec.timed.items() if k in ids}


def _hallucination(ds: Dataset, selection: list[Utterance], rec: Records) -> dict | None:
    """A non-speech dataset's figures (every word is a hallucination): words per minute and
    share of clips with output, overall and by the CONTENT column, CIs over clips."""
    if not ds.nonspeech:
        return None
    from scoring.hallucination import clip_outputs, nonspeech_figures

    ok = [u for u in selection if u.id not in rec.failed]
    clips = clip_outputs(
        {u.id: rec.hyp.get(u.id) for u in ok},
        {u.id: u.duration for u in ok},
        {u.id: u.extra.get("CONTENT", "") for u in ok},
        get_scorer(ds.language).normalize,
    )
    return nonspeech_figures(clips).to_dict() if clips else None


@dataclass(frozen=True)
class _Scored:
    """The selection scored: what summary.json and run.json say about the scorer."""

    result: ScoreResult | None  # None: a reference-free dataset, nothing scored
    sid: dict[str, Any]  # the scorer identity (summary.json `scorer`)
    selection: Selection
    hyps: dict[str, str]
    score_s: float
    sessions: dict[str, Any] | None = None  # a long-form cell's session metrics
    groups: dict[str, Any] | None = None  # the same per declared group (session_groups)
    # a dataset with NLP references: summary.json's entities, formatting, worst_entities
    entities: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Written:
    """Where and when the cell was written: run.json's result_key, placement and times."""

    result_key: str
    placement: RunPlacement
    times: RunTimes


def _finish(
    p: _Prepared, ran: _Ran, executor: Executor, t_start: float, started: str
) -> CellResult:
    """Score the selection and write the cell (summary, reports, run.json), moved into place."""
    _check_accounted(p.label, p.selection, ran.rec)
    secret_hits = _secret_hits(p, ran.rec)
    scored = _score(p, ran)
    summary = _summary(p, ran, scored)
    placement, displaced = layout.place(p.results_root, summary, replace=p.spec.replace)
    staging = stage_dir(placement.path)  # beside it: the move into place is a rename
    t_write = time.monotonic()
    with disk_full_is_one_line(staging):  # logs and reports are written outside fsio
        write_cell_files(
            staging, p.selection, ran.rec, scored.result, summary, ran.logs, secret_hits
        )
        timed = _cell_timed(ran, p.selection)
        if timed:
            write_hyp_timed(staging / TIMED_FILE, timed)
        _derive(staging, p, summary)
    write_s = time.monotonic() - t_write
    wall = time.monotonic() - t_start
    written = _Written(
        summary.result_key,
        RunPlacement(kind=placement.kind, note=placement.note),
        _times(p, ran, started, wall, scored.score_s, write_s),
    )
    record = _run_record(p, ran, executor, scored, written)
    write_record(staging / "run.json", record)
    layout.commit(staging, placement, displaced)
    return CellResult(
        summary,
        placement,
        sum(1 for u in p.selection if u.id in ran.rec.hyp),
        ran.cache_hit,
        round(wall, 3),
        round(ran.run_s, 3),
    )


def _derive(staging: Path, p: _Prepared, summary: Summary) -> None:
    """The records the report renders as stored (ablation.json, timeline.json), from the
    files just written: asrbench/results/derived.py, which `ops/report --backfill` runs too."""
    derive(staging, summary, dict(p.spec.scorer_options), (p.ds.root.resolve(), p.ds.meta))


def _secret_hits(p: _Prepared, rec: Records) -> dict[str, list[str]]:
    """Utterance ID -> the declared secrets its hypothesis holds; warned about, scored as is."""
    hits = {u.id: names for u in p.selection if (names := p.red.names_in(rec.hyp.get(u.id, "")))}
    if hits:
        ids = sorted(hits)
        names = sorted({n for v in hits.values() for n in v})
        print(
            f"{p.label}: warning: {len(ids)} hypothesis(es) hold the value of declared "
            f"secret(s) {', '.join(names)} ({', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}"
            "); scored as written, flagged secret_in_hyp in utterances.jsonl",
            file=sys.stderr,
        )
    return hits


def _score(p: _Prepared, ran: _Ran) -> _Scored:
    """Score the selection's hypotheses (none for a reference-free dataset); a long-form cell
    also by the session metrics its hypothesis supports."""
    scorer_options = dict(p.spec.scorer_options)
    t_score = time.monotonic()
    refs = {u.id: u.text for u in p.selection}
    hyps = {u.id: ran.rec.hyp[u.id] for u in p.selection if u.id in ran.rec.hyp}
    result: ScoreResult | None = None
    entities: dict[str, Any] = {}
    if p.scorer and p.ds.nlp:
        result, entities = _score_nlp(p, refs, hyps)
    elif p.scorer:
        result = p.scorer.score(refs, hyps)
    timed = _cell_timed(ran, p.selection)
    sessions = session_metrics(p.scorer, p.ds, p.selection, hyps, timed)
    groups = session_groups(p.scorer, p.ds, p.selection, hyps, timed)
    sid = (
        scorer_identity(p.scorer, scorer_options).to_dict()
        if p.scorer
        else {"config_hash": None, "options": dict(scorer_options or {})}
    )
    score_s = time.monotonic() - t_score
    sel = Selection.of(list(refs), len(p.ds.utterances), p.spec.max_utts, p.spec.seed)
    return _Scored(result, sid, sel, hyps, score_s, sessions, groups, entities)


def _score_nlp(
    p: _Prepared, texts: dict[str, str], hyps: dict[str, str]
) -> tuple[ScoreResult, dict[str, Any]]:
    """A dataset with NLP references (dataset.yaml `nlp:`): the selection scored against them
    (the normalisation sidecar's readings as alternations, as `ops/score` scores NLP files),
    and summary.json's `entities`, `worst_entities` and `formatting` (TEXT as written against
    the hypothesis); asrbench.entity_scoring, the code ops/score runs."""
    from asrbench.entity_scoring import (
        entities_block,
        formatting_block,
        nlp_utterances,
        scored_recordings,
        tagged,
        worst_entities,
    )
    from scoring.errors import ScoringError
    from scoring.nlp_inputs import read_references

    assert p.scorer is not None and p.ds.nlp is not None
    try:
        recs, warnings = read_references(*p.ds.nlp, lenient=p.ds.nlp_lenient)
    except ScoringError as exc:
        raise InputError(f"dataset {p.ds.id}: {exc}") from None
    missing = sorted(set(texts) - set(recs))
    if missing:
        raise InputError(
            f"dataset {p.ds.id}: no NLP reference for {', '.join(missing[:5])} in "
            f"{p.ds.nlp[0]}; add ID.nlp for every row of metadata.tsv"
        )
    recs, refs = scored_recordings(p.scorer, {k: recs[k] for k in texts}, hyps)
    utts = nlp_utterances(p.scorer, refs, hyps, recs)
    result = ScoreResult(utts, p.scorer.summarize(utts), p.scorer.config_dict())
    tags = tagged(p.scorer, utts, recs)
    return result, {
        "entities": entities_block(p.scorer, utts, tags, warnings, None),
        "worst_entities": worst_entities(tags, recs),
        "formatting": formatting_block(texts, hyps, p.ds.language, dict(p.spec.scorer_options)),
    }


def _summary(p: _Prepared, ran: _Ran, scored: _Scored) -> Summary:
    """summary.json of the cell: what was scored, by which scorer, from which hypotheses."""
    rec, selection = ran.rec, p.selection
    return new_summary(
        "benchmark",
        scored.result.metrics if scored.result else None,
        scored.selection,
        scored.sid,
        hyps=p.key,
        data=p.ds_hash,
        model=p.mdl.id,
        model_identity=p.identity,
        runner=p.run.name,
        dataset=p.ds.id,
        dataset_hash=p.ds_hash,
        hyps_key=p.key,
        failed=[{"id": u.id, "reason": rec.failed[u.id]} for u in selection if u.id in rec.failed],
        reports=["alignment.txt", "hyp.pra", "hyp.sys", "table.txt"] if scored.result else [],
        timing=timing_stats(selection, rec),
        cost=cost_stats(selection, rec),
        forced_language=p.language.forced,
        hallucination=_hallucination(p.ds, selection, rec),
        session_metrics=scored.sessions,
        session_groups=scored.groups,
        **scored.entities,
    )


def _times(
    p: _Prepared, ran: _Ran, started: str, wall: float, score_s: float, write_s: float
) -> RunTimes:
    """run.json `times`: the phases' seconds, rounded to the millisecond."""
    return RunTimes(
        started=started,
        ended=utc_now(),
        wall_s=round(wall, 3),
        prepare_s=round(p.prepare_s, 3),
        dataset_hash_s=round(p.hash_s, 3),
        segment_s=round(p.pieces.segment_s, 3) if p.pieces else None,
        run_s=round(ran.run_s, 3),
        score_s=round(score_s, 3),
        write_s=round(write_s, 3),
        overhead_s=round(wall - ran.run_s - score_s - p.prepare_s, 3),
    )


def _run_model(p: _Prepared) -> RunModel:
    """run.json `model`: the model, or for `ASR+DIARIZER` both (cards keyed `asr`, `diarizer`;
    image, source and folder joined by `+`)."""
    if p.parts is None:
        mdl = p.mdl
        return RunModel(
            id=mdl.id,
            identity=p.identity,
            runner=p.run.name,
            image=p.run.image_tag(mdl),
            source_hash=mdl.source_hash(),
            card=mdl.card.to_dict(),
            folder=str(mdl.root),
        )
    a, d = (_run_model(part) for part in p.parts)
    images = [a.image, d.image]
    return RunModel(
        id=p.mdl.id,
        identity=p.identity,
        runner=p.run.name,
        image=COMBINE.join(str(i) for i in images) if any(images) else None,
        source_hash=f"{a.source_hash}{COMBINE}{d.source_hash}",
        card={"asr": a.card, "diarizer": d.card},
        folder=f"{a.folder}{COMBINE}{d.folder}",
    )


def _run_record(
    p: _Prepared, ran: _Ran, executor: Executor, scored: _Scored, written: _Written
) -> RunRecord:
    """run.json: how the cell was produced."""
    spec, ds, scorer = p.spec, p.ds, p.scorer
    scorer_options = dict(spec.scorer_options)
    return RunRecord(
        command=list(spec.command) if spec.command is not None else sys.argv,
        cwd=os.getcwd(),
        git=RunGit.from_dict(git_state()),
        model=_run_model(p),
        dataset=RunDataset(
            id=ds.id,
            hash=p.ds_hash,
            folder=str(ds.root.resolve()),
            meta=ds.meta,
            n_utts=len(ds.utterances),
        ),
        selection=scored.selection,
        result_key=written.result_key,
        placement=written.placement,
        executor=executor.describe(),
        options=RunJobOptions(
            jobs=spec.jobs,
            max_utts=spec.max_utts,
            seed=spec.seed,
            utt_timeout_s=spec.utt_timeout_s,
            run=_plain_dict(asdict(p.opts)),
            scorer=scorer_options or {},
            segmentation=p.segmentation,
        ),
        cache=RunCache(
            key=p.key,
            inputs=p.key_inputs,
            folder=str(p.stage.cache.root),  # where the model's hypotheses are kept
            hit=ran.cache_hit,
            utts_run=len(ran.todo),
        ),
        contract_problems=ran.problems,
        scorer={**scored.sid, "config": scorer_config(scorer) if scorer else None},
        packages=package_versions(),
        host=RunHost.from_dict(host_info()),
        times=written.times,
        shards=ran.shard_info,
        language=p.language.record(),
    )


MAX_ROUNDS = 4  # the first attempt plus up to three isolation rounds


def _check_accounted(label: str, selection: Sequence[Utterance], rec: Records) -> None:
    """Every utterance of the selection has a hypothesis or a failure reason, never neither
    nor both: a violation is a bug in the platform, stopped before anything is scored."""
    neither = [u.id for u in selection if u.id not in rec.hyp and not rec.failed.get(u.id)]
    both = [u.id for u in selection if u.id in rec.hyp and u.id in rec.failed]
    if neither or both:
        raise InternalError(
            f"{label}: {len(neither)} utterance(s) without a hypothesis or a failure reason "
            f"({', '.join(neither[:5])}{' ...' if len(neither) > 5 else ''}), {len(both)} with "
            f"both ({', '.join(both[:5])}{' ...' if len(both) > 5 else ''}); nothing was "
            "written"
        )


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def _run_until_settled(
    executor: Executor, job: ShardJob, p: _Prepared, todo: list[Utterance]
) -> tuple[Records, list[Path], list[dict], list[str]]:
    """Run `todo` in shards, then isolate failures so one bad utterance fails only itself.

    A program that fails or stops on an utterance often spoils the rest of its shard (a
    decoder left in a bad state, a crash). After each attempt, the first utterance without a
    result in each shard is run again alone (once), and the later ones are run again without
    it; rounds stop when one brings no new transcription. Every utterance ends transcribed or
    failed with a reason; failures stay in the cache only as failures, retried by every rerun.
    """
    cache, selection, red, spec = p.stage.cache, p.stage.selection, p.red, p.spec
    shards = split_shards(todo, spec.jobs)
    solo_tried: set[str] = set()
    logs: list[Path] = []
    info: list[dict] = []
    problems: list[str] = []
    rec = cache.load()
    for round_ in range(MAX_ROUNDS):
        attempt = cache.attempt_dir([[u.id for u in s] for s in shards], round_)
        done_before = [u for u in selection if u.id in rec.hyp]
        pending = [u for s in shards for u in s]
        label = job.label
        prog = (
            Progress(
                label if round_ == 0 else f"{label} (isolating failures, round {round_})",
                {u.id: u.duration for u in pending},
                len(done_before),
                sum(u.duration for u in done_before),
                [attempt / f"shard-{k}" for k in range(len(shards))],
                every_s=spec.progress_every_s,
                enabled=spec.progress,
            )
            if executor.runs_here
            else None
        )
        outcomes = executor.run_shards(job, shards, attempt, prog)
        before = set(rec.hyp)
        rec, _, new_logs, found = cache.harvest(red)
        logs += new_logs
        problems += found
        for o in outcomes:  # runner errors carry the log tail, which may quote a secret
            o.error = red.redact(o.error) if o.error else o.error
        info += [{**o.to_dict(), "round": round_} for o in outcomes]
        for o, shard in zip(outcomes, shards, strict=True):
            for u in shard:
                if u.id not in rec.hyp and u.id not in rec.failed:
                    rec.failed[u.id] = "no result: " + (
                        _first_line(o.error) or "the program ended without writing it"
                    )
        # The next round's harvest starts from the entry on disk: the reasons given here
        # (utterances the program never wrote) must be there, or they are lost (issue 30).
        cache.save(rec)
        newly = len(set(rec.hyp) - before)
        if round_ > 0 and newly == 0:
            break
        solos: list[list[Utterance]] = []
        retry: list[Utterance] = []
        for shard in shards:
            bad = [u for u in shard if u.id not in rec.hyp]
            if not bad or len(shard) == 1:
                continue
            if bad[0].id not in solo_tried:
                solo_tried.add(bad[0].id)
                solos.append([bad[0]])
            retry += bad[1:]
        if not solos and not retry:
            break
        shards = solos + (split_shards(retry, spec.jobs) if retry else [])
    cache.save(rec)
    return rec, logs, info, problems


def _plain_dict(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as JSON would read it back (paths and other objects as strings)."""
    import json

    plain: dict[str, Any] = json.loads(json.dumps(obj, default=str))
    return plain
