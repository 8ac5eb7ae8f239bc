"""Aurora-2: P.56 active level, G.712/MIRS responses against their masks, SNR, test sets."""

from __future__ import annotations

import numpy as np
import pytest

from asrbench.perturb import apply_spec
from asrbench.perturb.aurora import (
    AURORA_SR,
    SNRS,
    STAND_INS,
    TEST_SETS,
    apply_channel,
    aurora_noise,
    channel_response_db,
    filter_specs,
    mix_at_snr_8k,
    p56_active_level,
)
from asrbench.perturb.dsp import resample, rms
from asrbench.perturb.noise import Context
from tests.perturb.measure import transfer_db


def test_p56_on_steady_tone_is_its_rms():
    sr = 8000
    x = 0.1 * np.sin(2 * np.pi * 1000 * np.arange(4 * sr) / sr)
    level, act = p56_active_level(x, sr)
    assert 20 * np.log10(level / rms(x)) == pytest.approx(0.0, abs=0.3)
    assert act > 0.95


def test_p56_ignores_silence_that_halves_rms(speech):
    x, sr = speech
    level, act = p56_active_level(x, sr)
    padded = np.concatenate([x, np.zeros(len(x) * 2)])
    level2, act2 = p56_active_level(padded, sr)
    assert 20 * np.log10(level2 / level) == pytest.approx(0.0, abs=0.3)
    assert 20 * np.log10(rms(padded) / rms(x)) < -4.5  # plain RMS drops by ~4.8 dB
    assert act2 == pytest.approx(act / 3, rel=0.1)
    assert 20 * np.log10(level / rms(x)) > 0  # active level is above the long-term RMS


@pytest.mark.parametrize("name", ["g712", "mirs"])
def test_channel_filter_within_mask(name, shared):
    mask = filter_specs()[name]["mask"]
    freqs = [m[0] for m in mask]
    designed = channel_response_db(name, freqs)
    for (f, lo, hi), g in zip(mask, designed, strict=True):
        assert lo <= g <= hi, f"{name} at {f} Hz: {g:.2f} dB outside [{lo}, {hi}]"
    # Measured on real noise through the actual filtering path, in the pass band.
    import soundfile as sf

    n, nsr = sf.read(str(shared / "data" / "noise" / "exercise_bike.wav"), dtype="float64")
    n = resample(n[: nsr * 20], nsr, AURORA_SR)
    y = apply_channel(n, name)
    passband = [f for f, lo, hi in mask if lo > -50]
    measured = transfer_db(n, y, AURORA_SR, passband, nperseg=1024)
    for f, g in zip(passband, measured, strict=True):
        lo, hi = next((m[1], m[2]) for m in mask if m[0] == f)
        assert lo - 0.3 <= g <= hi + 0.3, f"{name} measured {g:.2f} dB at {f} Hz"


def test_aurora_snr_by_p56_and_noise_rms(speech, ds, utts):
    x, sr = speech
    x8 = resample(x, sr, AURORA_SR) * 0.1
    rng = np.random.default_rng(1)
    ctx = Context(ds, utts[2])
    for name in ("subway", "babble", "street", "car"):
        noise = aurora_noise(name, len(x8), rng, ctx)
        for snr in SNRS:
            for channel in ("g712", "mirs"):
                mix, s, n = mix_at_snr_8k(x8, noise, snr, channel)
                level, _ = p56_active_level(s, AURORA_SR)
                assert 20 * np.log10(level / rms(n)) == pytest.approx(snr, abs=0.2)
                np.testing.assert_allclose(mix, s + n)
                # Speech is never rescaled when no overflow happens.
                np.testing.assert_allclose(s, apply_channel(x8, channel))


def test_aurora_overflow_scales_both(speech, ds, utts):
    x, sr = speech
    x8 = resample(x, sr, AURORA_SR)
    x8 = x8 / np.max(np.abs(x8)) * 0.98
    noise = aurora_noise("car", len(x8), np.random.default_rng(0), Context(ds, utts[2]))
    mix, s, n = mix_at_snr_8k(x8, noise, -5.0, "g712")
    assert np.max(np.abs(mix)) <= 0.999 + 1e-12
    level, _ = p56_active_level(s, AURORA_SR)
    assert 20 * np.log10(level / rms(n)) == pytest.approx(-5.0, abs=0.2)


def test_test_set_definitions():
    assert TEST_SETS["A"]["filter"] == TEST_SETS["B"]["filter"] == "g712"
    assert TEST_SETS["C"]["filter"] == "mirs"
    assert len(TEST_SETS["A"]["noises"]) == len(TEST_SETS["B"]["noises"]) == 4
    assert not set(TEST_SETS["A"]["noises"]) & set(TEST_SETS["B"]["noises"])
    c = TEST_SETS["C"]["noises"]
    assert len(c) == 2 and c[0] in TEST_SETS["A"]["noises"] and c[1] in TEST_SETS["B"]["noises"]
    assert set(STAND_INS) == set(TEST_SETS["A"]["noises"]) | set(TEST_SETS["B"]["noises"])


def test_aurora_output_is_telephone_band(speech, ds, utts):
    x, sr = speech
    y = apply_spec(x, sr, "aurora:set=A,noise=exhibition,snr=clean", ctx=Context(ds, utts[2]))
    assert len(y) == len(x)
    g = transfer_db(x, y, sr, [1000, 2000, 5000, 6000])
    assert abs(g[0]) < 0.5 and abs(g[1]) < 0.5
    assert g[2] < -40 and g[3] < -40


def test_aurora_noise_must_belong_to_set():
    from asrbench.perturb import SpecError, parse_spec

    with pytest.raises(SpecError, match=r"not in test set C \(subway, street\)"):
        parse_spec("aurora:set=C,noise=car,snr=5")


@pytest.mark.parametrize("name", ["g712", "mirs"])
def test_channel_perturbation_at_dataset_rate_meets_mask(name, speech):
    """The standalone `g712`/`mirs` perturbations (16 kHz in, 8 kHz inside) keep the mask."""
    x, sr = speech
    y = apply_spec(x, sr, name)
    mask = [m for m in filter_specs()[name]["mask"] if m[1] > -50 and m[0] >= 200]
    measured = transfer_db(x, y, sr, [m[0] for m in mask], nperseg=4096)
    ref = transfer_db(x, y, sr, [1000.0], nperseg=4096)[0]
    for (f, lo, hi), g in zip(mask, measured - ref, strict=True):
        assert lo - 0.3 <= g <= hi + 0.3, f"{name} at {f} Hz: {g:.2f} dB"
