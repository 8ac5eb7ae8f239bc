"""Folder imports (issue 30, low items): a table's own `duration` column, and audio reached
through a symlink that leaves the folder. Real files, the real CLI."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf


def _wav(path: Path, seconds: float, rate: int = 16000) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * rate)) / rate
    sf.write(path, (0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate, subtype="PCM_16")
    return path


def _header(metadata: Path) -> list[str]:
    with open(metadata, newline="") as f:
        return next(csv.reader(f, delimiter="\t"))


def _rows(metadata: Path) -> list[dict[str, str]]:
    with open(metadata, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_folder_table_with_its_own_duration_column_writes_one_measured_duration(
    cli, datasets_dir: Path, tmp_path: Path
) -> None:
    audio = tmp_path / "in"
    _wav(audio / "a.wav", 0.5)
    _wav(audio / "b.wav", 0.25)
    table = audio / "t.tsv"
    # the user's durations are wrong on purpose: the dataset's DURATION is what the audio holds
    table.write_text(
        "file\ttext\tduration\tspeaker\na.wav\thello there\t9.9\ts1\nb.wav\tgood day\t\ts2\n"
    )
    code, out, err = cli("import", "folder", audio, table, "--id", "withdur")
    assert code == 0, err
    meta = datasets_dir / "withdur" / "metadata.tsv"
    header = _header(meta)
    assert header.count("DURATION") == 1, header
    assert header == ["ID", "AUDIO", "DURATION", "TEXT", "SPEAKER"]
    rows = {r["ID"]: r for r in _rows(meta)}
    assert float(rows["a"]["DURATION"]) == pytest.approx(0.5, abs=0.001)
    assert float(rows["b"]["DURATION"]) == pytest.approx(0.25, abs=0.001)
    code, out, err = cli("validate", datasets_dir / "withdur")
    assert code == 0, (out, err)


def test_folder_table_whose_columns_clash_is_refused(
    cli, datasets_dir: Path, tmp_path: Path
) -> None:
    """Two columns for one dataset column (`file` and `audio`; `speaker` and `Speaker`) would
    write the column twice, or keep one silently: one error naming both."""
    audio = tmp_path / "in"
    _wav(audio / "a.wav", 0.5)
    for body, clash in (
        ("file\taudio\ttext\na.wav\ta.wav\thi\n", "'file' and 'audio'"),
        ("file\ttext\tspeaker\tSpeaker\na.wav\thi\ts1\ts2\n", "'speaker' and 'Speaker'"),
    ):
        table = audio / "t.tsv"
        table.write_text(body)
        code, out, err = cli("import", "folder", audio, table, "--id", "clash")
        assert code == 2, (out, err)
        assert err.startswith("error: ") and "Traceback" not in err
        assert f"{table}:1:" in err and clash in err, err
        assert not list(datasets_dir.iterdir())


def test_folder_audio_symlinked_outside_the_folder_is_refused(
    cli, datasets_dir: Path, tmp_path: Path
) -> None:
    """The manifest importers' rule: audio must stay inside its folder, symlinks followed."""
    secret = _wav(tmp_path / "elsewhere" / "private.wav", 0.5)
    audio = tmp_path / "in"
    _wav(audio / "ok.wav", 0.5)
    (audio / "sub").mkdir()
    (audio / "sub" / "link.wav").symlink_to(secret)
    table = audio / "t.tsv"
    table.write_text("file\ttext\nok.wav\tfine\nsub/link.wav\tstolen\n")
    code, out, err = cli("import", "folder", audio, table, "--id", "linked")
    assert code == 2, (out, err)
    assert err.startswith("error: ") and "Traceback" not in err
    assert f"{table}:3: 'sub/link.wav' points outside {audio}" in err, err
    assert not list(datasets_dir.iterdir())
    # a symlink that stays inside the folder is fine
    (audio / "sub" / "link.wav").unlink()
    (audio / "sub" / "link.wav").symlink_to(audio / "ok.wav")
    code, out, err = cli("import", "folder", audio, table, "--id", "linked")
    assert code == 0, err
    assert (datasets_dir / "linked" / "metadata.tsv").is_file()
