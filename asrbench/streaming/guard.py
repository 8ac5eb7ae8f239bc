"""The latency guard: whether a streaming cell's latencies are the model's (docs/STREAMING.md,
"Latency guard").

A latency read under a paced feed is the model's only if the feed kept its clock, the decoder
kept up with the audio, and the host had the cores to run both. Each rule below that fires is
a reason, with the measured value and the threshold, and the cell's latencies are marked "not
attributable to the model" everywhere they are shown (ops/stream, stream.json, the leaderboard,
the report):

- `feed_late`: the p90 of the feed's send lateness (each chunk's send minus its deadline, over
  every send) above FEED_LATE_S: the feeder itself was starved of CPU, so the audio did not
  arrive in real time.
- `decoder_behind`: the median over utterances of the backlog growth above GROWTH audio
  seconds behind per audio second fed. A partial's backlog is its receipt minus the send of the
  chunk that completed the audio it had consumed (its `audio_s`); an utterance's growth is the
  least-squares slope of its partials' backlogs against their `audio_s` (wall seconds per audio
  second), times the speed: about 0 for a program that keeps up however long each decode takes,
  positive for one that processes slower than the feed (a queue builds within the utterance and
  the final waits for it). The feed waits for each final before the next utterance starts, so no
  queue carries over from one utterance to the next: the growth within one is the whole story.
  Needs 3 partials at distinct positions in an utterance; a program that sends none is not
  judged by this rule (`unjudged`).
- `host_busy`: the host's 1-minute load average (the larger of the run's start and end) above
  LOAD_PER_CPU times the CPUs this process may use: other work competed with the decoder (a
  final's end-of-utterance work waits for a core even when the decoder keeps pace).
- `cpu_starved`: the program's own threads spent more than WAIT_SHARE of their runnable time,
  and at least WAIT_MIN_S in all, waiting for a CPU (the kernel's run-queue delay,
  /proc/PID/task/*/schedstat, read at the end of the feed, model load included): the decoder
  was ready to work and no core was free. This
  is the program's own measure of what `host_busy` infers from the machine's load; processes
  the program starts are not counted. Not judged where schedstat cannot be read.

RTF under pacing is not a rule: it is at least 1 by construction (the final comes after the
audio ends) and mixes endpointing with compute; it is reported beside the guard. `measured`
also keeps, for the local runner, the program's CPU seconds over the feed's wall seconds (its
rusage: this process's waited children); a container's CPU is not a child's, so Docker runs
record null.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asrbench.streaming.feed import FedUtterance
from asrbench.streaming.metrics import eos_send, lag_stats

GUARD_VERSION = 1  # the rules and thresholds below; a change of either bumps it
FEED_LATE_S = 0.050  # feed_late: p90 send lateness above half a default 100-ms chunk
GROWTH = 0.1  # decoder_behind: median audio seconds behind per audio second (capacity's)
LOAD_PER_CPU = 1.5  # host_busy: 1-min load average per usable CPU
WAIT_SHARE = 0.5  # cpu_starved: run-queue wait over (on-CPU + wait) time of the program
WAIT_MIN_S = 0.5  # cpu_starved: ... and at least this much wait (a near-idle program's share
# of a few milliseconds says nothing about its latencies)
THRESHOLDS = {
    "feed_lateness_p90_s": FEED_LATE_S,
    "backlog_growth": GROWTH,
    "load_per_cpu": LOAD_PER_CPU,
    "wait_share": WAIT_SHARE,
    "wait_min_s": WAIT_MIN_S,
}
ADVICE = {
    "feed_late": "rerun on an idle machine or with fewer simultaneous jobs",
    "decoder_behind": "rerun on an idle or faster machine, or at a lower --speed",
    "host_busy": "rerun on an idle machine (stop other work first)",
    "cpu_starved": "rerun on an idle machine, or with fewer simultaneous jobs",
}


def backlogs(fed: FedUtterance) -> list[float]:
    """Per partial: its receipt minus the send of the chunk that completed the audio it had
    consumed (wall seconds): how far behind the feed the program was when it wrote it."""
    return [
        e.mono_recv - eos_send(fed, e.audio_s)
        for e in fed.events
        if e.type == "partial" and fed.sends
    ]


def growth(fed: FedUtterance) -> float | None:
    """The least-squares slope of the partials' backlogs against their audio position (wall
    seconds per audio second); None with fewer than 3 partials or no spread of position."""
    pos = [e.audio_s for e in fed.events if e.type == "partial"]
    back = backlogs(fed)
    if len(pos) < 3 or len(back) != len(pos) or max(pos) == min(pos):
        return None
    return float(np.polyfit(pos, back, 1)[0])


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's children that have been waited for."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def schedstat(pid: int | None) -> tuple[float, float] | None:
    """(on-CPU, waiting-for-a-CPU) seconds of a live process's threads since they started
    (/proc/PID/task/*/schedstat, nanoseconds); None where it cannot be read."""
    if pid is None:
        return None
    run = wait = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            a, b, _ = (task / "schedstat").read_text().split()
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
        run, wait = run + int(a), wait + int(b)
    return run / 1e9, wait / 1e9


def container_pid(name: str) -> int | None:
    """The host PID of a running container's main process (`docker inspect`); None if unknown."""
    done = subprocess.run(
        ["docker", "inspect", "-f", "{{.State.Pid}}", name],
        capture_output=True,
        text=True,
        check=False,
    )
    pid = done.stdout.strip()
    return int(pid) if done.returncode == 0 and pid.isdigit() and pid != "0" else None


@dataclass
class Host:
    """The host's state around one streaming run: load, CPUs, the program's CPU time."""

    runner: str
    cpus: int = field(default_factory=usable_cpus)
    load_start: float = field(default_factory=lambda: os.getloadavg()[0])
    load_end: float | None = None
    program_cpu_s: float | None = None
    wall_s: float | None = None
    sched: tuple[float, float] | None = None  # the program's (on-CPU, run-queue wait) seconds
    _cpu0: float = 0.0
    _t0: float = 0.0

    def started(self) -> None:
        """The program is up: its CPU and the wall clock count from here (builds excluded)."""
        self._cpu0, self._t0 = children_cpu(), time.monotonic()

    def feed_ended(self, pid: int | None, container: str | None) -> None:
        """Before the program is stopped: its threads' scheduler counts (a container's main
        process through its host PID)."""
        self.sched = schedstat(container_pid(container) if container else pid)

    def stopped(self) -> None:
        """The program was waited for: its rusage is in this process's children's now."""
        self.wall_s = time.monotonic() - self._t0
        self.load_end = os.getloadavg()[0]
        if self.runner == "local":  # a container is not our child: its CPU is not seen here
            self.program_cpu_s = children_cpu() - self._cpu0

    def to_dict(self) -> dict[str, Any]:
        cores = (
            self.program_cpu_s / self.wall_s
            if self.program_cpu_s is not None and self.wall_s
            else None
        )
        return {
            "cpus": self.cpus,
            "load_avg_1m_start": self.load_start,
            "load_avg_1m_end": self.load_end,
            "program_cpu_s": self.program_cpu_s,
            "wall_s": self.wall_s,
            "program_cores": cores,
            "program_sched_cpu_s": self.sched[0] if self.sched else None,
            "program_sched_wait_s": self.sched[1] if self.sched else None,
            "program_wait_share": _share(self.sched),
        }


def _share(sched: tuple[float, float] | None) -> float | None:
    """Run-queue wait over (on-CPU + wait) time; None without counts or time."""
    if not sched or sum(sched) <= 0:
        return None
    return sched[1] / (sched[0] + sched[1])


def _p90(values: Sequence[float]) -> float | None:
    return lag_stats(values)["p90"]


def per_utterance(fed: FedUtterance, speed: float) -> dict[str, Any]:
    """The guard's per-utterance fields: the feed's lateness p90 and the decoder's backlog
    growth (audio seconds behind per audio second; None when not measurable)."""
    g = growth(fed)
    return {
        "feed_lateness_p90_s": _p90(fed.lateness),
        "backlog_growth": None if g is None else g * speed,
    }


def judge(
    feds: Sequence[FedUtterance], rows: Sequence[dict[str, Any]], host: dict[str, Any]
) -> dict[str, Any]:
    """The `latency_guard` block of stream.json: attributable, the reasons (rule, why, value,
    threshold, what to do), what was measured, the thresholds and the rules not judged."""
    ok = [f for f in feds if not f.failed]
    grow = [g for r in rows if not r["failed"] and (g := r.get("backlog_growth")) is not None]
    load = max(x for x in (host["load_avg_1m_start"], host["load_avg_1m_end"]) if x is not None)
    measured = {
        "feed_lateness_p90_s": _p90([x for f in ok for x in f.lateness]),
        "backlog_growth_p50": lag_stats(grow)["p50"],
        "utterances_behind": sum(g > GROWTH for g in grow),
        "utterances_judged": len(grow),
        "load_avg_1m_max": load,
        **host,
    }
    reasons = _reasons(measured)
    return {
        "version": GUARD_VERSION,
        "attributable": not reasons,
        "reasons": reasons,
        "measured": measured,
        "thresholds": dict(THRESHOLDS),
        "unjudged": _unjudged(grow, host),
    }


def _unjudged(grow: list[float], host: dict[str, Any]) -> list[str]:
    out = [] if grow else ["decoder_behind: no utterance had 3 partials to judge by"]
    if host.get("program_wait_share") is None:
        out.append("cpu_starved: the program's scheduler counts could not be read")
    return out


def _reasons(m: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    late, grow = m["feed_lateness_p90_s"], m["backlog_growth_p50"]
    if late is not None and late > FEED_LATE_S:
        why = (
            f"the feed's send lateness p90 {1000 * late:.0f} ms, above {1000 * FEED_LATE_S:.0f} ms"
        )
        out.append(_reason("feed_late", why, late, FEED_LATE_S))
    if grow is not None and grow > GROWTH:
        why = (
            f"the decoder fell behind the feed: median backlog growth {grow:.2f} s per audio s, "
            f"above {GROWTH:g} ({m['utterances_behind']} of {m['utterances_judged']} utterances)"
        )
        out.append(_reason("decoder_behind", why, grow, GROWTH))
    limit = LOAD_PER_CPU * m["cpus"]
    if m["load_avg_1m_max"] > limit:
        why = (
            f"the host was busy: load average {m['load_avg_1m_max']:.1f}, above {LOAD_PER_CPU:g} x "
            f"{m['cpus']} CPUs"
        )
        out.append(_reason("host_busy", why, m["load_avg_1m_max"], limit))
    share = m.get("program_wait_share")
    wait = m.get("program_sched_wait_s") or 0.0
    if share is not None and share > WAIT_SHARE and wait >= WAIT_MIN_S:
        why = (
            f"the program waited for a CPU {wait:.2f} s against {m['program_sched_cpu_s']:.2f} s "
            f"on one ({100 * share:.0f} % of its runnable time, above {100 * WAIT_SHARE:.0f} %)"
        )
        out.append(_reason("cpu_starved", why, share, WAIT_SHARE))
    return out


def _reason(rule: str, why: str, value: float, threshold: float) -> dict[str, Any]:
    return {"rule": rule, "why": why, "value": value, "threshold": threshold, "do": ADVICE[rule]}


def warning(guard: dict[str, Any] | None) -> str | None:
    """The one-paragraph warning of a guard that fired (None when attributable or absent)."""
    if not guard or guard.get("attributable", True):
        return None
    parts = [f"{r['why']} ({r['rule']}; {r['do']})" for r in guard.get("reasons") or []]
    return "latencies not attributable to the model: " + "; ".join(parts)


def judge_runs(
    runs: Sequence[tuple[str, Sequence[FedUtterance], Sequence[dict[str, Any]], dict[str, Any]]],
) -> dict[str, Any]:
    """The guard of a cell fed by one run or more (a resumed cell, streaming/cache.py): each
    run (ID, its utterances, their rows, its host) judged on its own, as its timings were
    taken on its own host; one run's block is `judge`'s. With several, the cell's reasons and
    unjudged rules are every run's, each naming its run, and `measured` is per run."""
    if len(runs) == 1:
        return judge(*runs[0][1:])
    each = {run: judge(feds, rows, host) for run, feds, rows, host in runs if host}
    unjudged = [f"run {run}: its host was not recorded" for run, *_, host in runs if not host]
    reasons = [
        {**r, "run": run, "why": f"run {run}: {r['why']}"}
        for run, g in each.items()
        for r in g["reasons"]
    ]
    unjudged += [f"run {run}: {u}" for run, g in each.items() for u in g["unjudged"]]
    return {
        "version": GUARD_VERSION,
        "attributable": not reasons,
        "reasons": reasons,
        "measured": {run: g["measured"] for run, g in each.items()},
        "thresholds": dict(THRESHOLDS),
        "unjudged": unjudged,
    }
