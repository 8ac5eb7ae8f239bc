"""PGD speed: seconds per utterance per step, per white-box target and batch size (issue 28).

Times `asrbench.adversarial.pgd.pgd` (forward + backward + projection per step) on the shortest
utterances of a dataset, for each target and batch size, and prints one JSON line per cell:
{"target", "batch", "steps", "seconds", "s_per_utt_step", "threads", "device"}. The first
(untimed) step of each target warms the model up. Whisper pads every window to 30 s, so the
cost of a step does not depend on an utterance's length up to 30 s (a longer one costs one
window per started 30 s).

    .venv/bin/python benchmarks/adversarial_speed.py [--targets whisper_tiny_en,whisper_base]
        [--batches 1,2,4,8] [--steps 2] [--dataset mini_en] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default="whisper_tiny_en,whisper_base")
    ap.add_argument("--batches", default="1,2,4,8")
    ap.add_argument("--steps", type=int, default=2, help="timed steps per cell")
    ap.add_argument("--dataset", default="mini_en")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)

    import numpy as np
    import soundfile as sf
    import torch

    from asrbench.adversarial.pgd import PgdSettings, pgd
    from asrbench.adversarial.target import load_target
    from asrbench.resolve import resolve_dataset

    ds = resolve_dataset(args.dataset)
    batches = [int(b) for b in args.batches.split(",")]
    utts = sorted(ds.utterances, key=lambda u: u.duration)[: max(batches)]
    xs = [sf.read(str(ds.audio_path(u)), dtype="float64")[0] for u in utts]
    texts = [u.text for u in utts]
    for model_id in args.targets.split(","):
        target = load_target(model_id, device=args.device)
        warm = PgdSettings(snr=30.0, steps=1)
        pgd(target, xs[:1], texts[:1], warm, [np.random.default_rng(0)])
        for b in batches:
            settings = PgdSettings(snr=30.0, steps=args.steps)
            rngs = [np.random.default_rng(i) for i in range(b)]
            t0 = time.perf_counter()
            pgd(target, xs[:b], texts[:b], settings, rngs)
            secs = time.perf_counter() - t0
            row = {
                "target": model_id,
                "batch": b,
                "steps": args.steps,
                "seconds": round(secs, 2),
                "s_per_utt_step": round(secs / (b * args.steps), 3),
                "threads": torch.get_num_threads(),
                "device": args.device,
            }
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
