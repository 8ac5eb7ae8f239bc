"""Peak memory of `ops/import longform` on a long recording: decoded whole (before issue 38)
against converted in blocks (now).

Before, the importer decoded each recording whole as float32, then mixed it down, clipped it and
converted it, each a full copy: a 1-hour recording peaked near 1 GB. Now a whole recording that
libsndfile reads is streamed (`asrbench.importers.common.write_item_audio`: 10 s blocks through
soxr's stream), so the peak no longer grows with its length. The "whole" strategy is the same
import with the recording handed over as a loader only (no `Item.path`), the path every import
took before and segment cuts and ffmpeg-decoded formats still take. Each strategy runs in its own
process on the same generated recording; the report gives the process's peak RSS and the time.

    .venv/bin/python benchmarks/import_longform_memory.py [--minutes 60] [--rate HZ] [--channels N]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_recording(folder: Path, minutes: float, rate: int, channels: int) -> Path:
    """A `minutes`-long tone-and-noise WAV (16-bit) written a minute at a time, and its STM."""
    wav = folder / "s1.wav"
    rng = np.random.default_rng(0)
    with sf.SoundFile(wav, "w", samplerate=rate, channels=channels, subtype="PCM_16") as f:
        for k in range(int(np.ceil(minutes))):
            n = int(min(60.0, minutes * 60 - k * 60) * rate)
            t = (np.arange(n) + k * 60 * rate) / rate
            x = 0.1 * np.sin(2 * np.pi * 220 * t) + 0.01 * rng.standard_normal(n)
            f.write(np.repeat(x[:, None], channels, axis=1).astype(np.float32))
    (folder / "ref.stm").write_text(f"s1 1 spk 0.00 {minutes * 60 - 1:.2f} hello there\n")
    return wav


def measure(strategy: str, folder: Path) -> dict:
    """Import `folder`'s recording with `strategy`; peak RSS of this process (one import)."""
    from asrbench.importers.longform import LongformSource, build_longform, from_timed

    source = from_timed(folder / "ref.stm", folder)
    if strategy == "whole":  # the recording as a loader only: decoded whole, as before
        source = LongformSource(
            tuple(replace(i, path=None) for i in source.items), source.segments, source.origin
        )
    start = time.perf_counter()
    build_longform(folder / f"out-{strategy}", source, dataset_id=f"out-{strategy}")
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"strategy": strategy, "peak_rss_mb": round(peak_kb / 1024, 1), "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--rate", type=int, default=16000, help="the recording's sample rate")
    ap.add_argument("--channels", type=int, default=1)
    ap.add_argument("--one", choices=["whole", "blocks"], help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.folder)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        wav = make_recording(folder, args.minutes, args.rate, args.channels)
        print(
            f"recording: {args.minutes:g} min, {args.rate} Hz, {args.channels} channel(s), "
            f"{wav.stat().st_size / 2**20:.0f} MiB; imported at 16 kHz mono"
        )
        for strategy in ("whole", "blocks"):
            p = subprocess.run(
                [sys.executable, __file__, "--one", strategy, "--folder", str(folder)],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(p.stdout.strip().splitlines()[-1])
            print(f"{strategy:>6}: peak RSS {r['peak_rss_mb']:7.1f} MB, {r['seconds']:6.1f} s")


if __name__ == "__main__":
    main()
