"""`summary.json`: the one schema every scoring command writes (docs/RESULTS.md documents it).

`ops/benchmark`, `ops/score`, `ops/robustness` (through the benchmark) and the coming fairness
and report commands all write or read this object; a reader that knows one summary.json knows
them all. Fields that do not apply to a producer are present and null (e.g. `model` for
`ops/score`). Reading checks the format and says which file is broken or from which version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, Unpack

from asrbench.identity import digest
from asrbench.results.record_io import RecordError, Selection, read_record, write_record
from scoring.metrics import Metrics

FORMAT = "asrbench-summary-v2"
OLDER_FORMATS = ("asrbench-summary-v1",)


class SummaryError(RecordError):
    """A summary.json that cannot be read: truncated, not JSON, or of another schema."""


@dataclass(frozen=True)
class Summary:
    """One scored result: its identity, what was scored, the metrics, failures and timing."""

    producer: str  # "benchmark" or "score"
    result_key: str  # identity of the cell: hypotheses x utterances x scorer
    metrics: Metrics | None  # None for a reference-free dataset: hypotheses, no error rate
    selection: Selection
    scorer: dict[str, Any]  # {"config_hash", "lang", "unit", "steps"}
    model: str | None = None
    model_identity: str | None = None
    runner: str | None = None
    dataset: str | None = None
    dataset_hash: str | None = None
    hyps_key: str | None = None  # the raw-hypothesis cache entry
    sources: dict[str, Any] | None = None  # ops/score: the files scored, with their SHA-256
    failed: list[dict[str, str]] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    timing: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None  # API models: estimated USD from cost.tsv
    # utterances whose hypothesis holds a declared secret's value (kept as written, flagged);
    # written only when above 0, so every other summary.json keeps its bytes
    n_secret_in_hyp: int = 0
    # run with --force on a dataset whose language the model's card does not list; written
    # only when true, so every other summary.json keeps its bytes
    forced_language: bool = False
    # ops/score session mode (cpWER, tcpWER, session WER): the metric, its collar and the
    # sessions counted (scoring.meeting.MeetingScore.describe); written only when set
    session: dict[str, Any] | None = None
    # ops/benchmark on a long-form dataset: each session metric its hypothesis supports
    # (cpWER and tcpWER with speakers, else ORC-WER and session WER), keyed by metric, each
    # `session`'s description plus `metrics` (asrbench.benchmark.sessions); only when set
    session_metrics: dict[str, Any] | None = None
    # the same per value of each column the dataset declares in `session_groups:` (column ->
    # value -> {"sessions", "metrics"}; asrbench.benchmark.sessions); only when set
    session_groups: dict[str, Any] | None = None
    # a non-speech dataset (dataset.yaml `nonspeech: true`): words per minute and share of clips
    # with output (scoring.hallucination.NonSpeechFigures.to_dict); written only when set
    hallucination: dict[str, Any] | None = None
    # ops/audit: the dataset's reference audit (asrbench/results/audit.py) and this cell's TER
    # without the suspects; written only when set
    audit: dict[str, Any] | None = None
    # ops/score with NLP references or a keyword list: entity classes, number values, B-WER
    # and U-WER (scoring.entities.describe, its own `format`); written only when set
    entities: dict[str, Any] | None = None
    # ops/score --formatting: punctuation and capitalisation counts on the texts as written,
    # and the formatted WER (scoring.formatting); written only when set
    formatting: dict[str, Any] | None = None
    # ops/benchmark on a dataset with NLP references: its misrecognised entity instances,
    # worst first (asrbench.entity_scoring.worst_entities); written only when set
    worst_entities: dict[str, Any] | None = None

    @property
    def reference_free(self) -> bool:
        # session mode always has a reference; DER/JER are seconds, kept in `session`, not
        # in the word `metrics`
        return self.metrics is None and self.session is None

    @property
    def n_failed(self) -> int:
        return len(self.failed)

    def to_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = (
            {"n_secret_in_hyp": self.n_secret_in_hyp} if self.n_secret_in_hyp else {}
        )
        if self.forced_language:
            extra["forced_language"] = True
        if self.session is not None:
            extra["session"] = self.session
        if self.session_metrics is not None:
            extra["session_metrics"] = self.session_metrics
        if self.session_groups is not None:
            extra["session_groups"] = self.session_groups
        if self.hallucination is not None:
            extra["hallucination"] = self.hallucination
        if self.audit is not None:
            extra["audit"] = self.audit
        if self.entities is not None:
            extra["entities"] = self.entities

        if self.formatting is not None:
            extra["formatting"] = self.formatting
        if self.worst_entities is not None:
            extra["worst_entities"] = self.worst_entities
        return {
            **extra,
            "format": FORMAT,
            "producer": self.producer,
            "result_key": self.result_key,
            "model": self.model,
            "model_identity": self.model_identity,
            "runner": self.runner,
            "dataset": self.dataset,
            "dataset_hash": self.dataset_hash,
            "hyps_key": self.hyps_key,
            "sources": self.sources,
            "selection": self.selection.to_dict(),
            "scorer": self.scorer,
            "metrics": self.metrics.to_dict() if self.metrics else None,
            "reference_free": self.reference_free,
            "failed": self.failed,
            "n_failed": self.n_failed,
            "reports": self.reports,
            "timing": self.timing,
            "cost": self.cost,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "summary") -> Summary:
        fmt = d.get("format") if isinstance(d, dict) else None
        if fmt in OLDER_FORMATS:
            raise SummaryError(
                f"{where}: written by an older asrbench ({fmt}); rerun the "
                "command that produced it (hypotheses are cached, so a "
                "benchmark rerun only re-scores)"
            )
        if fmt != FORMAT:
            raise SummaryError(
                f"{where}: not an asrbench summary (format {fmt!r}, expected {FORMAT!r})"
            )
        try:
            return cls(
                producer=d["producer"],
                result_key=d["result_key"],
                metrics=Metrics.from_dict(d["metrics"]) if d["metrics"] is not None else None,
                selection=Selection.from_dict(d["selection"]),
                scorer=d["scorer"],
                model=d.get("model"),
                model_identity=d.get("model_identity"),
                runner=d.get("runner"),
                dataset=d.get("dataset"),
                dataset_hash=d.get("dataset_hash"),
                hyps_key=d.get("hyps_key"),
                sources=d.get("sources"),
                failed=list(d.get("failed") or []),
                reports=list(d.get("reports") or []),
                timing=d.get("timing"),
                cost=d.get("cost"),
                n_secret_in_hyp=int(d.get("n_secret_in_hyp") or 0),
                forced_language=d.get("forced_language") is True,
                session=d.get("session"),
                session_metrics=d.get("session_metrics"),
                session_groups=d.get("session_groups"),
                hallucination=d.get("hallucination"),
                audit=d.get("audit"),
                entities=d.get("entities"),
                formatting=d.get("formatting"),
                worst_entities=d.get("worst_entities"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SummaryError(
                f"{where}: malformed summary ({type(exc).__name__}: {exc}); "
                "rerun the command that produced it"
            ) from None


class Details(TypedDict, total=False):
    """The fields of a Summary that describe a result without being part of its identity."""

    model: str | None
    model_identity: str | None
    runner: str | None
    dataset: str | None
    dataset_hash: str | None
    hyps_key: str | None
    sources: dict[str, Any] | None
    failed: list[dict[str, str]]
    reports: list[str]
    timing: dict[str, Any] | None
    cost: dict[str, Any] | None
    n_secret_in_hyp: int
    forced_language: bool
    session: dict[str, Any] | None
    session_metrics: dict[str, Any] | None
    session_groups: dict[str, Any] | None
    hallucination: dict[str, Any] | None
    audit: dict[str, Any] | None
    entities: dict[str, Any] | None

    formatting: dict[str, Any] | None
    worst_entities: dict[str, Any] | None


def result_key(hyps: str, data: str, selection: Selection, scorer: dict[str, Any]) -> str:
    """The identity of a result: these hypotheses x these utterances x this scorer."""
    return "sha256:" + digest(
        "result", hyps=hyps, dataset=data, selection=selection.to_dict(), scorer=scorer
    )


def new_summary(
    producer: str,
    metrics: Metrics | None,
    selection: Selection,
    scorer: dict[str, Any],
    *,
    hyps: str,
    data: str,
    **details: Unpack[Details],
) -> Summary:
    """A Summary with its result key: the one place both are built (`ops/benchmark` and
    `ops/score`). `hyps` and `data` name what was scored by content: the raw-hypothesis
    cache key and the dataset hash (benchmark), or the hypothesis and reference files'
    SHA-256 (score); `scorer` is the scorer identity (`scorer_identity(...).to_dict()`)."""
    return Summary(
        producer=producer,
        result_key=result_key(hyps, data, selection, scorer),
        metrics=metrics,
        selection=selection,
        scorer=scorer,
        **details,
    )


def write_summary(path: Path, summary: Summary) -> None:
    """Write summary.json atomically (sorted keys: byte-identical for the same inputs)."""
    write_record(path, summary)


def read_summary(path: Path) -> Summary:
    """Read and check a summary.json; SummaryError names the file and what is wrong."""
    try:
        return read_record(Path(path), Summary.from_dict)
    except SummaryError:
        raise
    except RecordError as exc:  # missing, unreadable, not JSON
        raise SummaryError(str(exc)) from None


@dataclass(frozen=True)
class SessionRate:
    """One stored session metric as a rate with its interval (None: undefined)."""

    label: str  # as printed: cpWER, DER, ...
    rate: float | None
    low: float | None
    high: float | None


def session_rate(metric: str, entry: Mapping[str, Any]) -> SessionRate | None:
    """The rate and interval of one `session_metrics` entry (None where it was skipped): the
    one reading of both entry shapes, diarization's and the word metrics'."""
    from scoring.diarization import DIARIZATION_FORMAT  # imported here: see stored_session_parts
    from scoring.meeting import SESSION_METRICS

    if entry.get("format") == DIARIZATION_FORMAT:
        ci = (entry.get("intervals") or {}).get(metric) or {}
        return SessionRate(metric.upper(), entry.get(metric), ci.get("low"), ci.get("high"))
    if "skipped" in entry:
        return None
    m = Metrics.from_dict(entry["metrics"])
    ci_ = m.ter_ci
    label = SESSION_METRICS[metric].label
    return SessionRate(label, m.ter, ci_.low if ci_ else None, ci_.high if ci_ else None)


def session_order() -> tuple[str, ...]:
    """How session metrics are shown, in this order: the registry's WERs with plain session WER
    last (the speaker-attributed ones first), then who spoke when."""
    from scoring.diarization import DIARIZATION_METRICS  # imported here: see stored_session_parts
    from scoring.meeting import SESSION_METRICS

    return (*sorted(SESSION_METRICS, key=lambda m: m == "wer"), *DIARIZATION_METRICS)


def session_figures(entries: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict] | None:
    """Stored session metrics (summary.json `session_metrics`) as {metric: {label, rate, low,
    high, n_sessions}} (intervals resample sessions), or {metric: {label, skipped}}; None
    without any: the one shape the leaderboard and ops/robustness show."""
    if not entries:
        return None
    out: dict[str, dict] = {}
    for metric, entry in entries.items():
        got = session_rate(metric, entry)
        if got is None:
            out[metric] = {"label": metric, "skipped": entry.get("skipped")}
            continue
        out[metric] = {
            "label": got.label,
            "rate": got.rate,
            "low": got.low,
            "high": got.high,
            "n_sessions": entry.get("n_sessions"),
        }
    return out


def session_figure_text(fig: Mapping[str, Any] | None) -> str:
    """One of `session_figures` as shown: `12.28 [10.2, 13.7]` (%, its interval), `-` where
    the hypothesis does not support the metric, `not scored` where it refused the input."""
    if fig is None:
        return "-"
    if "skipped" in fig:
        return "not scored"
    if fig.get("rate") is None:
        return "undefined"
    low, high = fig.get("low"), fig.get("high")
    ci = f" [{100 * low:.1f}, {100 * high:.1f}]" if low is not None and high is not None else ""
    return f"{100 * fig['rate']:.2f}{ci}"


def _diarization_part(metric: str, e: Mapping[str, Any]) -> str:
    """`DER 12.34% (missed 1.2 s, false alarm 0.5 s, confusion 3.1 s of 40.0 s, collar 0 s)`."""
    value = e.get(metric)
    rate = f"{100 * value:.2f}%" if value is not None else "undefined"
    if metric == "jer":
        return f"JER {rate} ({e['n_sessions']} session(s), collar {e['collar']:g} s)"
    return (
        f"DER {rate} (missed {e['missed']:.1f} s, false alarm {e['false_alarm']:.1f} s, "
        f"confusion {e['confusion']:.1f} s of {e['total']:.1f} s, collar {e['collar']:g} s)"
    )


def stored_session_parts(entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each stored session metric (summary.json `session_metrics`) in words, `cpWER 12.20% (77
    errors in 631 words)` (tcpWER with its collar), or why it was not scored: the one wording
    of `ops/benchmark`'s line and the report's cell page (a stored record's words: here, not
    in the scorer, so the report reads no scoring code)."""
    # Imported here: only stored session metrics need them, and their modules (numpy's
    # solvers, the session aligner) are ~10 ms of every `ops/score` start-up otherwise.
    from scoring.diarization import DIARIZATION_FORMAT
    from scoring.meeting import SESSION_METRICS

    parts = []
    for metric, entry in entries.items():
        if entry.get("format") == DIARIZATION_FORMAT:
            parts.append(_diarization_part(metric, entry))
            continue
        label = SESSION_METRICS[metric].label
        if "skipped" in entry:
            parts.append(f"{label} not scored ({entry['skipped']})")
            continue
        m = Metrics.from_dict(entry["metrics"])
        rate = f"{100 * m.ter:.2f}%" if m.ter is not None else "undefined"
        collar = f", collar {entry['collar']:g} s" if entry.get("collar") is not None else ""
        parts.append(f"{label} {rate} ({m.errors} errors in {m.n_ref} {m.tokens_name}{collar})")
    return parts
