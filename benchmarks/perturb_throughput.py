"""Throughput of every perturbation: audio seconds processed per wall second on mini_en.

    .venv/bin/python benchmarks/perturb_throughput.py [--dataset mini_en] [--severity max]

Each perturbation runs at its highest severity (the most expensive in practice for most) over
every utterance of the dataset in one process, audio already in memory, no disk writes: this
measures the DSP, not I/O. One-time set-up (the RIR bank simulation, DNSMOS model loading) is
done before timing. Prints a Markdown table and the bank's average.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

# the repository first: this folder's scoring.py would otherwise shadow the scoring package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench.dataset import load_dataset
from asrbench.perturb import all_perturbations, apply_spec
from asrbench.perturb.noise import Context
from asrbench.perturb.rooms import rir_bank
from asrbench.settings import REPO_ROOT


def spec_for(name: str, severity: str) -> str:
    p = all_perturbations()[name]
    if name == "aurora":
        return "aurora:set=A,noise=babble,snr=5"
    if not p.severities:
        return name
    return f"{name}:{max(p.severities) if severity == 'max' else min(p.severities)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", default=str(REPO_ROOT / "datasets" / "mini_en"))
    ap.add_argument("--severity", choices=("max", "min"), default="max")
    args = ap.parse_args()
    ds = load_dataset(args.dataset)
    audio = [(u, *sf.read(str(ds.audio_path(u)), dtype="float64")) for u in ds.utterances]
    total = sum(len(x) / sr for _, x, sr in audio)
    for k in range(1, 5):
        rir_bank(k, audio[0][2])
    rows = []
    for name in all_perturbations():
        spec = spec_for(name, args.severity)
        t = time.perf_counter()
        for u, x, sr in audio:
            apply_spec(x, sr, spec, seed=0, utt_id=u.id, ctx=Context(ds, u))
        dt = time.perf_counter() - t
        rows.append((spec, total / dt))
    speeds = np.array([r[1] for r in rows])
    print(
        f"dataset {ds.id}: {len(audio)} utterances, {total:.1f} s of audio; "
        f"{os.cpu_count()} CPU(s), {platform.processor() or platform.machine()}, one process\n"
    )
    print("| perturbation | x real time |\n|---|---|")
    for spec, speed in sorted(rows, key=lambda r: r[1]):
        print(f"| `{spec}` | {speed:,.0f} |")
    # Time-weighted mean: running every perturbation once over the dataset, total audio / time.
    overall = len(rows) * total / sum(total / s for s in speeds)
    print(
        f"\nwhole bank: {overall:,.0f}x real time (total audio / total time over all "
        f"{len(rows)} perturbations); median {np.median(speeds):,.0f}x; "
        f"slowest {speeds.min():,.0f}x"
    )


if __name__ == "__main__":
    main()
