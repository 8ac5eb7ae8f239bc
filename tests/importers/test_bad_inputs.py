"""Bad input to the importers (files in tests/bad_inputs/): one clear line naming the entry and
the fix, exit 2, no traceback, and nothing left in datasets/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

BAD = Path(__file__).resolve().parent.parent / "bad_inputs"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A copy of tests/bad_inputs (importers resolve audio next to the manifest)."""
    w = tmp_path / "in"
    shutil.copytree(BAD, w)
    return w


def _fails(cli, datasets_dir: Path, *args: object) -> str:
    code, out, err = cli("import", *args)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and err.startswith("error: ")
    assert sorted(p.name for p in datasets_dir.iterdir()) == [], "nothing may be left behind"
    return err


def test_dataset_id_with_path_separators_is_refused(cli, datasets_dir, work, tmp_path):
    err = _fails(cli, datasets_dir, "folder", work, work / "table_bom.tsv", "--id", "../../../x")
    assert "'../../../x' is not allowed" in err and "--id" in err
    assert not (tmp_path / "x").exists() and not (datasets_dir.parent.parent / "x").exists()


def test_force_never_deletes_a_folder_that_is_not_a_dataset(cli, datasets_dir, work, tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    code, _, err = cli(
        "import", "folder", work, work / "table_bom.tsv", "--id", "x", "--out", precious, "--force"
    )
    assert code == 2 and "not a dataset folder" in err
    assert (precious / "keep.txt").read_text() == "mine"


def test_nemo_null_text_is_an_error_not_the_word_none(cli, datasets_dir, work):
    err = _fails(cli, datasets_dir, "nemo", work / "nemo_text_null.json", "--id", "n")
    assert "nemo_text_null.json:1: 'text' is null" in err and "string" in err


def test_nemo_duration_that_is_not_a_number(cli, datasets_dir, work):
    err = _fails(cli, datasets_dir, "nemo", work / "nemo_duration_abc.json", "--id", "n")
    assert "nemo_duration_abc.json:1: 'duration' is 'abc'" in err and "seconds" in err


def test_manifest_pointing_outside_its_folder(cli, datasets_dir, work):
    err = _fails(cli, datasets_dir, "nemo", work / "nemo_outside_folder.json", "--id", "n")
    assert "nemo_outside_folder.json:1: '../../../etc/hosts' points outside" in err
    assert "--audio-root" in err


def test_segment_beyond_the_end_of_its_recording(cli, datasets_dir, work):
    err = _fails(cli, datasets_dir, "nemo", work / "nemo_segment_beyond_end.json", "--id", "n")
    assert "nemo_segment_beyond_end.json:1: clip_00000200: segment 0.200-5.200 s" in err
    assert "lies outside its recording" in err


def test_rate_zero(cli, datasets_dir, work):
    err = _fails(
        cli, datasets_dir, "folder", work, work / "table_bom.tsv", "--id", "r", "--rate", "0"
    )
    assert "--rate 0" in err and "--rate 16000" in err


def test_latin1_table(cli, datasets_dir, work):
    err = _fails(cli, datasets_dir, "folder", work, work / "table_latin1.tsv", "--id", "l")
    assert "table_latin1.tsv:2: not valid UTF-8" in err and "iconv" in err
    assert len(err.strip().splitlines()) == 1


def test_audio_that_fails_to_decode(cli, datasets_dir, work):
    (work / "t.tsv").write_text("file\ttext\nclip.flac\tgood\nnot_audio.wav\tbad\n")
    err = _fails(cli, datasets_dir, "folder", work, work / "t.tsv", "--id", "d")
    assert "t.tsv:3" in err and "not_audio.wav" in err


def test_utf8_bom_table_is_accepted(cli, datasets_dir, work):
    code, out, err = cli("import", "folder", work, work / "table_bom.tsv", "--id", "bom")
    assert code == 0, err
    from asrbench.dataset import load_dataset

    ds = load_dataset(datasets_dir / "bom")
    assert [u.text for u in ds] == ["author of the danger trail"]


def test_punctuation_only_reference_imports_with_a_warning(cli, datasets_dir, work):
    code, out, err = cli("import", "folder", work, work / "table_punctuation_only.tsv", "--id", "p")
    assert code == 0, err
    from asrbench.dataset import load_dataset

    ds = load_dataset(datasets_dir / "p")
    assert [p.code for p in ds.problems] == ["empty-text"]
