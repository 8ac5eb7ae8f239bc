"""Measurement helpers for the perturbation tests (transfer functions, F0)."""

from __future__ import annotations

import numpy as np
import scipy.signal


def transfer_db(x: np.ndarray, y: np.ndarray, sr: int, freqs: list[float],
                nperseg: int = 2048) -> np.ndarray:
    """Measured gain in dB of the system x -> y at `freqs` (H1 estimate: Pxy / Pxx)."""
    f, pxy = scipy.signal.csd(x, y, fs=sr, nperseg=nperseg)
    _, pxx = scipy.signal.welch(x, fs=sr, nperseg=nperseg)
    h = np.abs(pxy) / np.maximum(pxx, 1e-30)
    return np.array([20 * np.log10(np.interp(fr, f, h)) for fr in freqs])


def f0_median(x: np.ndarray, sr: int) -> float:
    """Median F0 (Hz) over voiced frames, by YIN (librosa), for pitch checks."""
    import librosa

    f0 = librosa.yin(x.astype(np.float32), fmin=60, fmax=500, sr=sr, frame_length=1024)
    rms = librosa.feature.rms(y=x.astype(np.float32), frame_length=1024, hop_length=256)[0]
    n = min(len(f0), len(rms))
    voiced = rms[:n] > 0.3 * np.max(rms)
    return float(np.median(f0[:n][voiced]))
