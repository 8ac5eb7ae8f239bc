#!/usr/bin/env python3
"""Batching in the transformers runtime: throughput at `runtime.batch_size` 1, 2, 4, 8.

What runs is the runtime's own program (`models/_common/transformers_asr.py`) from a copy of a
template card (`hf_ctc_template`, `hf_seq2seq_template`) with `runtime.batch_size` set, on the
tiny randomly initialised models of the tests (`tests/stubs/hf_hub.py`: no real transformers
weights exist on these machines; the CTranslate2 Whisper weights here cannot load in
transformers), in a fresh process per run with the host's virtualenv (the local runner's way).

Throughput is audio seconds / processing seconds, both from the program's own timing.tsv (the
model load is left out), and audio seconds / CPU seconds of the whole process (user + system,
load included: less sensitive to other work on a shared machine). Every hypothesis is compared
with batch size 1's and the differences are counted.

    .venv/bin/python benchmarks/transformers_batching.py [--tasks ctc seq2seq]
        [--batches 1 2 4 8] [--dataset mini_en] [--limit N] [--threads T] [--json out.json]
        [--weights seq2seq=/path/to/whisper-tiny.en]

Quote timings only from an idle machine: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# after the repo, so that tests/scoring does not shadow the scoring package
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))

import yaml

from asrbench.dataset import load_dataset
from asrbench.modelcard import load_model
from asrbench.settings import REPO_ROOT

TEMPLATES = {"ctc": "hf_ctc_template", "seq2seq": "hf_seq2seq_template"}


def tiny_model(task: str, dest: Path) -> Path:
    from stubs.hf_hub import tiny_wav2vec2, tiny_whisper

    return (tiny_wav2vec2 if task == "ctc" else tiny_whisper)(dest / task)


def source(task: str, batch: int, dest: Path) -> Path:
    """The template's assembled source with `runtime.batch_size` = batch."""
    folder = dest / f"card-{task}-{batch}" / TEMPLATES[task]
    shutil.copytree(REPO_ROOT / "models" / "_common", folder.parent / "_common")
    shutil.copytree(REPO_ROOT / "models" / TEMPLATES[task], folder)
    card = yaml.safe_load((folder / "model.yaml").read_text())
    card["runtime"]["batch_size"] = batch
    (folder / "model.yaml").write_text(yaml.safe_dump(card, sort_keys=False))
    return load_model(folder).assemble(dest / f"src-{task}-{batch}")


def run_once(src: Path, weights: Path, wav_list: Path, out: Path, threads: int) -> dict:
    env = {**os.environ, "ASRBENCH_WEIGHTS_SRC": str(weights), "ASRBENCH_CPU_THREADS": str(threads)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, str(src / "transformers_asr.py"), str(wav_list), str(out)],
        check=True,
        env=env,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    timing = [ln.split("\t") for ln in (out / "timing.tsv").read_text().splitlines()]
    hyps = dict(ln.split("\t", 1) for ln in (out / "hyp.tsv").read_text().splitlines())
    processing = sum(float(t[1]) for t in timing)
    audio = sum(float(t[2]) for t in timing)
    return {
        "utterances": len(timing),
        "audio_s": round(audio, 2),
        "processing_s": round(processing, 3),
        "x_realtime": round(audio / processing, 1),
        "process_wall_s": round(wall, 2),
        "process_cpu_s": round(cpu, 2),
        "audio_per_cpu_s": round(audio / cpu, 2),
        "hyps": hyps,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=["ctc", "seq2seq"], choices=sorted(TEMPLATES))
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 2, 4, 8])
    ap.add_argument("--dataset", default="mini_en", help="dataset folder under datasets/")
    ap.add_argument("--limit", type=int, default=0, help="first N utterances (0: all)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument(
        "--weights",
        nargs="+",
        default=[],
        metavar="TASK=DIR",
        help="a real save_pretrained folder for a task (e.g. seq2seq=/path/whisper-tiny.en) "
        "instead of the tests' tiny random model",
    )
    args = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()}", file=sys.stderr)
    ds = load_dataset(REPO_ROOT / "datasets" / args.dataset)
    utts = ds.utterances[: args.limit or None]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tf-batching-") as tmp_name:
        tmp = Path(tmp_name)
        wav_list = tmp / "wav.list"
        wav_list.write_text("".join(f"{u.id}\t{ds.audio_path(u)}\n" for u in utts))
        for task in args.tasks:
            real = dict(w.split("=", 1) for w in args.weights)
            weights = Path(real[task]) if task in real else tiny_model(task, tmp / "weights")
            base = None
            for batch in sorted(set([1, *args.batches])):
                res = run_once(
                    source(task, batch, tmp),
                    weights,
                    wav_list,
                    tmp / f"out-{task}-{batch}",
                    args.threads,
                )
                hyps = res.pop("hyps")
                base = hyps if batch == 1 else base
                res["differs_from_batch_1"] = sum(hyps[k] != base.get(k) for k in hyps)
                rows.append({"task": task, "batch_size": batch, **res})
                print(json.dumps(rows[-1]), flush=True)
    print(f"load average after: {os.getloadavg()}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
