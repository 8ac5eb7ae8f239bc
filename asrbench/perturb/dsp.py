"""Signal helpers shared by the perturbation families: levels, mixing, sox, filters, resampling."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np

from asrbench import audio
from asrbench.errors import AsrbenchError

EPS = 1e-12


class PerturbError(AsrbenchError):
    """A perturbation that could not run (missing tool, bad audio); says what to do."""


def rms(x: np.ndarray) -> float:
    """Root mean square of a signal."""
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)) + EPS))


def db(power_ratio: float) -> float:
    return 10.0 * np.log10(max(power_ratio, EPS))


def fit_length(y: np.ndarray, n: int) -> np.ndarray:
    """Trim or zero-pad `y` to `n` samples."""
    if len(y) >= n:
        return y[:n]
    return np.concatenate([y, np.zeros(n - len(y), dtype=y.dtype)])


def scale_to_snr(
    speech_level: float, noise: np.ndarray, noise_level: float, snr_db: float
) -> np.ndarray:
    """Scale `noise` so that 20*log10(speech_level / level(noise')) equals `snr_db`.

    Levels are amplitudes (RMS-like); the caller chooses the definition (plain RMS, P.56 active
    level), which is what makes the achieved SNR exact under that definition.
    """
    target = speech_level / (10.0 ** (snr_db / 20.0))
    return noise * (target / max(noise_level, EPS))


def avoid_overflow(y: np.ndarray, peak: float = 0.999) -> np.ndarray:
    """Scale the whole signal down if it would clip; the SNR of a mix is unchanged by this."""
    m = float(np.max(np.abs(y))) if len(y) else 0.0
    return y * (peak / m) if m > peak else y


def resample(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """High-quality deterministic resampling (the project's one resampler, asrbench.audio)."""
    return audio.resample(x, sr_in, sr_out)


_SOX = shutil.which("sox")


def run_sox(x: np.ndarray, sr: int, effects: list[str]) -> np.ndarray:
    """Run the `sox` CLI effect chain on mono float audio (raw float32 through pipes).

    `-R` makes sox repeatable and `-D` disables dither, so the same input gives the same bytes.
    """
    if _SOX is None:
        raise PerturbError("the `sox` command is not installed; apt-get install sox libsox-fmt-all")
    fmt = ["-t", "f32", "-r", str(sr), "-c", "1"]
    cmd = [_SOX, "-R", "-D", "-V1", *fmt, "-", *fmt, "-", *effects]
    proc = subprocess.run(
        cmd, input=np.asarray(x, dtype="<f4").tobytes(), capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise PerturbError(
            f"sox {' '.join(effects)} failed ({proc.returncode}): "
            f"{proc.stderr.decode(errors='replace').strip()}"
        )
    return np.frombuffer(proc.stdout, dtype="<f4").astype(np.float64)
