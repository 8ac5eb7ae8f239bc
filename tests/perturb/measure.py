"""Measurement helpers for the perturbation tests (transfer functions, F0)."""

from __future__ import annotations

import numpy as np
import scipy.signal


def transfer_db(
    x: np.ndarray, y: np.ndarray, sr: int, freqs: list[float], nperseg: int = 2048
) -> np.ndarray:
    """Measured gain in dB of the system x -> y at `freqs` (H1 estimate: Pxy / Pxx)."""
    f, pxy = scipy.signal.csd(x, y, fs=sr, nperseg=nperseg)
    _, pxx = scipy.signal.welch(x, fs=sr, nperseg=nperseg)
    h = np.abs(pxy) / np.maximum(pxx, 1e-30)
    return np.array([20 * np.log10(np.interp(fr, f, h)) for fr in freqs])


def f0_median(x: np.ndarray, sr: int, near: float | None = None) -> float:
    """Median F0 (Hz) over voiced frames, by YIN (librosa).

    With `near`, F0 is searched within half an octave either side of it: that excludes YIN's
    octave errors yet still exposes any pitch change larger than a few per cent.
    """
    if near is None:  # first a wide search, then refine around it like any other estimate
        near = _f0_yin(x, sr, 60.0, 500.0)
    return _f0_yin(x, sr, near / 2**0.5, near * 2**0.5)


def _f0_yin(x: np.ndarray, sr: int, fmin: float, fmax: float) -> float:
    import librosa

    f0 = librosa.yin(x.astype(np.float32), fmin=fmin, fmax=fmax, sr=sr, frame_length=1024)
    rms = librosa.feature.rms(y=x.astype(np.float32), frame_length=1024, hop_length=256)[0]
    n = min(len(f0), len(rms))
    voiced = rms[:n] > 0.3 * np.max(rms)
    return float(np.median(f0[:n][voiced]))
