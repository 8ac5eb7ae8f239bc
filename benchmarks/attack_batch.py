"""PGD through the bank's batch hook: seconds per utterance per step by batch size (issue 28).

Times `asrbench.perturb.adversarial.pgd_batch` (the hook `ops/perturb -p pgd:...` uses when
ASRBENCH_ATTACK_BATCH > 1: Mel and encoder batched, decoder per utterance, then the 16-bit
written-file fit) on the `--utts` shortest utterances of a dataset, in consecutive batches of
each size, all sizes in one run after one untimed warm-up step. One JSON line per batch size:
{"target", "batch", "utterances", "steps", "seconds", "s_per_utt_step", "load_avg",
"threads"}; `load_avg` is the 1-minute load average at the start and end of the cell (the
machine is shared: compare sizes within one run only), then one line {"ratio_to_batch_1":
{batch: seconds at 1 / seconds at batch}} when batch 1 was run.

    .venv/bin/python benchmarks/attack_batch.py [--target whisper_tiny_en] [--batches 1,2,4,8]
        [--utts 8] [--steps 1] [--dataset mini_en]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default="whisper_tiny_en")
    ap.add_argument("--batches", default="1,2,4,8")
    ap.add_argument("--utts", type=int, default=8, help="utterances attacked per batch size")
    ap.add_argument("--steps", type=int, default=1, help="PGD steps per utterance")
    ap.add_argument("--dataset", default="mini_en")
    args = ap.parse_args(argv)

    import numpy as np
    import soundfile as sf
    import torch

    from asrbench.perturb.adversarial import pgd_batch
    from asrbench.perturb.noise import Context
    from asrbench.resolve import resolve_dataset

    ds = resolve_dataset(args.dataset)
    utts = sorted(ds.utterances, key=lambda u: u.duration)[: args.utts]
    xs = [sf.read(str(ds.audio_path(u)), dtype="float64")[0] for u in utts]
    ctxs = [Context(dataset=ds, utt=u) for u in utts]
    params = {"snr": 30.0, "target": args.target, "step_ratio": 0.4, "restarts": 1}

    def run(lo: int, hi: int, steps: int) -> None:
        rngs = [np.random.default_rng(i) for i in range(lo, hi)]
        pgd_batch(xs[lo:hi], 16000, rngs, ctxs[lo:hi], steps=steps, **params)

    run(0, 1, 1)  # warm-up: loads the target
    per_size = {}
    for b in [int(s) for s in args.batches.split(",")]:
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        for lo in range(0, len(xs), b):
            run(lo, min(lo + b, len(xs)), args.steps)
        secs = time.perf_counter() - t0
        per = secs / (len(xs) * args.steps)
        per_size[b] = per
        row = {
            "target": args.target,
            "batch": b,
            "utterances": len(xs),
            "steps": args.steps,
            "seconds": round(secs, 2),
            "s_per_utt_step": round(per, 3),
            "load_avg": [round(load0, 1), round(os.getloadavg()[0], 1)],
            "threads": torch.get_num_threads(),
        }
        print(json.dumps(row), flush=True)
    if 1 in per_size:
        ratios = {b: round(per_size[1] / per, 2) for b, per in per_size.items()}
        print(json.dumps({"ratio_to_batch_1": ratios}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
