"""Speech Robust Bench (SRB) non-adversarial perturbations, severities 1-4.

Noise SNRs are defined on plain RMS over the whole utterance (speech) and over the added noise
segment; effects use the `sox` CLI (the same effects SRB ran through torchaudio.sox_effects);
rooms are simulated with pyroomacoustics and binned by their measured RT60.
"""

from __future__ import annotations

import numpy as np
import scipy.signal

from asrbench.perturb.dsp import avoid_overflow, fit_length, resample, rms, run_sox, scale_to_snr
from asrbench.perturb.noise import Context, noise_signal
from asrbench.perturb.registry import Param, register, sev_table
from asrbench.perturb.rooms import RT60_BINS, pick_rir

SNRS = [30.0, 20.0, 10.0, 0.0]
_SNR = Param("snr", float, -20.0, 60.0, help="signal-to-noise ratio in dB (RMS over utterance)")


def add_noise(x: np.ndarray, noise: np.ndarray, snr: float) -> np.ndarray:
    """x + noise scaled to `snr` dB (RMS definition); whole mix scaled down only on overflow."""
    scaled = scale_to_snr(rms(x), noise, rms(noise), snr)
    return avoid_overflow(x + scaled)


@register("gaussian_noise", "srb", (_SNR,), sev_table("snr", SNRS))
def gaussian_noise(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, snr: float
) -> np.ndarray:
    """White Gaussian noise at an SNR."""
    return add_noise(x, rng.standard_normal(len(x)), snr)


@register("env_noise", "srb", (_SNR, Param("src", str, default="env")), sev_table("snr", SNRS))
def env_noise(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, snr: float, src: str
) -> np.ndarray:
    """Real environmental noise (random file, random segment) at an SNR."""
    return add_noise(x, noise_signal(src, len(x), sr, rng, ctx), snr)


@register("music", "srb", (_SNR, Param("src", str, default="music")), sev_table("snr", SNRS))
def music(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, snr: float, src: str
) -> np.ndarray:
    """Background music at an SNR."""
    return add_noise(x, noise_signal(src, len(x), sr, rng, ctx), snr)


@register(
    "crosstalk", "srb", (_SNR, Param("talkers", int, 1, 20, default=1)), sev_table("snr", SNRS)
)
def crosstalk(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, snr: float, talkers: int
) -> np.ndarray:
    """Other speakers' real speech (never the target speaker) at an SNR."""
    return add_noise(x, noise_signal("babble", len(x), sr, rng, ctx, talkers=talkers), snr)


@register("babble", "srb", (_SNR, Param("talkers", int, 2, 20, default=6)), sev_table("snr", SNRS))
def babble_noise(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, snr: float, talkers: int
) -> np.ndarray:
    """Babble of several other speakers at an SNR."""
    return add_noise(x, noise_signal("babble", len(x), sr, rng, ctx, talkers=talkers), snr)


@register(
    "rir",
    "srb",
    (Param("bin", int, 1, len(RT60_BINS)),),
    sev_table("bin", [1, 2, 3, 4]),
    description="simulated room (pyroomacoustics), RT60 bins "
    + ", ".join(f"{lo}-{hi} s" for lo, hi in RT60_BINS),
)
def rir(x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, bin: int) -> np.ndarray:
    """Convolve with a simulated room impulse response from an RT60 bin."""
    h = pick_rir(bin, sr, rng)
    y = scipy.signal.fftconvolve(x, h)[: len(x)]
    # Keep the speech RMS: a reverberant room should not also change the level.
    return avoid_overflow(y * (rms(x) / rms(y)))


def _sox(effects: list[str], keep: bool = True):
    def apply(x: np.ndarray, sr: int) -> np.ndarray:
        y = run_sox(x, sr, effects)
        return fit_length(y, len(x)) if keep else y

    return apply


@register(
    "echo",
    "srb",
    (Param("delay", float, 1.0, 5000.0, help="ms"),),
    sev_table("delay", [125.0, 250.0, 500.0, 1000.0]),
)
def echo(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, delay: float
) -> np.ndarray:
    """One echo (sox echo 0.8 0.9 DELAY 0.3): gain-in 0.8, gain-out 0.9, decay 0.3."""
    return _sox(["echo", "0.8", "0.9", f"{delay:g}", "0.3"])(x, sr)


@register(
    "bass",
    "srb",
    (Param("gain", float, -60.0, 60.0, help="dB at 100 Hz"),),
    sev_table("gain", [20.0, 30.0, 40.0, 50.0]),
)
def bass(x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, gain: float) -> np.ndarray:
    """Low shelf boost (sox bass, 100 Hz)."""
    return _sox(["bass", f"{gain:+g}"])(x, sr)


@register(
    "treble",
    "srb",
    (Param("gain", float, -60.0, 60.0, help="dB at 3 kHz"),),
    sev_table("gain", [10.0, 23.0, 36.0, 50.0]),
)
def treble(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, gain: float
) -> np.ndarray:
    """High shelf boost (sox treble, 3 kHz)."""
    return _sox(["treble", f"{gain:+g}"])(x, sr)


@register(
    "phaser", "srb", (Param("decay", float, 0.1, 0.99),), sev_table("decay", [0.3, 0.5, 0.7, 0.9])
)
def phaser(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, decay: float
) -> np.ndarray:
    """sox phaser 0.6 0.66 3 DECAY 0.5 -t (triangular modulation)."""
    return _sox(["phaser", "0.6", "0.66", "3", f"{decay:g}", "0.5", "-t"])(x, sr)


_FACT = Param("factor", float, 0.1, 4.0)


def _tempo(x: np.ndarray, sr: int, factor: float) -> np.ndarray:
    return _sox(["tempo", "-s", f"{factor:g}"], keep=False)(x, sr)


def _speed(x: np.ndarray, sr: int, factor: float) -> np.ndarray:
    # speed changes rate and pitch together; resample back to the original rate afterwards.
    return _sox(["speed", f"{factor:g}", "rate", "-v", str(sr)], keep=False)(x, sr)


def _pitch(x: np.ndarray, sr: int, octaves: float) -> np.ndarray:
    return _sox(["pitch", f"{1200.0 * octaves:g}", "rate", "-v", str(sr)])(x, sr)


UP = [1.25, 1.5, 1.75, 2.0]
DOWN = [0.875, 0.75, 0.625, 0.5]


@register("tempo_up", "srb", (_FACT,), sev_table("factor", UP), keeps_length=False)
def tempo_up(x, sr, rng, ctx, factor: float) -> np.ndarray:
    """Faster speech, same pitch (sox tempo -s)."""
    return _tempo(x, sr, factor)


@register("tempo_down", "srb", (_FACT,), sev_table("factor", DOWN), keeps_length=False)
def tempo_down(x, sr, rng, ctx, factor: float) -> np.ndarray:
    """Slower speech, same pitch (sox tempo -s)."""
    return _tempo(x, sr, factor)


@register("speed_up", "srb", (_FACT,), sev_table("factor", UP), keeps_length=False)
def speed_up(x, sr, rng, ctx, factor: float) -> np.ndarray:
    """Faster and higher (sox speed)."""
    return _speed(x, sr, factor)


@register("speed_down", "srb", (_FACT,), sev_table("factor", DOWN), keeps_length=False)
def speed_down(x, sr, rng, ctx, factor: float) -> np.ndarray:
    """Slower and lower (sox speed)."""
    return _speed(x, sr, factor)


_OCT = Param("octaves", float, 0.0, 2.0)


@register("pitch_up", "srb", (_OCT,), sev_table("octaves", [0.25, 0.5, 0.75, 1.0]))
def pitch_up(x, sr, rng, ctx, octaves: float) -> np.ndarray:
    """Pitch raised by a fraction of an octave, same duration (sox pitch)."""
    return _pitch(x, sr, octaves)


@register("pitch_down", "srb", (_OCT,), sev_table("octaves", [0.25, 0.5, 0.75, 1.0]))
def pitch_down(x, sr, rng, ctx, octaves: float) -> np.ndarray:
    """Pitch lowered by a fraction of an octave, same duration (sox pitch)."""
    return _pitch(x, sr, -octaves)


@register(
    "chorus",
    "srb",
    (Param("delay", float, 20.0, 100.0, help="ms"),),
    sev_table("delay", [30.0, 50.0, 70.0, 90.0]),
)
def chorus(x, sr, rng, ctx, delay: float) -> np.ndarray:
    """sox chorus 0.5 0.9 DELAY 0.4 0.25 2 -t."""
    return _sox(["chorus", "0.5", "0.9", f"{delay:g}", "0.4", "0.25", "2", "-t"])(x, sr)


@register(
    "tremolo",
    "srb",
    (Param("depth", float, 0.0, 100.0, help="%"),),
    sev_table("depth", [50.0, 66.0, 83.0, 100.0]),
)
def tremolo(x, sr, rng, ctx, depth: float) -> np.ndarray:
    """Amplitude modulation at 8 Hz (sox tremolo 8 DEPTH)."""
    return _sox(["tremolo", "8", f"{depth:g}"])(x, sr)


@register(
    "resample",
    "srb",
    (Param("ratio", float, 0.05, 1.0),),
    sev_table("ratio", [0.75, 0.5, 0.25, 0.125]),
)
def resample_down_up(x, sr, rng, ctx, ratio: float) -> np.ndarray:
    """Resample to ratio x the rate and back (soxr VHQ): removes the band above ratio*sr/2."""
    low = int(round(sr * ratio))
    return fit_length(resample(resample(x, sr, low), low, sr), len(x))


@register(
    "gain",
    "srb",
    (Param("factor", float, 0.0, 1000.0),),
    sev_table("factor", [10.0, 20.0, 30.0, 40.0]),
)
def gain(x, sr, rng, ctx, factor: float) -> np.ndarray:
    """Amplitude multiplied by a factor, then clipped to [-1, 1]."""
    return np.clip(x * factor, -1.0, 1.0)


@register(
    "lowpass",
    "srb",
    (Param("cutoff", float, 20.0, 20000.0, help="Hz"),),
    sev_table("cutoff", [4000.0, 2833.0, 1666.0, 500.0]),
)
def lowpass(x, sr, rng, ctx, cutoff: float) -> np.ndarray:
    """Two-pole low-pass (sox lowpass, Q 0.707: -3 dB at the cutoff)."""
    return _sox(["lowpass", f"{cutoff:g}"])(x, sr)


@register(
    "highpass",
    "srb",
    (Param("cutoff", float, 20.0, 20000.0, help="Hz"),),
    sev_table("cutoff", [500.0, 1333.0, 2166.0, 3000.0]),
)
def highpass(x, sr, rng, ctx, cutoff: float) -> np.ndarray:
    """Two-pole high-pass (sox highpass, Q 0.707: -3 dB at the cutoff)."""
    return _sox(["highpass", f"{cutoff:g}"])(x, sr)


@register("clean", "srb")
def clean(x, sr, rng, ctx) -> np.ndarray:
    """Identity: the clean reference condition of a grid."""
    return np.array(x)
