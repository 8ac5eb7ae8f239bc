"""The scorer: normalisation pipeline, DAE on the hypothesis, WFST alignment, TER/mTER/CER.

from scoring import Scorer, ScorerConfig
scorer = Scorer(ScorerConfig(nsw=False))
result = scorer.score({"u1": "the cat"}, {"u1": "the hat"})
result.metrics.ter, result.utterances[0].ops
"""

from __future__ import annotations

from scoring.errors import ScoringError
from scoring.io import read_transcripts
from scoring.metrics import UtteranceResult
from scoring.scorer import Scorer, ScorerConfig, ScoreResult
from scoring.stats import bootstrap_ci, paired_bootstrap

__all__ = [
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
