"""Issue 30 item 11: a bad option, model or dataset of a grid command fails before anything is
derived or run: one line, exit status 2, no traceback, nothing written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT

ROBUSTNESS = [
    "robustness",
    "-m",
    "whisper_tiny_en",
    "-d",
    "mini_en",
    "-g",
    "gaussian_noise:2",
    "--utts",
    "2",
]
FAIRNESS = [
    "fairness",
    "-m",
    "whisper_tiny_en",
    "-d",
    "mini_en",
    "--by",
    "SPEAKER",
    "-q",
    "-t",
    "gaussian_noise:2",
    "--per-speaker",
    "1",
]


def _ops(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO_ROOT / "ops" / args[0]), *args[1:], "--results", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ASRBENCH_CACHE": str(tmp_path / "c")},
    )


def _nothing_done(tmp_path: Path) -> None:
    assert not (tmp_path / "c" / "perturb").exists()  # no condition was derived
    assert not (tmp_path / "c" / "hyps").exists()  # no model ran
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("*.json"))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([*ROBUSTNESS, "--normaliser", "foo"], "--normaliser 'foo': unknown"),
        ([*ROBUSTNESS, "--normaliser", "model:nosuch"], "--normaliser model:nosuch"),
        ([*ROBUSTNESS, "--normaliser", "model:"], "--normaliser model:"),
        ([*ROBUSTNESS, "-m", "nosuch_model"], "nosuch_model"),
        ([*ROBUSTNESS, "-j", "0"], "--jobs 0"),
        ([*ROBUSTNESS[:-1], "nosuch_utt"], "--utts: not in dataset mini_en: nosuch_utt"),
        (["robustness", "-m", "whisper_tiny_en", "-d", "nosuch_dataset"], "nosuch_dataset"),
        ([*FAIRNESS, "-m", "nosuch_model"], "nosuch_model"),
        ([*FAIRNESS, "-j", "0"], "--jobs 0"),
        (
            ["fairness", "-m", "whisper_tiny_en", "-d", "nosuch_dataset", "--by", "SPEAKER"],
            "nosuch_dataset",
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_bad_grid_request_fails_before_anything_is_derived(
    tmp_path: Path, args: list[str], says: str
) -> None:
    p = _ops(tmp_path, *args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert says in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert "derive" not in p.stderr  # no progress line of the derivation
    _nothing_done(tmp_path)
