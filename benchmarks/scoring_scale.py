"""Scoring at scale, side by side as whole processes in one run (issue 43, rows 1, 2 and 5).

Rows: one long pair of 10,000 / 30,000 / 100,000 words (an hour-long call is about 10,000),
and 20,000 short utterances; with `--sclite WORDS`, the exact sclite mode's rows (issue 43
item 4: `sclite_row`). Each row runs, as separate whole processes, a minimal jiwer
process (the anchor: read both TSV files, `jiwer.process_words`), `ops/score` with its default
steps and `ops/score --preset raw` (every step off). For each process: wall seconds, CPU
seconds (user + system) and peak RSS (its own, from wait4), best of the repeats, and the ratios
over jiwer. The texts are generated, seeded, by `benchmarks/scoring.py`'s corpus (common words,
~10% word errors, 30% of utterances with a phrase that only DAE reconciles); a long pair is
that corpus's utterances joined until the word count is reached. No network.

    .venv/bin/python benchmarks/scoring_scale.py [--words 10000,30000,100000] [--utts 20000]
        [--repeats 3] [--skip-raw] [--sclite 10000,30000] [--sclite-anchor-cells 150000000]
        [--before CHECKOUT]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


def _scoring_benchmark() -> types.ModuleType:
    """benchmarks/scoring.py as a module of its own name (on sys.path it would shadow the
    `scoring` package): its corpus, TSV writer and jiwer process are reused here."""
    import importlib.util

    path = ROOT / "benchmarks" / "scoring.py"
    spec = importlib.util.spec_from_file_location("bench_scoring", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_bench = _scoring_benchmark()
JIWER_PROCESS, _write_tsv, corpus = _bench.JIWER_PROCESS, _bench._write_tsv, _bench.corpus


def long_pair(words: int, seed: int = 0) -> tuple[dict[str, str], dict[str, str]]:
    """One reference/hypothesis pair of about `words` reference words (never fewer)."""
    # utterances average over 20 words, so words/10 of them are always enough
    refs, hyps = corpus(words // 10 + 1, seed)
    ref: list[str] = []
    hyp: list[str] = []
    for key in refs:
        ref += refs[key].split()
        hyp += hyps[key].split()
        if len(ref) >= words:
            break
    return {"call": " ".join(ref)}, {"call": " ".join(hyp)}


def run_process(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float, str]:
    """Wall s, CPU s (user + system) and peak RSS MB of this one process (wait4), and stdout."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr[-3000:]}")
    # ru_maxrss is in KiB on Linux
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout


class Series(NamedTuple):
    """How a row runs: repeats of each process, whether `--preset raw` runs too, and another
    checkout whose `ops/score` (default steps) runs in the same rotation. (A NamedTuple: other
    benchmarks load this file without registering it as a module, which a dataclass needs.)"""

    repeats: int = 3
    raw: bool = True
    before: Path | None = None


def row(refs: dict[str, str], hyps: dict[str, str], tmp: Path, series: Series, env: dict) -> dict:
    """One input, every process once per repeat in a rotating order; bests and ratios."""
    repeats, raw, before = series.repeats, series.raw, series.before
    ref, hyp = tmp / "ref.tsv", tmp / "hyp.tsv"
    _write_tsv(ref, refs)
    _write_tsv(hyp, hyps)
    score = [str(ROOT / "ops" / "score"), str(ref), str(hyp), "-o"]
    commands = {
        "jiwer": [sys.executable, "-c", JIWER_PROCESS, str(ref), str(hyp)],
        "ops_score_default": score + [str(tmp / "default")],
    }
    if raw:
        commands["ops_score_raw"] = score + [str(tmp / "raw"), "--preset", "raw"]
    cwd = dict.fromkeys(commands, ROOT)
    if before is not None:  # run from its own folder: `python -m` imports from there
        before_score = [str(before / "ops" / "score"), str(ref), str(hyp)]
        commands["ops_score_before"] = before_score + ["-o", str(tmp / "before")]
        cwd["ops_score_before"] = before
    for name, cmd in commands.items():  # warm the page, bytecode and NSW result caches once
        run_process(cmd, env, cwd[name])
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    names = list(commands)
    for rep in range(repeats):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            runs[name].append(run_process(commands[name], env, cwd[name])[:3])
    out: dict = {
        "ref_words": sum(len(t.split()) for t in refs.values()),
        "utterances": len(refs),
    }
    for name, rs in runs.items():
        out[name] = {
            "wall_best_s": round(min(r[0] for r in rs), 3),
            "cpu_best_s": round(min(r[1] for r in rs), 3),
            "peak_rss_mb": round(max(r[2] for r in rs), 1),
            "wall_s": [round(r[0], 3) for r in rs],
        }
    base = out["jiwer"]
    for name in names[1:]:
        for kind in ("wall", "cpu"):
            out[f"ratio_{name.removeprefix('ops_score_')}_{kind}"] = round(
                out[name][f"{kind}_best_s"] / base[f"{kind}_best_s"], 2
            )
    out["jiwer_wer"] = round(float(run_process(commands["jiwer"], env, ROOT)[3]), 5)
    summary = json.loads((tmp / "default" / "summary.json").read_text())
    out["ops_score_default_errors"] = summary.get("metrics", {}).get("errors")
    return out


def sclite_row(words: int, tmp: Path, env: dict, anchor_cells: int) -> dict:
    """The exact sclite mode on one long pair, once each as whole processes: Debian's sclite
    (the anchor, trn files, `-o sum`), `ops/score --align sclite --preset raw` (the same words:
    its counts must equal sclite's) and `ops/score --preset sclite` (the mode's own steps). The
    pair's text is lower-cased and cut to `[a-z0-9']` words first, so both tools read the same
    tokens. sclite keeps its whole table (about 8.5 bytes a cell): it runs only up to
    `anchor_cells` cells."""
    sys.path.insert(0, str(ROOT))
    from tests.scoring.sclite import find_sclite

    refs, hyps = long_pair(words)
    refs, hyps = ({k: _plain(v) for k, v in side.items()} for side in (refs, hyps))
    ref_words, hyp_words = len(refs["call"].split()), len(hyps["call"].split())
    ref, hyp = tmp / "ref.tsv", tmp / "hyp.tsv"
    _write_tsv(ref, refs)
    _write_tsv(hyp, hyps)
    score = [str(ROOT / "ops" / "score"), str(ref), str(hyp), "--bootstrap", "0", "-o"]
    commands = {
        "ops_score_exact_raw": score + [str(tmp / "raw"), "--preset", "raw", "--align", "sclite"],
        "ops_score_exact": score + [str(tmp / "exact"), "--preset", "sclite"],
    }
    exe = find_sclite()
    if exe is not None and ref_words * hyp_words <= anchor_cells:
        for name, side in (("ref", refs), ("hyp", hyps)):
            (tmp / f"{name}.trn").write_text(f"{side['call']} (call-1)\n", encoding="utf-8")
        commands["sclite"] = [exe, "-r", "ref.trn", "trn", "-h", "hyp.trn", "trn"]
        commands["sclite"] += ["-i", "spu_id", "-o", "pra", "-O", str(tmp), "-n", "out"]
    out: dict = {"ref_words": ref_words, "hyp_words": hyp_words, "cells": ref_words * hyp_words}
    run_process(commands["ops_score_exact"], env, tmp)  # bytecode compiled once, as in `row`
    for name, cmd in commands.items():
        wall, cpu, rss, _ = run_process(cmd, env, tmp)
        out[name] = {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "peak_rss_mb": round(rss, 1)}
    line = json.loads((tmp / "raw" / "utterances.jsonl").read_text().splitlines()[0])
    out["ops_score_exact_raw"]["counts"] = [line[k] for k in ("cor", "sub", "del", "ins")]
    if "sclite" in commands:
        pra = (tmp / "out.pra").read_text(encoding="utf-8", errors="replace")
        found = re.search(r"Scores: \(#C #S #D #I\) (\d+) (\d+) (\d+) (\d+)", pra)
        assert found is not None, "no Scores line in sclite's pra output"
        out["sclite"]["counts"] = [int(x) for x in found.groups()]
        out["counts_equal"] = out["sclite"]["counts"] == out["ops_score_exact_raw"]["counts"]
        for name in ("ops_score_exact_raw", "ops_score_exact"):
            for kind in ("wall_s", "cpu_s", "peak_rss_mb"):
                out[f"ratio_{name.removeprefix('ops_score_')}_{kind}"] = round(
                    out[name][kind] / out["sclite"][kind], 3
                )
    return out


def _plain(text: str) -> str:
    """Lower-cased `[a-z0-9']` words: the same tokens for sclite and `--preset raw`."""
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def growth(rows: dict[str, dict], name: str) -> dict:
    """CPU seconds per 1,000 reference words for each long pair, and the growth exponent
    between the smallest and the largest (1.0 is linear)."""
    import math

    pts = sorted(
        (r["ref_words"], r[name]["cpu_best_s"]) for k, r in rows.items() if k.startswith("pair")
    )
    if len(pts) < 2:
        return {}
    (w0, t0), (w1, t1) = pts[0], pts[-1]
    return {
        "cpu_s_per_1000_words": {str(w): round(t / w * 1000, 4) for w, t in pts},
        "exponent": round(math.log(t1 / t0) / math.log(w1 / w0), 2),
    }


def report_header() -> dict:
    """A run's record before its rows: date, commit, CPUs and the load average at the start
    (these machines are shared: the load says how far wall times can be trusted)."""
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip(),
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "rows": {},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", default="10000,30000,100000", help="long pairs' sizes")
    ap.add_argument("--utts", type=int, default=20000, help="short utterances (0: skip)")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of each process (best of)")
    ap.add_argument("--skip-raw", action="store_true", help="no `--preset raw` process")
    ap.add_argument("--before", type=Path, help="another checkout's ops/score beside (same venv)")
    ap.add_argument("--sclite", default="", help="exact sclite mode rows: pair sizes (words)")
    ap.add_argument(
        "--sclite-anchor-cells",
        type=int,
        default=150_000_000,
        help="run the sclite binary up to this many cells (it keeps its whole table)",
    )
    args = ap.parse_args()
    env = dict(os.environ)
    report = report_header()
    inputs: list[tuple[str, tuple[dict[str, str], dict[str, str]]]] = [
        (f"pair_{int(w)}", long_pair(int(w))) for w in args.words.split(",") if w
    ]
    if args.utts:
        inputs.append((f"short_{args.utts}", corpus(args.utts)))
    series = Series(args.repeats, not args.skip_raw, args.before)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        # both processes keep compiled bytecode there, as an installed package does
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        for name, (refs, hyps) in inputs:
            (tmp / name).mkdir()
            report["rows"][name] = row(refs, hyps, tmp / name, series, env)
            print(name, json.dumps(report["rows"][name]), file=sys.stderr, flush=True)
        for w in filter(None, args.sclite.split(",")):
            name = f"sclite_{int(w)}"
            (tmp / name).mkdir()
            report["rows"][name] = sclite_row(int(w), tmp / name, env, args.sclite_anchor_cells)
            print(name, json.dumps(report["rows"][name]), file=sys.stderr, flush=True)
    report["growth_default"] = growth(report["rows"], "ops_score_default")
    if args.before:
        report["growth_default_before"] = growth(report["rows"], "ops_score_before")
    if not args.skip_raw:
        report["growth_raw"] = growth(report["rows"], "ops_score_raw")
    report["growth_jiwer"] = growth(report["rows"], "jiwer")
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
