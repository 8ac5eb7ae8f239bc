#!/usr/bin/env python3
"""Rebuild the embedded `mini_en` dataset from its real sources (provenance, not run by setup).

Sources: ../shared/data (LJSpeech sample, LibriSpeech test-clean sample, CMU ARCTIC sample, JFK)
and Debian's pocketsphinx-testdata LibriVox utterances. Audio is converted to 16 kHz mono 16-bit
WAV with soxr (VHQ); transcripts are kept exactly as their sources write them.

    .venv/bin/python datasets/mini_en/build_mini_en.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

HERE = Path(__file__).resolve().parent
RATE = 16000
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")


def convert(src: Path, dst: Path) -> float:
    audio, rate = sf.read(str(src), dtype="float64", always_2d=True)
    mono = audio.mean(axis=1)
    if rate != RATE:
        mono = soxr.resample(mono, rate, RATE, quality="VHQ")
    mono = np.clip(mono, -1.0, 1.0)
    dst.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(dst), mono, RATE, subtype="PCM_16")
    return len(mono) / RATE


def read_tsv(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, ln.split("\t"), strict=True)) for ln in lines[1:] if ln.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=HERE.parents[2] / "shared")
    data = ap.parse_args().shared / "data"
    rows: list[dict[str, str]] = []

    def add(uid: str, src: Path, text: str, speaker: str, gender: str, accent: str, source: str):
        rel = f"audio/{uid}.wav"
        dur = convert(src, HERE / rel)
        rows.append(
            {
                "ID": uid,
                "AUDIO": rel,
                "DURATION": f"{dur:.3f}",
                "TEXT": text,
                "SPEAKER": speaker,
                "GENDER": gender,
                "ACCENT": accent,
                "SOURCE": source,
            }
        )

    for r in read_tsv(data / "ljspeech-sample" / "transcripts.tsv"):
        add(
            r["ID"],
            data / "ljspeech-sample" / "wavs" / f"{r['ID']}.flac",
            r["TEXT"],
            "LJ",
            "F",
            "US",
            "ljspeech",
        )
    for trans in sorted((data / "librispeech-test-clean-sample").rglob("*.trans.txt")):
        for line in trans.read_text().splitlines():
            uid, text = line.split(" ", 1)
            add(uid, trans.parent / f"{uid}.flac", text, "1089", "M", "", "librispeech")
    arctic_speaker = {"aew": ("M", "US"), "axb": ("F", "IN")}
    for r in read_tsv(data / "cmu-arctic-sample" / "transcripts.tsv"):
        gender, accent = arctic_speaker.get(r["SPEAKER"], ("", ""))
        speaker = r["SPEAKER"] if r["SPEAKER"] in arctic_speaker else ""
        add(
            r["ID"],
            data / "cmu-arctic-sample" / f"{r['ID']}.wav",
            r["TEXT"],
            speaker,
            gender,
            accent,
            "cmu_arctic",
        )
    for r in read_tsv(data / "jfk" / "transcripts.tsv"):
        add(r["ID"], data / "jfk" / "jfk.flac", r["TEXT"], "jfk", "M", "US", "jfk")
    pattern = re.compile(r"^<s> (.*) </s> \((\S+)\)$")
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        m = pattern.match(line.strip())
        if m:
            text, uid = m.groups()
            add(uid, LIBRIVOX / f"{uid}.wav", text, "librivox_austen", "", "", "librivox")

    columns = ["ID", "AUDIO", "DURATION", "TEXT", "SPEAKER", "GENDER", "ACCENT", "SOURCE"]
    out = "\t".join(columns) + "\n"
    out += "".join("\t".join(r[c] for c in columns) + "\n" for r in rows)
    (HERE / "metadata.tsv").write_text(out, encoding="utf-8")
    total = sum(float(r["DURATION"]) for r in rows)
    print(f"mini_en: {len(rows)} utterances, {total:.1f} s")


if __name__ == "__main__":
    main()
