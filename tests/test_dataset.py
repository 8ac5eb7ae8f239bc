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
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


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
    sf.write(
        str(good / "audio" / "long.wav"),
        np.zeros(16000 * 61, dtype=np.int16),
        16000,
        subtype="PCM_16",
    )
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
    proc = subprocess.run(
        [str(repo_root / "ops" / "validate"), str(good)], capture_output=True, text=True
    )
    assert proc.returncode == 2  # bad input (asrbench.errors.EXIT_INPUT)
    assert f"{good / 'metadata.tsv'}:5: error: [duplicate-id]" in proc.stderr


# --- reliability issue: audio format, tiny audio, blank references, dataset.yaml schema --------

BAD = Path(__file__).resolve().parent / "bad_inputs"


def _point_first_row_at(root: Path, bad_file: str) -> None:
    """Copy a file from tests/bad_inputs into the dataset and make row 1 use it."""
    shutil.copy(BAD / bad_file, root / "audio" / bad_file)
    lines = _lines(root)
    cells = lines[1].split("\t")
    cells[1] = f"audio/{bad_file}"
    info = sf.info(str(BAD / bad_file)) if bad_file != "not_audio.wav" else None
    if info is not None:
        cells[2] = f"{info.frames / info.samplerate:.3f}"
    lines[1] = "\t".join(cells)
    _set(root, lines)


@pytest.mark.parametrize("bad_file", ["mp3_bytes_named.wav", "clip.flac", "clip.mp3"])
def test_non_wav_audio_is_refused_with_the_fix(good: Path, bad_file: str) -> None:
    _point_first_row_at(good, bad_file)
    p = _problem(good, "not-wav-pcm")
    assert p.line == 2 and "ops/import" in p.message and bad_file in p.message


def test_zero_frame_audio_is_an_error(good: Path) -> None:
    _point_first_row_at(good, "zero_frames.wav")
    p = _problem(good, "empty-audio")
    assert p.line == 2 and "0 frames" in p.message


def test_audio_under_100_ms_is_a_warning(good: Path) -> None:
    _point_first_row_at(good, "short_50ms.wav")
    found = [p for p in validate(good) if p.code == "short-audio"]
    assert [(p.line, p.severity) for p in found] == [(2, "warning")]
    assert "50 ms" in found[0].message
    load_dataset(good)  # a warning does not stop the dataset


@pytest.mark.parametrize("text", ["", "?!", " -- ... "])
def test_empty_or_punctuation_only_reference_is_a_warning(good: Path, text: str) -> None:
    lines = _lines(good)
    cells = lines[2].split("\t")
    cells[3] = text
    lines[2] = "\t".join(cells)
    _set(good, lines)
    found = [p for p in validate(good) if p.code == "empty-text"]
    assert [(p.line, p.severity) for p in found] == [(3, "warning")]
    assert "reference_free" in found[0].message


def test_reference_free_dataset_needs_empty_text_and_then_has_no_warning(good: Path) -> None:
    (good / "dataset.yaml").write_text(
        "id: ds\nlanguage: en\nsample_rate: 16000\nreference_free: true\n"
    )
    p = _problem(good, "reference-free-text")
    assert p.line == 2
    lines = [_lines(good)[0]]
    for line in _lines(good)[1:]:
        cells = line.split("\t")
        cells[3] = ""
        lines.append("\t".join(cells))
    _set(good, lines)
    assert [p for p in validate(good) if p.severity == "error" or p.code == "empty-text"] == []
    assert load_dataset(good).reference_free


def test_unquoted_comma_in_dataset_yaml_is_a_schema_error(good: Path) -> None:
    shutil.copy(BAD / "dataset_unquoted_comma.yaml", good / "dataset.yaml")
    found = [p for p in validate(good) if p.code == "schema"]
    assert {p.message.split(":")[0] for p in found} == {"sources.0.axb", "sources.0.a0010)"}
    assert all("quoted" in p.message for p in found)
    with pytest.raises(DatasetError):
        load_dataset(good)


@pytest.mark.parametrize(
    "yaml_text, key",
    [
        ("sample_rate: 0\n", "sample_rate"),
        ("sample_rate: sixteen\n", "sample_rate"),
        ("reference_free: 'yes'\n", "reference_free"),
        ("derived_from: {dataset: x}\n", "derived_from.hash"),
    ],
)
def test_dataset_yaml_schema_names_the_key(good: Path, yaml_text: str, key: str) -> None:
    (good / "dataset.yaml").write_text("id: ds\nlanguage: en\n" + yaml_text)
    found = [p for p in validate(good) if p.code == "schema"]
    assert found and found[0].message.startswith(key), [str(p) for p in found]


def test_unknown_dataset_yaml_key_is_a_warning(good: Path) -> None:
    (good / "dataset.yaml").write_text("id: ds\nlanguage: en\nsample_rate: 16000\nlicense: MIT\n")
    found = [p for p in validate(good) if p.code == "unknown-key"]
    assert [(p.severity, "'license'" in p.message) for p in found] == [("warning", True)]


def test_mini_en_yaml_keeps_the_cmu_arctic_source_whole(mini_en: Path) -> None:
    import yaml

    sources = yaml.safe_load((mini_en / "dataset.yaml").read_text())["sources"]
    assert "CMU ARCTIC (aew, axb; arctic_a0010 speaks prompt a0009)" in [s["name"] for s in sources]
    assert not [
        p for p in validate(mini_en, check_audio=False) if p.code in ("schema", "unknown-key")
    ]


def test_metadata_with_a_utf8_bom_is_accepted(good: Path) -> None:
    raw = (good / "metadata.tsv").read_bytes()
    (good / "metadata.tsv").write_bytes(b"\xef\xbb\xbf" + raw)
    assert len(load_dataset(good)) == 3


def test_a_derived_dataset_card_validates(good: Path) -> None:
    (good / "dataset.yaml").write_text(
        "id: ds\nlanguage: en\nsample_rate: 16000\nderived_from: {dataset: mini_en, "
        "hash: 'sha256:00', spec: 'noise(snr=5)', seed: 0, code: abc, assets: def, "
        "asset_files: {}, utterances: 3}\n"
    )
    assert load_dataset(good)


def test_check_dataset_id() -> None:
    from asrbench.dataset import check_dataset_id
    from asrbench.errors import InputError

    assert check_dataset_id("librispeech_test-clean.v1") == "librispeech_test-clean.v1"
    for bad in ["../../../x", "a/b", "..", ".hidden", "", "a b", "x" * 129, "a..b"]:
        with pytest.raises(InputError, match="not allowed"):
            check_dataset_id(bad)
