"""Import and export paths (issue 38): `--force` replaces only what the command itself writes,
a session ID never leads out of `--audio-dir`, a missing `--segments` file or a full disk is one
line, a control character is named on its STM line, and a long recording is converted in blocks.
Real files, the real CLI; the full disk is a real small tmpfs (tests/benchmark/test_cell_writes.py).
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from asrbench.importers.common import Item, build_dataset, read_audio_file
from asrbench.importers.longform import build_longform, from_timed


def _wav(path: Path, seconds: float, rate: int = 16000, channels: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * rate)) / rate
    tone = (0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    sf.write(path, np.stack([tone] * channels, axis=1), rate, subtype="PCM_16")
    return path


def _session(tmp_path: Path, seconds: float = 2.0, name: str = "s1") -> tuple[Path, Path]:
    """A folder with `<name>.wav` and an STM of one segment over it."""
    audio = _wav(tmp_path / "in" / f"{name}.wav", seconds).parent
    stm = tmp_path / "in" / "ref.stm"
    stm.write_text(f"{name} 1 spk 0.00 {seconds - 0.5:.2f} hello there\n")
    return audio, stm


def _precious(folder: Path) -> dict[str, bytes]:
    folder.mkdir(parents=True)
    (folder / "thesis.tex").write_text("three years of work\n")
    (folder / "notes").mkdir()
    (folder / "notes" / "n.txt").write_text("keep\n")
    return _contents(folder)


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# ----------------------------------------------------------------------------- 38.1 --force


def test_longform_import_force_never_deletes_a_folder_that_is_not_a_dataset(
    cli, datasets_dir: Path, tmp_path: Path
) -> None:
    audio, stm = _session(tmp_path)
    precious = tmp_path / "mine"
    before = _precious(precious)
    code, out, err = cli(
        "import", "longform", "--id", "x", "--segments", stm, "--audio-dir", audio,
        "--out", precious, "--force",
    )  # fmt: skip
    assert code == 2, (out, err)
    assert err.startswith("error: ") and "Traceback" not in err
    assert f"{precious} exists and is not a dataset folder" in err, err
    assert _contents(precious) == before
    # a dataset folder (an earlier import) is replaced, as documented
    for _ in range(2):
        code, out, err = cli(
            "import", "longform", "--id", "x", "--segments", stm, "--audio-dir", audio,
            "--out", tmp_path / "ds", "--force",
        )  # fmt: skip
        assert code == 0, err
    assert (tmp_path / "ds" / "segments.seglst.json").is_file()


def test_export_force_never_deletes_a_folder_or_file_of_something_else(
    cli, mini_en: Path, tmp_path: Path
) -> None:
    precious = tmp_path / "mine"
    before = _precious(precious)
    code, out, err = cli("export", mini_en, "--to", "kaldi", "--out", precious, "--force")
    assert code == 2, (out, err)
    assert "Traceback" not in err and f"{precious} exists and is not an export folder" in err
    assert _contents(precious) == before
    a_file = tmp_path / "report.txt"
    a_file.write_text("mine\n")
    code, out, err = cli("export", mini_en, "--to", "nemo", "--out", a_file, "--force")
    assert code == 2, (out, err)
    assert a_file.is_file() and a_file.read_text() == "mine\n"
    # an earlier export (of any format) or an empty folder is replaced
    target = tmp_path / "manifests"
    for fmt in ("kaldi", "nemo", "stm", "kaldi"):
        code, out, err = cli("export", mini_en, "--to", fmt, "--out", target, "--force")
        assert code == 0, err
    assert (target / "wav.scp").is_file() and not (target / "manifest.json").exists()
    (tmp_path / "empty").mkdir()
    code, out, err = cli("export", mini_en, "--to", "nemo", "--out", tmp_path / "empty", "--force")
    assert code == 0, err


# ----------------------------------------------------------------------------- 38.6 tracebacks


def test_longform_import_of_a_missing_segments_file_is_one_line(
    cli, datasets_dir: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nosuch.stm"
    code, out, err = cli("import", "longform", "--id", "x", "--segments", missing)
    assert code == 2, (out, err)
    assert err.startswith("error: ") and "Traceback" not in err and len(err.splitlines()) == 1
    assert f"--segments {missing}: no such file" in err
    assert not list(datasets_dir.iterdir())


@pytest.mark.parametrize("how", ["folder", "longform"])
def test_an_import_onto_a_full_disk_is_one_line_and_leaves_nothing(
    cli, datasets_dir: Path, tmp_path: Path, small_disk: Path, how: str
) -> None:
    """90 s of 16-bit audio (2.9 MB) into 2 MiB: libsndfile's "System error." was a traceback.
    The folder import converts the recording whole, the long-form one in blocks."""
    audio, stm = _session(tmp_path, seconds=90.0)
    table = audio / "t.tsv"
    table.write_text("file\ttext\ns1.wav\thello there\n")
    target = small_disk / "ds"
    if how == "folder":
        args = ["folder", audio, table]
    else:
        args = ["longform", "--segments", stm, "--audio-dir", audio]
    code, out, err = cli("import", *args, "--id", "big", "--out", target)
    assert code == 1, (out, err)
    assert err.startswith("error: no space left on the device of "), err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert f"nothing was changed in {target}" in err, err
    assert list(small_disk.iterdir()) == []


# ----------------------------------------------------------------------------- 38.8 sessions


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_a_session_id_never_reads_a_recording_outside_the_audio_dir(
    cli, datasets_dir: Path, tmp_path: Path, where: str
) -> None:
    audio = (tmp_path / "in").resolve()
    audio.mkdir()
    outside = _wav(tmp_path / "private" / "secret.wav", 2.0)
    session = "../private/secret" if where == "relative" else str(outside.with_suffix(""))
    stm = audio / "ref.stm"
    stm.write_text(f"{session} 1 spk 0.00 1.50 hello there\n")
    code, out, err = cli(
        "import", "longform", "--id", "x", "--segments", stm, "--audio-dir", audio
    )  # fmt: skip
    assert code == 2, (out, err)
    assert err.startswith(f"error: {stm}:1: session {session!r}") and "Traceback" not in err
    assert f"points outside {audio}" in err, err
    assert not list(datasets_dir.iterdir())


# ----------------------------------------------------------------------------- 38.low


def test_a_control_character_is_named_on_its_stm_line(
    cli, datasets_dir: Path, tmp_path: Path
) -> None:
    audio, stm = _session(tmp_path)
    stm.write_text("s1 1 spk 0.00 0.50 hello\ns1 1 spk 0.60 1.50 there \x1b[31mred\n")
    code, out, err = cli(
        "import", "longform", "--id", "x", "--segments", stm, "--audio-dir", audio
    )  # fmt: skip
    assert code == 2, (out, err)
    assert err.startswith(f"error: {stm}:2: ") and "U+001B" in err, err
    assert "metadata.tsv" not in err and "Traceback" not in err
    assert not list(datasets_dir.iterdir())


def test_a_control_character_in_a_folder_table_names_the_table_line(
    cli, datasets_dir: Path, tmp_path: Path
) -> None:
    audio = _wav(tmp_path / "in" / "a.wav", 0.5).parent
    table = audio / "t.tsv"
    table.write_text("file\ttext\na.wav\thello \x1bthere\n")
    code, out, err = cli("import", "folder", audio, table, "--id", "ctl")
    assert code == 2, (out, err)
    assert f"{table}:2" in err and "U+001B" in err and "metadata.tsv" not in err, err


def test_a_long_recording_is_converted_in_blocks_to_the_same_samples(tmp_path: Path) -> None:
    """Two minutes of 44.1 kHz stereo, 42 MB decoded as float32: read whole, the import held it
    (and its mixes) at once, a peak that grows with the recording (the 1-hour figures:
    benchmarks/import_longform_memory.py). In 10 s blocks the numpy peak stays at a few blocks,
    under half the decoded size here, and the WAV is the one the whole conversion writes,
    sample for sample."""
    seconds, rate = 120.0, 44100
    audio = _wav(tmp_path / "in" / "s1.wav", seconds, rate, channels=2)
    stm = tmp_path / "in" / "ref.stm"
    stm.write_text("s1 1 spk 0.00 100.00 hello there\n")
    source = from_timed(stm, audio.parent)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        streamed = build_longform(tmp_path / "streamed", source, dataset_id="streamed")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < seconds * rate * 2 * 4 / 2, f"peak {peak / 1e6:.1f} MB"
    whole = build_dataset(
        tmp_path / "whole",
        [Item("s1", lambda: read_audio_file(audio, "s1"), str(audio), "hello there")],
        dataset_id="whole",
    )
    a, _ = sf.read(streamed / "audio" / "s1.wav", dtype="int16")
    b, _ = sf.read(whole / "audio" / "s1.wav", dtype="int16")
    assert len(a) == len(b) == int(seconds * 16000) and np.array_equal(a, b)
