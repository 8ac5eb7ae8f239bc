"""PGD under an SNR budget: the ball, the projection, the 16-bit written file, the real attack."""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile as sf
import torch

from asrbench.adversarial.pgd import (
    SNR_TOL,
    PgdSettings,
    attack,
    l2_radius,
    pgd,
    project,
    quantise,
    random_start,
    snr_db,
    to_written,
)
from asrbench.errors import InputError
from asrbench.perturb.derive import encode_wav
from asrbench.settings import REPO_ROOT

AUDIO = REPO_ROOT / "datasets" / "mini_en" / "audio"
SHORT = "LJ001-0002"  # 1.9 s
SHORT_TEXT = "in being comparatively modern."


@pytest.fixture(scope="module")
def white_box():
    """The real tiny.en port, loaded once per process (the bank's cache)."""
    from asrbench.perturb.adversarial import cached_target

    return cached_target("whisper_tiny_en")


def _read(utt: str = SHORT) -> np.ndarray:
    return sf.read(str(AUDIO / f"{utt}.wav"), dtype="float64")[0]


def _written(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the bank writes for y (encode_wav) read back as float and as 16-bit integers."""
    data = encode_wav(y, 16000)
    return sf.read(io.BytesIO(data), dtype="float64")[0], sf.read(io.BytesIO(data), dtype="int16")[
        0
    ]


def test_radius_is_the_snr_ball() -> None:
    x = _read()
    for snr in (10.0, 20.0, 30.0, 40.0):
        r = l2_radius(x, snr)
        d = np.random.default_rng(1).standard_normal(len(x))
        assert snr_db(x, x + d * r / np.linalg.norm(d)) == pytest.approx(snr, abs=1e-9)
    assert snr_db(x, x) == float("inf")


def test_random_start_and_projection_stay_in_the_ball_and_range() -> None:
    x = _read()
    loud = np.clip(x * 40.0, -1.0, 1.0)  # clipped speech: the [-1, 1] clip bites
    xt = torch.tensor(np.stack([x, loud]), dtype=torch.float32)
    radius = torch.tensor([l2_radius(x, 10.0), l2_radius(loud, 10.0)])
    rng = np.random.default_rng(0)
    starts = [random_start(rng, len(x), float(r)) for r in radius]
    assert all(
        np.linalg.norm(s) <= float(r) * (1 + 1e-9) for s, r in zip(starts, radius, strict=True)
    )
    big = torch.tensor(np.stack(starts), dtype=torch.float32) * 5.0  # far outside the ball
    d = project(big, xt, radius)
    assert torch.all(d.norm(dim=1) <= radius * (1 + 1e-5))
    assert torch.all((xt + d).abs() <= 1.0)
    inside = torch.tensor(np.stack(starts), dtype=torch.float32) * 0.5
    assert torch.allclose(project(inside, xt[:1].expand(2, -1), radius), inside, atol=1e-7)


@pytest.mark.parametrize("snr", [10.0, 20.0, 30.0, 40.0, 60.0])
def test_written_file_meets_the_budget_after_quantisation(snr: float) -> None:
    """The SNR measured on the WAV bytes the bank writes is within SNR_TOL of the budget, for
    a normal and a very quiet utterance (where the 16-bit step is a large part of the budget)."""
    for gain in (1.0, 0.02):
        x = quantise(_read("1089-134691-0000") * gain) / 32768.0
        d = np.random.default_rng(2).standard_normal(len(x))
        y = to_written(x, d * l2_radius(x, snr) / np.linalg.norm(d), snr, "u")
        back, ints = _written(y)
        assert np.array_equal(ints, quantise(y))  # the writer stores exactly the fitted grid
        assert snr <= snr_db(x, back) <= snr + SNR_TOL, (gain, snr_db(x, back))


def test_a_budget_16_bits_cannot_hold_is_a_clear_error() -> None:
    x = quantise(_read() * 0.001) / 32768.0  # a few LSBs of signal
    d = np.random.default_rng(3).standard_normal(len(x))
    with pytest.raises(InputError, match="utterance u7.*too quiet.*lower snr"):
        to_written(x, d * l2_radius(x, 75.0) / np.linalg.norm(d), 75.0, "u7")


def test_pgd_raises_the_loss_of_the_true_transcript_within_budget(white_box) -> None:
    """The real tiny.en port: one step already raises the loss of the true transcript above
    the clean audio's and above the random start's, and the written file is on budget."""
    x = _read()
    audio = torch.tensor(x, dtype=torch.float32)[None]
    with torch.no_grad():
        clean = float(white_box.loss(audio, [SHORT_TEXT])[0])
    start, start_loss = pgd(
        white_box, [x], [SHORT_TEXT], PgdSettings(30.0, steps=0), [np.random.default_rng(0)]
    )
    (y,) = attack(
        white_box, [x], [SHORT_TEXT], PgdSettings(30.0, steps=1), [np.random.default_rng(0)]
    )
    back, _ = _written(y)
    with torch.no_grad():
        attacked = float(
            white_box.loss(torch.tensor(back, dtype=torch.float32)[None], [SHORT_TEXT])[0]
        )
    assert attacked > start_loss[0] and attacked > clean + 1.0, (clean, start_loss, attacked)
    assert 30.0 <= snr_db(x, back) <= 30.0 + SNR_TOL


@pytest.mark.full
def test_full_pgd_attacks_every_mini_en_utterance_on_budget(white_box, mini_en) -> None:
    """SRB's attack as run: 100 steps on every mini_en utterance (hours on 2 CPU cores)."""
    from asrbench.dataset import load_dataset

    ds = load_dataset(mini_en)
    done = 0
    for i, u in enumerate(ds.utterances):
        x = sf.read(str(ds.audio_path(u)), dtype="float64")[0]
        (y,) = attack(white_box, [x], [u.text], PgdSettings(30.0), [np.random.default_rng(i)])
        back, _ = _written(y)
        assert 30.0 <= snr_db(x, back) <= 30.0 + SNR_TOL, u.id
        done += 1
    assert done == len(ds.utterances)
