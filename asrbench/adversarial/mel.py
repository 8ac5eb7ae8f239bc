"""Whisper's log-Mel front end in torch, differentiable from the waveform samples.

The same computation as faster-whisper 1.2.1's `FeatureExtractor.__call__` (the engine the Whisper
cards run): 160 zero samples appended, a 400-point STFT (periodic Hann window, hop 160, centred
with reflect padding), the last frame dropped, power spectrum, 80 Slaney Mel filters, log10 with
a floor of 1e-10, clamped to 8 below the utterance's maximum, then (x + 4) / 4. Long audio is
processed as faster-whisper does without timestamps: the Mel of the WHOLE utterance (so the
clamp uses its global maximum), cut into consecutive 3000-frame (30-s) windows, the last one
zero-padded to 3000 frames (`faster_whisper.audio.pad_or_trim`).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from asrbench.errors import InputError

__all__ = [
    "HOP",
    "N_FFT",
    "N_FRAMES",
    "N_MELS",
    "N_SAMPLES",
    "log_mel",
    "mel_filters",
    "mel_windows",
]

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160
N_MELS = 80
N_FRAMES = 3000  # one 30-s window of frames
N_SAMPLES = N_FRAMES * HOP


@functools.cache
def mel_filters(sr: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """[n_mels, n_fft/2 + 1] Slaney-scale, Slaney-normalised triangular filters (librosa's
    defaults, as faster-whisper computes them), float32."""
    fftfreqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    mels = np.linspace(0.0, 45.245640471924965, n_mels + 2)  # 0 Hz .. 8 kHz in Slaney mels
    freqs = f_sp * mels
    log_t = mels >= min_log_mel
    freqs[log_t] = min_log_hz * np.exp(logstep * (mels[log_t] - min_log_mel))
    fdiff = np.diff(freqs)
    ramps = freqs[:, None] - fftfreqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (freqs[2 : n_mels + 2] - freqs[:n_mels]))[:, None]
    return weights.astype(np.float32)


def log_mel(samples: torch.Tensor) -> torch.Tensor:
    """[80, n // 160 + 1] normalised log-Mel of one utterance's samples [n] (float32 or float64,
    the result in the same dtype); differentiable with respect to `samples`."""
    x = torch.nn.functional.pad(samples, (0, HOP))
    window = torch.hann_window(N_FFT, periodic=True, dtype=x.dtype, device=x.device)
    spec = torch.stft(
        x, N_FFT, HOP, window=window, center=True, pad_mode="reflect", return_complex=True
    )[:, :-1]
    power = spec.real**2 + spec.imag**2  # |z|^2 without the sqrt, whose gradient is 0/0 at 0
    filters = torch.from_numpy(mel_filters()).to(device=x.device, dtype=x.dtype)
    log_spec = torch.log10(torch.clamp(filters @ power, min=1e-10))
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0


def mel_windows(mel: torch.Tensor, utterance: int | str = 0) -> list[torch.Tensor]:
    """The consecutive 30-s windows faster-whisper decodes (no timestamps), each [80, 3000].
    Its content is `frames - 1` frames (the appended padding's frame is left out)."""
    content = mel.shape[-1] - 1
    if content < 1:
        raise InputError(f"utterance {utterance}: under 10 ms of audio, nothing to decode")
    out = []
    for seek in range(0, content, N_FRAMES):
        size = min(N_FRAMES, content - seek)
        out.append(torch.nn.functional.pad(mel[:, seek : seek + size], (0, N_FRAMES - size)))
    return out
