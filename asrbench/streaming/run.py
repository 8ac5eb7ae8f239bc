"""One streaming cell: feed a model's streaming program a dataset, score the finals, store.

    results/streaming/<model>/<dataset>~<chunk>ms-x<speed>/            every utterance
    results/streaming/<model>/<dataset>~<chunk>ms-x<speed>-sample-<n>-<key>/   --max-utts

under the results root's `streaming/` folder, not beside the batch cells: the stored-cell
reader (`asrbench/results/store.py`) reads `<root>/<model>/<dataset>` folders, and a stream
cell is another kind of result (latency under a paced feed, not a batch run). Its summary.json
has producer `stream`; stream.json is `asrbench-stream-v4` (with the latency guard,
`guard.py`, and the runs that fed the cell: a cell resumes from its cache, `cache.py`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from asrbench import audio
from asrbench.dataset import Dataset, Utterance, sample_utterances
from asrbench.errors import InputError
from asrbench.fsio import atomic_write_bytes, atomic_write_text, replace_dir, stage_dir
from asrbench.identity import bytes_sha256, digest, short
from asrbench.ids import check_id, inside
from asrbench.modelcard import Model, for_gpus
from asrbench.results.records import StreamRecord, write_stream
from asrbench.results.store import STREAM_TOP
from asrbench.results.summary import Selection, Summary, new_summary, write_summary
from asrbench.runners.base import RunnerError, RunOptions, log_tail
from asrbench.streaming import align, feed, guard, match, metrics, program
from asrbench.streaming.cache import StreamCache


@dataclass(frozen=True)
class StreamSpec:
    """What the run was asked for."""

    runner: str = "docker"
    chunk_ms: int = 100
    speed: float = 1.0
    max_utts: int | None = None
    seed: int = 0
    results_root: Path | None = None
    reps: int = 1000
    cache_root: Path | None = None  # default: the cache's streams/ (streaming/cache.py)
    cpus: float | None = None  # the container's CPU limit (Docker), as ops/benchmark's
    gpus: str | None = None  # "all" or a count, as ops/benchmark's --gpus


@dataclass(frozen=True)
class StreamResult:
    folder: Path
    summary: Summary
    record: StreamRecord


def check_spec(spec: StreamSpec) -> None:
    if not 10 <= spec.chunk_ms <= 10_000:
        raise InputError(f"--chunk-ms {spec.chunk_ms}: give 10 to 10000 milliseconds")
    if not 0.1 <= spec.speed <= 100:
        raise InputError(f"--speed {spec.speed}: give 0.1 to 100 (times real time)")
    if spec.runner not in program.RUNNERS:
        raise InputError(f"--runner {spec.runner!r}: choose one of {', '.join(program.RUNNERS)}")
    if spec.cpus is not None and not spec.cpus > 0:
        raise InputError(f"--cpus {spec.cpus}: give a positive number of CPUs")
    if spec.max_utts is not None and spec.max_utts < 1:
        raise InputError(f"--max-utts {spec.max_utts}: give at least 1")


def select(ds: Dataset, spec: StreamSpec) -> list[Utterance]:
    """Every utterance, or the seeded sample `ops/benchmark` takes for the same
    `--max-utts N --seed S` (the one sampler; until 2026-11-29 streaming drew its own)."""
    return sample_utterances(ds.utterances, spec.max_utts, spec.seed)


def read_pcm(ds: Dataset, utt: Utterance, rate: int, check_only: bool = False) -> bytes:
    """The utterance's 16-bit mono PCM at `rate` (with `check_only`, b"" once the header says
    so: every file is checked before the feed starts, read only when fed); InputError naming
    the file otherwise."""
    path = ds.audio_path(utt)
    try:
        pcm, *shape = audio.wav_pcm(path, frames=not check_only)
    except audio.WAV_ERRORS as exc:
        raise InputError(f"{path}: cannot read as WAV ({exc})") from None
    if tuple(shape) == (rate, 1, 2):
        return pcm
    raise InputError(
        f"{path} (utterance {utt.id}): {shape[0]} Hz, {shape[1]} channel(s), {8 * shape[2]}-bit; "
        f"streaming feeds {rate} Hz mono 16-bit as stored (no resampling yet): use a dataset "
        "at the card's rate"
    )


def cell_dir(root: Path, model: str, dataset: str, spec: StreamSpec, sel: Selection) -> Path:
    check_id(model, "model ID", "fix the model's model.yaml `id:`")
    check_id(dataset, "dataset ID", "fix `id:` in the dataset's dataset.yaml")
    speed = f"{spec.speed:g}".replace(".", "p")
    name = f"{dataset}~{spec.chunk_ms}ms-x{speed}"
    if sel.is_sample:
        name += f"-sample-{sel.n_utts}-{short(sel.ids_sha256, 12)}"
    return inside(root, root / STREAM_TOP / model / name, "stream cell folder")


def stream_cell(
    model: Model,
    ds: Dataset,
    spec: StreamSpec,
    progress: Callable[[feed.FedUtterance], None] | None = None,
) -> StreamResult:
    """Feed, score, store one streaming cell; returns where it went and what it holds.

    Utterances already in the cell's cache entry (streaming/cache.py) are not streamed again:
    a run killed mid-cell resumes where it stopped, and a complete cell is served from the
    cache without starting the program."""
    from asrbench.settings import settings

    check_spec(spec)
    program.streaming_program(model)  # before any work: the card must name one
    model, options = run_options(model, spec)
    utts = select(ds, spec)
    rate = model.card.sample_rate
    for u in utts:
        read_pcm(ds, u, rate, check_only=True)
    root = Path(spec.results_root or settings().results)
    sel = Selection.of([u.id for u in utts], len(ds.utterances), spec.max_utts, spec.seed)
    target = cell_dir(root, model.id, ds.id, spec, sel)
    prep = program.prepare(model, spec.runner)
    ds_hash = ds.content_hash()
    cache_root = Path(spec.cache_root or settings().stream_cache)
    entry = StreamCache(cache_root, prep.identity, ds_hash, cache_runtime(spec, options))
    with entry.locked(f"{model.id} x {ds.id}"):
        stage = stage_dir(target)
        runs = _run_missing(_Feed(prep, ds, spec, options, entry), utts, progress)
        fed = [runs.fed[u.id] for u in utts]
        summary, record = _score(model, ds, fed, spec, sel, prep)
        record = _with_runs(record, fed, runs, entry)
        _write_logs(stage / "stream.log", entry, record.runs or [])
        write_stream(stage / "stream.json", record)
        atomic_write_text(
            stage / "events.jsonl",
            "".join(json.dumps(f.to_dict(), sort_keys=True) + "\n" for f in fed),
        )
        write_summary(stage / "summary.json", summary)
        replace_dir(stage, target)
    return StreamResult(target, summary, record)


def run_options(model: Model, spec: StreamSpec) -> tuple[Model, RunOptions]:
    """The model (its CUDA image variant under --gpus, as ops/benchmark) and the container's
    options; a card with `gpu: none` gets no GPU (as ops/benchmark: it would only change the
    key)."""
    options = container_options(model, spec)
    if spec.gpus and options.gpus is None:
        print(f"{model.id}: --gpus ignored: model card says gpu: none", file=sys.stderr)
    return for_gpus(model, options.gpus), options


def container_options(model: Model, spec: StreamSpec) -> RunOptions:
    """The container's CPU limit and GPUs (none for a card with `gpu: none`)."""
    return RunOptions(cpus=spec.cpus, gpus=spec.gpus if model.card.gpu != "none" else None)


def cache_runtime(spec: StreamSpec, options: RunOptions) -> dict[str, Any]:
    """What, besides the program and the data, can change what a stream cell measures: the
    batch key's settings and GPUs, and the feed: chunk length, speed and the CPU limit (which
    the batch key leaves out, as it changes only how fast a batch runs; a stream's latencies
    are how fast it runs)."""
    return {
        "env": dict(sorted(options.env.items())),
        "gpus": options.gpus or None,
        "stream": {"chunk_ms": spec.chunk_ms, "speed": spec.speed, "cpus": options.cpus},
    }


@dataclass
class _Runs:
    """The cell's utterances, by ID, and the run that fed each."""

    fed: dict[str, feed.FedUtterance]
    run_of: dict[str, str]


@dataclass(frozen=True)
class _Feed:
    """What a run of the program needs: the prepared model, the data, the request, the
    container's options and the cache entry its utterances go to."""

    prep: program.Prepared
    ds: Dataset
    spec: StreamSpec
    options: RunOptions
    entry: StreamCache


def _run_missing(
    cell: _Feed, utts: list[Utterance], progress: Callable[[feed.FedUtterance], None] | None
) -> _Runs:
    """The cached utterances, and a run of the program for the rest (none when all are)."""
    entry = cell.entry
    kept = entry.kept([u.id for u in utts])
    runs = _Runs({k: c.fed for k, c in kept.items()}, {k: c.run for k, c in kept.items()})
    todo = [u for u in utts if u.id not in kept]
    if kept:
        print(
            f"{cell.prep.model.id} x {cell.ds.id}: {len(kept)} of {len(utts)} utterance(s) "
            f"from the cache ({entry.root}); streaming {len(todo)}",
            file=sys.stderr,
        )
    if not todo:
        return runs
    run = entry.new_run()

    def done(f: feed.FedUtterance) -> None:
        entry.keep(run, f)  # as soon as it is done: a kill loses only the one in flight
        if progress:
            progress(f)

    for f in _stream(cell, todo, run, done):
        runs.fed[f.uid], runs.run_of[f.uid] = f, run
    return runs


def _stream(
    cell: _Feed,
    utts: list[Utterance],
    run: str,
    progress: Callable[[feed.FedUtterance], None],
) -> list[feed.FedUtterance]:
    """One run of the program over `utts`; its log and host measures go to the entry."""
    prep, spec, entry = cell.prep, cell.spec, cell.entry
    rate = prep.model.card.sample_rate
    log_path = entry.log(run)
    host = guard.Host(spec.runner)
    with open(log_path, "ab") as log:
        started = program.launch(prep, log, cell.options)
        host.started()
        entry.record_run(run, host.to_dict())  # a run killed from here on keeps its start
        try:
            pcms = ((u.id, read_pcm(cell.ds, u, rate)) for u in utts)
            fed = _feed(started, pcms, feed.Pace(rate, spec.chunk_ms, spec.speed), progress)
        finally:
            host.feed_ended(started.proc.pid, started.container)
            started.stop()
            host.stopped()
            entry.record_run(run, host.to_dict())
    if fed is None:
        raise RunnerError(
            f"model {prep.model.id}: its streaming program stopped before it was ready; "
            f"its log, tail:\n{log_tail(log_path)}"
        )
    return fed


def _with_runs(
    record: StreamRecord, fed: list[feed.FedUtterance], runs: _Runs, entry: StreamCache
) -> StreamRecord:
    """Each row names the run that fed it; `runs` lists them (utterances, host) in order of
    start, and the guard judges each on its own host (guard.judge_runs)."""
    rows = [
        {**row, "run": runs.run_of[f.uid]} for row, f in zip(record.utterances, fed, strict=True)
    ]
    hosts = entry.runs(set(runs.run_of.values()))
    judged = [
        (
            run,
            [f for f in fed if runs.run_of[f.uid] == run],
            [r for r in rows if r["run"] == run],
            host,
        )
        for run, host in hosts.items()
    ]
    listed = [{"run": run, "n_utts": len(feds), "host": host} for run, feds, _, host in judged]
    return replace(record, utterances=rows, latency_guard=guard.judge_runs(judged), runs=listed)


def _write_logs(path: Path, entry: StreamCache, runs: list[dict[str, Any]]) -> None:
    """stream.log: the program's stderr of each run that fed the cell (one run: its log as
    written; several: each under a line naming its run)."""
    parts = []
    for r in runs:
        log = entry.log(r["run"])
        text = log.read_bytes() if log.is_file() else b""
        parts.append(text if len(runs) == 1 else f"== run {r['run']} ==\n".encode() + text)
    atomic_write_bytes(path, b"".join(parts))


def _feed(
    started: program.Started,
    audio: Iterable[tuple[str, bytes]],
    pace: feed.Pace,
    progress: Callable[[feed.FedUtterance], None] | None,
) -> list[feed.FedUtterance] | None:
    """Every utterance fed once the program is ready; None when it never got ready."""
    reader = feed.Reader(started.proc.stdout).start()  # type: ignore[arg-type]
    try:
        feed.wait_ready(reader)
    except feed.StreamError as exc:
        print(f"{started.runner}: {exc}", file=sys.stderr)
        return None
    stdin = started.proc.stdin
    return feed.feed_all(stdin, reader, audio, pace, progress)  # type: ignore[arg-type]


def _score(
    model: Model,
    ds: Dataset,
    fed: list[feed.FedUtterance],
    spec: StreamSpec,
    sel: Selection,
    started: program.Prepared,
) -> tuple[Summary, StreamRecord]:
    from asrbench.scorers import get_scorer, scorer_identity

    scorer = get_scorer(ds.language)
    finals = {f.uid: f.final.text for f in fed if f.final is not None and not f.failed}
    t = time.monotonic()
    fed_ids = {f.uid for f in fed}
    result = scorer.score({u.id: u.text for u in ds.utterances if u.id in fed_ids}, finals)
    score_s = time.monotonic() - t
    ds_hash = ds.content_hash()
    # the "hyps" kind: what ran, on what, how it was fed; the finals' own digest is part of
    # the runtime, as a paced run's text may depend on timing (a program reading its clock)
    finals_sha = bytes_sha256(json.dumps(sorted(finals.items())).encode("utf-8"))
    hyps = "sha256:" + digest(
        "hyps",
        model=started.identity,
        dataset=ds_hash,
        runtime={"stream": {"chunk_ms": spec.chunk_ms, "speed": spec.speed}, "finals": finals_sha},
    )
    failed = [{"id": f.uid, "reason": f.failed} for f in fed if f.failed]
    summary = new_summary(
        "stream",
        result.metrics,
        sel,
        scorer_identity(scorer).to_dict(),
        hyps=hyps,
        data=ds_hash,
        model=model.id,
        model_identity=started.identity,
        runner=started.runner,
        dataset=ds.id,
        dataset_hash=ds_hash,
        hyps_key=hyps,
        failed=failed,
        timing={"audio_s": sum(f.audio_s for f in fed), "score_s": score_s},
    )
    timings, notes = _timings(ds, fed, scorer)
    rows = [
        {
            **metrics.per_utterance(f, spec.speed, timings.get(f.uid)),
            **guard.per_utterance(f, spec.speed),
        }
        for f in fed
    ]
    record = StreamRecord(
        model=model.id,
        model_identity=started.identity,
        runner=started.runner,
        dataset=ds.id,
        dataset_hash=ds_hash,
        result_key=summary.result_key,
        chunk_ms=spec.chunk_ms,
        speed=spec.speed,
        n_utts=len(fed),
        n_failed=len(failed),
        pooled=metrics.pooled(rows, spec.reps, spec.seed),
        pacing=metrics.pacing([f for f in fed if not f.failed]),
        overhead_s=metrics.overhead(fed),
        utterances=rows,
        notes=notes,
    )
    return summary, record


def _timings(
    ds: Dataset, fed: list[feed.FedUtterance], scorer: Any
) -> tuple[dict[str, metrics.RefTiming], list[str]]:
    """Each fed utterance's reference word times (forced alignment, cached) and what each of
    its hypotheses got right; notes saying what was left out and why."""
    from asrbench.scorers import scorer_identity
    from asrbench.settings import settings

    fed_ids = {f.uid for f in fed if not f.failed}
    utts = [u for u in ds.utterances if u.id in fed_ids]
    config = scorer_identity(scorer).config_hash
    try:
        times = align.word_times(ds, utts, scorer.normalize, {"config": config}, settings().cache)
    except InputError as exc:  # no aligner here: the other metrics stand without word times
        return {}, [f"no reference word times ({exc}): no word latency or cursor lag"]
    if not times:
        return {}, [
            f"no reference word times for language {ds.language!r} (the aligner is en-us): "
            "end of speech = end of the audio fed; no word latency or cursor lag"
        ]
    placed = {uid: wt for uid, wt in times.items() if wt.words}
    hits = match.matched(
        scorer,
        {uid: wt.words for uid, wt in placed.items()},
        {uid: wt.starts for uid, wt in placed.items()},
        fed,
    )
    out = {uid: metrics.RefTiming(placed[uid].ends, correct) for uid, correct in hits.items()}
    unplaced = sum(t.unplaced for t in times.values())
    words = sum(len(t.words) for t in times.values())
    notes = [
        f"reference word times: forced alignment ({align.aligner_version()}); "
        f"{unplaced} of {words} reference words unplaced (left out of the word metrics)",
        "end of speech = the end of the reference's last aligned word",
    ]
    return out, notes


def describe(res: StreamResult) -> str:
    """The cell's figures as text: TER and the latency metrics with their intervals."""
    rec, m = res.record, res.summary.metrics
    lines = [
        f"{rec.model} on {rec.dataset}: {rec.n_utts} utterance(s), chunk {rec.chunk_ms} ms, "
        f"{rec.speed:g}x real time, runner {rec.runner}, {rec.n_failed} failed"
    ]
    if m is not None:
        ci = m.ter_ci
        lines.append(
            f"  final {m.name}: {_pct(m.ter)}"
            + (f"  [{_pct(ci.low)}, {_pct(ci.high)}]" if ci else "")
        )
    p = rec.pooled
    for key, label in (
        ("first_partial_s", "first partial (s)"),
        ("eos_final_s", "end of speech -> final (s)"),
        ("rtf", "RTF under pacing"),
    ):
        lines.append(f"  {label}: {_mean(p[key])}")
    s = p["stability_revised"]
    lines.append(
        f"  revised interim words: {_pct(s['value'])} of {s['den']}" + _ci(s["ci"], pct=True)
    )
    lines += _describe_words(p)
    late, ov = rec.pacing["lateness_s"], rec.overhead_s
    lines.append(
        f"  pacing: send lateness mean {_ms(late['mean'])}, p99 {_ms(late['p99'])}, "
        f"max {_ms(late['max'])}; {rec.pacing['deadline_misses']} of {late['n']} sends later "
        f"than {_ms(rec.pacing['miss_threshold_s'])}"
    )
    lines.append(
        f"  overhead per event: mean {_ms(ov['mean'])}, p99 {_ms(ov['p99'])}, "
        f"max {_ms(ov['max'])} ({ov['n']} events)"
    )
    lines += _describe_guard(rec.latency_guard)
    if rec.runs and len(rec.runs) > 1:
        counts = ", ".join(str(r["n_utts"]) for r in rec.runs)
        lines.append(
            f"  fed by {len(rec.runs)} runs of the program ({counts} utterances; resumed from "
            "its cache): stream.json names each utterance's run"
        )
    lines.append(f"  stored in {res.folder}")
    return "\n".join(lines)


def _describe_guard(g: dict[str, Any] | None) -> list[str]:
    """The latency guard's verdict: one line when the latencies are the model's, else one
    line per reason (the CLI also warns on stderr, `guard.warning`)."""
    if not g:
        return []
    if g["attributable"]:
        extra = f" ({'; '.join(g['unjudged'])})" if g.get("unjudged") else ""
        return [f"  latency guard: latencies attributable to the model{extra}"]
    lines = ["  latency guard: NOT the model's latencies (docs/STREAMING.md, 'Latency guard'):"]
    return lines + [f"    {r['rule']}: {r['why']}; {r['do']}" for r in g["reasons"]]


def _describe_words(p: dict[str, Any]) -> list[str]:
    """The word latency and cursor lag lines (one line saying why when not measured)."""
    w, lag, fin = (
        p.get("word_latency_s"),
        p.get("cursor_lag_interim_s"),
        p.get("cursor_lag_final_s"),
    )
    if not w or not lag or not fin:
        return ["  word emission latency, cursor lag: not measured (no reference word times)"]
    return [
        f"  word emission latency (s): mean {_f(w['mean'])}{_ci(w['mean_ci'])}, "
        f"p50 {_f(w['p50'])}, p90 {_f(w['p90'])}, p99 {_f(w['p99'])} "
        f"(n={w['n']} words; {w['never_emitted']} never right, {w['unplaced']} unplaced, "
        f"of {w['reference_words']})",
        f"  cursor lag, interim (s): weighted mean {_f(lag['weighted_mean'])}"
        f"{_ci(lag['weighted_mean_ci'])}, min {_f(lag['min'])}, max {_f(lag['max'])}, "
        f"midpoint {_f(lag['midpoint'])}, p90 {_f(lag['p90'])}, p99 {_f(lag['p99'])} "
        f"(n={lag['n']}; {lag['skipped']} with no right word)",
        f"  cursor lag, final (s): mean {_f(fin['mean'])}{_ci(fin['mean_ci'])}, "
        f"min {_f(fin['min'])}, max {_f(fin['max'])}, p90 {_f(fin['p90'])} (n={fin['n']})",
    ]


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _ms(x: float | None) -> str:
    return "n/a" if x is None else f"{1000 * x:.2f} ms"


def _ci(ci: dict[str, Any] | None, pct: bool = False) -> str:
    if not ci or ci["low"] is None:
        return ""
    f = _pct if pct else (lambda v: f"{v:.3f}")
    return f"  [{f(ci['low'])}, {f(ci['high'])}]"


def _mean(d: dict[str, Any]) -> str:
    if d["mean"] is None:
        return f"n/a ({d['undefined']} undefined)"
    extra = f", {d['undefined']} undefined" if d["undefined"] else ""
    return f"{d['mean']:.3f}{_ci(d['ci'])} (n={d['n']}{extra})"


def print_progress(fed: feed.FedUtterance) -> None:
    what = f"failed: {fed.failed}" if fed.failed else (fed.final.text if fed.final else "")
    print(f"  {fed.uid}: {what}", file=sys.stderr)
