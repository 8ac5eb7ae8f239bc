"""The composed meeting set `meeting_overlap_en`: 18 sessions of 2 to 4 speakers with a known
overlap ratio (0, 5, 10, 15, 20 or 30 % of the speech time), built from real speech the repository
already holds (datasets/mini_en's read speech, datasets/fsdd_accents' digits) over a -50 dBFS bed
of real background noise.

Overlap ratio = time where two or more speakers talk / time where at least one talks, counted on
the exact 10 ms frames of the reference turns. Each session aims at its bin: the speaker changes
chosen to overlap (all of them from 20 %) start before the previous turn ends by a share `s` of
the shorter turn, and `s` is found by bisection so that the ratio lands within `TOLERANCE` of the
bin. The folder's audio (17.8 minutes, 33 MB of WAV) is not committed: `build` writes the
whole folder, and asrbench.importers.composed rebuilds the audio from the committed sources on
first use, checked against the recorded hashes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

from asrbench.dataset import load_dataset
from asrbench.identity import derive_seed
from asrbench.importers.longform import write_longform_dataset
from asrbench.longform import compose
from asrbench.longform.segments import write_timed
from asrbench.settings import REPO_ROOT

NAME = "meeting_overlap_en"
SEED = 4141
BINS = (0, 5, 10, 15, 20, 30)  # percent of speech time
TOLERANCE = 0.01  # the achieved ratio is within one percentage point of its bin
BED_DBFS = -50.0
NOISE = tuple(
    f"asrbench/perturb/assets/noise/{n}" for n in ("doing_the_dishes.wav", "exercise_bike.wav")
)
DIGITS = "zero one two three four five six seven eight nine".split()
# mini_en's speakers with words (arctic_a0010 has no speaker label and is left out)
READERS = {
    "LJ": "LJ",
    "librivox_austen": "austen",
    "1089": "ls1089",
    "aew": "aew",
    "axb": "axb",
    "jfk": "jfk",
}
FSDD = ("george", "jackson", "lucas", "nicolas", "theo", "yweweler")
RICH = ("LJ", *FSDD)  # speakers whose material never runs out within one session
RTTM_FILE = "segments.rttm"
Rng = np.random.Generator

META = {
    "id": NAME,
    "name": "Composed English meetings with known overlap (2 to 4 speakers)",
    "language": "en",
    "sample_rate": 16000,
    "description": (
        "18 composed sessions of 40 to 90 s with 2, 3 or 4 speakers each, three per overlap bin "
        "(0, 5, 10, 15, 20, 30 % of the speech time overlapped), with pauses and longer silences "
        "between turns over a -50 dBFS bed of real background noise. The speech is real: "
        "mini_en's read sentences (LJ Speech, LibriVox, LibriSpeech 1089, CMU ARCTIC aew and axb, "
        "JFK) and FSDD speakers reading digit strings (fsdd_accents). Reference times are exact "
        "(10 ms frames); references as SegLST (segments.seglst.json) and RTTM (segments.rttm). "
        "The audio is composed on first use from those embedded sources (checked by hash); "
        "see ATTRIBUTION.md and docs/DATASETS.md."
    ),
    "licence": (
        "CC BY-SA 4.0 (every session holds FSDD speech; the other sources are public domain, "
        "CC BY 4.0 or the CMU ARCTIC licence); see ATTRIBUTION.md"
    ),
    "sources": [
        {
            "name": "mini_en: LJ Speech 1.1 sample",
            "licence": "public domain",
            "utterances": "speaker LJ",
        },
        {
            "name": "mini_en: LibriVox Sense and Sensibility (Debian pocketsphinx-testdata)",
            "licence": "public domain",
            "utterances": "speaker austen",
        },
        {
            "name": "mini_en: LibriSpeech test-clean, reader 1089 (Panayotov et al. 2015)",
            "licence": "CC BY 4.0",
            "utterances": "speaker ls1089",
        },
        {
            "name": "mini_en: CMU ARCTIC aew and axb",
            "licence": "CMU ARCTIC free licence",
            "utterances": "speakers aew, axb",
        },
        {
            "name": "mini_en: JFK inaugural address excerpt",
            "licence": "public domain",
            "utterances": "speaker jfk",
        },
        {
            "name": "fsdd_accents: Free Spoken Digit Dataset (Jakobovski et al.)",
            "licence": "CC BY-SA 4.0",
            "utterances": "speakers george, jackson, lucas, nicolas, theo, yweweler",
        },
        {
            "name": "Speech Commands background noise (Warden 2018)",
            "licence": "CC BY 4.0",
            "utterances": "all (noise bed)",
        },
    ],
    "columns": {
        "SPEAKERS": "the session's speakers, comma-separated",
        "NSPEAKERS": "how many speakers the session has (2, 3 or 4)",
        "OVERLAP_BIN": (
            "the overlap bin in percent of speech time (0, 5, 10, 15, 20, 30): group results by it"
        ),
        "OVERLAP": "the session's exact overlap ratio (overlapped / total speech time, 4 decimals)",
    },
    # every cell's session metrics also per overlap bin and per speaker count (docs/LONGFORM.md)
    "session_groups": ["OVERLAP_BIN", "NSPEAKERS"],
    "composed": NAME,
}


@dataclass(frozen=True)
class Material:
    """What a session's speakers can say: each reader's clips, each FSDD speaker's digit takes."""

    readers: dict[str, list[compose.Clip]]
    digits: dict[str, dict[int, list[np.ndarray]]]
    files: tuple[str, ...]  # every source file read, relative to the repository root


def _material(repo: Path) -> Material:
    files: list[str] = []
    readers: dict[str, list[compose.Clip]] = {label: [] for label in READERS.values()}
    mini_en = load_dataset(repo / "datasets/mini_en", check_audio=False)
    for u in mini_en:
        label = READERS.get(u.extra.get("SPEAKER", ""))
        if label is not None:
            readers[label].append(
                compose.Clip(
                    label, u.text, compose.trim(compose.read_mono(mini_en.root / u.audio)), u.id
                )
            )
            files.append(f"datasets/mini_en/{u.audio}")
    digits: dict[str, dict[int, list[np.ndarray]]] = {s: {d: [] for d in range(10)} for s in FSDD}
    fsdd = load_dataset(repo / "datasets/fsdd_accents", check_audio=False)
    for u in sorted(fsdd, key=lambda u: u.id):
        digits[u.extra["SPEAKER"]][DIGITS.index(u.text)].append(
            compose.trim(compose.read_mono(fsdd.root / u.audio))
        )
        files.append(f"datasets/fsdd_accents/{u.audio}")
    return Material(readers, digits, tuple(files))


def _frames(rng: Rng, low_s: float, high_s: float) -> int:
    return int(rng.integers(round(low_s * 100), round(high_s * 100), endpoint=True))


def _sample(rng: Rng, items: Sequence, k: int) -> list:
    """`k` of `items` without replacement, in drawn order."""
    return [items[int(i)] for i in rng.choice(len(items), k, replace=False)]


class _Talk:
    """One session's supply of turns: a reader's clips in a drawn order (each said once), an FSDD
    speaker's new digit strings of 7 to 10 digits (each digit's takes used in turn)."""

    def __init__(self, speakers: Sequence[str], material: Material, rng: Rng) -> None:
        self.rng = rng
        self.material = material
        self.left = {
            s: _sample(rng, material.readers[s], len(material.readers[s]))
            for s in speakers
            if s in material.readers
        }
        self.takes = {(s, d): 0 for s in speakers if s in material.digits for d in range(10)}

    def has(self, speaker: str) -> bool:
        return speaker not in self.left or bool(self.left[speaker])

    def turn(self, speaker: str) -> compose.Clip:
        if speaker in self.left:
            return self.left[speaker].pop()
        digits = [int(d) for d in self.rng.integers(0, 10, int(self.rng.integers(7, 11)))]
        parts = []
        for i, d in enumerate(digits):
            takes = self.material.digits[speaker][d]
            parts.append(takes[self.takes[speaker, d] % len(takes)])
            self.takes[speaker, d] += 1
            if i < len(digits) - 1:
                parts.append(np.zeros(_frames(self.rng, 0.05, 0.15) * compose.FRAME))
        return compose.Clip(speaker, " ".join(DIGITS[d] for d in digits), np.concatenate(parts))


def _turns(speakers: Sequence[str], target: int, bin_pct: int, talk: _Talk) -> list[compose.Clip]:
    """Turns of changing speakers until their length reaches the session's target (frames),
    grown by the share the overlap will take back."""
    clips: list[compose.Clip] = []
    total, need = 0, target * (1 + bin_pct / 100)
    while total < need:
        choices = [s for s in speakers if talk.has(s) and (not clips or s != clips[-1].speaker)]
        if not choices:
            break
        clip = talk.turn(choices[int(talk.rng.integers(len(choices)))])
        clips.append(clip)
        total += clip.frames + 60
    return clips


def _pauses(clips: Sequence[compose.Clip], rng: Rng) -> list[int]:
    """A pause before each turn after the first: 0.2 to 1.0 s, one in ten a silence of 2 to 4 s."""
    return [
        _frames(rng, 2.0, 4.0) if rng.random() < 0.1 else _frames(rng, 0.2, 1.0) for _ in clips[1:]
    ]


def _gaps(
    clips: Sequence[compose.Clip], pauses: Sequence[int], overlap: Sequence[bool], share: float
) -> list[int]:
    """The gap before each turn: its pause, or, where it overlaps, minus `share` of the shorter of
    the two turns, held back so no speaker overlaps themselves and no turn starts before the
    previous one."""
    gaps: list[int] = []
    last_end: dict[str, int] = {clips[0].speaker: clips[0].frames}
    start, end = 0, clips[0].frames
    for i, clip in enumerate(clips[1:], 1):
        gap = pauses[i - 1]
        if overlap[i - 1]:
            want = round(share * min(clip.frames, clips[i - 1].frames))
            room = min(end - last_end.get(clip.speaker, 0), end - start - 1)
            gap = -max(min(want, room), 0)
        gaps.append(gap)
        start = end + gap
        end = start + clip.frames
        last_end[clip.speaker] = end
    return gaps


def overlap_ratio(placed: Sequence[compose.Placed]) -> float:
    """Overlapped speech time / total speech time, on 10 ms frames (exact for composed turns)."""
    count = np.zeros(max(p.end for p in placed) + 1, dtype=np.int16)
    for p in placed:
        count[p.start : p.end] += 1
    speech = int(np.count_nonzero(count))
    return int(np.count_nonzero(count > 1)) / speech if speech else 0.0


def _place(clips: list[compose.Clip], bin_pct: int, rng: Rng) -> list[compose.Placed]:
    """Place the turns so that the overlap ratio is within TOLERANCE of the bin."""
    pauses = _pauses(clips, rng)
    changes = [a.speaker != b.speaker for a, b in pairwise(clips)]
    chosen = (
        [c and (bin_pct >= 20 or rng.random() < 0.6) for c in changes]
        if bin_pct
        else [False] * len(changes)
    )

    def placed_at(share: float) -> list[compose.Placed]:
        return compose.sequence(clips, _gaps(clips, pauses, chosen, share))

    low, high, goal = 0.0, 0.95, bin_pct / 100
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if overlap_ratio(placed_at(mid)) < goal else (low, mid)
    placed = placed_at((low + high) / 2)
    ratio = overlap_ratio(placed)
    if abs(ratio - goal) > TOLERANCE:
        raise ValueError(f"overlap {ratio:.4f} misses the {bin_pct} % bin: change SEED")
    return placed


def _session(k: int, material: Material, noise: list[Path], rng: Rng) -> compose.Session:
    bin_pct, n = BINS[k % len(BINS)], 2 + k // len(BINS)
    rich = _sample(rng, list(RICH), 2)
    others = [s for s in (*READERS.values(), *FSDD) if s not in rich]
    speakers = [*rich, *_sample(rng, others, n - 2)]
    target = _frames(rng, 45, 80)
    clips = _turns(speakers, target, bin_pct, _Talk(speakers, material, rng))
    placed = [compose.Placed(p.clip, p.start) for p in _place(clips, bin_pct, rng)]
    sid = f"ov{bin_pct:02d}_{n}spk"
    frames = max(p.end for p in placed) + 50
    samples, _, _ = compose.render(placed, compose.noise_bed(noise, frames, BED_DBFS))
    if not 40 <= len(samples) / compose.RATE <= 90:
        raise ValueError(
            f"{sid}: {len(samples) / compose.RATE:.1f} s is outside 40 to 90 s: change SEED"
        )
    ratio = overlap_ratio(placed)
    extra = (
        ("SPEAKERS", ",".join(sorted({c.speaker for c in clips}))),
        ("NSPEAKERS", str(len({c.speaker for c in clips}))),
        ("OVERLAP_BIN", str(bin_pct)),
        ("OVERLAP", f"{ratio:.4f}"),
    )
    return compose.Session(sid, samples, tuple(compose.segments(sid, placed)), extra)


def build(out: Path, repo: Path = REPO_ROOT) -> list[str]:
    """Write the whole dataset folder to `out` (audio, metadata.tsv, segments.seglst.json,
    segments.rttm, dataset.yaml); the source files read, relative to `repo`."""
    rng = np.random.default_rng(derive_seed(NAME, SEED, hashed=True))
    material = _material(repo)
    noise = [repo / n for n in NOISE]
    sessions = [_session(k, material, noise, rng) for k in range(len(BINS) * 3)]
    write_longform_dataset(out, META, sessions)
    write_timed(out / RTTM_FILE, [s for x in sessions for s in x.segments], "rttm")
    return [*material.files, *NOISE]
