"""Where one `ops/score` process's CPU goes, phase by phase, in this checkout and another.

Each repeat runs `ops/score` on the short-utterance corpus of `benchmarks/scoring_scale.py`
(20,000 utterances by default) as a child process per checkout, in turn: the child times the
scorer's phases with `time.process_time` (the bootstrap's thread and the utterances.jsonl
writer, which run side by side, with `time.thread_time`), and the parent reads the whole
process's CPU from `wait4`. Best of the repeats per phase and checkout. A phase a checkout does
not have is left out. Issue 43 item 3: which part of the gap to a jiwer process each change cuts.

    .venv/bin/python benchmarks/score_phases.py [--before CHECKOUT] [--utts 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (module, attribute, phase, clock): each function's CPU is added to its phase
PHASES = [
    ("asrbench.scorers", "get_scorer", "scorer_built", "process"),  # DAE's rules inside it
    ("scoring.dae", "Alternatives.__init__", "dae_rules", "process"),
    ("scoring.io", "read_transcripts", "read", "process"),
    ("scoring.scorer", "Scorer._normalised", "normalise", "process"),
    ("scoring.scorer", "Scorer._find_alternatives", "dae_slots", "process"),
    ("scoring.scorer", "Scorer._plan", "plan", "process"),
    ("scoring.scorer", "Scorer._align", "align", "process"),
    ("scoring.scorer", "Scorer._choose_forms", "dae_winners", "process"),
    ("scoring.scorer", "_results", "results", "process"),
    ("scoring.scorer", "Scorer.summarize", "bootstrap_thread", "thread"),
    ("asrbench.results.reports", "write_utterances", "writer_thread", "thread"),
    ("asrbench.cli.score", "_score", "score_command", "process"),
]

CHILD = """
import functools, importlib, io, json, os, sys, time
phases, out_json = json.loads(sys.argv[1]), sys.argv[2]
acc = {}
def wrap(owner, name, label, clock):
    fn = getattr(owner, name)
    tick = time.thread_time if clock == "thread" else time.process_time
    @functools.wraps(fn)
    def timed(*a, **k):
        t = tick()
        try:
            return fn(*a, **k)
        finally:
            acc[label] = acc.get(label, 0.0) + tick() - t
            if label == "score_command":
                acc["to_score_command"] = t  # CPU up to it: start-up
    setattr(owner, name, timed)
for module, attr, label, clock in phases:
    try:
        owner = importlib.import_module(module)
    except ImportError:
        continue
    *path, name = attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    if hasattr(owner, name):
        wrap(owner, name, label, clock)
import asrbench.cli
sys.argv = ["asrbench", "--as-alias", "ops/score", "score", *sys.argv[3:]]
stdout, sys.stdout = sys.stdout, io.StringIO()
code = asrbench.cli.main()
sys.stdout = stdout
acc["in_process_total"] = time.process_time()
open(out_json, "w").write(json.dumps({"exit": code, "phases": acc}))
os._exit(0)  # no interpreter teardown, as ops/score itself ends
"""


def _corpus(utts: int) -> tuple[dict[str, str], dict[str, str]]:
    spec = importlib.util.spec_from_file_location("scale", ROOT / "benchmarks" / "scoring_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.corpus(utts)  # type: ignore[no-any-return]


def run_child(checkout: Path, args: list[str], tmp: Path) -> dict[str, float]:
    """One `ops/score` of `checkout`, its phases timed; with the process's CPU (wait4)."""
    env = dict(os.environ, PYTHONPATH=str(checkout), OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as an installed package is
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache" / checkout.name)
    out_json = tmp / "phases.json"
    cmd = [sys.executable, "-c", CHILD, json.dumps(PHASES), str(out_json), *args]
    proc = subprocess.Popen(cmd, cwd=checkout, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{checkout}: ops/score failed")
    done = json.loads(out_json.read_text())
    phases = done["phases"]
    phases["process_cpu"] = usage.ru_utime + usage.ru_stime
    return phases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, help="another checkout (same virtualenv)")
    ap.add_argument("--utts", type=int, default=20000, help="short utterances")
    ap.add_argument("--repeats", type=int, default=5, help="runs of each checkout (best of)")
    args = ap.parse_args()
    checkouts = {"this": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    best: dict[str, dict[str, float]] = {name: {} for name in checkouts}
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        refs, hyps = _corpus(args.utts)
        for name, texts in (("ref", refs), ("hyp", hyps)):
            lines = "".join(f"{k}\t{v}\n" for k, v in texts.items())
            (tmp / f"{name}.tsv").write_text(lines, encoding="utf-8")
        score = [str(tmp / "ref.tsv"), str(tmp / "hyp.tsv"), "-o", str(tmp / "out")]
        for checkout in checkouts.values():  # bytecode compiled, caches warm
            run_child(checkout, score, tmp)
        for rep in range(args.repeats):
            order = list(checkouts.items())
            for name, checkout in order[rep % 2 :] + order[: rep % 2]:
                for phase, s in run_child(checkout, score, tmp).items():
                    best[name][phase] = min(best[name].get(phase, s), s)
    report = {
        "utterances": args.utts,
        "repeats": args.repeats,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "cpu_s_best": {n: {k: round(v, 3) for k, v in b.items()} for n, b in best.items()},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
