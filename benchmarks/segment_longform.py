"""VAD segmentation of a 1-hour recording: time, real-time factor and peak memory.

Builds the recording once (real LibriSpeech utterances from datasets/ls_gender, in a loop,
separated by pauses of quiet room tone so that speech is `--speech-share` of the hour),
written in blocks so the builder never holds it either; then, for each method, a fresh child
process segments it (`asrbench.segmentation.segment_vad`) and, with `--cut`, writes every span's
audio (`cut_spans`). Each child reports wall time, the real-time factor (seconds of work per
second of audio), its peak RSS (getrusage, ONNX Runtime's own allocations included) and, in a
second run under tracemalloc, Python's and numpy's traced peak (the figure that shows the
audio is never read whole: a decoded hour is 230 MB as float32).

    .venv/bin/python benchmarks/segment_longform.py [--hours 1] [--methods silero,webrtc] [--cut]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RATE = 16000


def build(path: Path, hours: float, speech_share: float, seed: int = 1) -> tuple[float, float]:
    """Write the recording; return (duration, seconds of utterance audio) in seconds."""
    import numpy as np
    import soundfile as sf

    files = sorted((ROOT / "datasets" / "ls_gender" / "audio").glob("*.wav"))
    rng = np.random.default_rng(seed)
    total, speech, k = int(hours * 3600 * RATE), 0, 0
    with sf.SoundFile(str(path), "w", RATE, 1, subtype="PCM_16") as out:
        written = 0
        while written < total:
            utt, _ = sf.read(str(files[k % len(files)]), dtype="float32")
            k += 1
            mean_pause = len(utt) * (1 - speech_share) / speech_share
            pause = int(mean_pause * rng.uniform(0.5, 1.5))
            chunk = np.concatenate([utt, rng.normal(0, 1e-3, pause).astype(np.float32)])
            chunk = chunk[: total - written]
            out.write(chunk)
            written += len(chunk)
            speech += min(len(utt), len(chunk))
    return total / RATE, speech / RATE


def child(method: str, path: Path, cut_dir: Path | None, trace: bool) -> dict:
    """Runs in a fresh process: segment (and cut), report time and memory."""
    from asrbench.segmentation import VadParams, cut_spans, segment_vad

    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    segs = segment_vad(path, VadParams(method=method, max_segment_s=30.0))
    vad_s = time.perf_counter() - t0
    cut_s = None
    if cut_dir is not None:
        t1 = time.perf_counter()
        cut_spans(path, segs.spans, cut_dir, RATE)
        cut_s = time.perf_counter() - t1
    traced = tracemalloc.get_traced_memory()[1] / 1e6 if trace else None
    return {
        "method": method,
        "audio_s": segs.duration,
        "spans": len(segs.spans),
        "speech_s": round(segs.speech_s, 1),
        "vad_s": round(vad_s, 2),
        "rtf": round(vad_s / segs.duration, 5),
        "cut_s": None if cut_s is None else round(cut_s, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_at_start_mib": round(base_rss, 1),
        "traced_peak_mb": None if traced is None else round(traced, 2),
    }


def run_child(method: str, path: Path, cut_dir: Path | None, trace: bool) -> dict:
    cmd = [sys.executable, __file__, "--child", method, "--audio", str(path)]
    cmd += ["--cut-dir", str(cut_dir)] if cut_dir else []
    cmd += ["--trace"] if trace else []
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--speech-share", type=float, default=0.5)
    ap.add_argument("--methods", default="silero,webrtc")
    ap.add_argument("--cut", action="store_true", help="also write every span's audio")
    ap.add_argument("--no-trace", action="store_true", help="skip the tracemalloc run")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--audio", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--cut-dir", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.audio, args.cut_dir, args.trace)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hour.wav"
        t0 = time.perf_counter()
        duration, speech = build(path, args.hours, args.speech_share)
        print(
            f"built {duration:.0f} s ({speech:.0f} s of utterances) in "
            f"{time.perf_counter() - t0:.1f} s: {path.stat().st_size / 1e6:.0f} MB on disk"
        )
        for method in args.methods.split(","):
            cut_dir = Path(tmp) / f"cut-{method}" if args.cut else None
            timed = run_child(method, path, cut_dir, trace=False)
            if not args.no_trace:
                timed["traced_peak_mb"] = run_child(method, path, None, True)["traced_peak_mb"]
            print(json.dumps(timed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
