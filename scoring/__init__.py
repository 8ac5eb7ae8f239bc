"""The scorer: normalisation pipeline, DAE on the hypothesis, WFST alignment, TER/mTER/CER.

A library on its own: it imports nothing from the platform (`asrbench`) and writes no files.

from scoring import Scorer, ScorerConfig
scorer = Scorer(ScorerConfig(nsw=False))  # NSW needs a cache folder: cache_dir=...
result = scorer.score({"u1": "the cat"}, {"u1": "the hat"})
result.metrics.ter, result.utterances[0].ops
"""

from __future__ import annotations

from scoring.errors import ScoringError
from scoring.io import read_transcripts
from scoring.metrics import Interval, Metrics, UtteranceResult
from scoring.scorer import Scorer, ScorerConfig, ScoreResult
from scoring.stats import bootstrap_ci, paired_bootstrap

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


def score_corpus(
    refs: dict[str, str], hyps: dict[str, str], config: ScorerConfig | None = None
) -> ScoreResult:
    """One-shot helper: build a Scorer and score one corpus."""
    return Scorer(config).score(refs, hyps)
