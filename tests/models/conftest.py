"""Fixtures for the model zoo's tests: loopback vendor stubs (`mini` and `few`, real mini_en
utterances, are in tests/conftest.py: ops/serve's tests use them too)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from asrbench.dataset import Dataset

# tests/stubs/ holds the loopback vendor servers shared by these tests and ops/serve's.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from stubs.vendors import sha


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
