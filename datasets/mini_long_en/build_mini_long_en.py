#!/usr/bin/env python3
"""Rebuild the embedded long-form set `mini_long_en` from its real sources (deterministic).

Two single-speaker sessions of more than two minutes each, made by joining one speaker's real
utterances with real pauses:
- `lj_reading`: the 18 LJ Speech utterances of datasets/mini_en in ID order (one reader);
- `fsdd_jackson_numbers`: FSDD speaker `jackson` reading 19 digit strings (7 to 10 digits, drawn
  with a fixed seed), each string one segment, from ../shared/data/fsdd (8 kHz, resampled).
Each clip is trimmed to its speech (-35 dB below its loudest 10 ms frame, 50 ms kept either
side); pauses (0.5 to 1.6 s between LJ sentences, 0.05 to 0.15 s between digits, 0.8 to 1.8 s
between strings) are drawn with a fixed seed. Under the whole session runs a bed of real
background noise (Speech Commands `doing_the_dishes` then `exercise_bike`, from
asrbench/perturb/assets/noise) at -50 dBFS RMS, so pauses are real room sound, not digital zero.
Reference times are exact: every clip starts and lasts a whole number of 10 ms frames.

    .venv/bin/python datasets/mini_long_en/build_mini_long_en.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from asrbench.importers.longform import write_longform_dataset  # noqa: E402
from asrbench.longform import compose  # noqa: E402

SEED = 29
NOISE = [
    ROOT / "asrbench/perturb/assets/noise" / n
    for n in ("doing_the_dishes.wav", "exercise_bike.wav")
]
BED_DBFS = -50.0
DIGITS = "zero one two three four five six seven eight nine".split()
META = {
    "id": "mini_long_en",
    "name": "Embedded English long-form mini set (single speaker)",
    "language": "en",
    "sample_rate": 16000,
    "description": (
        "Two single-speaker sessions of over two minutes each, made by joining one speaker's "
        "real utterances with real pauses over a -50 dBFS bed of real background noise: "
        "lj_reading (the 18 LJ Speech sentences of mini_en, the same speech as short utterances "
        "there) and fsdd_jackson_numbers (FSDD speaker jackson reading digit strings). "
        "Segment times are exact. Built by build_mini_long_en.py; see ATTRIBUTION.md."
    ),
    "licence": "mixed (public domain, CC BY-SA 4.0, CC BY 4.0); see ATTRIBUTION.md",
    "sources": [
        {
            "name": "LJ Speech Dataset 1.1 (sample, via mini_en)",
            "licence": "public domain",
            "utterances": "lj_reading",
        },
        {
            "name": "Free Spoken Digit Dataset, speaker jackson",
            "licence": "CC BY-SA 4.0",
            "utterances": "fsdd_jackson_numbers",
        },
        {
            "name": "Speech Commands background noise (Warden 2018)",
            "licence": "CC BY 4.0",
            "utterances": "all (noise bed)",
        },
    ],
    "columns": {
        "SPEAKER": "the session's one speaker",
        "SOURCE": "the corpus the speech comes from",
    },
}


def read_tsv(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, ln.split("\t"), strict=True)) for ln in lines[1:] if ln.strip()]


def frames(rng: random.Random, low_s: float, high_s: float) -> int:
    return rng.randint(round(low_s * 100), round(high_s * 100))


def lj_session(rng: random.Random) -> compose.Session:
    mini_en = ROOT / "datasets/mini_en"
    rows = [r for r in read_tsv(mini_en / "metadata.tsv") if r["SPEAKER"] == "LJ"]
    clips = [
        compose.Clip(
            "LJ", r["TEXT"], compose.trim(compose.read_mono(mini_en / r["AUDIO"])), r["ID"]
        )
        for r in sorted(rows, key=lambda r: r["ID"])
    ]
    placed = compose.sequence(clips, [frames(rng, 0.5, 1.6) for _ in clips[1:]])
    return render("lj_reading", placed, (("SPEAKER", "LJ"), ("SOURCE", "ljspeech")))


def digit_string(speaker: str, recordings: Path, rng: random.Random, takes: dict) -> compose.Clip:
    """One spoken digit string: trimmed digit recordings joined by short pauses (one segment)."""
    digits = [rng.randrange(10) for _ in range(rng.randint(7, 10))]
    parts = []
    for i, d in enumerate(digits):
        take = takes[d].pop()
        parts.append(compose.trim(compose.read_mono(recordings / f"{d}_{speaker}_{take}.wav")))
        if i < len(digits) - 1:
            parts.append(np.zeros(frames(rng, 0.05, 0.15) * compose.FRAME))
    words = " ".join(DIGITS[d] for d in digits)
    return compose.Clip(speaker, words, np.concatenate(parts))


def shuffled_takes(rng: random.Random) -> dict[int, list[int]]:
    """Per digit, FSDD's 50 takes in a seeded order: each recording is used at most once."""
    takes = {}
    for d in range(10):
        order = list(range(50))
        rng.shuffle(order)
        takes[d] = order
    return takes


def fsdd_session(shared: Path, rng: random.Random) -> compose.Session:
    recordings = shared / "data/fsdd/recordings"
    takes = shuffled_takes(rng)
    clips = [digit_string("jackson", recordings, rng, takes) for _ in range(19)]
    placed = compose.sequence(clips, [frames(rng, 0.8, 1.8) for _ in clips[1:]])
    return render("fsdd_jackson_numbers", placed, (("SPEAKER", "jackson"), ("SOURCE", "fsdd")))


def render(session_id: str, placed: list[compose.Placed], extra: tuple) -> compose.Session:
    end = max(p.end for p in placed) + 50
    bed = compose.noise_bed(NOISE, end, BED_DBFS)
    samples, scale, _ = compose.render(placed, bed)
    segs = compose.segments(session_id, placed)
    print(
        f"{session_id}: {len(samples) / compose.RATE:.1f} s, {len(segs)} segments, "
        f"scale {scale:.3f}"
    )
    return compose.Session(session_id, samples, tuple(segs), extra)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--out", type=Path, default=HERE, help="folder to write (default: this one)")
    args = ap.parse_args()
    rng = random.Random(SEED)
    sessions = [lj_session(rng), fsdd_session(args.shared, rng)]
    write_longform_dataset(args.out, META, sessions)


if __name__ == "__main__":
    main()
