"""Noise sources: real recordings, music, babble from other speakers, synthetic colours.

Kinds (used by `src=` in specs and by the Aurora test-set definitions):
- `env`: real environmental noise shipped in asrbench/perturb/assets (dishes, exercise bike), or
  $ASRBENCH_NOISE_ENV
- `music`: Debian asterisk-moh-opsound-wav tracks + the shipped guitar, or $ASRBENCH_NOISE_MUSIC
- `dishes`, `bike`, `guitar`, `moh`: single real sources
- `babble`: other speakers' real utterances from the same dataset (never the target speaker),
  or the speech files in $ASRBENCH_NOISE_BABBLE; a dataset with no other labelled speaker
  falls back to the shipped pool (eight utterances of six speakers, assets/babble)
- `white`, `pink`, `brown`: synthetic, drawn from the seeded RNG
- any folder path (MUSAN, ESC-50, WHAM!...): every audio file under it
Folder pools are sorted by path so the seeded choice does not depend on the file system.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from asrbench import audio
from asrbench.dataset import Dataset, Utterance
from asrbench.perturb.bank import ASSET_DIR, BABBLE_DIR, MOH_DIR, audio_files
from asrbench.perturb.dsp import PerturbError, rms
from asrbench.settings import Settings, settings

SYNTHETIC = ("white", "pink", "brown")


@dataclass
class Context:
    """What a perturbation may look at besides the audio: the dataset and the utterance."""

    dataset: Dataset | None = None
    utt: Utterance | None = None
    settings: Settings = field(default_factory=settings)


def _shipped(name: str) -> Path:
    return ASSET_DIR / name


_files_in = audio_files


def pool_files(kind: str, ctx: Context) -> list[Path]:
    """The files behind a noise kind (user folder override first); PerturbError if none."""
    override = ctx.settings.noise.get(kind.lower())
    if override:
        files = _files_in(Path(override))
        where = f"$ASRBENCH_NOISE_{kind.upper()}={override}"
    elif kind == "env":
        files = [_shipped("doing_the_dishes.wav"), _shipped("exercise_bike.wav")]
        where = str(ASSET_DIR)
    elif kind == "music":
        files = _files_in(MOH_DIR) + [_shipped("guitar_16k.wav")]
        where = f"{MOH_DIR} (apt install asterisk-moh-opsound-wav) and {ASSET_DIR}"
    elif kind in ("dishes", "bike", "guitar"):
        name = {
            "dishes": "doing_the_dishes.wav",
            "bike": "exercise_bike.wav",
            "guitar": "guitar_16k.wav",
        }[kind]
        files = [_shipped(name)]
        where = str(files[0])
    elif kind == "moh":
        files = _files_in(MOH_DIR)
        where = f"{MOH_DIR} (apt install asterisk-moh-opsound-wav)"
    elif "/" in kind or Path(kind).is_dir():
        files = _files_in(Path(kind))
        where = kind
    else:
        raise PerturbError(
            f"unknown noise source {kind!r}; use env, music, dishes, bike, guitar, "
            f"moh, babble, white, pink, brown or a folder path"
        )
    files = [f for f in files if f.is_file()]
    if not files:
        raise PerturbError(f"noise source {kind!r}: no audio files found in {where}")
    return files


def load_mono(path: str, sr: int) -> np.ndarray:
    """Read a file as mono float64 at `sr`, cached per process by the file's (size, mtime), so
    a noise file replaced in place is read again (noise files are reused a lot)."""
    st = Path(path).stat()
    return _load_mono(str(path), sr, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _load_mono(path: str, sr: int, size: int, mtime_ns: int) -> np.ndarray:
    out = audio.read_mono(path, sr)
    out.setflags(write=False)
    return out


def segment(noise: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """A random `n`-sample segment of `noise`, looped when the noise is shorter."""
    if len(noise) == 0:
        raise PerturbError("empty noise file")
    if len(noise) < n:
        reps = -(-n // len(noise)) + 1
        noise = np.tile(noise, reps)
    start = int(rng.integers(0, len(noise) - n + 1))
    return np.array(noise[start : start + n])


def synthetic(colour: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """White, pink (1/f power) or brown (1/f^2 power) Gaussian noise, unit RMS."""
    white = rng.standard_normal(n)
    if colour == "white":
        return white / rms(white)
    spec = np.fft.rfft(white)
    f = np.arange(len(spec), dtype=np.float64)
    f[0] = 1.0
    spec *= f ** (-0.5 if colour == "pink" else -1.0)
    spec[0] = 0.0
    y = np.fft.irfft(spec, n)
    return y / rms(y)


def babble(n: int, sr: int, rng: np.random.Generator, ctx: Context, talkers: int) -> np.ndarray:
    """Sum of `talkers` real utterances by speakers other than the target, each at equal RMS."""
    files = _babble_files(ctx)
    out = np.zeros(n)
    for _ in range(talkers):
        x = load_mono(str(files[int(rng.integers(len(files)))]), sr)
        x = x / rms(x)
        out += np.roll(segment(x, n, rng), int(rng.integers(n)) if n else 0)
    return out


def _babble_files(ctx: Context) -> list[Path]:
    if ctx.settings.noise.get("babble"):
        return pool_files("babble", ctx)
    ds, utt = ctx.dataset, ctx.utt
    if ds is None:
        raise PerturbError(
            "babble/crosstalk needs the dataset (other speakers' utterances) or "
            "a folder of speech in $ASRBENCH_NOISE_BABBLE"
        )
    target = (utt.extra.get("SPEAKER", "") if utt else "") or None
    target_id = utt.id if utt else None
    # Utterances with no SPEAKER label could be anyone, including the target: never use them.
    files = [
        ds.audio_path(u)
        for u in ds.utterances
        if u.id != target_id and u.extra.get("SPEAKER") and u.extra.get("SPEAKER") != target
    ]
    return files or audio_files(BABBLE_DIR)


def babble_pool(ds: Dataset) -> str:
    """Where a dataset's babble comes from: its own other speakers, a folder, or the shipped
    fallback pool (recorded in derived datasets' provenance and robustness warnings)."""
    folder = settings().noise.get("babble")
    if folder:
        return f"folder {folder} ($ASRBENCH_NOISE_BABBLE)"
    speakers = {u.extra.get("SPEAKER") for u in ds.utterances if u.extra.get("SPEAKER")}
    if len(speakers) >= 2:
        return f"other speakers of {ds.id}"
    return (
        f"shipped fallback pool ({BABBLE_DIR.name}: 8 utterances, 6 speakers), because "
        f"{ds.id} has {'one labelled speaker' if speakers else 'no SPEAKER column'}"
    )


def noise_signal(
    kind: str, n: int, sr: int, rng: np.random.Generator, ctx: Context, talkers: int = 1
) -> np.ndarray:
    """`n` samples of noise of the given kind at rate `sr`, drawn with `rng`."""
    if kind in SYNTHETIC:
        return synthetic(kind, n, rng)
    if kind == "babble":
        return babble(n, sr, rng, ctx, talkers)
    files = pool_files(kind, ctx)
    path = files[int(rng.integers(len(files)))]
    return segment(load_mono(str(path), sr), n, rng)
