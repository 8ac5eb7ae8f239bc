"""VAD + a model over a 1-hour recording through `ops/benchmark`'s own path: RTF and peak memory.

Builds a long-form dataset of one recording (`--minutes`, default 60) from the embedded long
sets (datasets/mini_long_en and mini_meeting_en, their sessions in turn, again and again,
separated by 2-s pauses of silence), written block by block so the builder never holds it
whole, with its exact reference segments (the sessions' segments shifted). Then, in a fresh
child process, `run_benchmark` runs the model on it with `--segment auto` (the card's limit:
PocketSphinx 30 s, Moonshine 12 s; VAD cuts the hour into pieces streamed from the file) and
scores the hour as one session (without DAE: the scorer refuses DAE's alternatives on a
session this long). Reported: the phases' seconds from run.json (`segment_s`: VAD
and cutting the pieces; `run_s`: the model over the pieces), the model's RTF (its processing
seconds per second of audio), the whole run's wall RTF, the pieces, the WER, and peak RSS of
the benchmark process (getrusage SELF: the segmenter, cutting, reassembly and scoring) and of
the largest process it waited for (RUSAGE_CHILDREN; a child forked from this process counts
this process's pages until it execs, so that figure is never below SELF at the fork and
bounds the model programs only from above). A decoded hour is 230 MB as float32 (115 MB as
16-bit): a benchmark process peak that does not grow with the length of the recording shows
it was never in memory whole.

    .venv/bin/python benchmarks/longform_run.py [--minutes 60] [--model pocketsphinx_en]
        [--runner local] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RATE = 16000
PAUSE_S = 2.0
SOURCES = ("mini_long_en", "mini_meeting_en")


def _sessions() -> list[tuple[Path, list[dict]]]:
    out = []
    for name in SOURCES:
        folder = ROOT / "datasets" / name
        segs = json.loads((folder / "segments.seglst.json").read_text())
        for sid in dict.fromkeys(s["session_id"] for s in segs):
            out.append(
                (folder / "audio" / f"{sid}.wav", [s for s in segs if s["session_id"] == sid])
            )
    return out


def build(root: Path, minutes: float) -> float:
    """Write the dataset folder; return the recording's duration in seconds."""
    import numpy as np
    import soundfile as sf

    (root / "audio").mkdir(parents=True, exist_ok=True)
    sessions, segs, pos, k = _sessions(), [], 0, 0
    total = int(minutes * 60 * RATE)
    pause = np.zeros(int(PAUSE_S * RATE), dtype="int16")
    with sf.SoundFile(root / "audio" / "hour.wav", "w", RATE, 1, "PCM_16") as out:
        while pos < total:
            path, ref = sessions[k % len(sessions)]
            for s in ref:
                segs.append(
                    {
                        **s,
                        "session_id": "hour",
                        "speaker": f"{s['speaker']}",
                        "start_time": round(s["start_time"] + pos / RATE, 3),
                        "end_time": round(s["end_time"] + pos / RATE, 3),
                    }
                )
            for block in sf.blocks(str(path), blocksize=10 * RATE, dtype="int16"):
                out.write(block)
                pos += len(block)
            out.write(pause)
            pos += len(pause)
            k += 1
    segs.sort(key=lambda s: (s["start_time"], s["end_time"]))
    lines = ",\n".join(json.dumps(s) for s in segs)
    (root / "segments.seglst.json").write_text(f"[\n{lines}\n]\n")
    text = " ".join(s["words"] for s in segs)
    (root / "metadata.tsv").write_text(
        f"ID\tAUDIO\tDURATION\tTEXT\nhour\taudio/hour.wav\t{pos / RATE:.3f}\t{text}\n"
    )
    (root / "dataset.yaml").write_text(
        "id: long_hour_en\nlanguage: en\nsample_rate: 16000\nkind: longform\n"
    )
    return pos / RATE


def child(args: argparse.Namespace) -> None:
    """Run the cell in this process and print one JSON line of figures."""
    from asrbench.benchmark.request import JobSpec
    from asrbench.benchmark.run import run_benchmark

    t0 = time.monotonic()
    cell = run_benchmark(
        args.model,
        args.dataset,
        JobSpec(
            runner=args.runner,
            jobs=args.jobs,
            results_root=Path(args.work) / "results",
            cache_root=Path(args.work) / "hyps",
            progress=False,
            command=("benchmarks/longform_run.py",),
            # DAE's alternatives on a 7,000-word session exceed the scorer's exact-FST limit
            # (it refuses with "split it, or pass dae=False"); NSW and the rest stay on
            scorer_options={"dae": False},
        ),
    )
    wall = time.monotonic() - t0
    run = json.loads((cell.out_dir / "run.json").read_text())
    seg = run["options"].get("segmentation") or {}
    m, timing = cell.metrics, cell.summary.timing or {}
    print(
        json.dumps(
            {
                "wall_s": round(wall, 1),
                "times": {k: v for k, v in run["times"].items() if k.endswith("_s")},
                "audio_s": timing.get("audio_s"),
                "model_rtf": timing.get("rtf"),
                "wall_rtf": round(wall / timing["audio_s"], 4) if timing.get("audio_s") else None,
                "pieces": sum((seg.get("cut") or {}).values()),
                "segmentation": seg.get("record", {}).get("method", "none"),
                "wer": round(m.ter, 4) if m and m.ter is not None else None,
                "n_ref": m.n_ref if m else None,
                "peak_rss_mb_benchmark": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
                ),
                "peak_rss_mb_model_program": round(
                    resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
                ),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0, help="length of the recording")
    ap.add_argument("--model", default="pocketsphinx_en")
    ap.add_argument("--runner", default="local", help="local (default) or docker")
    ap.add_argument("--jobs", type=int, default=2, help="parallel shards of pieces")
    ap.add_argument("--work", help="folder for the dataset, cache and results (default: temp)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dataset", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    work = Path(args.work or tempfile.mkdtemp(prefix="longform-run-"))
    data = work / "long_hour_en"
    t0 = time.monotonic()
    duration = build(data, args.minutes)
    print(f"built {data}: {duration / 60:.1f} min in {time.monotonic() - t0:.1f} s", flush=True)
    cmd = [sys.executable, __file__, "--child", "--dataset", str(data), "--work", str(work)]
    cmd += ["--model", args.model, "--runner", args.runner, "--jobs", str(args.jobs)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode:
        sys.exit(f"the run failed:\n{out.stderr[-3000:]}")
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        json.dumps(
            {"model": args.model, "runner": args.runner, "jobs": args.jobs, **figures}, indent=1
        )
    )


if __name__ == "__main__":
    main()
