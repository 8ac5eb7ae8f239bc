"""asrbench/audio.py, the one home of audio decode, resample and write (issue 40 item 4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from asrbench import audio
from asrbench.dataset import load_dataset
from asrbench.settings import REPO_ROOT


def test_a_written_wav_reads_back_as_its_clipped_samples_and_is_written_whole(
    tmp_path: Path,
) -> None:
    y = np.array([0.0, 0.5, -0.25, 2.0, -3.0])  # the last two clip to +-1
    path = tmp_path / "sub" / "x.wav"
    audio.write_pcm16(path, y, 8000)
    assert path.read_bytes() == audio.pcm16_bytes(y, 8000)
    assert [p.name for p in path.parent.iterdir()] == ["x.wav"]  # no temp file left beside it
    back, rate = audio.read(path)
    assert rate == 8000 and back.shape == (5, 1)
    np.testing.assert_allclose(back[:, 0], np.clip(y, -1.0, 32767 / 32768), atol=1 / 32768)


def test_read_mono_resamples_only_where_the_rate_differs() -> None:
    ds = load_dataset(REPO_ROOT / "datasets" / "mini_en")
    path = ds.audio_path(ds.utterances[0])
    x = audio.read_mono(path)
    np.testing.assert_array_equal(audio.read_mono(path, ds.sample_rate), x)
    half = audio.read_mono(path, ds.sample_rate // 2)
    assert abs(len(half) - len(x) / 2) <= 1


def test_wav_pcm_gives_the_stored_bytes_and_refuses_a_broken_file(tmp_path: Path) -> None:
    path = tmp_path / "x.wav"
    audio.write_pcm16(path, np.array([0.0, 0.5, -0.5]), 16000)
    pcm, rate, channels, width = audio.wav_pcm(path)
    assert (len(pcm), rate, channels, width) == (6, 16000, 1, 2)
    assert pcm == path.read_bytes()[-6:]
    assert audio.wav_pcm(path, frames=False)[0] == b""
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF1234WAVEjunk")
    with pytest.raises(audio.WAV_ERRORS):
        audio.wav_pcm(broken)
