"""Additive noise: achieved SNR on real speech with real/synthetic/babble noise, by RMS."""

from __future__ import annotations

import numpy as np
import pytest

from asrbench.perturb import apply_spec, get
from asrbench.perturb.dsp import rms
from asrbench.perturb.noise import Context, _babble_files, noise_signal, synthetic
from asrbench.settings import Settings


def _snr_db(x: np.ndarray, y: np.ndarray) -> float:
    noise = y - x
    return 20 * np.log10(rms(x) / rms(noise))


@pytest.mark.parametrize(
    "name", ["gaussian_noise", "env_noise", "music", "crosstalk", "babble", "av_noise"]
)
def test_achieved_snr_within_0_2_db(name, speech, ds, utts):
    x, sr = speech
    x = x / np.max(np.abs(x)) * 0.05  # quiet enough that no severity needs overflow scaling
    pert = get(name)
    for sev, params in pert.severities.items():
        y = apply_spec(x, sr, f"{name}:{sev}", seed=3, utt_id=utts[2].id, ctx=Context(ds, utts[2]))
        assert abs(_snr_db(x, y) - params["snr"]) < 0.2, (name, sev)


def test_overflow_scales_mix_not_snr(speech):
    from asrbench.perturb.srb import add_noise

    x, sr = speech
    x = x / np.max(np.abs(x)) * 0.95
    noise = np.random.default_rng(1).standard_normal(len(x))
    y = add_noise(x, noise, 0.0)  # 0 dB: the plain mix would clip
    assert np.max(np.abs(y)) <= 1.0
    # y = k*x + m*noise exactly: recover k and m by least squares.
    (k, m), *_ = np.linalg.lstsq(np.stack([x, noise], axis=1), y, rcond=None)
    assert k < 0.99  # the whole mix was scaled down...
    # ...but the SNR is kept.
    assert 20 * np.log10(k * rms(x) / (m * rms(noise))) == pytest.approx(0.0, abs=0.01)


def test_babble_never_uses_target_speaker(ds):
    for utt in ds.utterances:
        files = _babble_files(Context(ds, utt))
        speakers = {u.extra["SPEAKER"] for u in ds.utterances if ds.audio_path(u) in files}
        assert utt.extra.get("SPEAKER") not in speakers
        assert ds.audio_path(utt) not in files
        assert "" not in speakers


def test_real_noise_sources_are_real_audio(ds, utts):
    rng = np.random.default_rng(0)
    ctx = Context(ds, utts[0])
    for kind in ("env", "music", "dishes", "bike", "guitar", "moh"):
        n = noise_signal(kind, 16000, 16000, rng, ctx)
        assert len(n) == 16000 and rms(n) > 1e-4, kind


def test_synthetic_colours_have_their_slopes():
    rng = np.random.default_rng(0)
    for colour, slope in (("white", 0.0), ("pink", -3.0), ("brown", -6.0)):
        x = synthetic(colour, 1 << 16, rng)
        spec = np.abs(np.fft.rfft(x)) ** 2
        f = np.fft.rfftfreq(len(x), 1 / 16000)
        hi = spec[(f >= 2000) & (f < 4000)].mean()
        lo = spec[(f >= 1000) & (f < 2000)].mean()
        per_octave = 10 * np.log10(hi / lo)
        assert abs(per_octave - slope) < 0.7, colour


def test_user_noise_folder_plugs_in(tmp_path, speech):
    import soundfile as sf

    x, sr = speech
    tone = 0.3 * np.sin(2 * np.pi * 440 * np.arange(sr) / sr)
    sf.write(tmp_path / "tone.wav", tone, sr)
    ctx = Context(settings=Settings.from_env({"ASRBENCH_NOISE_ENV": str(tmp_path)}))
    y = apply_spec(x, sr, "env_noise:4", seed=0, ctx=ctx)
    n = y - x
    spectrum = np.abs(np.fft.rfft(n))
    assert abs(np.fft.rfftfreq(len(n), 1 / sr)[np.argmax(spectrum)] - 440) < 2
