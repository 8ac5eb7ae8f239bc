"""The commands run against the shared bad-input corpus (tests/bad_inputs/) and the bad
options users type: one clear line naming the input and the fix, exit status 2, nothing
written. The importers and the validator are run against the same corpus in
tests/importers/test_bad_inputs.py and tests/test_dataset.py."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from asrbench.dataset import load_dataset, write_dataset
from asrbench.settings import REPO_ROOT
from tests.benchmark.conftest import make_fake_model

BAD = REPO_ROOT / "tests" / "bad_inputs"


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    return make_fake_model(tmp_path / "models", "fake_ok")


def _dataset_with(tmp_path: Path, mini_en: Path, bad_file: str) -> Path:
    """mini_en's first two utterances, the second replaced by a bad audio file."""
    src = load_dataset(mini_en)
    root = tmp_path / "ds"
    (root / "audio").mkdir(parents=True)
    utts = src.utterances[:2]
    shutil.copy(mini_en / utts[0].audio, root / utts[0].audio)
    shutil.copy(BAD / bad_file, root / "audio" / bad_file)
    utts = [utts[0], utts[1].replaced(audio=f"audio/{bad_file}", duration=0.0)]
    write_dataset(root, {**src.meta, "id": "ds"}, src.columns, utts)
    return root


@pytest.mark.parametrize(
    "bad_file, code", [("zero_frames.wav", "empty-audio"), ("mp3_bytes_named.wav", "not-wav-pcm")]
)
def test_benchmark_refuses_bad_audio_before_running(
    bad_file, code, cli, fake, tmp_path, mini_en
) -> None:
    ds = _dataset_with(tmp_path, mini_en, bad_file)
    rc, out, err = cli(
        "benchmark",
        "-m",
        fake,
        "-d",
        ds,
        "--runner",
        "local",
        "--results",
        tmp_path / "r",
        "--cache",
        tmp_path / "c",
        "--no-progress",
    )
    assert rc == 2 and code in err and "metadata.tsv:3" in err, err
    assert "Traceback" not in err and not (tmp_path / "r" / "fake_ok").exists()
    rc, out, err = cli("validate", ds)
    assert rc == 2 and code in err


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--max-utts", "0"], "--max-utts 0: give at least 1"),
        (["--max-utts", "-3"], "--max-utts -3: give at least 1"),
        (["--jobs", "0"], "--jobs 0: give at least 1"),
        (["--score-opt", "lang=xx"], "comes from the dataset's language"),
        (["--score-opt", "nonsense=1"], "unknown scorer option"),
        (["--score-opt", "nsw"], "--score-opt 'nsw': expected KEY=VALUE"),
        (["--env", "A=1", "--env", "A=2"], "--env A given twice"),
        (["--max-failed", "lots"], "--max-failed 'lots'"),
    ],
)
def test_benchmark_bad_options_are_one_line_errors(args, expected, cli, fake, tmp_path) -> None:
    rc, out, err = cli(
        "benchmark",
        "-m",
        fake,
        "-d",
        "mini_en",
        "--runner",
        "local",
        "--results",
        tmp_path / "r",
        "--cache",
        tmp_path / "c",
        "--no-progress",
        *args,
    )
    assert rc == 2 and expected in err, err
    assert "Traceback" not in err and not (tmp_path / "r" / "fake_ok").exists()


def _ref(tmp_path: Path) -> Path:
    ref = tmp_path / "ref.tsv"
    ref.write_text("u1\tthe cat sat\nu2\ton the mat\n")
    return ref


def test_score_bad_inputs(cli, tmp_path) -> None:
    ref = _ref(tmp_path)
    taken = tmp_path / "a-file"
    taken.write_text("x")
    rc, out, err = cli("score", ref, ref, "-o", taken)
    assert rc == 2 and "is a file; give a folder" in err
    rc, out, err = cli("score", ref, BAD / "table_latin1.tsv", "-o", tmp_path / "o1")
    assert rc == 2 and "table_latin1.tsv:2" in err and "UTF-8" in err
    stranger = tmp_path / "hyp.tsv"
    stranger.write_text("u1\tthe cat sat\nu9\tnot in the reference\n")
    rc, out, err = cli("score", ref, stranger, "-o", tmp_path / "o2")
    assert rc == 2 and "u9" in err and "not in the reference" in err
    dup = tmp_path / "dup.tsv"
    dup.write_text("u1\ta\nu1\tb\n")
    rc, out, err = cli("score", ref, dup, "-o", tmp_path / "o3")
    assert rc == 2 and "dup.tsv:2" in err and "duplicate" in err
    rc, out, err = cli("score", ref, tmp_path / "missing.tsv", "-o", tmp_path / "o4")
    assert rc == 2 and "missing.tsv" in err
    for o in ("o1", "o2", "o3", "o4"):
        assert not (tmp_path / o).exists()
    assert "Traceback" not in err


def test_score_outputs_are_readable_by_others(cli, tmp_path) -> None:
    ref = _ref(tmp_path)
    rc, out, err = cli("score", ref, ref, "-o", tmp_path / "out", "--no-nsw", "--reports", "all")
    assert rc == 0, err
    for f in (tmp_path / "out").iterdir():
        mode = stat.S_IMODE(f.stat().st_mode)
        assert mode & 0o044 == 0o044, (f.name, oct(mode))  # not 0600
