"""Uploads in any format OpenAI clients send (mp3, mp4/m4a, mpeg/mpga, ogg, wav, webm, flac, at
any rate), converted on the way in to what the model's card takes: mono 16-bit PCM WAV at the
card's `sample_rate`. A WAV that is already that is passed as it is; everything else goes through
ffmpeg (Debian's `ffmpeg`, which the Makefile installs)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from asrbench import audio
from asrbench.errors import AsrbenchError

FORMATS = "flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm"


class AudioError(AsrbenchError):
    """An upload that cannot be decoded; `status` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400):
        self.status = status
        super().__init__(message)


def _wav_as_is(data: bytes, rate: int) -> float | None:
    """Seconds of a WAV the model takes as it is (PCM 16-bit mono at `rate`), else None."""
    try:
        if audio.wav_pcm(data, frames=False)[1:] == (rate, 1, 2):
            return audio.wav_frames(data) / float(rate)
    except audio.WAV_ERRORS:
        return None
    return None


def too_long(seconds: float, max_seconds: float, more: bool = False) -> AudioError:
    held = f"more than {max_seconds:g} s" if more else f"{seconds:.1f} s"
    return AudioError(
        f"`file` holds {held} of audio; this server takes at most "
        f"{max_seconds:g} s per request (ops/serve --max-audio-s); split the "
        "audio, or start the server with a larger --max-audio-s",
        413,
    )


def to_model_wav(
    data: bytes,
    rate: int,
    filename: str = "upload",
    max_seconds: float | None = None,
    tmp_root: Path | None = None,
) -> tuple[bytes, float]:
    """(WAV bytes at `rate`, mono, 16-bit; duration in seconds) of an uploaded audio file.

    Audio longer than `max_seconds` is refused (413); ffmpeg stops decoding just past it, so
    an hour of mp3 costs a second of conversion, not an hour of WAV in memory. The conversion's
    scratch folder is made under `tmp_root` (the server's own folder, removed when it stops).
    """
    if not data:
        raise AudioError("`file` is empty")
    seconds = _wav_as_is(data, rate)
    if seconds is not None:
        if max_seconds is not None and seconds > max_seconds:
            raise too_long(seconds, max_seconds)
        return data, seconds
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise AudioError(
            "this server cannot convert audio: ffmpeg is not installed "
            "(`apt-get install ffmpeg`); send 16-bit mono WAV at "
            f"{rate} Hz",
            500,
        )
    suffix = Path(filename).suffix[:10] if Path(filename).suffix.isascii() else ""
    limit = [] if max_seconds is None else ["-t", f"{max_seconds + 1:g}"]
    if tmp_root is not None:
        Path(tmp_root).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="asrbench-upload-", dir=tmp_root) as tmp:
        src, dst = Path(tmp) / f"in{suffix}", Path(tmp) / "out.wav"
        src.write_bytes(data)  # a file, not a pipe: mp4/m4a need to seek
        proc = subprocess.run(
            [
                ffmpeg,
                "-nostdin",
                "-hide_banner",
                "-loglevel",
                "error",
                "-i",
                str(src),
                "-vn",
                *limit,
                "-ac",
                "1",
                "-ar",
                str(rate),
                "-c:a",
                "pcm_s16le",
                "-f",
                "wav",
                str(dst),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0 or not dst.is_file():
            # ffmpeg names its input by path: the client sent a file, not our scratch folder
            why = proc.stderr.replace(str(src), "`file`").replace(str(dst), "WAV")
            why = " ".join(why.replace(tmp, "").split())[:200] or f"ffmpeg exit {proc.returncode}"
            raise AudioError(f"could not decode `file` ({why}); send one of: {FORMATS}")
        out = dst.read_bytes()
    seconds = _wav_as_is(out, rate)
    if seconds is None:
        raise AudioError(f"could not decode `file` into {rate} Hz WAV; send one of: {FORMATS}")
    if seconds == 0:
        raise AudioError("`file` holds no audio (0 samples)")
    if max_seconds is not None and seconds > max_seconds:
        raise too_long(seconds, max_seconds, more=True)
    return out, seconds
