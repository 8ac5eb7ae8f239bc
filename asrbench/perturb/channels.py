"""Telephone and codec channels: GSM full rate, MP3 at low bitrates, 8 kHz narrowband.

Codecs run through the `sox` CLI (libsox-fmt-all provides gsm and lame/mad). Output is always back
at the input rate and trimmed or padded to the input length (codec delay stays in the signal).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import scipy.signal

from asrbench import audio
from asrbench.perturb.dsp import PerturbError, avoid_overflow, fit_length, resample
from asrbench.perturb.noise import Context
from asrbench.perturb.registry import Param, register, sev_table


def _codec_roundtrip(
    x: np.ndarray, sr: int, ext: str, enc_args: list[str], codec_sr: int
) -> np.ndarray:
    sox = shutil.which("sox")
    if sox is None:
        raise PerturbError("the `sox` command is not installed; apt-get install sox libsox-fmt-all")
    y = avoid_overflow(resample(x, sr, codec_sr))
    with tempfile.TemporaryDirectory(prefix="asrbench-codec-") as tmp:
        src, enc, dec = Path(tmp, "in.wav"), Path(tmp, f"enc.{ext}"), Path(tmp, "out.wav")
        audio.write_pcm16(src, y, codec_sr)  # |y| < 1 (avoid_overflow): the clip keeps it
        for cmd in (
            [sox, "-R", "-D", "-V1", str(src), *enc_args, str(enc)],
            [sox, "-R", "-D", "-V1", str(enc), "-b", "16", str(dec)],
        ):
            proc = subprocess.run(cmd, capture_output=True, check=False)
            if proc.returncode != 0:
                raise PerturbError(
                    f"codec {ext} failed: {proc.stderr.decode(errors='replace')}; "
                    "is libsox-fmt-all installed?"
                )
        out, out_sr = audio.read(dec)
    out = audio.mono(out)
    out = resample(out, out_sr, codec_sr)
    return fit_length(resample(remove_delay(y, out, codec_sr), codec_sr, sr), len(x))


def remove_delay(ref: np.ndarray, out: np.ndarray, sr: int, max_s: float = 0.25) -> np.ndarray:
    """Undo a codec's delay (encoder/decoder padding, e.g. ~1100 samples for LAME).

    The delay is the lag of the cross-correlation peak between input and output within
    [0, max_s]; without this, intrusive scores (PESQ, STOI) would measure the misalignment.
    """
    n = min(len(ref), len(out))
    if n == 0:
        return out
    xc = scipy.signal.correlate(out[:n], ref[:n], mode="full", method="fft")[n - 1 :]
    lag = int(np.argmax(xc[: int(max_s * sr)]))
    return out[lag:]


@register("gsm", "channel")
def gsm(x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context) -> np.ndarray:
    """GSM 06.10 full-rate codec at 8 kHz (13 kbit/s), back to the input rate."""
    return _codec_roundtrip(x, sr, "gsm", ["-r", "8000", "-c", "1"], 8000)


@register(
    "mp3",
    "channel",
    (Param("bitrate", int, 8, 320, help="kbit/s"),),
    sev_table("bitrate", [32, 24, 16, 8]),
)
def mp3(x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, bitrate: int) -> np.ndarray:
    """MP3 (LAME CBR) at a low bitrate, decoded back."""
    # LAME picks its own internal rate for low bitrates; 16 kHz input is legal for MPEG-2.
    codec_sr = 16000 if sr >= 16000 else 8000
    return _codec_roundtrip(x, sr, "mp3", ["-C", str(bitrate)], codec_sr)


@register("narrowband", "channel")
def narrowband(x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context) -> np.ndarray:
    """8 kHz narrowband telephone band: down to 8 kHz and back (nothing above 4 kHz survives)."""
    return fit_length(resample(resample(x, sr, 8000), 8000, sr), len(x))
