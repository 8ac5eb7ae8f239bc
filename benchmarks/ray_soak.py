"""Soak the Ray tests: run a set of them again and again, each run a fresh pytest (its own
cluster, zoo and nodes), while other processes keep every core busy; count passes and failures.

    .venv/bin/python benchmarks/ray_soak.py --runs 20 tests/ray/test_ray_preflight.py
    .venv/bin/python benchmarks/ray_soak.py --runs 5 --until 15:05 tests/ray --json soak.json

The load is `stress-ng --cpu N` where installed (apt-get install stress-ng), else N Python busy
loops; N defaults to the number of cores. Outcomes come from each run's JUnit XML (structured),
never from pytest's console. A run that fails keeps its XML and console log beside the JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUSY = "while True: pass"


@contextlib.contextmanager
def cpu_load(workers: int) -> Iterator[str]:
    """`workers` processes spinning on the CPU for as long as the block runs."""
    stress = shutil.which("stress-ng")
    if stress:
        cmds = [[stress, "--cpu", str(workers), "--cpu-method", "all", "--quiet"]]
        what = f"stress-ng --cpu {workers}"
    else:
        cmds = [[sys.executable, "-c", BUSY]] * workers
        what = f"{workers} python busy loop(s)"
    procs = [
        subprocess.Popen(
            c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        for c in cmds
    ]
    try:
        yield what
    finally:
        for p in procs:  # each load process group, by its own pid
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def outcomes(junit: Path) -> dict[str, str]:
    """'file::name' -> passed / failed / error / skipped, from a JUnit XML report."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                state = {"failure": "failed"}.get(child.tag, child.tag)
        out[name] = state
    return out


def one_run(targets: list[str], marker: str, keep: Path, index: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="ray-soak-") as tmp:
        junit = Path(tmp) / "junit.xml"
        # the run's own pytest folder (the nodes' logs are there): kept when the run fails
        basetemp = keep / f"run-{index:03d}-tmp"
        keep.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            marker,
            f"--junitxml={junit}",
            f"--basetemp={basetemp}",
            *targets,
        ]
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:  # a hang is a failure too
            out = (
                (exc.stdout or b"").decode(errors="replace")
                if isinstance(exc.stdout, bytes)
                else (exc.stdout or "")
            )
            proc = subprocess.CompletedProcess(cmd, 124, out, f"timed out after {timeout} s")
        took = time.monotonic() - t0
        tests = outcomes(junit) if junit.is_file() else {}
        ok = (
            proc.returncode == 0
            and tests
            and all(s in ("passed", "skipped") for s in tests.values())
        )
        if ok:
            shutil.rmtree(basetemp, ignore_errors=True)
        else:  # keep the evidence
            (keep / f"run-{index:03d}.log").write_text(proc.stdout + proc.stderr)
            if junit.is_file():
                shutil.copy(junit, keep / f"run-{index:03d}.xml")
    return {
        "run": index,
        "rc": proc.returncode,
        "seconds": round(took, 1),
        "ok": bool(ok),
        "load_1min": round(os.getloadavg()[0], 2),
        "tests": tests,
    }


def per_test(runs: list[dict]) -> dict[str, dict[str, int]]:
    """'file::name' -> {outcome: count} over every run."""
    out: dict[str, dict[str, int]] = {}
    for r in runs:
        for name, state in r["tests"].items():
            out.setdefault(name, {}).setdefault(state, 0)
            out[name][state] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("targets", nargs="+", help="test files or folders (e.g. tests/ray)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--until", help="HH:MM (UTC): start no run after this time")
    ap.add_argument(
        "--load",
        type=int,
        default=os.cpu_count() or 2,
        help="CPU-spinning processes beside the tests (0: none)",
    )
    ap.add_argument("-m", dest="marker", default="not full")
    ap.add_argument("--run-timeout", type=float, default=3600.0, help="seconds per run")
    ap.add_argument("--json", type=Path, default=Path("ray_soak.json"))
    args = ap.parse_args()
    # SIGTERM ends the loop like Ctrl-C: the load processes are stopped on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    stop = None
    if args.until:
        h, m = map(int, args.until.split(":"))
        now = dt.datetime.now(dt.UTC)
        stop = now.replace(hour=h, minute=m, second=0, microsecond=0)
    runs: list[dict] = []
    report = {
        "targets": args.targets,
        "marker": args.marker,
        "runs": runs,
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    load = contextlib.nullcontext("none") if args.load <= 0 else cpu_load(args.load)
    with load as what:
        report["load"] = what
        for i in range(1, args.runs + 1):
            if stop and dt.datetime.now(dt.UTC) >= stop:
                break
            r = one_run(
                args.targets, args.marker, args.json.with_suffix(".failures"), i, args.run_timeout
            )
            runs.append(r)
            bad = sorted(k for k, v in r["tests"].items() if v not in ("passed", "skipped"))
            skipped = sum(1 for v in r["tests"].values() if v == "skipped")
            print(
                f"run {i}: {'pass' if r['ok'] else 'FAIL'} rc={r['rc']} {r['seconds']} s "
                f"load={r['load_1min']} {len(r['tests'])} tests ({skipped} skipped) "
                f"{bad or ''}",
                flush=True,
            )
            report["passed"] = sum(1 for r in runs if r["ok"])
            report["failed"] = len(runs) - report["passed"]
            report["per_test"] = per_test(runs)
            args.json.write_text(json.dumps(report, indent=1) + "\n")
    report["finished"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"{report.get('passed', 0)} of {len(runs)} run(s) passed under load ({report['load']})")
    sys.exit(0 if runs and report["passed"] == len(runs) else 1)


if __name__ == "__main__":
    main()
