#!/usr/bin/env python3
"""Rebuild the embedded `fsdd_accents` dataset from the Free Spoken Digit Dataset (provenance).

Source: ../shared/data/fsdd (FSDD, Jakobovski et al., CC BY-SA 4.0): 3,000 recordings of the
digits 0-9, 50 of each digit by each of 6 speakers, 8 kHz mono WAV named
`{digit}_{speaker}_{index}.wav`, speaker metadata (gender, accent, language) in `metadata.py`.

The subset is seeded and balanced: for every speaker and every digit, 5 of the 50 takes are
drawn with numpy's default_rng(SEED) (so 50 utterances per speaker, 300 in all). The WAV files
are copied byte for byte (8 kHz kept as published); TEXT is the digit as an English word;
SPEAKER, GENDER (M/F from `male`/`female`), ACCENT (as published, e.g. `USA/neutral`) and
LANGUAGE come from `metadata.py`, which is read as data (ast.literal_eval), never executed.

    .venv/bin/python datasets/fsdd_accents/build_fsdd_accents.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import ast
import shutil
from pathlib import Path

import numpy as np
import soundfile as sf

HERE = Path(__file__).resolve().parent
SEED = 20240601
TAKES_PER_DIGIT = 5
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
GENDER = {"male": "M", "female": "F"}
LANGUAGE = {"english": "en"}


def read_metadata(path: Path) -> dict[str, dict[str, str]]:
    """The `metadata = {...}` literal of FSDD's metadata.py, parsed without running it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "metadata"):
            return ast.literal_eval(node.value)
    raise SystemExit(f"{path}: no `metadata = {{...}}` assignment found")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=HERE.parents[2] / "shared")
    ap.add_argument("--out", type=Path, default=HERE, help="where to write (default: here)")
    args = ap.parse_args()
    src = args.shared / "data" / "fsdd"
    meta = read_metadata(src / "metadata.py")
    rng = np.random.default_rng(SEED)
    rows: list[dict[str, str]] = []
    for speaker in sorted(meta):
        info = meta[speaker]
        for digit in range(10):
            takes = sorted(rng.choice(50, size=TAKES_PER_DIGIT, replace=False).tolist())
            for n in takes:
                uid = f"{digit}_{speaker}_{n}"
                wav = src / "recordings" / f"{uid}.wav"
                rel = f"audio/{uid}.wav"
                (args.out / "audio").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(wav, args.out / rel)
                sf_info = sf.info(str(wav))
                if sf_info.samplerate != 8000 or sf_info.channels != 1:
                    raise SystemExit(f"{wav}: expected 8 kHz mono, got {sf_info}")
                rows.append({
                    "ID": uid, "AUDIO": rel,
                    "DURATION": f"{sf_info.frames / sf_info.samplerate:.3f}",
                    "TEXT": WORDS[digit], "SPEAKER": speaker,
                    "GENDER": GENDER[info["gender"]], "ACCENT": info["accent"],
                    "LANGUAGE": LANGUAGE[info["language"]],
                })
    columns = ["ID", "AUDIO", "DURATION", "TEXT", "SPEAKER", "GENDER", "ACCENT", "LANGUAGE"]
    out = "\t".join(columns) + "\n"
    out += "".join("\t".join(r[c] for c in columns) + "\n" for r in rows)
    (args.out / "metadata.tsv").write_text(out, encoding="utf-8")
    total = sum(float(r["DURATION"]) for r in rows)
    print(f"fsdd_accents: {len(rows)} utterances, {len(meta)} speakers, {total:.1f} s")


if __name__ == "__main__":
    main()
