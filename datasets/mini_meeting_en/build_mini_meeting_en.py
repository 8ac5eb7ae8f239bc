#!/usr/bin/env python3
"""Rebuild the embedded two-speaker long-form set `mini_meeting_en` (deterministic).

Two sessions of more than two minutes, two speakers each, with turn-taking and some overlap:
- `meet_lj_austen`: LJ (LJ Speech, female) reads her 18 sentences in runs of two to four, and
  the LibriVox "Sense and Sensibility" reader (from datasets/mini_en) answers each run with one
  of his five sentences;
- `meet_fsdd_readback`: FSDD speaker `george` reads fifteen digit strings (7 to 10 digits) and
  `nicolas` reads each one back (the same digits, his own recordings), from ../shared/data/fsdd.
At about half of the speaker changes (drawn with a fixed seed) the next speaker starts 0.3 to
0.9 s before the other one ends (overlapping speech, mixed); otherwise a pause of 0.2 to 0.8 s
follows; within one speaker's run, pauses of 0.4 to 1.2 s. A speaker never overlaps
themselves. Clips are trimmed to their speech (-35 dB below the loudest 10 ms frame, 50 ms kept);
the whole session runs over real background noise (Speech Commands `exercise_bike` then
`doing_the_dishes`, asrbench/perturb/assets/noise) at -50 dBFS RMS. Reference times are exact
(whole 10 ms frames). A session whose mix would clip is scaled down as a whole (printed).

    .venv/bin/python datasets/mini_meeting_en/build_mini_meeting_en.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import random
import sys
from itertools import pairwise
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from asrbench.importers.longform import write_longform_dataset  # noqa: E402
from asrbench.longform import compose  # noqa: E402

SEED = 2929
NOISE = [
    ROOT / "asrbench/perturb/assets/noise" / n
    for n in ("exercise_bike.wav", "doing_the_dishes.wav")
]
BED_DBFS = -50.0
DIGITS = "zero one two three four five six seven eight nine".split()
META = {
    "id": "mini_meeting_en",
    "name": "Embedded English two-speaker long-form mini set",
    "language": "en",
    "sample_rate": 16000,
    "description": (
        "Two two-speaker sessions of over two minutes each with turn-taking and some overlapping "
        "speech, built from real utterances over a -50 dBFS bed of real background noise: "
        "meet_lj_austen (LJ Speech and the LibriVox Sense and Sensibility reader, the same speech "
        "as mini_en's short utterances) and meet_fsdd_readback (two FSDD speakers reading digit "
        "strings back to each other). Segment times are exact. Built by "
        "build_mini_meeting_en.py; see ATTRIBUTION.md."
    ),
    "licence": "mixed (public domain, CC BY-SA 4.0, CC BY 4.0); see ATTRIBUTION.md",
    "sources": [
        {
            "name": "LJ Speech Dataset 1.1 (sample, via mini_en)",
            "licence": "public domain",
            "utterances": "meet_lj_austen",
        },
        {
            "name": "LibriVox Sense and Sensibility via Debian pocketsphinx-testdata (via mini_en)",
            "licence": "public domain",
            "utterances": "meet_lj_austen",
        },
        {
            "name": "Free Spoken Digit Dataset, speakers george and nicolas",
            "licence": "CC BY-SA 4.0",
            "utterances": "meet_fsdd_readback",
        },
        {
            "name": "Speech Commands background noise (Warden 2018)",
            "licence": "CC BY 4.0",
            "utterances": "all (noise bed)",
        },
    ],
    "columns": {
        "SPEAKERS": "the session's speakers, comma-separated",
        "SOURCE": "the corpora the speech comes from",
    },
}


def read_tsv(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, ln.split("\t"), strict=True)) for ln in lines[1:] if ln.strip()]


def frames(rng: random.Random, low_s: float, high_s: float) -> int:
    return rng.randint(round(low_s * 100), round(high_s * 100))


def gaps(clips: list[compose.Clip], rng: random.Random) -> list[int]:
    """Pause (or overlap, negative) before each clip after the first."""
    out = []
    for prev, clip in pairwise(clips):
        if prev.speaker == clip.speaker:
            out.append(frames(rng, 0.4, 1.2))
        elif rng.random() < 0.5:
            out.append(-frames(rng, 0.3, 0.9))
        else:
            out.append(frames(rng, 0.2, 0.8))
    return out


def mini_en_clips(speaker: str, label: str) -> list[compose.Clip]:
    mini_en = ROOT / "datasets/mini_en"
    rows = sorted(
        (r for r in read_tsv(mini_en / "metadata.tsv") if r["SPEAKER"] == speaker),
        key=lambda r: r["ID"],
    )
    return [
        compose.Clip(
            label, r["TEXT"], compose.trim(compose.read_mono(mini_en / r["AUDIO"])), r["ID"]
        )
        for r in rows
    ]


def lj_austen(rng: random.Random) -> compose.Session:
    lj = mini_en_clips("LJ", "LJ")
    austen = mini_en_clips("librivox_austen", "austen")
    runs = [4, 4, 3, 3, 2, 2]  # LJ's sentences per turn; austen answers between runs
    order: list[compose.Clip] = []
    for i, n in enumerate(runs):
        order += [lj.pop(0) for _ in range(n)]
        if i < len(austen):
            order.append(austen[i])
    placed = compose.sequence(order, gaps(order, rng))
    return render(
        "meet_lj_austen", placed, (("SPEAKERS", "LJ,austen"), ("SOURCE", "ljspeech,librivox"))
    )


def spoken(
    speaker: str, digits: list[int], recordings: Path, rng: random.Random, takes: dict
) -> compose.Clip:
    parts = []
    for i, d in enumerate(digits):
        parts.append(
            compose.trim(
                compose.read_mono(recordings / f"{d}_{speaker}_{takes[speaker, d].pop()}.wav")
            )
        )
        if i < len(digits) - 1:
            parts.append(np.zeros(frames(rng, 0.05, 0.15) * compose.FRAME))
    return compose.Clip(speaker, " ".join(DIGITS[d] for d in digits), np.concatenate(parts))


def readback(shared: Path, rng: random.Random) -> compose.Session:
    recordings = shared / "data/fsdd/recordings"
    takes = {}
    for speaker in ("george", "nicolas"):
        for d in range(10):
            order = list(range(50))
            rng.shuffle(order)
            takes[speaker, d] = order
    order: list[compose.Clip] = []
    for _ in range(15):
        digits = [rng.randrange(10) for _ in range(rng.randint(7, 10))]
        order.append(spoken("george", digits, recordings, rng, takes))
        order.append(spoken("nicolas", digits, recordings, rng, takes))
    placed = compose.sequence(order, gaps(order, rng))
    return render(
        "meet_fsdd_readback", placed, (("SPEAKERS", "george,nicolas"), ("SOURCE", "fsdd"))
    )


def render(session_id: str, placed: list[compose.Placed], extra: tuple) -> compose.Session:
    end = max(p.end for p in placed) + 50
    bed = compose.noise_bed(NOISE, end, BED_DBFS)
    samples, scale, _ = compose.render(placed, bed)
    segs = compose.segments(session_id, placed)
    overlaps = sum(1 for a, b in pairwise(segs) if b.start_time < a.end_time)
    print(
        f"{session_id}: {len(samples) / compose.RATE:.1f} s, {len(segs)} segments, "
        f"{overlaps} overlaps, scale {scale:.3f}"
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
    write_longform_dataset(args.out, META, [lj_austen(rng), readback(args.shared, rng)])


if __name__ == "__main__":
    main()
