#!/usr/bin/env python3
"""Rebuild the embedded `mini_fr` dataset (Canadian French read speech) from Debian's packages.

Source: the Asterisk core sound prompts in French, recorded by June Wallack (a professional
voice), CC-BY-SA-3.0, as Debian ships them: `asterisk-core-sounds-fr-wav` (8 kHz mono 16-bit
WAV, `/usr/share/asterisk/sounds/fr_CA_f_June/`) and `asterisk-core-sounds-fr` (the transcript
of every prompt, `core-sounds-fr.txt.gz`). Selection: prompts of 5 to 25 words whose transcript
is speech (no `[tones]` or `(sound)` entries), every 6th in name order: 34 utterances. Audio is
kept as published (8 kHz: telephone prompts), so models resample it themselves; transcripts are
kept exactly as the source writes them (including its typos).

    .venv/bin/python datasets/mini_fr/build_mini_fr.py [--root /]   # with the packages installed
    .venv/bin/python datasets/mini_fr/build_mini_fr.py --download   # apt-get download + dpkg -x
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import tempfile
import wave
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOUNDS = "usr/share/asterisk/sounds/fr_CA_f_June"
TRANSCRIPTS = "usr/share/doc/asterisk-core-sounds-fr/core-sounds-fr.txt.gz"
PACKAGES = ("asterisk-core-sounds-fr", "asterisk-core-sounds-fr-wav")
STEP = 6


def prompts(root: Path) -> list[tuple[str, str]]:
    """(prompt name, transcript) of every spoken prompt with 5 to 25 words, in name order."""
    out = []
    for line in gzip.open(root / TRANSCRIPTS, "rt", encoding="utf-8"):
        if line.startswith(";") or ": " not in line:
            continue
        name, text = line.rstrip("\n").split(": ", 1)
        text = " ".join(text.split())
        if "[" in text or "(" in text or not 5 <= len(text.split()) <= 25:
            continue
        if (root / SOUNDS / f"{name}.wav").is_file():
            out.append((name, text))
    return sorted(out)


def build(root: Path) -> None:
    audio_dir = HERE / "audio"
    shutil.rmtree(audio_dir, ignore_errors=True)
    audio_dir.mkdir()
    rows = ["ID\tAUDIO\tDURATION\tTEXT\tSPEAKER\tGENDER\tACCENT"]
    for name, text in prompts(root)[::STEP]:
        uid = f"fr_ca_june_{name.replace('/', '_')}"
        src = root / SOUNDS / f"{name}.wav"
        with wave.open(str(src), "rb") as w:
            assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (8000, 1, 2), src
            seconds = w.getnframes() / 8000
        shutil.copy2(src, audio_dir / f"{uid}.wav")
        rows.append(f"{uid}\taudio/{uid}.wav\t{seconds:.3f}\t{text}\tjune_wallack\tF\tfr-CA")
    (HERE / "metadata.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(rows) - 1} utterances written to {HERE}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path("/"), help="where the packages are installed")
    ap.add_argument("--download", action="store_true",
                    help="apt-get download the two packages and unpack them in a temporary folder")
    args = ap.parse_args()
    if not args.download:
        build(args.root)
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["apt-get", "download", *PACKAGES], cwd=tmp, check=True)
        for deb in Path(tmp).glob("*.deb"):
            subprocess.run(["dpkg", "-x", str(deb), str(Path(tmp) / "root")], check=True)
        build(Path(tmp) / "root")


if __name__ == "__main__":
    main()
