#!/usr/bin/env python3
"""Runner overhead: platform time outside model inference, and container start latency.

One run, side by side on the same machine (report ratios: these machines are noisy):
  - anchor: the model program run bare on the host (`python transcribe.py wav.lst out/`)
  - the local runner (per-model virtualenv) and the Docker runner on the same utterances.
Overhead = wall time - time the program spent inside per-utterance inference (timing.tsv),
as a share of wall time. Container start latency = `docker run` of the model image with a
no-op entry point, median of N.

    .venv/bin/python benchmarks/runner_overhead.py [--dataset mini_en] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from asrbench.dataset import load_dataset
from asrbench.images import client
from asrbench.resolve import resolve_model
from asrbench.runners import get_runner, read_tsv_pairs
from asrbench.settings import REPO_ROOT


def inference_seconds(timing: Path) -> float:
    return sum(float(v.split("\t")[0]) for v in read_tsv_pairs(timing).values())


def bare(model, ds, work: Path) -> tuple[float, float]:
    """The anchor: the program run directly with the local runner's interpreter."""
    local = get_runner("local", quiet=True)
    local.prepare(model)
    work.mkdir(parents=True)
    wav = work / "wav.lst"
    wav.write_text("".join(f"{u.id}\t{(ds.root / u.audio).resolve()}\n" for u in ds))
    start = time.perf_counter()
    subprocess.run(
        [
            str(local.venv_dir(model) / "bin" / "python"),
            str(local.program(model)),
            str(wav),
            str(work / "out"),
        ],
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - start
    return wall, inference_seconds(work / "out" / "timing.tsv")


def via_runner(name: str, model, ds, work: Path) -> tuple[float, float, float]:
    runner = get_runner(name, quiet=True)
    runner.prepare(model)  # image build / venv creation is a one-off, not per-run overhead
    start = time.perf_counter()
    result = runner.run(model, ds, work)
    wall = time.perf_counter() - start
    return wall, inference_seconds(result.timing_path), result.startup_s


def container_start(model, repeats: int) -> float:
    runner = get_runner("docker", quiet=True)
    tag = runner.image_tag(model)
    c = client()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        c.containers.run(
            tag, entrypoint=["/opt/venv/bin/python", "-c", "pass"], network_mode="none", remove=True
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="pocketsphinx_en")
    ap.add_argument("--dataset", default=str(REPO_ROOT / "datasets" / "mini_en"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    model = resolve_model(args.model)
    ds = load_dataset(args.dataset)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeats):
            w, inf = bare(model, ds, Path(tmp) / f"bare{rep}")
            rows.append(("bare program (anchor)", w, inf, 0.0))
            for name in ("local", "docker"):
                w, inf, st = via_runner(name, model, ds, Path(tmp) / f"{name}{rep}")
                rows.append((f"{name} runner", w, inf, st))
    start_latency = container_start(model, max(5, args.repeats))
    audio = ds.total_duration
    out: dict[str, dict] = {}
    for label in dict.fromkeys(r[0] for r in rows):
        sel = [r for r in rows if r[0] == label]
        wall = statistics.median(r[1] for r in sel)
        inf = statistics.median(r[2] for r in sel)
        out[label] = {
            "wall_s": wall,
            "inference_s": inf,
            "outside_inference_share": (wall - inf) / wall,
            "rtf": wall / audio,
        }
    anchor = out["bare program (anchor)"]["wall_s"]
    print(
        f"{args.model} on {ds.id}: {len(ds)} utterances, {audio:.1f} s of audio, "
        f"median of {args.repeats} runs"
    )
    print(f"{'path':<24}{'wall s':>9}{'infer s':>9}{'outside inference':>19}{'vs anchor':>11}")
    for label, f in out.items():
        print(
            f"{label:<24}{f['wall_s']:>9.2f}{f['inference_s']:>9.2f}"
            f"{100 * f['outside_inference_share']:>18.1f}%{f['wall_s'] / anchor:>10.3f}x"
        )
    docker = out["docker runner"]
    platform_share = (docker["wall_s"] - anchor) / docker["wall_s"]
    print(
        f"platform overhead of the Docker runner over the bare program: "
        f"{100 * platform_share:.1f}% of wall time (target <= 5%)"
    )
    print(f"container start latency (docker run, no-op python): {start_latency:.3f} s")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "paths": out,
                    "platform_share": platform_share,
                    "container_start_s": start_latency,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
