"""AequeVox metamorphic transformations, severities 1-5.

Follows the transformations named in the AequeVox paper. Where the published code swaps the
high-pass and low-pass filters, we implement them as named: `av_highpass` removes the band below
its cutoff (500 -> 900 Hz), `av_lowpass` the band above it (900 -> 500 Hz).
"""

from __future__ import annotations

import numpy as np
import scipy.signal

from asrbench.perturb.dsp import run_sox
from asrbench.perturb.noise import Context
from asrbench.perturb.registry import Param, register, sev_table
from asrbench.perturb.srb import add_noise

CHUNK_MS = 20.0


@register(
    "amplitude",
    "aequevox",
    (Param("factor", float, 0.0, 100.0),),
    sev_table("factor", [0.5, 0.4, 0.3, 0.2, 0.1]),
)
def amplitude(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, factor: float
) -> np.ndarray:
    """Scale amplitude by a factor, clipped to [-1, 1] (never wrapped around)."""
    return np.clip(x * factor, -1.0, 1.0)


@register("amplify", "aequevox", (Param("factor", float, 0.0, 100.0),), sev_table("factor", [2.0]))
def amplify(x, sr, rng, ctx, factor: float) -> np.ndarray:
    """Louder by a factor (2.0), clipped to [-1, 1] (never wrapped around)."""
    return np.clip(x * factor, -1.0, 1.0)


@register(
    "clipping",
    "aequevox",
    (Param("level", float, 0.0001, 1.0, help="full scale"),),
    sev_table("level", [0.05, 0.04, 0.03, 0.02, 0.01]),
)
def clipping(x, sr, rng, ctx, level: float) -> np.ndarray:
    """Hard clipping at +/- level (full-scale units)."""
    return np.clip(x, -level, level)


@register(
    "drop_chunks",
    "aequevox",
    (Param("ratio", float, 0.0, 1.0),),
    sev_table("ratio", [0.05, 0.10, 0.15, 0.20, 0.25]),
)
def drop_chunks(x, sr, rng, ctx, ratio: float) -> np.ndarray:
    """Silence a random `ratio` of the 20 ms chunks (duration kept)."""
    size = int(round(sr * CHUNK_MS / 1000))
    n_chunks = -(-len(x) // size)
    k = int(round(ratio * n_chunks))
    y = np.array(x)
    for c in rng.choice(n_chunks, size=k, replace=False):
        y[c * size : (c + 1) * size] = 0.0
    return y


@register(
    "frame_drop",
    "aequevox",
    (
        Param("ms", float, 1.0, 1000.0, help="chunk length"),
        Param("ratio", float, 0.0, 0.9, default=0.1),
    ),
    sev_table("ms", [10.0, 20.0, 30.0, 40.0, 50.0]),
    keeps_length=False,
)
def frame_drop(x, sr, rng, ctx, ms: float, ratio: float) -> np.ndarray:
    """Delete a random `ratio` (default 10%) of `ms`-long frames: the audio gets shorter."""
    size = max(1, int(round(sr * ms / 1000)))
    n_chunks = -(-len(x) // size)
    drop = set(rng.choice(n_chunks, size=int(round(ratio * n_chunks)), replace=False).tolist())
    keep = [x[c * size : (c + 1) * size] for c in range(n_chunks) if c not in drop]
    return np.concatenate(keep) if keep else np.zeros(0)


def butter(x: np.ndarray, sr: int, cutoff: float, kind: str) -> np.ndarray:
    """Order-2 Butterworth filter (causal, as a telephone line or a device would apply it)."""
    sos = scipy.signal.butter(2, cutoff, btype=kind, fs=sr, output="sos")
    return scipy.signal.sosfilt(sos, x)


@register(
    "av_highpass",
    "aequevox",
    (Param("cutoff", float, 20.0, 8000.0, help="Hz"),),
    sev_table("cutoff", [500.0, 600.0, 700.0, 800.0, 900.0]),
)
def av_highpass(x, sr, rng, ctx, cutoff: float) -> np.ndarray:
    """Butterworth order-2 high-pass (removes below the cutoff)."""
    return butter(x, sr, cutoff, "highpass")


@register(
    "av_lowpass",
    "aequevox",
    (Param("cutoff", float, 20.0, 8000.0, help="Hz"),),
    sev_table("cutoff", [900.0, 800.0, 700.0, 600.0, 500.0]),
)
def av_lowpass(x, sr, rng, ctx, cutoff: float) -> np.ndarray:
    """Butterworth order-2 low-pass (removes above the cutoff)."""
    return butter(x, sr, cutoff, "lowpass")


@register(
    "av_noise",
    "aequevox",
    (Param("snr", float, -20.0, 60.0),),
    sev_table("snr", [10.0, 8.0, 6.0, 4.0, 2.0]),
)
def av_noise(x, sr, rng, ctx, snr: float) -> np.ndarray:
    """White Gaussian noise at an SNR (RMS definition)."""
    return add_noise(x, rng.standard_normal(len(x)), snr)


@register(
    "freq_scale",
    "aequevox",
    (Param("factor", float, 0.25, 4.0),),
    sev_table("factor", [0.9, 0.8, 0.7, 0.6, 0.5]),
)
def freq_scale(x, sr, rng, ctx, factor: float) -> np.ndarray:
    """All frequencies multiplied by `factor`, duration kept (sox pitch by 1200*log2 cents)."""
    y = run_sox(x, sr, ["pitch", f"{1200.0 * np.log2(factor):.4f}", "rate", "-v", str(sr)])
    out = np.zeros(len(x))
    out[: min(len(x), len(y))] = y[: len(x)]
    return out
