#!/usr/bin/env python3
"""Rebuild the embedded `nonspeech_clips` set: audio with no speech in it (deterministic).

What a model outputs on these clips is hallucination: the set is reference-free (TEXT empty,
`reference_free: true`), and the hallucination check of issue 29 counts the words a model emits
per minute of it and the share of clips with any output. Clips, 10 to 30 s, 16 kHz mono 16-bit:
- digital silence (all-zero samples), 10 s and 30 s;
- low-level noise: seeded Gaussian white noise at -60 dBFS RMS (an electronic noise floor), and
  the real `exercise_bike` recording turned down to -55 dBFS RMS (a quiet room);
- the perturbation bank's real noises as shipped (asrbench/perturb/assets/noise):
  `doing_the_dishes` and `exercise_bike` (Speech Commands), 20 s each from the start;
- music: the bank's `guitar_16k` (10 s) and 20 s from each of two Debian
  `asterisk-moh-opsound-wav` music-on-hold tracks (8 kHz, resampled with soxr VHQ), from 30 s in.

    .venv/bin/python datasets/nonspeech_clips/build_nonspeech_clips.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from asrbench.dataset import Utterance, format_duration, write_dataset  # noqa: E402
from asrbench.longform.compose import RATE, read_mono, write_wav  # noqa: E402

NOISE = ROOT / "asrbench/perturb/assets/noise"
MOH = Path("/usr/share/asterisk/moh")
SEED = 4
META = {
    "id": "nonspeech_clips",
    "name": "Non-speech clips for hallucination checks (reference-free)",
    "language": "en",
    "sample_rate": 16000,
    "reference_free": True,
    "description": (
        "Nine clips of 10 to 30 s with no speech: digital silence, low-level noise, the "
        "perturbation bank's real noises and music. Reference-free: every word a model outputs "
        "on them is a hallucination (words per minute, share of clips with any output). Built by "
        "build_nonspeech_clips.py; see ATTRIBUTION.md."
    ),
    "licence": "mixed (CC BY 4.0, MIT, CC BY-SA 3.0); see ATTRIBUTION.md",
    "sources": [
        {
            "name": "Speech Commands background noise (Warden 2018)",
            "licence": "CC BY 4.0",
            "utterances": "*dishes*, *bike*",
        },
        {
            "name": "pyroomacoustics example guitar recording",
            "licence": "MIT",
            "utterances": "music_guitar_10s",
        },
        {
            "name": "Debian asterisk-moh-opsound-wav",
            "licence": "CC BY-SA 3.0",
            "utterances": "music_moh_*",
        },
        {
            "name": "generated (digital silence, seeded white noise)",
            "licence": "CC0",
            "utterances": "silence_*, white_noise_*",
        },
    ],
    "columns": {
        "CONTENT": "silence, noise or music",
        "LEVEL_DBFS": "RMS level of the clip in dB full scale (-inf for digital silence)",
        "SOURCE": "where the audio comes from",
    },
}


def at_level(x: np.ndarray, dbfs: float) -> np.ndarray:
    return x * (10 ** (dbfs / 20) / float(np.sqrt(np.mean(x**2))))


def excerpt(path: Path, start_s: float, seconds: float) -> np.ndarray:
    audio = read_mono(path)
    return audio[int(start_s * RATE) : int((start_s + seconds) * RATE)]


def clips() -> list[tuple[str, str, str, np.ndarray]]:
    """(ID, CONTENT, SOURCE, samples) in the set's order."""
    rng = np.random.default_rng(SEED)
    return [
        ("silence_10s", "silence", "digital zero", np.zeros(10 * RATE)),
        ("silence_30s", "silence", "digital zero", np.zeros(30 * RATE)),
        (
            "white_noise_m60dbfs_20s",
            "noise",
            "seeded white noise",
            at_level(rng.standard_normal(20 * RATE), -60),
        ),
        (
            "bike_m55dbfs_20s",
            "noise",
            "exercise_bike.wav 0-20 s, turned down",
            at_level(excerpt(NOISE / "exercise_bike.wav", 0, 20), -55),
        ),
        (
            "dishes_20s",
            "noise",
            "doing_the_dishes.wav 0-20 s",
            excerpt(NOISE / "doing_the_dishes.wav", 0, 20),
        ),
        (
            "bike_20s",
            "noise",
            "exercise_bike.wav 0-20 s",
            excerpt(NOISE / "exercise_bike.wav", 0, 20),
        ),
        (
            "music_guitar_10s",
            "music",
            "guitar_16k.wav 0-10 s",
            excerpt(NOISE / "guitar_16k.wav", 0, 10),
        ),
        (
            "music_moh_cold_day_20s",
            "music",
            "macroform-cold_day.wav 30-50 s",
            excerpt(MOH / "macroform-cold_day.wav", 30, 20),
        ),
        (
            "music_moh_morning_coffee_20s",
            "music",
            "manolo_camp-morning_coffee.wav 30-50 s",
            excerpt(MOH / "manolo_camp-morning_coffee.wav", 30, 20),
        ),
    ]


def level(samples: np.ndarray) -> str:
    rms = float(np.sqrt(np.mean(np.round(np.clip(samples, -1, 1) * 32767) ** 2))) / 32768
    return f"{20 * np.log10(rms):.1f}" if rms > 0 else "-inf"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=HERE, help="folder to write (default: this one)")
    out = ap.parse_args().out
    rows = []
    for uid, content, source, samples in clips():
        rel = f"audio/{uid}.wav"
        write_wav(out / rel, samples)
        extra = {"CONTENT": content, "LEVEL_DBFS": level(samples), "SOURCE": source}
        rows.append(Utterance(uid, rel, float(format_duration(len(samples) / RATE)), "", extra))
    write_dataset(
        out, META, ["ID", "AUDIO", "DURATION", "TEXT", "CONTENT", "LEVEL_DBFS", "SOURCE"], rows
    )
    print(f"nonspeech_clips: {len(rows)} clips, {sum(r.duration for r in rows):.0f} s")


if __name__ == "__main__":
    main()
