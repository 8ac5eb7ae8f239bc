"""Shared recipe of the embedded Asterisk prompt sets (`mini_fr`, `mini_es`, `mini_it`, `mini_ru`).

Debian ships the Asterisk core sound prompts of each language as two packages:
`asterisk-core-sounds-<lang>-wav` (8 kHz mono 16-bit WAV, `/usr/share/asterisk/sounds/<voice>/`)
and `asterisk-core-sounds-<lang>` (the transcript of every prompt, `core-sounds-<lang>.txt.gz`,
one `name: text` line each). One rule selects every set: prompts of 5 to 25 words that have a
recording, whose transcript is speech and whole, in name order, every `step`-th. Left out: `[tones]`
and `(sound)` entries; a sound told in words (under 0.1 s of audio a word: the Italian file's
`un suono di beep discendente`, 0.38 s); a transcript the source damaged (a `?` before a
lower-case letter stands for a lost accented letter: Italian `pu? essere`, `Il numero ? stato`).
Audio is copied as published (models resample it themselves); kept transcripts are exactly as the
source writes them (runs of spaces collapsed), typos and missing accents included: normalising is
the scorer's job. Each `datasets/mini_<lang>/build_mini_<lang>.py` only declares its `PromptSet`
and calls `main`; this file is not a dataset (it has no `dataset.yaml`).
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path

RATE = 8000  # as published: telephone prompts
MIN_SECONDS_PER_WORD = 0.1
HEADER = "ID\tAUDIO\tDURATION\tTEXT\tSPEAKER\tGENDER\tACCENT"


@dataclass(frozen=True)
class PromptSet:
    """One embedded set: which Debian packages, which voice, how utterances are labelled."""

    lang: str  # the Debian package suffix: fr, es, it, ru
    voice: str  # the folder under usr/share/asterisk/sounds/, e.g. fr_CA_f_June
    prefix: str  # utterance IDs are <prefix>_<prompt name>
    speaker: str
    gender: str
    accent: str  # BCP-47 of the voice: fr-CA, es-MX...
    step: int = 6  # every step-th selected prompt is kept
    min_words: int = 5
    max_words: int = 25

    @property
    def packages(self) -> tuple[str, str]:
        return (f"asterisk-core-sounds-{self.lang}", f"asterisk-core-sounds-{self.lang}-wav")

    @property
    def sounds(self) -> str:
        return f"usr/share/asterisk/sounds/{self.voice}"

    @property
    def transcripts(self) -> str:
        pkg = self.packages[0]
        return f"usr/share/doc/{pkg}/core-sounds-{self.lang}.txt.gz"


def _entries(path: Path) -> list[tuple[str, str]]:
    """(name, text) of every `name: text` line; the Italian file starts with a BOM."""
    out = []
    with gzip.open(path, "rt", encoding="utf-8-sig") as f:
        for line in f:
            if line.startswith(";") or ": " not in line:
                continue
            name, text = line.rstrip("\n").split(": ", 1)
            out.append((name, " ".join(text.split())))
    return out


def _damaged(text: str) -> bool:
    """A `?` before a lower-case letter stands for a letter the source lost (`pu? essere`)."""
    return any(m.group(1).islower() for m in re.finditer(r"\?\s*([^\W\d_])", text))


def _kept(spec: PromptSet, text: str, seconds: float) -> bool:
    """Speech of the set's length, transcribed whole; a described sound is not speech."""
    words = len(text.split())
    if "[" in text or "(" in text or _damaged(text):
        return False
    # under 0.1 s a word: a sound told in words (`un suono di beep discendente`, 0.38 s)
    return spec.min_words <= words <= spec.max_words and seconds >= MIN_SECONDS_PER_WORD * words


def prompts(spec: PromptSet, root: Path) -> list[tuple[str, str]]:
    """(prompt name, transcript) of every kept prompt that has a recording, in name order."""
    out = []
    for name, text in _entries(root / spec.transcripts):
        wav = root / spec.sounds / f"{name}.wav"
        if wav.is_file() and _kept(spec, text, _seconds(wav)):
            out.append((name, text))
    return sorted(out)


def _seconds(src: Path) -> float:
    with wave.open(str(src), "rb") as w:
        fmt = (w.getframerate(), w.getnchannels(), w.getsampwidth())
        if fmt != (RATE, 1, 2):
            raise SystemExit(f"{src}: {fmt} (rate, channels, bytes), expected ({RATE}, 1, 2)")
        return w.getnframes() / RATE


def build(spec: PromptSet, root: Path, out: Path) -> int:
    """Write `out/audio/` and `out/metadata.tsv` from packages unpacked under `root`."""
    audio_dir = out / "audio"
    shutil.rmtree(audio_dir, ignore_errors=True)
    audio_dir.mkdir()
    rows = [HEADER]
    for name, text in prompts(spec, root)[:: spec.step]:
        uid = f"{spec.prefix}_{name.replace('/', '_')}"
        src = root / spec.sounds / f"{name}.wav"
        seconds = _seconds(src)
        shutil.copy2(src, audio_dir / f"{uid}.wav")
        labels = f"{spec.speaker}\t{spec.gender}\t{spec.accent}"
        rows.append(f"{uid}\taudio/{uid}.wav\t{seconds:.3f}\t{text}\t{labels}")
    tmp = out / "metadata.tsv.part"
    tmp.write_text("\n".join(rows) + "\n", encoding="utf-8")
    os.replace(tmp, out / "metadata.tsv")
    return len(rows) - 1


def download(spec: PromptSet, tmp: Path) -> Path:
    """`apt-get download` the set's two packages into tmp and unpack them; returns the root."""
    subprocess.run(["apt-get", "download", *spec.packages], cwd=tmp, check=True)
    for deb in sorted(tmp.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(tmp / "root")], check=True)
    return tmp / "root"


def main(spec: PromptSet, out: Path, doc: str | None) -> None:
    """The command line every build script shares: `[--root /]` or `--download`."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path("/"), help="where the packages are installed")
    ap.add_argument(
        "--download",
        action="store_true",
        help="apt-get download the two packages and unpack them in a temporary folder",
    )
    args = ap.parse_args()
    if not args.download:
        n = build(spec, args.root, out)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            n = build(spec, download(spec, Path(tmp)), out)
    print(f"{n} utterances written to {out}")
