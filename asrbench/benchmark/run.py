"""The benchmark job: resolve, sample, run the missing utterances in shards, score, write.

    run_benchmark(model="pocketsphinx_en", dataset="mini_en", runner="docker", jobs=2)

Raw hypotheses come from the cache (see cache.py) whenever the same model identity, dataset
content and runtime options were run before, so re-scoring never re-runs a model. Results land
in `<results>/<model>/<dataset>/` (see results.py and docs/BENCHMARK.md).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from asrbench.benchmark.cache import HypCache, cache_key, kill_leftovers
from asrbench.benchmark.errors import BenchmarkError
from asrbench.benchmark.execute import run_shards
from asrbench.benchmark.progress import Progress
from asrbench.benchmark.provenance import git_state, host_info, package_versions, utc_now
from asrbench.benchmark.resolve import resolve_dataset, resolve_dataset_dir, resolve_model
from asrbench.benchmark.results import check_writable, write_cell
from asrbench.benchmark.score import BenchmarkScorer
from asrbench.benchmark.shard import sample_utterances, split_shards
from asrbench.dataset import Dataset
from asrbench.fsio import atomic_write_json
from asrbench.paths import REPO_ROOT, cache_dir
from asrbench.runners import Runner, RunnerError, RunOptions, get_runner

__all__ = ["BenchmarkError", "resolve_dataset_dir", "run_benchmark"]

UTT_TIMEOUT_ENV = "ASRBENCH_UTT_TIMEOUT"
_SCORERS: dict[tuple[str, str], BenchmarkScorer] = {}
_RUNNERS: dict[str, Runner] = {}


def default_results_root() -> Path:
    return Path(os.environ.get("ASRBENCH_RESULTS", REPO_ROOT / "results"))


def _scorer(lang: str, options: dict | None) -> BenchmarkScorer:
    # Built once per process: the scorer compiles its transducers at construction.
    key = (lang, json.dumps(options or {}, sort_keys=True))
    if key not in _SCORERS:
        try:
            _SCORERS[key] = BenchmarkScorer(lang, options)
        except Exception as exc:  # ScoringError (bad language/option) or a missing data file
            raise BenchmarkError(f"cannot build the scorer for language {lang!r}: {exc}") from exc
    return _SCORERS[key]


def _runner(runner: str | Runner) -> Runner:
    if isinstance(runner, Runner):
        return runner
    if runner not in _RUNNERS:  # keeps a DockerRunner's image lookups across matrix cells
        _RUNNERS[runner] = get_runner(runner)
    return _RUNNERS[runner]


def dataset_hash(ds: Dataset) -> str:
    """Content hash, memoised by the files' (size, mtime) so large datasets are read once."""
    stats = [ds.root.resolve().as_posix()]
    for rel in ["metadata.tsv", *(u.audio for u in ds.utterances)]:
        st = (ds.root / rel).stat()
        stats.append(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}")
    memo = cache_dir() / "dataset-hash" / hashlib.sha256("\n".join(stats).encode()).hexdigest()
    try:
        return memo.read_text().strip()
    except OSError:
        pass
    value = ds.content_hash()
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(value + "\n")
    except OSError:
        pass  # a read-only cache only costs the rehash next time
    return value


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
    progress: bool = True,
    progress_every_s: float = 10.0,
    command: Sequence[str] | None = None,
) -> dict:
    """Run `model` on `dataset` (cached, sharded, resumable); return the summary dict.

    The returned dict is summary.json plus convenience keys (`wer`, `errors`, `ref_words`,
    `n_utts`, `n_hyps`, `runner`, `cache_hit`, `out_dir`). Raises BenchmarkError (or the
    dataset's / model card's own errors) with a message that names what failed and what to do.
    """
    t_start, started = time.monotonic(), utc_now()
    results_root = Path(results_root) if results_root else default_results_root()
    cache_root = Path(cache_root) if cache_root else cache_dir() / "hyps"
    check_writable(results_root, "results folder")
    check_writable(cache_root, "hypothesis cache")
    mdl = resolve_model(model)
    ds = resolve_dataset(dataset)
    label = f"{mdl.id} x {ds.id}"
    selection = sample_utterances(ds.utterances, max_utts, seed)
    run = _runner(runner)
    t_prep = time.monotonic()
    try:
        identity = run.prepare(mdl)
    except RunnerError:
        raise
    except Exception as exc:  # image build failures, missing wheels...
        raise BenchmarkError(f"model {mdl.id}: preparing it for the {run.name} runner failed: "
                             f"{exc}") from exc
    prepare_s = time.monotonic() - t_prep
    opts = copy.deepcopy(options) if options else RunOptions()
    leaked = sorted(set(opts.env) & set(mdl.card.secrets))
    if leaked:
        # Settings are written to run.json and hashed into the cache key; secrets never are.
        raise BenchmarkError(f"model {mdl.id}: {', '.join(leaked)} is a declared secret; set it "
                             "in the host environment instead of passing it as a setting")
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
    ds_hash = dataset_hash(ds)
    hash_s = time.monotonic() - t_hash
    key, key_inputs = cache_key(identity, ds_hash, runtime)
    cache = HypCache(cache_root, key, key_inputs)
    out = results_root / mdl.id / ds.id
    shard_info: list[dict] = []
    logs: list[Path] = []
    run_s = 0.0
    with cache.locked(label):
        leftovers = kill_leftovers(cache.attempts)
        rec, recovered, _ = cache.harvest()
        todo = [u for u in selection if u.id not in rec.done()]
        if recovered or leftovers:
            print(f"{label}: resumed: {recovered} utterance(s) recovered from an interrupted run"
                  f"{f', {leftovers} leftover program(s) stopped' if leftovers else ''}",
                  file=sys.stderr)
        cache_hit = not todo
        if todo:
            shards = split_shards(todo, jobs)
            attempt = cache.attempt_dir([u.id for u in todo], jobs)
            done_before = [u for u in selection if u.id in rec.done()]
            prog = Progress(label, {u.id: u.duration for u in todo}, len(done_before),
                            sum(u.duration for u in done_before),
                            [attempt / f"shard-{k}" for k in range(len(shards))],
                            every_s=progress_every_s, enabled=progress)
            t_run = time.monotonic()
            outcomes = run_shards(run, mdl, ds, shards, attempt, opts, prog)
            run_s = time.monotonic() - t_run
            rec, _, logs = cache.harvest()
            shard_info = [o.to_dict() for o in outcomes]
            missing = [u.id for u in selection if u.id not in rec.done()]
            errors = [o for o in outcomes if o.error]
            if missing:
                detail = "\n".join(f"--- shard {o.index} ({o.n_utts} utts): {o.error}"
                                   for o in errors) or "(no shard reported an error)"
                raise BenchmarkError(
                    f"model {mdl.id} on dataset {ds.id}: {len(missing)} of {len(selection)} "
                    f"utterance(s) have no result (e.g. {', '.join(missing[:5])}). The "
                    f"{len(selection) - len(missing)} done are cached ({cache.root}); fix the "
                    f"cause and rerun the same command to continue.\n{detail}"
                )
    t_score = time.monotonic()
    refs = {u.id: u.text for u in selection}
    hyps = {u.id: rec.hyp[u.id] for u in selection if u.id in rec.hyp}
    scored = _scorer(_lang(ds), scorer_options).score(refs, hyps)
    score_s = time.monotonic() - t_score
    ids_hash = hashlib.sha256("\n".join(refs).encode()).hexdigest()
    head = {
        "model": mdl.id,
        "dataset": ds.id,
        "dataset_hash": ds_hash,
        "model_identity": identity,
        "runner": run.name,
        "cache_key": key,
        "selection": {"max_utts": max_utts, "seed": seed if max_utts else None,
                      "n_utts": len(selection), "n_dataset_utts": len(ds.utterances),
                      "ids_sha256": ids_hash},
    }
    t_write = time.monotonic()
    summary = write_cell(out, selection, rec, scored, head, logs)
    write_s = time.monotonic() - t_write
    wall = time.monotonic() - t_start
    atomic_write_json(out / "run.json", {
        "format": "asrbench-run-v1",
        "command": list(command) if command is not None else sys.argv,
        "cwd": os.getcwd(),
        "git": git_state(),
        "model": {"id": mdl.id, "identity": identity, "runner": run.name,
                  "image": _image_tag(run, mdl), "source_hash": mdl.source_hash(),
                  "card": mdl.card.to_dict(), "folder": str(mdl.root)},
        "dataset": {"id": ds.id, "hash": ds_hash, "folder": str(ds.root.resolve()),
                    "meta": ds.meta, "n_utts": len(ds.utterances)},
        "selection": head["selection"],
        "options": {"jobs": jobs, "max_utts": max_utts, "seed": seed,
                    "utt_timeout_s": utt_timeout_s, "run": _plain(asdict(opts)),
                    "scorer": scorer_options or {}},
        "cache": {"key": key, "inputs": key_inputs, "folder": str(cache.root), "hit": cache_hit,
                  "utts_run": len(todo)},
        "scorer": {"name": scored.name, "config": scored.config,
                   "config_hash": scored.config_hash},
        "packages": package_versions(),
        "host": host_info(),
        "times": {"started": started, "ended": utc_now(), "wall_s": round(wall, 3),
                  "prepare_s": round(prepare_s, 3), "dataset_hash_s": round(hash_s, 3),
                  "run_s": round(run_s, 3), "score_s": round(score_s, 3),
                  "write_s": round(write_s, 3),
                  "overhead_s": round(wall - run_s - score_s - prepare_s, 3)},
        "shards": shard_info,
    })
    m = summary["metrics"]
    return {**summary, "wer": m.get("wer", m.get("ter")), "errors": m.get("errors"),
            "ref_words": m.get("n_ref"), "n_utts": len(selection),
            "n_hyps": sum(1 for u in selection if u.id in rec.hyp), "cache_hit": cache_hit,
            "out_dir": str(out), "wall_s": round(wall, 3), "run_s": round(run_s, 3)}


def _image_tag(run: Runner, mdl: object) -> str | None:
    tag = getattr(run, "image_tag", None)
    try:
        return tag(mdl) if tag else None
    except Exception:  # the tag is informative only; the identity is already recorded
        return None


def _plain(obj: object) -> object:
    return json.loads(json.dumps(obj, default=str))
