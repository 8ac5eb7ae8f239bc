"""Fixtures for the perturbation bank's tests: a few short real utterances from mini_en."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from asrbench.dataset import Dataset, load_dataset
from asrbench.settings import REPO_ROOT

SHORT_IDS = ["1089-134691-0000", "cmu_arctic_us_axb_a0004", "LJ001-0013"]


@pytest.fixture(scope="session")
def ds() -> Dataset:
    return load_dataset(REPO_ROOT / "datasets" / "mini_en")


@pytest.fixture(scope="session")
def utts(ds: Dataset) -> list:
    by_id = {u.id: u for u in ds.utterances}
    return [by_id[i] for i in SHORT_IDS]


@pytest.fixture(scope="session")
def speech(ds: Dataset, utts: list) -> tuple[np.ndarray, int]:
    """A real 2.6 s utterance (LJSpeech, female), mono float64 at 16 kHz."""
    x, sr = sf.read(str(ds.audio_path(utts[2])), dtype="float64")
    return x, sr
