"""Capacity: how many simultaneous real-time streams of one model this machine sustains.

`ops/stream --capacity MAX` starts N copies of the model's streaming program and feeds them
all at once (N paced feeds, one thread each, the same absolute-deadline clock as a single
stream; each stream the same utterances, stream i starting at the i-th, so that the streams'
ends, and the decoders' end-of-utterance work, do not all fall at the same instant), for
N = 1, 2, 4, ... up to MAX, and stops at the first N that is not sustained. N streams are
*sustained* when (CRITERION):

1. no utterance failed (every program stayed up and sent every final);
2. latency did not degrade: the p90 of end of speech -> final, over every utterance of every
   stream, is within `factor` (1.5) times N=1's;
3. the programs kept pace, no growing lag: the median over utterances of the *backlog growth*
   is at most `growth` (0.1 wall seconds per second of audio). A partial's *backlog* is its
   receipt minus the send of the chunk that completed the audio the program had consumed when
   it wrote it (its `audio_s`); an utterance's growth is the least-squares slope of its
   partials' backlogs against their `audio_s`: about 0 for a program that keeps up (however
   long each decode takes), positive for one that falls further behind as the audio goes on.

The capacity is the largest N sustained (0 when even one stream is not). Each N's figures
(latency spread, RTF under pacing, backlog, the feed's own lateness) are kept, so a reader can
apply another threshold. With the local runner each N also records `cores_per_stream`: the
programs' CPU seconds per second of real-time stream (their rusage, start and model load
included: an upper bound), so `cpus /
cores_per_stream` is the compute-bound number of streams an otherwise idle machine could
hold, a figure that, unlike the latency criterion, hardly depends on other work's load.
Programs are started and loaded before the clock starts (model load is not timed) and stopped
after each N.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asrbench.dataset import Dataset
from asrbench.errors import InputError
from asrbench.fsio import replace_dir, stage_dir
from asrbench.modelcard import Model
from asrbench.results.records import CapacityRecord, write_capacity
from asrbench.results.summary import Selection
from asrbench.runners.base import RunnerError, log_tail
from asrbench.streaming import feed, metrics, program
from asrbench.streaming.guard import backlogs, children_cpu, growth
from asrbench.streaming.run import (
    StreamSpec,
    cell_dir,
    check_spec,
    container_options,
    read_pcm,
    run_options,
    select,
)

FACTOR = 1.5  # criterion 2: p90 end of speech -> final within this many times N=1's
GROWTH = 0.1  # criterion 3: median backlog growth at most this (wall s per audio s)
# The most streams one probe starts: each is a model program (a container or process holding
# its model), started at once on this machine; 256 is past any one machine's real-time share
# (docs/STREAMING.md, 'Capacity'), and a larger N only exhausts it before any figure is made.
MAX_STREAMS = 256


@dataclass(frozen=True)
class Criterion:
    """When N simultaneous streams count as sustained (module docstring)."""

    factor: float = FACTOR
    growth: float = GROWTH

    def to_dict(self) -> dict[str, Any]:
        return {"factor": self.factor, "growth": self.growth}


@dataclass(frozen=True)
class Probe:
    """What to try: N = 1, 2, 4, ... up to `max_n`, judged by `criterion`; stop at the first N
    not sustained unless `until_fail` is False (every N is then run)."""

    max_n: int
    criterion: Criterion = Criterion()
    until_fail: bool = True


def levels(max_n: int) -> list[int]:
    """1, 2, 4, ... up to max_n (max_n itself last when it is not a power of two)."""
    if not 1 <= max_n <= MAX_STREAMS:
        raise InputError(
            f"--capacity {max_n}: give the largest number of streams to try, 1 to {MAX_STREAMS}"
        )
    out = [1]
    while out[-1] * 2 <= max_n:
        out.append(out[-1] * 2)
    return out if out[-1] == max_n else [*out, max_n]


def p90(values: list[float]) -> float | None:
    return metrics.lag_stats(values)["p90"]


def level_figures(
    streams: list[list[feed.FedUtterance]], speed: float, reps: int, seed: int
) -> dict[str, Any]:
    """The figures of one N: every utterance of every stream pooled."""
    feds = [f for s in streams for f in s]
    ok = [f for f in feds if not f.failed]
    eos = [x for f in ok if (x := metrics.eos_final_s(f)) is not None]
    back = [x for f in ok for x in backlogs(f)]
    return {
        "n": len(streams),
        "utterances": len(feds),
        "failed": len(feds) - len(ok),
        "eos_final_s": {
            **metrics.lag_stats(eos),
            "mean_ci": metrics.pooled_mean(eos, reps, seed)["ci"],
        },
        "rtf": metrics.pooled_mean([metrics.rtf(f, speed) for f in ok], reps, seed),
        "backlog_s": metrics.lag_stats(back),
        "growth": metrics.lag_stats([g for f in ok if (g := growth(f)) is not None]),
        "pacing": metrics.pacing(ok),
    }


def judge(fig: dict[str, Any], base: dict[str, Any] | None, crit: Criterion) -> list[str]:
    """Why N streams were not sustained (empty: sustained); `base` is N=1's figures."""
    why = []
    if fig["failed"]:
        why.append(f"{fig['failed']} utterance(s) failed")
    p, b = fig["eos_final_s"]["p90"], (base or fig)["eos_final_s"]["p90"]
    if p is None:
        why.append("no final latency measured")
    elif b is not None and p > crit.factor * b:
        why.append(f"p90 end of speech -> final {p:.3f} s > {crit.factor:g} x N=1's {b:.3f} s")
    g = fig["growth"]["p50"]
    if g is not None and g > crit.growth:
        why.append(f"backlog grows {g:.3f} s per audio s (median) > {crit.growth:g}: falls behind")
    return why


def rotated(audio: list[tuple[str, bytes]], i: int) -> list[tuple[str, bytes]]:
    """Stream i's order: the same utterances, starting at the i-th, so the N streams do not
    reach their ends (and the decoders' end-of-utterance work) at the same instant."""
    k = i % len(audio) if audio else 0
    return audio[k:] + audio[:k]


def run_level(
    model: Model,
    audio: list[tuple[str, bytes]],
    n: int,
    spec: StreamSpec,
    logs: Path,
) -> tuple[list[list[feed.FedUtterance]], str]:
    """Feed N simultaneous streams of the same utterances; (each stream's utterances, the
    program identity)."""
    pace = feed.Pace(model.card.sample_rate, spec.chunk_ms, spec.speed)
    started: list[program.Started] = []
    readers: list[feed.Reader] = []
    with ExitStack() as stack:
        for i in range(n):
            log = stack.enter_context(open(logs / f"stream-{n}-{i}.log", "ab"))
            options = container_options(model, spec)  # ops/stream's container, N times
            started.append(program.start(model, spec.runner, log, options))
            stack.callback(started[-1].stop)
            readers.append(feed.Reader(started[-1].proc.stdout).start())  # type: ignore[arg-type]
        for i, (s, r) in enumerate(zip(started, readers, strict=True)):
            _ready(s, r, logs / f"stream-{n}-{i}.log")
        out: list[list[feed.FedUtterance]] = [[] for _ in range(n)]

        def one(i: int) -> None:
            stdin = started[i].proc.stdin
            mine = rotated(audio, i)
            out[i] = feed.feed_all(stdin, readers[i], mine, pace)  # type: ignore[arg-type]

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out, started[0].identity


def _ready(started: program.Started, reader: feed.Reader, log: Path) -> None:
    try:
        feed.wait_ready(reader)
    except feed.StreamError as exc:
        raise RunnerError(
            f"{started.runner}: a streaming program did not get ready ({exc}); its log, "
            f"tail:\n{log_tail(log)}"
        ) from None


def capacity(
    model: Model,
    ds: Dataset,
    spec: StreamSpec,
    probe: Probe,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[Path, CapacityRecord]:
    """Probe N = 1, 2, 4, ... <= probe.max_n until one is not sustained (every N with
    `until_fail` False); store capacity.json. The capacity is the largest N up to which
    every N tried was sustained."""
    from asrbench.settings import settings

    check_spec(spec)
    program.streaming_program(model)
    model, _ = run_options(model, spec)  # the CUDA variant under --gpus, as a stream cell's
    steps = levels(probe.max_n)
    utts = select(ds, spec)
    rate = model.card.sample_rate
    audio = [(u.id, read_pcm(ds, u, rate)) for u in utts]
    root = Path(spec.results_root or settings().results)
    sel = Selection.of([u.id for u in utts], len(ds.utterances), spec.max_utts, spec.seed)
    cell = cell_dir(root, model.id, ds.id, spec, sel)
    target = cell.with_name(cell.name + "-capacity")
    stage = stage_dir(target)
    load = os.getloadavg()[0]
    results, identity = _probe(model, audio, spec, stage, probe, progress)
    record = CapacityRecord(
        model=model.id,
        model_identity=identity,
        runner=spec.runner,
        dataset=ds.id,
        dataset_hash=ds.content_hash(),
        chunk_ms=spec.chunk_ms,
        speed=spec.speed,
        n_utts=len(utts),
        criterion=probe.criterion.to_dict(),
        tried=steps[: len(results)],
        capacity=sustained_up_to(results),
        levels=results,
        machine={
            "cpus": os.cpu_count(),
            "load_avg_1m_at_start": load,
            "load_avg_1m_at_end": os.getloadavg()[0],
        },
    )
    write_capacity(stage / "capacity.json", record)
    replace_dir(stage, target)
    return target, record


def _probe(
    model: Model,
    audio: list[tuple[str, bytes]],
    spec: StreamSpec,
    logs: Path,
    probe: Probe,
    progress: Callable[[dict[str, Any]], None] | None,
) -> tuple[list[dict[str, Any]], str]:
    """Each N's judged figures, in order, and the program's identity."""
    results: list[dict[str, Any]] = []
    identity = ""
    for n in levels(probe.max_n):
        t, cpu = time.monotonic(), children_cpu()
        streams, identity = run_level(model, audio, n, spec, logs)
        fig = level_figures(streams, spec.speed, spec.reps, spec.seed)
        fig["wall_s"] = time.monotonic() - t
        fed_s = n * sum(len(pcm) for _, pcm in audio) / 2 / model.card.sample_rate
        fig["cores_per_stream"] = _cores_per_stream(spec, children_cpu() - cpu, fed_s)
        fig["not_sustained"] = judge(fig, results[0] if results else None, probe.criterion)
        fig["sustained"] = not fig["not_sustained"]
        results.append(fig)
        if progress:
            progress(fig)
        if probe.until_fail and not fig["sustained"]:
            break
    return results, identity


def _cores_per_stream(spec: StreamSpec, cpu_s: float, audio_s: float) -> float | None:
    """The programs' CPU seconds per second of real-time stream, `audio_s` being all the
    audio fed (local runner only: a container's CPU is not this process's child's)."""
    if spec.runner != "local":
        return None
    return cpu_s * spec.speed / audio_s if audio_s else None


def sustained_up_to(results: list[dict[str, Any]]) -> int:
    """The largest N up to which every N tried was sustained (0: not even the first)."""
    found = 0
    for lv in results:
        if not lv["sustained"]:
            break
        found = lv["n"]
    return found


def describe(folder: Path, rec: CapacityRecord) -> str:
    """The capacity probe as text: one line per N, then the capacity."""
    lines = [
        f"{rec.model} on {rec.dataset}: capacity probe, {rec.n_utts} utterance(s) per stream, "
        f"chunk {rec.chunk_ms} ms, {rec.speed:g}x real time, runner {rec.runner}",
        "  N  sustained  eos->final p50/p90 (s)  RTF under pacing  backlog growth p50  "
        "send lateness p99 (ms)  cores per stream",
    ]
    for lv in rec.levels:
        e, late = lv["eos_final_s"], lv["pacing"]["lateness_s"]["p99"]
        lines.append(
            f"  {lv['n']:<2} {'yes' if lv['sustained'] else 'no':<10} "
            f"{_f(e['p50'])} / {_f(e['p90'])}{'':<9} {_f(lv['rtf']['mean']):<17} "
            f"{_f(lv['growth']['p50']):<18} {_f(None if late is None else 1000 * late):<23} "
            f"{_f(lv.get('cores_per_stream'))}"
        )
        for why in lv["not_sustained"]:
            lines.append(f"       not sustained: {why}")
    lines.append(
        f"  capacity: {rec.capacity} simultaneous stream(s) (criterion: p90 end of speech -> "
        f"final within {rec.criterion['factor']:g}x N=1's, median backlog growth <= "
        f"{rec.criterion['growth']:g} s per audio s, nothing failed)"
    )
    lines.append(f"  stored in {folder}")
    return "\n".join(lines)


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"
