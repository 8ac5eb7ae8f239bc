#!/usr/bin/env python3
"""Whisper batching: throughput of the Whisper program at batch size 1, 2, 4, 8 on one dataset,
with the transcripts compared against today's sequential path.

What runs is the cards' own program (`models/_common/whisper_transcribe.py`, `runtime.batch_size`
set through `ASRBENCH_BATCH_SIZE`), its `transcribe_one` called for every utterance in wav-list
order exactly as the shared loop calls it, with the model already loaded (load time left out).
Each (model, mode) runs in a fresh process of this script, so peak memory is that mode's own.

Modes: `sequential` (batch size 1: `WhisperModel.transcribe`, today's path), `pipeline-1`
(faster-whisper's `BatchedInferencePipeline` at batch size 1: the batched decoder without
batching, to tell the change of algorithm from the gain of batching), and `batch-N` (the
pipeline, N utterances a batch: what `runtime.batch_size: N` runs).

Throughput is audio seconds / wall seconds of the decode loop, and audio seconds / CPU seconds
(user + system of the process: far less sensitive than wall time to other work on a shared
machine); with `--repeats R` every mode runs R times in interleaved rounds and the medians are
reported. TER is scored by `scoring` with its default configuration; every hypothesis that
differs from the sequential one is listed.

    .venv/bin/python benchmarks/whisper_batching.py [-m whisper_tiny_en whisper_base]
        [--batches 2 4 8] [--dataset mini_en] [--limit N] [--repeats R] [--json out.json]

Quote timings only from an idle machine: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from asrbench.dataset import load_dataset
from asrbench.settings import REPO_ROOT, settings

HELPERS = ("contract.py", "weights.py", "whisper_transcribe.py")


def assemble(model_id: str, dest: Path) -> Path:
    """The program's folder as the platform lays it out: the card beside the shared helpers."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in HELPERS:
        shutil.copy(REPO_ROOT / "models" / "_common" / name, dest / name)
    shutil.copy(REPO_ROOT / "models" / model_id / "model.yaml", dest / "model.yaml")
    return dest


def select_mode(mode: str) -> str:
    """`ASRBENCH_BATCH_SIZE` for a mode (`pipeline-1` loads the pipeline, then batches by one)."""
    if mode == "sequential":
        return "1"
    return "2" if mode == "pipeline-1" else mode.split("-")[-1]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_one(model_id: str, mode: str, dataset: str, limit: int | None) -> dict:
    """Load the model once, decode every utterance through `transcribe_one`, time the loop."""
    ds = load_dataset(REPO_ROOT / "datasets" / dataset)
    utts = ds.utterances[:limit] if limit else ds.utterances
    with tempfile.TemporaryDirectory() as tmp:
        src = assemble(model_id, Path(tmp) / "src")
        wav_list = Path(tmp) / "wav.list"
        lines = "".join(f"{u.id}\t{ds.audio_path(u)}\n" for u in utts)
        wav_list.write_text(lines, encoding="utf-8")
        os.environ["ASRBENCH_BATCH_SIZE"] = select_mode(mode)
        sys.path.insert(0, str(src))
        program = importlib.import_module("whisper_transcribe")
        whisper = program.Whisper()
        if mode == "pipeline-1":
            whisper.batch = 1  # the pipeline kept, one clip a batch
        program.AHEAD = program.Ahead([str(wav_list), str(Path(tmp) / "out")])
        hyps, audio_s = {}, 0.0
        start, cpu0 = time.perf_counter(), cpu_seconds()
        for u in utts:
            text, seconds = program.transcribe_one(whisper, str(ds.audio_path(u)))
            hyps[u.id], audio_s = text, audio_s + seconds
        wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"hyps": hyps, "audio_s": audio_s, "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak_mb}


def ter(dataset: str, hyps: dict[str, str]) -> float:
    from scoring import ScorerConfig, score_corpus

    ds = load_dataset(REPO_ROOT / "datasets" / dataset)
    refs = {u.id: u.text for u in ds.utterances if u.id in hyps}
    config = ScorerConfig(cache_dir=str(settings().cache), bootstrap=0)
    return 100.0 * (score_corpus(refs, hyps, config).metrics.ter or 0.0)


def measure(model_id: str, mode: str, args: argparse.Namespace) -> dict:
    """One (model, mode) in a fresh process: its own model load and its own peak memory."""
    cmd = [sys.executable, __file__, "--one", model_id, mode, "--dataset", args.dataset]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{model_id} {mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(model_id: str, modes: list[str], args: argparse.Namespace) -> list[dict]:
    """Every mode, in rounds (sequential, pipeline-1, batch-2, ... then again), so that a change
    of load on a shared machine falls on every mode alike; the median of the rounds."""
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for _ in range(args.repeats):
        for mode in modes:
            runs[mode].append(measure(model_id, mode, args))
            print(f"{model_id} {mode}: {runs[mode][-1]['wall_s']:.1f} s", flush=True)
    base = runs[modes[0]][0]["hyps"]
    return [row(model_id, mode, runs[mode], base, args.dataset) for mode in modes]


def row(model_id: str, mode: str, runs: list[dict], base: dict, dataset: str) -> dict:
    hyps = runs[0]["hyps"]
    if any(r["hyps"] != hyps for r in runs):
        raise SystemExit(f"{model_id} {mode}: the hypotheses changed from one round to the next")
    wall = statistics.median(r["wall_s"] for r in runs)
    cpu = statistics.median(r["cpu_s"] for r in runs)
    audio = runs[0]["audio_s"]
    return {
        "model": model_id,
        "mode": mode,
        "utterances": len(hyps),
        "rounds": len(runs),
        "audio_s": round(audio, 1),
        "wall_s": round(wall, 2),
        "throughput": round(audio / wall, 2),
        "cpu_s": round(cpu, 2),
        "audio_per_cpu_s": round(audio / cpu, 2),
        "ter": round(ter(dataset, hyps), 2),
        "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs)),
        "differs": [
            {"id": k, "sequential": base[k], mode: v} for k, v in hyps.items() if v != base[k]
        ],
    }


def table(rows: list[dict]) -> str:
    head = (
        "| model | mode | audio s / wall s | vs sequential | audio s / CPU s | vs sequential "
        "| TER % | peak RSS MB | hypotheses unlike sequential |"
    )
    lines = [head, "|" + "---|" * 9]
    seq = {r["model"]: r for r in rows if r["mode"] == "sequential"}
    for r in rows:
        s = seq.get(r["model"], r)
        lines.append(
            f"| {r['model']} | {r['mode']} | {r['throughput']} | "
            f"{r['throughput'] / s['throughput']:.2f}x | {r['audio_per_cpu_s']} | "
            f"{r['audio_per_cpu_s'] / s['audio_per_cpu_s']:.2f}x | {r['ter']} | "
            f"{r['peak_rss_mb']} | {len(r['differs'])} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-m", "--models", nargs="+", default=["whisper_tiny_en", "whisper_base"])
    parser.add_argument("--batches", nargs="+", type=int, default=[2, 4, 8])
    parser.add_argument("--dataset", default="mini_en")
    parser.add_argument("--limit", type=int, help="only the first N utterances")
    parser.add_argument("--repeats", type=int, default=1, help="rounds over every mode (median)")
    parser.add_argument("--json", type=Path, help="write every row and difference here")
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(*args.one, args.dataset, args.limit)))
        return 0
    print(f"load average before: {os.getloadavg()}", flush=True)
    modes = ["sequential", "pipeline-1", *(f"batch-{n}" for n in args.batches if n > 1)]
    rows = [row for model_id in args.models for row in compare(model_id, modes, args)]
    print(f"load average after: {os.getloadavg()}")
    print(table(rows))
    for r in rows:
        for d in r["differs"]:
            print(f"{r['model']} {r['mode']} {d['id']}:")
            print(f"  sequential: {d['sequential']}\n  {r['mode']}: {d[r['mode']]}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
