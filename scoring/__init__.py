"""The scorer: normalisation pipeline, DAE on the hypothesis, WFST alignment, TER/mTER/CER.

A library on its own: it imports nothing from the platform (`asrbench`) and writes no files.

from scoring import Scorer, ScorerConfig
scorer = Scorer(ScorerConfig(nsw=False))  # NSW needs a cache folder: cache_dir=...
result = scorer.score({"u1": "the cat"}, {"u1": "the hat"})
result.metrics.ter, result.utterances[0].ops

The names below are loaded on first use (PEP 562), so importing a light module of the package
(`scoring.errors`, `scoring.segments`, `scoring.timed`: what dataset loading needs) does not
load the scorer, its numpy tables and its normalisation steps.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoring.errors import ScoringError
    from scoring.io import read_transcripts
    from scoring.metrics import Interval, Metrics, UtteranceResult
    from scoring.scorer import Scorer, ScorerConfig, ScoreResult
    from scoring.stats import bootstrap_ci, paired_bootstrap

_HOMES = {
    "ScoringError": "scoring.errors",
    "read_transcripts": "scoring.io",
    "Interval": "scoring.metrics",
    "Metrics": "scoring.metrics",
    "UtteranceResult": "scoring.metrics",
    "Scorer": "scoring.scorer",
    "ScorerConfig": "scoring.scorer",
    "ScoreResult": "scoring.scorer",
    "bootstrap_ci": "scoring.stats",
    "paired_bootstrap": "scoring.stats",
}

__all__ = [
    "Interval",
    "Metrics",
    "ScoreResult",
    "Scorer",
    "ScorerConfig",
    "ScoringError",
    "UtteranceResult",
    "bootstrap_ci",
    "paired_bootstrap",
    "read_transcripts",
    "score_corpus",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'scoring' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # once: later lookups find it without this hook
    return value


def score_corpus(
    refs: dict[str, str], hyps: dict[str, str], config: ScorerConfig | None = None
) -> ScoreResult:
    """One-shot helper: build a Scorer and score one corpus."""
    from scoring.scorer import Scorer

    return Scorer(config).score(refs, hyps)
