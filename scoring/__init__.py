"""The scorer: normalisation pipeline, DAE on the hypothesis, WFST alignment, TER/mTER/CER.

A library on its own: it imports nothing from the platform (`asrbench`) and writes no files.

from scoring import wer, cer, score_corpus
wer("I paid $5.", "i paid five dollars")        # 0.0: the default pipeline, NSW included
wer(["the cat", "a dog"], ["the hat", "a dog"])  # a corpus: pooled errors / reference words
result = score_corpus(["the cat"], ["the hat"])   # the rich result: counts, CI, alignments
result.metrics.sub, result.metrics.ter_ci, result.utterances[0].ops

from scoring import Scorer, ScorerConfig          # one Scorer for many calls, options named
scorer = Scorer(ScorerConfig(lang="de", cache_dir="/tmp/nsw"))
result = scorer.score({"u1": "die Katze"}, {"u1": "die Ratte"})

NSW keeps nemo's grammars and its results under `cache_dir`; by default the checkout's `.cache`
(the platform's), else `~/.cache/asrbench` (`scoring.normalize.nsw.default_cache_dir`).

The names below are loaded on first use (PEP 562), so importing a light module of the package
(`scoring.errors`, `scoring.segments`, `scoring.timed`: what dataset loading needs) does not
load the scorer, its numpy tables and its normalisation steps.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
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
    "cer",
    "paired_bootstrap",
    "read_transcripts",
    "score_corpus",
    "wer",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'scoring' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # once: later lookups find it without this hook
    return value


Texts = Mapping[str, str] | Sequence[str]


def _pairs(refs: Texts | str, hyps: Texts | str) -> tuple[dict[str, str], dict[str, str]]:
    """Both sides as {ID: text}: a mapping as it is, a list by position, a string as one."""
    from scoring.errors import ScoringError

    if isinstance(refs, str) != isinstance(hyps, str) or isinstance(refs, Mapping) != isinstance(
        hyps, Mapping
    ):
        raise ScoringError(
            "give the reference and the hypothesis in the same form: two strings, two lists "
            f"or two dicts by utterance ID (got {type(refs).__name__} and {type(hyps).__name__})"
        )
    if isinstance(refs, Mapping) and isinstance(hyps, Mapping):
        return dict(refs), dict(hyps)
    ref_list = [refs] if isinstance(refs, str) else list(refs)
    hyp_list = [hyps] if isinstance(hyps, str) else list(hyps)
    if len(ref_list) != len(hyp_list):
        raise ScoringError(
            f"{len(ref_list)} references but {len(hyp_list)} hypotheses: the lists pair by "
            "position, so they must be as long (a missing hypothesis is an empty string)"
        )
    ids = [str(i) for i in range(len(ref_list))]
    return dict(zip(ids, ref_list, strict=True)), dict(zip(ids, hyp_list, strict=True))


@functools.lru_cache(maxsize=8)
def _scorer(options: tuple[tuple[str, Any], ...]) -> Scorer:
    # One Scorer per options: NSW loads nemo's grammars once (seconds), not on every call.
    from scoring.scorer import Scorer, ScorerConfig

    return Scorer(ScorerConfig(**dict(options)))


def score_corpus(
    refs: Texts | str, hyps: Texts | str, config: ScorerConfig | None = None, **options: Any
) -> ScoreResult:
    """Score a corpus with the default pipeline: the rich result (`.metrics` with the counts,
    TER, mTER and the bootstrap CI; `.utterances` with each alignment).

    `refs` and `hyps`: two dicts by utterance ID, two lists paired by position (IDs "0",
    "1", ...) or two strings. `options` are `ScorerConfig` fields (`lang="de"`, `nsw=False`,
    `unit="char"`); or pass a whole `config`.
    """
    from scoring.errors import ScoringError

    if config is not None and options:
        raise ScoringError("pass either a ScorerConfig or options, not both")
    ref_map, hyp_map = _pairs(refs, hyps)
    if config is not None:
        from scoring.scorer import Scorer

        return Scorer(config).score(ref_map, hyp_map)
    return _scorer(tuple(sorted(options.items()))).score(ref_map, hyp_map)


def _rate(refs: Texts | str, hyps: Texts | str, options: dict[str, Any]) -> float:
    from scoring.errors import ScoringError

    options.setdefault("bootstrap", 0)  # a number, not an interval: no resampling
    ter = score_corpus(refs, hyps, **options).metrics.ter
    if ter is None:
        raise ScoringError("the reference has no words after normalisation: the rate is undefined")
    return ter


def wer(reference: Texts | str, hypothesis: Texts | str, **options: Any) -> float:
    """The word error rate of a hypothesis (a string, or a corpus as lists or dicts: errors
    pooled over the corpus), through the default normalisation (CASE, PUNC, ITJ, UK-US, NSW,
    DAE...); as `jiwer.wer`, but `"I paid $5."` and `"i paid five dollars"` match.
    `options`: `ScorerConfig` fields (`lang="fr"`, `nsw=False`...). The unit is the language's
    (`scoring.languages`): words, except Chinese (characters and words) and the languages
    written without spaces (ja, th...: characters)."""
    return _rate(reference, hypothesis, dict(options))


def cer(reference: Texts | str, hypothesis: Texts | str, **options: Any) -> float:
    """The character error rate (every character, spaces between words included, as
    `jiwer.cer`) after the same normalisation as `wer`."""
    return _rate(reference, hypothesis, {**options, "unit": "char"})
