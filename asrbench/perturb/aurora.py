"""Aurora-2 noisy-telephone conditions.

Procedure (after Hirsch & Pearce 2000): speech and noise are taken to 8 kHz and filtered with the
same channel (G.712 for test sets A and B, MIRS for C); the speech level is the ITU-T P.56 active
speech level (method B) of the filtered speech; the noise level is the RMS of the filtered random
noise segment; the noise is scaled to the SNR and added, the speech is never scaled unless the mix
would overflow (then the whole mix is scaled down, which keeps the SNR). The result goes back to
the dataset's rate.

Noise names are Aurora's. Real Aurora/NOISEX recordings plug in with $ASRBENCH_NOISE_<NAME>
(e.g. ASRBENCH_NOISE_SUBWAY=/data/aurora/subway); otherwise a documented stand-in from the noise
bank is used (STAND_INS).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import scipy.ndimage
import scipy.signal
import yaml

from asrbench.perturb.dsp import EPS, avoid_overflow, fit_length, resample, rms, scale_to_snr
from asrbench.perturb.noise import Context, noise_signal
from asrbench.perturb.registry import Param, SpecError, register

AURORA_SR = 8000
SNRS = [20.0, 15.0, 10.0, 5.0, 0.0, -5.0]
TEST_SETS: dict[str, dict] = {
    "A": {"filter": "g712", "noises": ["subway", "babble", "car", "exhibition"]},
    "B": {"filter": "g712", "noises": ["restaurant", "street", "airport", "station"]},
    "C": {"filter": "mirs", "noises": ["subway", "street"]},
}
# Stand-ins from the bank when the real Aurora noise is not supplied (see module docstring).
STAND_INS = {
    "subway": "bike",
    "babble": "babble",
    "car": "brown",
    "exhibition": "dishes",
    "restaurant": "moh",
    "street": "pink",
    "airport": "white",
    "station": "guitar",
}
ALL_NOISES = tuple(STAND_INS)


# --- ITU-T P.56 active speech level, method B -------------------------------------------------
P56_T = 0.03  # envelope time constant, s
P56_H = 0.2  # hangover, s
P56_M = 15.9  # margin between active level and threshold, dB


def p56_active_level(x: np.ndarray, sr: int) -> tuple[float, float]:
    """(active speech level as an RMS amplitude, activity factor 0..1) per P.56 method B."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n == 0 or not np.any(x):
        return 0.0, 0.0
    g = np.exp(-1.0 / (sr * P56_T))
    p = scipy.signal.lfilter([1 - g], [1, -g], np.abs(x))
    q = scipy.signal.lfilter([1 - g], [1, -g], p)
    hang = int(np.ceil(P56_H * sr))
    energy = float(np.sum(x * x))
    # A sample is active for threshold c when the envelope reached c within the last `hang`
    # samples, i.e. when the running maximum of q over [i - hang, i] is >= c. One sliding
    # maximum and one sort then give the activity count of every threshold.
    run_max = scipy.ndimage.maximum_filter1d(
        q, size=hang + 1, origin=hang - (hang + 1) // 2, mode="constant", cval=0.0
    )
    run_max.sort()
    thresholds = 2.0 ** np.arange(-20, 1)  # full scale = 1.0; 21 levels, 6 dB apart
    a_db, c_db, acts = [], [], []
    for c in thresholds:
        count = n - int(np.searchsorted(run_max, c, side="left"))
        if count == 0:
            break
        a_db.append(10 * np.log10(energy / count + EPS))
        c_db.append(20 * np.log10(c))
        acts.append(count / n)
    delta = np.array(a_db) - np.array(c_db)
    if len(delta) == 0:
        return 0.0, 0.0
    idx = np.nonzero(delta <= P56_M)[0]
    if len(idx) == 0:
        level_db, act = a_db[-1], acts[-1]
    elif idx[0] == 0:
        level_db, act = a_db[0], acts[0]
    else:
        j = idx[0]
        # Interpolate (in dB) where A - C crosses the margin M between thresholds j-1 and j.
        frac = (delta[j - 1] - P56_M) / (delta[j - 1] - delta[j])
        c_cross = c_db[j - 1] + frac * (c_db[j] - c_db[j - 1])
        level_db = c_cross + P56_M
        act = energy / (10 ** (level_db / 10)) / n
    return float(10 ** (level_db / 20)), float(min(act, 1.0))


# --- channel filters -------------------------------------------------------------------------
FILTER_FILE = Path(__file__).with_name("aurora_filters.yaml")


@functools.lru_cache(maxsize=1)
def filter_specs() -> dict:
    """The design points and masks of the channel filters (aurora_filters.yaml)."""
    return yaml.safe_load(FILTER_FILE.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=4)
def channel_fir(name: str) -> np.ndarray:
    """Linear-phase FIR taps (8 kHz) of channel `name` (g712 or mirs), 0 dB at 1 kHz."""
    spec = filter_specs()
    if name not in ("g712", "mirs"):
        raise ValueError(f"unknown channel filter {name!r}; use g712 or mirs")
    pts = np.array(spec[name]["design"], dtype=np.float64)
    freq = pts[:, 0] / (spec["sample_rate"] / 2)
    gain = 10 ** (pts[:, 1] / 20)
    gain[gain < 1e-4] = 0.0
    taps = scipy.signal.firwin2(spec["numtaps"], freq, gain, window=("kaiser", 6.0))
    _, h = scipy.signal.freqz(taps, worN=[1000.0], fs=spec["sample_rate"])
    return taps / abs(h[0])


def channel_response_db(name: str, freqs: list[float]) -> np.ndarray:
    """Gain (dB re 1 kHz) of the built filter at `freqs`."""
    _, h = scipy.signal.freqz(channel_fir(name), worN=np.asarray(freqs, float), fs=AURORA_SR)
    return 20 * np.log10(np.abs(h) + 1e-12)


def apply_channel(x8k: np.ndarray, name: str) -> np.ndarray:
    """Filter 8 kHz audio with a channel; the FIR's group delay is removed (same length)."""
    taps = channel_fir(name)
    y = scipy.signal.fftconvolve(x8k, taps)
    d = (len(taps) - 1) // 2
    return y[d : d + len(x8k)]


# --- mixing -----------------------------------------------------------------------------------
def aurora_noise(name: str, n: int, rng: np.random.Generator, ctx: Context) -> np.ndarray:
    """`n` samples at 8 kHz of Aurora noise `name` (real if supplied, else its stand-in)."""
    if ctx.settings.noise.get(name.lower()):
        return noise_signal(name, n, AURORA_SR, rng, ctx)
    kind = STAND_INS[name]
    return noise_signal(kind, n, AURORA_SR, rng, ctx, talkers=6)


def mix_at_snr_8k(
    speech8: np.ndarray, noise8: np.ndarray, snr: float, channel: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Filter both, scale the noise to `snr` (P.56 speech / RMS noise); (mix, speech, noise)."""
    s = apply_channel(speech8, channel)
    nz = apply_channel(noise8, channel)
    level, _ = p56_active_level(s, AURORA_SR)
    nz = scale_to_snr(level, nz, rms(nz), snr)
    mix = s + nz
    peak = float(np.max(np.abs(mix))) if len(mix) else 0.0
    if peak > 0.999:
        k = 0.999 / peak
        mix, s, nz = mix * k, s * k, nz * k
    return mix, s, nz


def _check_set(params: dict) -> None:
    noises = TEST_SETS[params["set"]]["noises"]
    if params["noise"] not in noises:
        raise SpecError(
            f"aurora: noise {params['noise']!r} is not in test set {params['set']} "
            f"({', '.join(noises)})"
        )


@register(
    "aurora",
    "aurora",
    (
        Param("set", str, choices=("A", "B", "C")),
        Param("noise", str, choices=ALL_NOISES),
        Param("snr", float, -10.0, 40.0, allow=("clean",)),
    ),
    {i + 1: {"snr": s} for i, s in enumerate(SNRS)},
    description="Aurora-2: G.712/MIRS channel, P.56 speech level, noise at SNR",
    validate=_check_set,
)
def aurora(
    x: np.ndarray,
    sr: int,
    rng: np.random.Generator,
    ctx: Context,
    set: str,
    noise: str,
    snr: float | str,
) -> np.ndarray:
    """Aurora-2 condition: test set (A/B/C), one of its noises, SNR in dB or `clean`."""
    spec = TEST_SETS[set]
    _check_set({"set": set, "noise": noise})
    x8 = resample(x, sr, AURORA_SR)
    if snr == "clean":
        y8 = avoid_overflow(apply_channel(x8, spec["filter"]))
    else:
        y8, _, _ = mix_at_snr_8k(
            x8, aurora_noise(noise, len(x8), rng, ctx), float(snr), spec["filter"]
        )
    return fit_length(resample(y8, AURORA_SR, sr), len(x))


@register("g712", "aurora")
def g712(x, sr, rng, ctx) -> np.ndarray:
    """G.712 telephone channel alone (via 8 kHz)."""
    return fit_length(
        resample(apply_channel(resample(x, sr, AURORA_SR), "g712"), AURORA_SR, sr), len(x)
    )


@register("mirs", "aurora")
def mirs(x, sr, rng, ctx) -> np.ndarray:
    """Modified IRS channel alone (via 8 kHz)."""
    y = apply_channel(resample(x, sr, AURORA_SR), "mirs")
    return fit_length(resample(avoid_overflow(y), AURORA_SR, sr), len(x))


def aurora_grid(sets: str = "ABC", snrs: list[float | str] | None = None) -> list[str]:
    """Specs of the Aurora-2 grid: every set x noise x SNR (plus clean)."""
    out = []
    for s in sets:
        for nz in TEST_SETS[s]["noises"]:
            for snr in snrs if snrs is not None else ["clean", *SNRS]:
                out.append(f"aurora:set={s},noise={nz},snr={snr if snr == 'clean' else f'{snr:g}'}")
    return out


def tolerance_report() -> str:
    """Markdown table: each mask frequency, the built filter's gain, the mask, the margin."""
    lines = [
        "| filter | Hz | gain dB | mask min | mask max | inside |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("g712", "mirs"):
        mask = filter_specs()[name]["mask"]
        got = channel_response_db(name, [m[0] for m in mask])
        for (f, lo, hi), g in zip(mask, got, strict=True):
            ok = "yes" if lo <= g <= hi else "NO"
            lines.append(f"| {name} | {f:g} | {g:.2f} | {lo:g} | {hi:g} | {ok} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(tolerance_report())
