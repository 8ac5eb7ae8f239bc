"""Dataset validator: every bad input gives an error naming file and line; nothing is written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from asrbench.dataset import DatasetError, load_dataset, validate

HEADER = "ID\tAUDIO\tDURATION\tTEXT\tSPEAKER\n"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture
def good(tmp_path: Path, mini_en: Path) -> Path:
    """A three-utterance dataset made of real mini_en audio."""
    root = tmp_path / "ds"
    (root / "audio").mkdir(parents=True)
    rows = mini_en.joinpath("metadata.tsv").read_text(encoding="utf-8").splitlines()[1:4]
    out = HEADER
    for row in rows:
        uid, audio, dur, text, speaker = row.split("\t")[:5]
        shutil.copy(mini_en / audio, root / audio)
        out += f"{uid}\t{audio}\t{dur}\t{text}\t{speaker}\n"
    (root / "metadata.tsv").write_text(out, encoding="utf-8")
    (root / "dataset.yaml").write_text("id: ds\nlanguage: en\nsample_rate: 16000\n")
    return root


def _lines(root: Path) -> list[str]:
    return (root / "metadata.tsv").read_text(encoding="utf-8").splitlines(keepends=True)


def _set(root: Path, lines: list[str]) -> None:
    (root / "metadata.tsv").write_text("".join(lines), encoding="utf-8")


def _problem(root: Path, code: str):
    """Validate, check nothing was written, and return the single problem with `code`."""
    before = _tree(root)
    problems = validate(root)
    assert _tree(root) == before, "the validator must not write anything"
    found = [p for p in problems if p.code == code]
    assert found, f"expected a {code!r} problem, got {[str(p) for p in problems]}"
    with pytest.raises(DatasetError) as err:
        load_dataset(root)
    assert str(found[0]) in str(err.value) or found[0].severity == "warning"
    return found[0]


def test_mini_en_is_valid(mini_en: Path) -> None:
    ds = load_dataset(mini_en)
    assert len(ds) == 35
    assert {u.extra["GENDER"] for u in ds} >= {"M", "F"}
    assert ds.content_hash() == load_dataset(mini_en).content_hash()


def test_good_fixture_is_valid_and_hash_tracks_audio(good: Path) -> None:
    ds = load_dataset(good)
    h1 = ds.content_hash()
    audio = good / ds.utterances[0].audio
    data, rate = sf.read(str(audio), dtype="int16")
    data[100] = data[100] + 1  # one sample changes: the identity must change
    sf.write(str(audio), data, rate, subtype="PCM_16")
    assert load_dataset(good).content_hash() != h1


def test_duplicate_id(good: Path) -> None:
    lines = _lines(good)
    lines.append(lines[1])
    _set(good, lines)
    p = _problem(good, "duplicate-id")
    assert p.line == 5 and "line 2" in p.message and p.path.endswith("metadata.tsv")


def test_missing_id(good: Path) -> None:
    lines = _lines(good)
    lines[2] = "\t" + lines[2].split("\t", 1)[1]
    _set(good, lines)
    assert _problem(good, "missing-id").line == 3


def test_missing_audio(good: Path) -> None:
    lines = _lines(good)
    lines[3] = lines[3].replace("audio/", "audio/nope-")
    _set(good, lines)
    p = _problem(good, "missing-audio")
    assert p.line == 4 and "nope-" in p.message


def test_unreadable_audio(good: Path) -> None:
    ds = load_dataset(good)
    (good / ds.utterances[1].audio).write_bytes(b"RIFF\x00\x00not really a wav")
    p = _problem(good, "unreadable-audio")
    assert p.line == 3


@pytest.mark.parametrize("path", ["../escape.wav", "audio/../../escape.wav", "/etc/passwd"])
def test_audio_path_escapes(good: Path, path: str) -> None:
    lines = _lines(good)
    cells = lines[1].split("\t")
    cells[1] = path
    lines[1] = "\t".join(cells)
    _set(good, lines)
    p = _problem(good, "audio-path")
    assert p.line == 2


def test_symlink_out_of_dataset(good: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.wav"
    ds = load_dataset(good)
    shutil.copy(good / ds.utterances[0].audio, outside)
    os.symlink(outside, good / "audio" / "link.wav")
    lines = _lines(good)
    cells = lines[1].split("\t")
    cells[1] = "audio/link.wav"
    lines[1] = "\t".join(cells)
    _set(good, lines)
    p = _problem(good, "audio-path")
    assert "symlink" in p.message and p.line == 2


def test_symlink_inside_dataset_is_fine(good: Path) -> None:
    ds = load_dataset(good)
    os.symlink(good / ds.utterances[0].audio, good / "audio" / "alias.wav")
    lines = _lines(good)
    cells = lines[1].split("\t")
    cells[1] = "audio/alias.wav"
    lines[1] = "\t".join(cells)
    _set(good, lines)
    assert load_dataset(good)


def test_duration_mismatch(good: Path) -> None:
    lines = _lines(good)
    cells = lines[2].split("\t")
    cells[2] = f"{float(cells[2]) + 0.5:.3f}"
    lines[2] = "\t".join(cells)
    _set(good, lines)
    p = _problem(good, "duration-mismatch")
    assert p.line == 3 and "lasts" in p.message


def test_non_utf8_text(good: Path) -> None:
    raw = (good / "metadata.tsv").read_bytes().split(b"\n")
    raw[2] = raw[2] + b" caf\xe9"  # Latin-1, not UTF-8
    (good / "metadata.tsv").write_bytes(b"\n".join(raw))
    p = _problem(good, "encoding")
    assert p.line == 3 and "UTF-8" in p.message


def test_wrong_column_count(good: Path) -> None:
    lines = _lines(good)
    lines[1] = lines[1].rstrip("\n") + "\textra\n"
    lines[3] = "\t".join(lines[3].split("\t")[:3]) + "\n"
    _set(good, lines)
    problems = [p for p in validate(good) if p.code == "columns"]
    assert [p.line for p in problems] == [2, 4]


def test_bad_header(good: Path) -> None:
    lines = _lines(good)
    lines[0] = "ID\tPATH\tDURATION\tTEXT\tSPEAKER\n"
    _set(good, lines)
    assert _problem(good, "header").line == 1


def test_every_problem_reported_not_just_first(good: Path) -> None:
    lines = _lines(good)
    lines.append(lines[1])  # duplicate
    lines[2] = lines[2].replace("audio/", "audio/missing-")
    _set(good, lines)
    codes = {p.code for p in validate(good)}
    assert {"duplicate-id", "missing-audio"} <= codes


def test_long_utterance_is_reported_not_dropped(good: Path) -> None:
    sf.write(str(good / "audio" / "long.wav"), np.zeros(16000 * 61, dtype=np.int16), 16000,
             subtype="PCM_16")
    with open(good / "metadata.tsv", "a", encoding="utf-8") as f:
        f.write("long\taudio/long.wav\t61.000\tsilence\tX\n")
    problems = validate(good)
    long = [p for p in problems if p.code == "long-utterance"]
    assert long and long[0].severity == "warning" and long[0].line == 5
    ds = load_dataset(good)  # loads: warnings do not stop a dataset
    assert "long" in ds.references()
    assert any(p.code == "long-utterance" for p in ds.problems)


def test_cli_reports_file_and_line(good: Path, repo_root: Path) -> None:
    import subprocess

    lines = _lines(good)
    lines.append(lines[1])
    _set(good, lines)
    proc = subprocess.run([str(repo_root / "ops" / "validate"), str(good)],
                          capture_output=True, text=True)
    assert proc.returncode == 2  # bad input (asrbench.errors.EXIT_INPUT)
    assert f"{good / 'metadata.tsv'}:5: error: [duplicate-id]" in proc.stderr
