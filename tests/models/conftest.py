"""Fixtures for the model zoo's tests: a few real mini_en utterances and loopback vendor stubs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from asrbench.dataset import Dataset, load_dataset

# tests/stubs/ holds the loopback vendor servers shared by these tests and ops/serve's.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from stubs.vendors import sha


@pytest.fixture(scope="session")
def mini(mini_en: Path) -> Dataset:
    return load_dataset(mini_en)


@pytest.fixture(scope="session")
def few(mini: Dataset) -> list:
    """Four short real utterances: enough to exercise concurrency, retries and a timeout."""
    return sorted(mini.utterances, key=lambda u: u.duration)[:4]


@pytest.fixture(scope="session")
def transcripts(mini: Dataset, few: list) -> dict[str, str]:
    """Audio SHA-256 -> reference text, so a stub answers each file with its own transcript."""
    return {sha(mini.audio_path(u).read_bytes()): u.text for u in few}


@pytest.fixture
def stub_factory() -> Iterator:
    made = []

    def make(cls, transcripts):
        stub = cls(transcripts)
        made.append(stub)
        return stub

    yield make
    for stub in made:
        stub.close()
