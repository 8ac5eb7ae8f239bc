"""Fixtures for the scorer tests: one Scorer without NSW (fast) and one NSW step for the session."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring import Scorer, ScorerConfig


@pytest.fixture(scope="session")
def scorer() -> Scorer:
    return Scorer(ScorerConfig(nsw=False, bootstrap=200))


@pytest.fixture(scope="session")
def plain_scorer() -> Scorer:
    """Only CASE and PUNC: what is scored is what is written."""
    return Scorer(ScorerConfig(nsw=False, itj=False, ukus=False, dae=False, bootstrap=50))


@pytest.fixture(scope="session")
def cache_dir() -> Path:
    """The checkout's cache, where the NSW grammars and results persist between runs."""
    from asrbench.settings import settings

    return settings().cache


@pytest.fixture(scope="session")
def nsw_step(cache_dir: Path):
    """The NSW step, sharing the persistent grammar and result cache of the checkout."""
    from scoring.normalize import Nsw

    return Nsw(cache_dir)
