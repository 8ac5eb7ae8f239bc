"""models/_common/audio.py: any PCM WAV in, float32 mono at the model's rate out (the contract
asks programs to resample themselves; the fairness sets are 8 kHz FSDD audio)."""

from __future__ import annotations

import importlib.util
import sys
import wave

import numpy as np
import pytest

from asrbench.settings import REPO_ROOT

COMMON = REPO_ROOT / "models" / "_common"


@pytest.fixture(scope="module")
def audio():
    spec = importlib.util.spec_from_file_location("_zoo_audio", COMMON / "audio.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def write(path, samples: np.ndarray, rate: int, width: int, channels: int) -> None:
    scale = {1: 127, 2: 32767, 3: 8388607, 4: 2147483647}[width]
    ints = np.round(np.repeat(samples[:, None], channels, axis=1) * scale).astype(np.int64)
    if width == 1:
        raw = (ints + 128).astype(np.uint8).tobytes()
    elif width == 3:
        raw = b"".join(int(v).to_bytes(3, "little", signed=True) for v in ints.ravel())
    else:
        raw = ints.astype({2: "<i2", 4: "<i4"}[width]).tobytes()
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(raw)


@pytest.mark.parametrize(
    "rate,width,channels",
    [(16000, 2, 1), (8000, 2, 1), (44100, 2, 2), (22050, 3, 1), (48000, 4, 2), (8000, 1, 1)],
)
def test_any_pcm_wav_becomes_16k_mono_float(audio, tmp_path, rate, width, channels):
    t = np.arange(int(rate * 0.5)) / rate
    tone = 0.5 * np.sin(2 * np.pi * 440 * t)
    path = tmp_path / "x.wav"
    write(path, tone, rate, width, channels)
    samples, seconds = audio.read_wav(str(path), 16000)
    assert samples.dtype == np.float32 and samples.ndim == 1
    assert seconds == pytest.approx(0.5, abs=1e-3)
    assert len(samples) == pytest.approx(8000, abs=2)
    # the same tone comes out: amplitude kept, 440 Hz still the peak of the spectrum
    assert np.abs(samples).max() == pytest.approx(0.5, abs=0.02)
    peak = np.argmax(np.abs(np.fft.rfft(samples))) * 16000 / len(samples)
    assert peak == pytest.approx(440, abs=3)


def test_real_8k_fsdd_recording(audio):
    wav = sorted((REPO_ROOT / "datasets" / "fsdd_accents" / "audio").rglob("*.wav"))[0]
    with wave.open(str(wav)) as w:
        assert w.getframerate() == 8000
        frames = w.getnframes()
    samples, seconds = audio.read_wav(str(wav), 16000)
    assert len(samples) == pytest.approx(2 * frames, abs=2)
    assert seconds == pytest.approx(frames / 8000)
