"""Measured effects of the SRB, AequeVox and channel perturbations on real speech."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

from asrbench.perturb import apply_spec, get, parse_spec
from asrbench.perturb.dsp import rms
from asrbench.perturb.rooms import RT60_BINS, rir_bank
from tests.perturb.measure import f0_median, transfer_db


def _second_order_db(f: float, fc: float, kind: str, sr: int) -> float:
    """Gain of the digital 2nd-order Butterworth (Q=0.707, -3 dB at fc) both families claim."""
    b, a = scipy.signal.butter(2, fc, btype=kind, fs=sr)
    _, h = scipy.signal.freqz(b, a, worN=[f], fs=sr)
    return float(20 * np.log10(abs(h[0])))


@pytest.mark.parametrize(
    "name,kind",
    [
        ("lowpass", "lowpass"),
        ("highpass", "highpass"),
        ("av_lowpass", "lowpass"),
        ("av_highpass", "highpass"),
    ],
)
def test_filter_responses_match_second_order_spec(name, kind, speech):
    x, sr = speech
    for sev, params in get(name).severities.items():
        fc = params["cutoff"]
        y = apply_spec(x, sr, f"{name}:{sev}")
        freqs = [f for f in (fc / 2, fc, 2 * fc) if 80 <= f <= 7000]
        measured = transfer_db(x, y, sr, freqs, nperseg=4096)
        for f, g in zip(freqs, measured, strict=True):
            want = _second_order_db(f, fc, kind, sr)
            assert abs(g - want) < 0.75, f"{name}:{sev} at {f:.0f} Hz: {g:.2f} vs {want:.2f} dB"


@pytest.mark.parametrize("name,corner,far", [("bass", 100.0, 5000.0), ("treble", 3000.0, 80.0)])
def test_shelf_gain_at_corner(name, corner, far, speech):
    """sox shelves put half the requested boost (in dB) at their corner (100 Hz, 3 kHz)."""
    x, sr = speech
    x = x * 0.003  # far from clipping so the shelf is linear
    for sev, params in get(name).severities.items():
        y = apply_spec(x, sr, f"{name}:{sev}")
        at_corner, at_far = transfer_db(x, y, sr, [corner, far], nperseg=8192)
        assert abs(at_far) < 1.0, (name, sev, at_far)  # the far band is left alone
        assert at_corner == pytest.approx(params["gain"] / 2, abs=0.5), (name, sev)


@pytest.mark.parametrize("name", ["tempo_up", "tempo_down", "speed_up", "speed_down"])
def test_duration_changes_by_factor(name, speech):
    x, sr = speech
    f0 = f0_median(x, sr)
    for sev, params in get(name).severities.items():
        y = apply_spec(x, sr, f"{name}:{sev}")
        assert len(y) / len(x) == pytest.approx(1 / params["factor"], rel=0.01)
        if sev in (1, 4):  # F0 estimation is the slow part: check both ends
            want = 1.0 if name.startswith("tempo") else params["factor"]
            ratio = f0_median(y, sr, f0 * want) / f0
            assert ratio == pytest.approx(want, rel=0.05), (name, sev, ratio)


@pytest.mark.parametrize(
    "spec,ratio",
    [
        ("pitch_up:2", 2**0.5),
        ("pitch_down:4", 0.5),
        ("pitch_up:4", 2.0),
        ("freq_scale:1", 0.9),
        ("freq_scale:5", 0.5),
    ],
)
def test_pitch_moves_f0_keeps_duration(spec, ratio, speech):
    x, sr = speech
    y = apply_spec(x, sr, spec)
    assert len(y) == len(x)
    f0 = f0_median(x, sr)
    assert f0_median(y, sr, f0 * ratio) / f0 == pytest.approx(ratio, rel=0.059)  # a semitone


def test_echo_delay_found_by_autocorrelation(speech):
    x, sr = speech
    for sev, params in get("echo").severities.items():
        y = apply_spec(np.concatenate([x, np.zeros(sr)]), sr, f"echo:{sev}")
        n = 1 << int(np.ceil(np.log2(2 * len(y))))
        spec = np.abs(np.fft.rfft(y, n)) ** 2
        ac = np.fft.irfft(spec)[: int(1.2 * sr)]
        lo = int(0.06 * sr)  # skip the speech's own short-lag (pitch) correlation
        lag = lo + int(np.argmax(ac[lo:]))
        assert lag / sr * 1000 == pytest.approx(params["delay"], abs=1.0)


def _schroeder_t30(h: np.ndarray, sr: int) -> float:
    # Independent of the library's estimator: EDC via reversed cumulative sum, line fit by lstsq.
    edc = np.flip(np.cumsum(np.flip(h**2)))
    edc_db = 10 * np.log10(edc / edc[0] + 1e-30)
    sel = (edc_db <= -5) & (edc_db >= -35)
    t = np.nonzero(sel)[0] / sr
    a = np.stack([t, np.ones_like(t)], axis=1)
    slope = np.linalg.lstsq(a, edc_db[sel], rcond=None)[0][0]
    return -60 / slope


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_rir_rt60_in_bin(k):
    lo, hi = RT60_BINS[k - 1]
    bank = rir_bank(k, 16000)
    assert len(bank) >= 4
    for h in bank:
        assert lo <= _schroeder_t30(h, 16000) <= hi


def test_rir_reverberates_speech(speech):
    x, sr = speech
    y = apply_spec(x, sr, "rir:4", seed=2, utt_id="u")
    env = lambda s: np.convolve(s**2, np.ones(160) / 160, "same")  # noqa: E731
    # Reverberation fills the gaps: the envelope's dynamic range shrinks.
    dr = lambda s: np.percentile(env(s), 99) / np.percentile(env(s), 20)  # noqa: E731
    assert dr(y) < dr(x) / 3
    assert abs(20 * np.log10(rms(y) / rms(x))) < 0.1


@pytest.mark.parametrize("name", ["gain", "amplify"])
def test_gain_clips_never_wraps(name, speech):
    x, sr = speech
    prev = 0.0
    for sev, params in get(name).severities.items():
        y = apply_spec(x, sr, f"{name}:{sev}")
        assert np.max(np.abs(y)) == pytest.approx(1.0)
        assert np.all(np.sign(y[np.abs(x) > 1e-3]) == np.sign(x[np.abs(x) > 1e-3]))
        unclipped = np.abs(x * params["factor"]) < 1
        np.testing.assert_allclose(y[unclipped], x[unclipped] * params["factor"])
        clipped = float(np.mean(np.abs(y) >= 1.0))
        assert clipped > prev
        prev = clipped


def test_amplitude_scales_exactly(speech):
    x, sr = speech
    for sev, params in get("amplitude").severities.items():
        y = apply_spec(x, sr, f"amplitude:{sev}")
        assert rms(y) / rms(x) == pytest.approx(params["factor"], rel=1e-6)


def test_clipping_level(speech):
    x, sr = speech
    for sev, params in get("clipping").severities.items():
        y = apply_spec(x, sr, f"clipping:{sev}")
        level = params["level"]
        assert np.max(np.abs(y)) == pytest.approx(level)
        keep = np.abs(x) < level
        np.testing.assert_array_equal(y[keep], x[keep])
        assert np.mean(~keep) > 0.05  # real speech really is clipped at these levels


def test_drop_chunks_ratio(speech):
    x, sr = speech
    x = x + 1e-4  # no chunk of the original is exactly silent
    size = int(0.02 * sr)
    n_chunks = -(-len(x) // size)
    for sev, params in get("drop_chunks").severities.items():
        y = apply_spec(x, sr, f"drop_chunks:{sev}", seed=sev, utt_id="u")
        zero = [not np.any(y[c * size : (c + 1) * size]) for c in range(n_chunks)]
        assert np.mean(zero) == pytest.approx(params["ratio"], abs=0.5 / n_chunks + 1e-9)
        assert len(y) == len(x)


def test_frame_drop_shortens_by_ratio(speech):
    x, sr = speech
    for sev in get("frame_drop").severities:
        params = parse_spec(f"frame_drop:{sev}")[0].params
        y = apply_spec(x, sr, f"frame_drop:{sev}", seed=1, utt_id="u")
        size = int(round(params["ms"] / 1000 * sr))
        assert len(x) - len(y) == pytest.approx(params["ratio"] * len(x), abs=size)


def test_resample_removes_band_above_new_nyquist(speech):
    x, sr = speech
    for sev, params in get("resample").severities.items():
        y = apply_spec(x, sr, f"resample:{sev}")
        cut = params["ratio"] * sr / 2
        below, above = transfer_db(x, y, sr, [0.5 * cut, min(1.2 * cut, 7800)])
        assert abs(below) < 0.5 and above < -30, (sev, below, above)


def test_tremolo_modulates_at_depth(shared):
    import soundfile as sf

    x, sr = sf.read(str(shared / "data" / "noise" / "exercise_bike.wav"), dtype="float64")
    x = x[: 4 * sr]
    for sev, params in get("tremolo").severities.items():
        y = apply_spec(x, sr, f"tremolo:{sev}")
        frame = sr // 200
        g = np.array(
            [rms(y[i : i + frame]) / rms(x[i : i + frame]) for i in range(0, len(x) - frame, frame)]
        )
        depth = (np.percentile(g, 99) - np.percentile(g, 1)) / np.percentile(g, 99)
        assert depth == pytest.approx(params["depth"] / 100, abs=0.08)
        spec = np.abs(np.fft.rfft(g - g.mean()))
        assert np.fft.rfftfreq(len(g), 1 / 200)[np.argmax(spec)] == pytest.approx(8.0, abs=0.5)


def test_chorus_adds_delayed_copies(speech):
    x, sr = speech
    for sev, params in get("chorus").severities.items():
        y = apply_spec(x, sr, f"chorus:{sev}")
        xc = scipy.signal.correlate(y, x, mode="full", method="fft")[len(x) - 1 :]
        lo = int(0.01 * sr)
        lag = (lo + int(np.argmax(xc[lo : int(0.15 * sr)]))) / sr * 1000
        assert lag == pytest.approx(params["delay"], abs=6.0)  # modulated by +/- 2 ms (+ spread)


def test_phaser_notches_deepen_with_decay(speech):
    x, sr = speech
    spreads = []
    for sev in get("phaser").severities:
        y = apply_spec(x, sr, f"phaser:{sev}")
        g = transfer_db(x, y, sr, list(np.linspace(100, 7000, 200)), nperseg=1024)
        spreads.append(np.percentile(g, 95) - np.percentile(g, 5))
    assert all(b > a for a, b in zip(spreads, spreads[1:], strict=False)), spreads


def test_narrowband_and_gsm_cut_above_4k(speech):
    x, sr = speech
    for spec in ("narrowband", "gsm", "g712"):
        y = apply_spec(x, sr, spec)
        g_lo, g_hi = transfer_db(x, y, sr, [1000.0, 5000.0])
        assert g_hi < -30, spec
        assert abs(g_lo) < (3.0 if spec == "gsm" else 0.5), spec  # GSM is lossy, not a filter


def _snr_aligned(x: np.ndarray, y: np.ndarray) -> float:
    lag = int(np.argmax(scipy.signal.correlate(y, x, mode="full", method="fft"))) - (len(x) - 1)
    y = np.roll(y, -lag)
    return 20 * np.log10(rms(x) / rms(y - x))


def test_mp3_error_grows_as_bitrate_falls(speech):
    x, sr = speech
    snrs = [_snr_aligned(x, apply_spec(x, sr, f"mp3:{sev}")) for sev in (1, 2, 3, 4)]
    assert all(b < a for a, b in zip(snrs, snrs[1:], strict=False)), snrs
    assert snrs[0] > 3


def test_gsm_is_lossy_but_intelligible(speech):
    x, sr = speech
    snr = _snr_aligned(x, apply_spec(x, sr, "gsm"))
    assert 0 < snr < 25


@pytest.mark.parametrize("spec", ["gsm", "mp3:1", "mp3:4"])
def test_codec_delay_removed(spec, speech):
    """Codec output is time-aligned with its input (intrusive quality scores rely on it)."""
    x, sr = speech
    y = apply_spec(x, sr, spec)
    lag = int(np.argmax(scipy.signal.correlate(y, x, mode="full", method="fft"))) - (len(x) - 1)
    assert abs(lag) <= 1
