"""The benchmark job: resolve, sample, run the missing utterances in shards, score, write.

    run_benchmark(model="pocketsphinx_en", dataset="mini_en", runner="docker", jobs=2)

Raw hypotheses come from the cache (see cache.py) whenever the same model identity, dataset
content and runtime options were run before, so re-scoring never re-runs a model. Results land
in `<results>/<model>/<dataset>/` (see asrbench/results/layout.py and docs/BENCHMARK.md).
"""

from __future__ import annotations

import copy
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

from asrbench.benchmark.cache import HypCache, cache_key, kill_leftovers
from asrbench.benchmark.cell import check_writable, cost_stats, timing_stats, write_cell_files
from asrbench.benchmark.errors import BenchmarkError
from asrbench.benchmark.output import Records
from asrbench.benchmark.progress import Progress
from asrbench.benchmark.provenance import git_state, host_info, package_versions, utc_now
from asrbench.benchmark.shard import sample_utterances, split_shards
from asrbench.dataset import Dataset, Utterance
from asrbench.errors import AsrbenchError, InputError, InternalError
from asrbench.executors import Executor, LocalExecutor, ShardJob, needs_for
from asrbench.fsio import atomic_write_json, disk_full_is_one_line, stage_dir
from asrbench.identity import digest
from asrbench.modelcard import Model
from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.results import layout
from asrbench.results.summary import Selection, Summary
from asrbench.runners import Runner, RunOptions, get_runner
from asrbench.scorers import get_scorer, scorer_config, scorer_identity
from asrbench.secrets import Redactor, for_models, weak_secrets
from asrbench.settings import settings
from scoring.metrics import Metrics

__all__ = ["BenchmarkError", "CellResult", "preflight", "run_benchmark", "run_matrix"]

UTT_TIMEOUT_ENV = "ASRBENCH_UTT_TIMEOUT"
_RUNNERS: dict[str, Runner] = {}
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
        tail = (
            f"{self.n_hyps}/{s.selection.n_utts} utterances, {s.n_failed} failed, RTF "
            f"{(s.timing or {}).get('rtf')}, runner {s.runner}, "
            f"{'cache hit' if self.cache_hit else 'ran'}{sample}) -> {where}"
        )
        if m is None:
            return (
                f"{s.model} on {s.dataset}: hypotheses only (reference-free dataset, no "
                f"error rate; {tail}"
            )
        rate = f"{100 * m.ter:.2f}%" if m.ter is not None else "undefined"
        return (
            f"{s.model} on {s.dataset}: {m.name} {rate} ({m.errors}/{m.n_ref} {m.unit}s, "
            f"coverage {m.coverage}, {tail}"
        )


def _runner(runner: str | Runner) -> Runner:
    if isinstance(runner, Runner):
        return runner
    with _DRIVER:
        if runner not in _RUNNERS:  # keeps a DockerRunner's image lookups across matrix cells
            _RUNNERS[runner] = get_runner(runner)
        return _RUNNERS[runner]


def _lang(ds: Dataset) -> str:
    return ds.language.split("-")[0].split("_")[0].lower()


def run_benchmark(
    model: str | Path,
    dataset: str | Path,
    runner: str | Runner = "auto",
    results_root: Path | None = None,
    options: RunOptions | None = None,
    *,
    jobs: int = 1,
    max_utts: int | None = None,
    seed: int = 0,
    utt_timeout_s: float | None = None,
    gpus: str | None = None,
    cache_root: Path | None = None,
    scorer_options: dict | None = None,
    replace: bool = False,
    progress: bool = True,
    progress_every_s: float = 10.0,
    command: Sequence[str] | None = None,
    executor: Executor | None = None,
) -> CellResult:
    """Run `model` on `dataset` (cached, sharded, resumable), score it, store the cell.

    `executor` says where the shards run: threads here (default, `LocalExecutor`) or a cluster
    (`asrbench.executors.get_executor("ray", address=...)`); the result is the same.
    Raises an AsrbenchError (BenchmarkError, DatasetError, ModelCardError, RunnerError...)
    whose message names what failed and what to do.
    """
    t_start, started = time.monotonic(), utc_now()
    executor = executor or LocalExecutor()
    with _DRIVER:
        prep = _prepare(
            model,
            dataset,
            runner,
            results_root,
            options,
            max_utts,
            seed,
            utt_timeout_s,
            gpus,
            cache_root,
            scorer_options,
            executor.runs_here,
        )
    return _run_prepared(
        prep,
        executor,
        t_start,
        started,
        jobs=jobs,
        max_utts=max_utts,
        seed=seed,
        utt_timeout_s=utt_timeout_s,
        scorer_options=scorer_options,
        replace=replace,
        progress=progress,
        progress_every_s=progress_every_s,
        command=command,
    )


Outcome = CellResult | AsrbenchError


def run_matrix(
    cells: Sequence[tuple[str | Path, str | Path]],
    executor: Executor | None = None,
    *,
    on_result: Callable[[int, Outcome], None] | None = None,
    **kwargs: object,
) -> list[Outcome]:
    """Run every (model, dataset) cell through one executor; `kwargs` as for `run_benchmark`.

    Before any cell starts, the executor's preflight checks that every model's needs (CPUs,
    GPU, Docker) can be met where the shards will run, and raises PreflightError otherwise.
    The local executor runs the cells one after another (each with `jobs` parallel shards); a
    remote one keeps `executor.cells_in_flight` cells in flight, so their shards queue on the
    cluster together. Returns each cell's CellResult, or the AsrbenchError that stopped it, in
    the order of `cells`; `on_result(index, outcome)` is called as each one ends. Ctrl-C stops
    what runs (finished shards are kept in the cache for the rerun) and propagates.
    """
    executor = executor or LocalExecutor()
    preflight(
        executor,
        [m for m, _ in cells],
        kwargs.get("runner", "auto"),  # type: ignore[arg-type]
        kwargs.get("options"),
        kwargs.get("gpus"),
    )  # type: ignore[arg-type]
    results: list[Outcome | None] = [None] * len(cells)

    def one(i: int) -> Outcome:
        model, dataset = cells[i]
        try:
            return run_benchmark(model, dataset, executor=executor, **kwargs)  # type: ignore[arg-type]
        except AsrbenchError as exc:
            return exc

    if executor.cells_in_flight <= 1 or len(cells) <= 1:
        for i in range(len(cells)):
            results[i] = one(i)
            if on_result:
                on_result(i, results[i])  # type: ignore[arg-type]
        return results  # type: ignore[return-value]
    pool = ThreadPoolExecutor(min(executor.cells_in_flight, len(cells)), thread_name_prefix="cell")
    try:
        futures = {pool.submit(one, i): i for i in range(len(cells))}
        for fut in as_completed(futures):
            i = futures[fut]
            results[i] = fut.result()
            if on_result:
                on_result(i, results[i])  # type: ignore[arg-type]
    except BaseException:
        executor.cancel()  # the cell threads stop waiting and cancel their shards
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results  # type: ignore[return-value]


def run_cells(
    cells: Sequence[tuple[str | Path, str | Path]],
    executor: Executor,
    *,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[int], None] | None = None,
    **kwargs: object,
) -> list[CellResult]:
    """The cells of a campaign grid (robustness, fairness): each (model, dataset) cell's
    CellResult in order; the first failure is raised (its message names the model and dataset).

    One at a time through `asrbench.benchmark.run_benchmark` on this machine (`on_start(i)`
    before each); all together through `run_matrix` for an executor that keeps cells in flight
    (a cluster's shards then queue together). `on_done(i)` as each cell ends.
    """
    if executor.cells_in_flight <= 1:
        from asrbench import benchmark  # the package attribute, so a test can stand in for it

        out = []
        for i, (model, dataset) in enumerate(cells):
            if on_start:
                on_start(i)
            out.append(
                benchmark.run_benchmark(model=model, dataset=dataset, executor=executor, **kwargs)
            )
            if on_done:
                on_done(i)
        return out
    outcomes = run_matrix(
        cells, executor, on_result=(lambda i, _: on_done(i)) if on_done else None, **kwargs
    )
    for o in outcomes:
        if isinstance(o, AsrbenchError):
            raise o
    return outcomes  # type: ignore[return-value]


def preflight(
    executor: Executor,
    models: Sequence[str | Path],
    runner: str | Runner = "auto",
    options: RunOptions | None = None,
    gpus: str | None = None,
) -> None:
    """The checks for every model of a grid, before any work starts: the runner can be made
    (a known name; for Docker, an engine that answers: InputError or RunnerError otherwise),
    and, for a remote executor, the cluster answers, offers every model's CPUs/GPU/Docker and
    its nodes can reach the zoo (PreflightError naming the cause)."""
    run = _runner(runner)
    if type(executor).preflight is Executor.preflight:
        return

    opts = copy.deepcopy(options) if isinstance(options, RunOptions) else RunOptions()
    needs = []
    for model in dict.fromkeys(str(m) for m in models):
        try:
            with _DRIVER:
                mdl = resolve_model(model)
        except InputError:
            continue  # its cells fail on their own with the resolver's message
        model_opts = copy.deepcopy(opts)
        if gpus and mdl.card.gpu != "none":
            model_opts.gpus = str(gpus)
        needs.append(needs_for(mdl, run.name, model_opts))
    executor.preflight(needs)


@dataclass
class _Prepared:
    """A cell resolved and keyed, before any shard runs."""

    results_root: Path
    mdl: Model
    ds: Dataset
    label: str
    selection: list[Utterance]
    scorer: object
    run: Runner
    identity: str
    prepare_s: float
    red: Redactor
    opts: RunOptions
    ds_hash: str
    hash_s: float
    key: str
    key_inputs: dict
    cache: HypCache


def _prepare(
    model: str | Path,
    dataset: str | Path,
    runner: str | Runner,
    results_root: Path | None,
    options: RunOptions | None,
    max_utts: int | None,
    seed: int,
    utt_timeout_s: float | None,
    gpus: str | None,
    cache_root: Path | None,
    scorer_options: dict | None,
    runs_here: bool = True,
) -> _Prepared:
    """Checks, resolution, model identity and cache key: everything before shards run."""
    for what, value in (
        ("utt_timeout_s", utt_timeout_s),
        ("timeout_s", options.timeout_s if options else None),
    ):
        if value is not None and not (
            isinstance(value, (int, float)) and math.isfinite(value) and value > 0
        ):
            raise InputError(f"{what} {value!r}: give a number of seconds above 0")
    cfg = settings()
    results_root = Path(results_root) if results_root else cfg.results
    cache_root = Path(cache_root) if cache_root else cfg.cache / "hyps"
    check_writable(results_root, "results folder", cfg.min_free_mb)
    check_writable(cache_root, "hypothesis cache", cfg.min_free_mb)
    mdl = resolve_model(model)
    for model_id, name, why in weak_secrets([mdl]):
        # A value this weak would be found in ordinary text: redacting it would alter logs
        # and errors at random, and flag transcripts that merely contain the word.
        raise InputError(
            f"model {model_id}: the value of its declared secret {name} is too "
            f"weak to be a credential ({why}); set the real credential in the "
            "host environment (or unset it)"
        )
    ds = resolve_dataset(dataset)
    label = f"{mdl.id} x {ds.id}"
    selection = sample_utterances(ds.utterances, max_utts, seed)
    # A bad scorer option fails before any model runs; a reference-free dataset is not scored.
    scorer = None if ds.reference_free else get_scorer(_lang(ds), scorer_options)
    run = _runner(runner)
    t_prep = time.monotonic()
    # Shards elsewhere: the local runner's identity is a digest of the model's source and
    # environment; its virtualenv is built on the nodes, not here. An image is built here
    # either way (the nodes fetch it from the zoo).
    identity = run.identity(mdl) if not runs_here and hasattr(run, "identity") else run.prepare(mdl)
    prepare_s = time.monotonic() - t_prep
    red = for_models([mdl])  # this model's declared secrets, as the runner will pass them
    opts = copy.deepcopy(options) if options else RunOptions()
    leaked = sorted(set(opts.env) & set(mdl.card.secrets))
    if leaked:
        # Settings are written to run.json and hashed into the cache key; secrets never are.
        raise BenchmarkError(
            f"model {mdl.id}: {', '.join(leaked)} is a declared secret; set it "
            "in the host environment instead of passing it as a setting"
        )
    if utt_timeout_s:
        opts.env[UTT_TIMEOUT_ENV] = f"{utt_timeout_s:g}"
    if gpus and mdl.card.gpu == "none":
        # The card says the program cannot use a GPU: passing one would only change the key.
        print(f"{label}: --gpus ignored: model card says gpu: none", file=sys.stderr)
    elif gpus:
        opts.gpus = gpus
    # What can change the model's output: env settings and GPU use. Memory, CPU limit and the
    # whole-run timeout change only whether it finishes, so they stay out of the key.
    runtime = {"env": dict(sorted(opts.env.items())), "gpus": opts.gpus or None}
    t_hash = time.monotonic()
    ds_hash = ds.content_hash()
    hash_s = time.monotonic() - t_hash
    key, key_inputs = cache_key(identity, ds_hash, runtime)
    cache = HypCache(cache_root, key, key_inputs)
    return _Prepared(
        results_root,
        mdl,
        ds,
        label,
        selection,
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
        cache,
    )


def _run_prepared(
    p: _Prepared,
    executor: Executor,
    t_start: float,
    started: str,
    *,
    jobs: int,
    max_utts: int | None,
    seed: int,
    utt_timeout_s: float | None,
    scorer_options: dict | None,
    replace: bool,
    progress: bool,
    progress_every_s: float,
    command: Sequence[str] | None,
) -> CellResult:
    """Harvest what earlier runs left, run the rest through the executor, then finish."""
    selection, label = p.selection, p.label
    shard_info: list[dict] = []
    logs: list[Path] = []
    problems: list[str] = []
    run_s = 0.0
    with p.cache.locked(label):
        leftovers = kill_leftovers(p.cache.attempts)
        rec, recovered, _, _ = p.cache.harvest(p.red)
        todo = [u for u in selection if u.id not in rec.hyp]  # failures are always retried
        if recovered or leftovers:
            print(
                f"{label}: resumed: {recovered} utterance(s) recovered from an interrupted run"
                f"{f', {leftovers} leftover program(s) stopped' if leftovers else ''}",
                file=sys.stderr,
            )
        cache_hit = not todo
        if todo:
            t_run = time.monotonic()
            job = ShardJob(
                runner=p.run,
                model=p.mdl,
                dataset=p.ds,
                identity=p.identity,
                dataset_hash=p.ds_hash,
                cache_key=p.key,
                options=p.opts,
                label=label,
            )
            rec, logs, shard_info, problems = _run_until_settled(
                executor, job, p.cache, selection, todo, jobs, progress, progress_every_s, p.red
            )
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
                    f"model {p.mdl.id} on dataset {p.ds.id}: none of the {len(selection)} "
                    f"utterance(s) has a result (e.g. {rec.failed.get(selection[0].id)}); "
                    "nothing was written. Fix the cause and rerun the same command to "
                    f"continue.\n{detail or '(no shard reported an error)'}"
                )
    with _DRIVER:
        return _finish(
            p,
            executor,
            rec,
            logs,
            shard_info,
            problems,
            todo,
            cache_hit,
            run_s,
            t_start,
            started,
            jobs=jobs,
            max_utts=max_utts,
            seed=seed,
            utt_timeout_s=utt_timeout_s,
            scorer_options=scorer_options,
            replace=replace,
            command=command,
        )


def _finish(
    p: _Prepared,
    executor: Executor,
    rec: Records,
    logs: list[Path],
    shard_info: list[dict],
    problems: list[str],
    todo: list[Utterance],
    cache_hit: bool,
    run_s: float,
    t_start: float,
    started: str,
    *,
    jobs: int,
    max_utts: int | None,
    seed: int,
    utt_timeout_s: float | None,
    scorer_options: dict | None,
    replace: bool,
    command: Sequence[str] | None,
) -> CellResult:
    """Score the selection and write the cell (summary, reports, run.json), moved into place."""
    results_root, mdl, ds, selection, scorer, run = (
        p.results_root,
        p.mdl,
        p.ds,
        p.selection,
        p.scorer,
        p.run,
    )
    identity, ds_hash, key, cache = p.identity, p.ds_hash, p.key, p.cache
    _check_accounted(p.label, selection, rec)
    secret_hits = {
        u.id: names for u in selection if (names := p.red.names_in(rec.hyp.get(u.id, "")))
    }
    if secret_hits:
        ids = sorted(secret_hits)
        names = sorted({n for v in secret_hits.values() for n in v})
        print(
            f"{p.label}: warning: {len(ids)} hypothesis(es) hold the value of declared "
            f"secret(s) {', '.join(names)} ({', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}"
            "); scored as written, flagged secret_in_hyp in utterances.jsonl",
            file=sys.stderr,
        )
    t_score = time.monotonic()
    refs = {u.id: u.text for u in selection}
    hyps = {u.id: rec.hyp[u.id] for u in selection if u.id in rec.hyp}
    result = scorer.score(refs, hyps) if scorer else None
    sid = (
        scorer_identity(scorer, scorer_options).to_dict()
        if scorer
        else {"config_hash": None, "options": dict(scorer_options or {})}
    )
    score_s = time.monotonic() - t_score
    ids = list(refs)
    sel = Selection(
        n_utts=len(selection),
        n_dataset_utts=len(ds.utterances),
        ids_sha256=digest("selection", utterances=ids),
        max_utts=max_utts,
        seed=seed if max_utts else None,
    )
    result_key = "sha256:" + digest(
        "result", hyps=key, dataset=ds_hash, selection=sel.to_dict(), scorer=sid
    )
    summary = Summary(
        producer="benchmark",
        result_key=result_key,
        metrics=result.metrics if result else None,
        selection=sel,
        scorer=sid,
        model=mdl.id,
        model_identity=identity,
        runner=run.name,
        dataset=ds.id,
        dataset_hash=ds_hash,
        hyps_key=key,
        failed=[{"id": i, "reason": rec.failed[i]} for i in ids if i in rec.failed],
        reports=["alignment.txt", "hyp.pra", "hyp.sys", "table.txt"] if result else [],
        timing=timing_stats(selection, rec),
        cost=cost_stats(selection, rec),
    )
    placement, displaced = layout.place(results_root, summary, replace=replace)
    staging = stage_dir(placement.path)  # beside it: the move into place is a rename
    t_write = time.monotonic()
    with disk_full_is_one_line(staging):  # logs and reports are written outside fsio
        write_cell_files(staging, selection, rec, result, summary, logs, secret_hits)
    write_s = time.monotonic() - t_write
    wall = time.monotonic() - t_start
    atomic_write_json(
        staging / "run.json",
        {
            "format": "asrbench-run-v2",
            "command": list(command) if command is not None else sys.argv,
            "cwd": os.getcwd(),
            "git": git_state(),
            "model": {
                "id": mdl.id,
                "identity": identity,
                "runner": run.name,
                "image": _image_tag(run, mdl),
                "source_hash": mdl.source_hash(),
                "card": mdl.card.to_dict(),
                "folder": str(mdl.root),
            },
            "dataset": {
                "id": ds.id,
                "hash": ds_hash,
                "folder": str(ds.root.resolve()),
                "meta": ds.meta,
                "n_utts": len(ds.utterances),
            },
            "selection": sel.to_dict(),
            "result_key": result_key,
            "placement": {"kind": placement.kind, "note": placement.note},
            "executor": executor.describe(),
            "options": {
                "jobs": jobs,
                "max_utts": max_utts,
                "seed": seed,
                "utt_timeout_s": utt_timeout_s,
                "run": _plain(asdict(p.opts)),
                "scorer": scorer_options or {},
            },
            "cache": {
                "key": key,
                "inputs": p.key_inputs,
                "folder": str(cache.root),
                "hit": cache_hit,
                "utts_run": len(todo),
            },
            "contract_problems": problems,
            "scorer": {**sid, "config": scorer_config(scorer) if scorer else None},
            "packages": package_versions(),
            "host": host_info(),
            "times": {
                "started": started,
                "ended": utc_now(),
                "wall_s": round(wall, 3),
                "prepare_s": round(p.prepare_s, 3),
                "dataset_hash_s": round(p.hash_s, 3),
                "run_s": round(run_s, 3),
                "score_s": round(score_s, 3),
                "write_s": round(write_s, 3),
                "overhead_s": round(wall - run_s - score_s - p.prepare_s, 3),
            },
            "shards": shard_info,
        },
    )
    layout.commit(staging, placement, displaced)
    return CellResult(
        summary,
        placement,
        sum(1 for u in selection if u.id in rec.hyp),
        cache_hit,
        round(wall, 3),
        round(run_s, 3),
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
    executor: Executor,
    job: ShardJob,
    cache: HypCache,
    selection: list[Utterance],
    todo: list[Utterance],
    jobs: int,
    progress: bool,
    every_s: float,
    red: Redactor,
) -> tuple[Records, list[Path], list[dict], list[str]]:
    """Run `todo` in shards, then isolate failures so one bad utterance fails only itself.

    A program that fails or stops on an utterance often spoils the rest of its shard (a
    decoder left in a bad state, a crash). After each attempt, the first utterance without a
    result in each shard is run again alone (once), and the later ones are run again without
    it; rounds stop when one brings no new transcription. Every utterance ends transcribed or
    failed with a reason; failures stay in the cache only as failures, retried by every rerun.
    """
    shards = split_shards(todo, jobs)
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
                every_s=every_s,
                enabled=progress,
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
        shards = solos + (split_shards(retry, jobs) if retry else [])
    cache.save(rec)
    return rec, logs, info, problems


def _image_tag(run: Runner, mdl: object) -> str | None:
    tag = getattr(run, "image_tag", None)
    return tag(mdl) if tag else None


def _plain(obj: object) -> object:
    import json

    return json.loads(json.dumps(obj, default=str))
