"""What the LocalAgreement-2 re-decoding policy costs in final WER, without a clock.

    .cache/venvs/whisper_tiny_en-*/bin/python benchmarks/stream_policy_wer.py --out DIR
    ops/score DIR/ref.tsv DIR/hyp_policy.tsv -o DIR/policy     (and DIR/hyp_batch.tsv)

Run with a Python that has faster-whisper (the local runner's whisper_tiny_en virtualenv, made
by `ops/benchmark --runner local -m whisper_tiny_en` or `ops/stream --runner local`). For every
mini_en utterance it writes two hypotheses from the same model and the card's decoding:
  hyp_policy.tsv  the policy's final (models/_common/stream_policy.py), fed 100-ms chunks and
                  decoding whenever due, with no wall clock: the policy alone, no pacing
  hyp_batch.tsv   one decode of the whole utterance, as the batch program does
and the references (ref.tsv). Score both with `ops/score` (docs/STREAMING.md has the figures).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
MINI_EN = ROOT / "datasets" / "mini_en"
CHUNK = 1600  # 100 ms at 16 kHz


def model_source(card: str) -> Path:
    """The card and the shared helpers in one folder, as the image and local runner have them."""
    src = Path(tempfile.mkdtemp(prefix="stream-policy-wer-"))
    shutil.copy(ROOT / "models" / card / "model.yaml", src)
    for name in ("contract.py", "weights.py", "whisper_transcribe.py", "whisper_stream.py"):
        shutil.copy(ROOT / "models" / "_common" / name, src)
    shutil.copy(ROOT / "models" / "_common" / "stream_policy.py", src)
    return src


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="folder for the three TSV files")
    ap.add_argument("--model", default="whisper_tiny_en", help="a faster-whisper card")
    args = ap.parse_args()

    import numpy as np

    sys.path.insert(0, str(model_source(args.model)))
    import ctranslate2
    import stream_policy
    import whisper_stream
    import whisper_transcribe

    decode = whisper_stream.load()
    batch = whisper_transcribe.Whisper()
    args.out.mkdir(parents=True, exist_ok=True)
    lines = (MINI_EN / "metadata.tsv").read_text(encoding="utf-8").splitlines()[1:]
    refs, policy_hyps, batch_hyps = [], [], []
    for row in (line.split("\t") for line in lines):
        uid, path, text = row[0], row[1], row[3]
        with wave.open(str(MINI_EN / path)) as w:
            pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        audio = pcm.astype(np.float32) / 32768.0
        policy = stream_policy.LocalAgreement(decode)
        for start in range(0, len(audio), CHUNK):
            policy.insert(audio[start : start + CHUNK])
            if policy.due():
                policy.step()
        ctranslate2.set_random_seed(batch.seed)
        segments, _ = batch.model.transcribe(audio, **batch.opts)
        refs.append(f"{uid}\t{text}\n")
        policy_hyps.append(f"{uid}\t{policy.finish().text}\n")
        batch_hyps.append(f"{uid}\t{' '.join(s.text.strip() for s in segments)}\n")
        print(uid, file=sys.stderr, flush=True)
    for name, rows in (("ref", refs), ("hyp_policy", policy_hyps), ("hyp_batch", batch_hyps)):
        (args.out / f"{name}.tsv").write_text("".join(rows), encoding="utf-8")
    print(f"wrote {args.out}/ref.tsv, hyp_policy.tsv, hyp_batch.tsv: score them with ops/score")
    return 0


if __name__ == "__main__":
    sys.exit(main())
