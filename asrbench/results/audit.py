"""The reference audit: independent models that agree with each other and all disagree with the
reference make the reference suspect (docs/SCORING.md, "Reference audit").

Reads one dataset's stored reported cells (never reruns a model), groups the models into voters
by their weights, and flags an utterance when

- at least two voters have a hypothesis for it, every one of them is at least `ref_min` away
  from the reference (the utterance's mTER, as the cell stored it), and
- at least two of them are within `agree_max` of each other (mTER of one hypothesis against the
  other, scored by the cells' own scorer: same language, options and normalisation).

One voter per set of weights: two cards that declare a weight file with the same SHA-256 (the
`weights:` block of model.yaml, as recorded in each cell's run.json) are the same voter, whatever
runtime decodes them (whisper_tiny_en and whispercpp_tiny_en both load tiny.en's model.bin). A
model that declares no weight hashes (an API) is a voter of its own. Each voter speaks through
its member with the lowest TER on the dataset. A cell run with --force (a language its card does
not list) does not vote.

The result is one `AuditRecord`: written to `<results>/audit/<dataset>/audit.json` and, as the
`audit` block, into every audited cell's summary.json, with the TER without the suspects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asrbench.errors import InputError
from asrbench.results.records import check_format, read_record, write_record
from asrbench.results.store import AUDIT_TOP, StoredCell, scan
from asrbench.results.summary import write_summary
from scoring.metrics import Counts, Metrics, UtteranceResult

FORMAT = "asrbench-audit-v1"

RERUN = "rerun ops/audit -d DATASET"
# Defaults chosen from the planted-fault measurement (benchmarks/reference_audit.py,
# docs/MEASUREMENTS.md): every voter at least 0.2 from the reference, two within 0.2 of each
# other.
DEFAULT_REF_MIN = 0.2
DEFAULT_AGREE_MAX = 0.2
NO_REFERENCE = "no reference text (hypotheses only)"  # why a reference-free cell does not vote


class AuditUnavailable(InputError):
    """The audit cannot run on a dataset (fewer than two independent voters); says why."""


@dataclass(frozen=True)
class Thresholds:
    """`ref_min`: every voter's mTER against the reference is at least this; `agree_max`: two
    voters' mTER against each other is at most this."""

    ref_min: float = DEFAULT_REF_MIN
    agree_max: float = DEFAULT_AGREE_MAX
    voters: str = "weights"  # "family": one voter per card family as well as per weights

    def __post_init__(self) -> None:
        for name in ("ref_min", "agree_max"):
            v = getattr(self, name)
            if not isinstance(v, int | float) or not 0 <= v <= 1:
                raise InputError(f"audit threshold {name} must be between 0 and 1, not {v!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"ref_min": self.ref_min, "agree_max": self.agree_max, "voters": self.voters}


@dataclass(frozen=True)
class Voter:
    """Models that share weights: one vote, spoken by `speaker` (the lowest TER)."""

    models: tuple[str, ...]
    speaker: str

    @property
    def name(self) -> str:
        return "+".join(self.models)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "models": list(self.models), "speaker": self.speaker}


@dataclass(frozen=True)
class Suspect:
    """One flagged utterance and its evidence."""

    id: str
    ref: str
    agreeing: dict[str, str]  # speaker model -> its hypothesis (the voters that agree)
    mutual_mter: float  # the lowest mTER between two agreeing voters
    ref_mter: dict[str, float]  # every audited model -> its mTER against the reference

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def weight_hashes(card: dict[str, Any]) -> set[str]:
    """Every SHA-256 a card's `weights:` block declares (`sha256:` per file, `ggml_sha256`)."""
    w = card.get("weights")
    if not isinstance(w, dict):
        return set()
    found = {str(v) for k, v in w.items() if k.endswith("sha256") and isinstance(v, str)}
    files = w.get("sha256")
    if isinstance(files, dict):
        found |= {str(v) for v in files.values() if v}
    return found


VOTERS = ("weights", "family")  # what makes two models one voter (--voters)


def _keys(card: dict[str, Any], by: str) -> set[str]:
    """What a model shares with another voter of the same kind: its weight hashes, and with
    `family` also its card's `family:` (whisper_tiny_en and whisper_base: one training set)."""
    keys = weight_hashes(card)
    if by == "family" and card.get("family"):
        keys.add(f"family:{card['family']}")
    return keys


def group_voters(
    cards: dict[str, dict[str, Any]], ter: dict[str, float], by: str = "weights"
) -> list[Voter]:
    """Models -> voters: models whose cards share a weight hash (with `by="family"`, or a
    `family:`) are one (transitively)."""
    if by not in VOTERS:
        raise InputError(f"--voters must be one of {', '.join(VOTERS)}, not {by!r}")
    parent = {m: m for m in cards}

    def root(m: str) -> str:
        while parent[m] != m:
            m = parent[m]
        return m

    owner: dict[str, str] = {}
    for m in sorted(cards):
        for h in sorted(_keys(cards[m], by)):
            if h in owner:
                parent[root(m)] = root(owner[h])
            else:
                owner[h] = m
    groups: dict[str, list[str]] = {}
    for m in sorted(cards):
        groups.setdefault(root(m), []).append(m)
    return [
        Voter(tuple(ms), min(ms, key=lambda m: (ter.get(m, 1.0), m)))
        for ms in sorted(groups.values())
    ]


Mutual = Callable[[str, str, str], float]  # (utterance ID, hyp a, hyp b) -> mTER


def find_suspects(
    ref_mter: dict[str, dict[str, float]],
    hyps: dict[str, dict[str, str]],
    refs: dict[str, str],
    mutual: Mutual,
    th: Thresholds,
) -> list[Suspect]:
    """The core rule over plain data: `ref_mter[model][utt]` and `hyps[model][utt]` for the
    speaker models (one per voter; a model without the utterance abstains), `refs[utt]`."""
    out = []
    for uid in sorted(refs):
        present = [m for m in sorted(hyps) if uid in hyps[m] and uid in ref_mter[m]]
        if len(present) < 2 or any(ref_mter[m][uid] < th.ref_min for m in present):
            continue
        agreeing, best = _agreeing(uid, present, hyps, mutual, th.agree_max)
        if agreeing:
            out.append(
                Suspect(
                    uid,
                    refs[uid],
                    {m: hyps[m][uid] for m in agreeing},
                    round(best, 4),
                    {m: round(ref_mter[m][uid], 4) for m in present},
                )
            )
    return out


def _agreeing(
    uid: str, present: list[str], hyps: dict[str, dict[str, str]], mutual: Mutual, agree_max: float
) -> tuple[list[str], float]:
    """The voters in some pair within `agree_max` of each other, and the closest pair's mTER."""
    members: set[str] = set()
    best = 1.0
    for i, a in enumerate(present):
        for b in present[i + 1 :]:
            r = mutual(uid, hyps[a][uid], hyps[b][uid])
            best = min(best, r)
            if r <= agree_max:
                members |= {a, b}
    return sorted(members), best


def scorer_mutual(lang: str, options: dict[str, Any]) -> Mutual:
    """mTER of one hypothesis against another with the cells' scorer (same normalisation)."""
    from asrbench.scorers import get_scorer

    scorer = get_scorer(lang, options)

    def mutual(uid: str, a: str, b: str) -> float:
        (u,) = scorer.utterances({uid: a}, {uid: b})
        return Counts.one(u.sub, u.ins, u.dele, u.n_ref, u.n_hyp).mter

    return mutual


def utterance_result(rec: dict[str, Any]) -> UtteranceResult:
    """An utterances.jsonl record back as the scorer's result (its alignment columns)."""
    ops = rec["ops"]
    return UtteranceResult(
        id=rec["id"],
        ref=[o[1] for o in ops if o[0] != "I"],
        hyp=[o[2] for o in ops if o[0] != "D"],
        codes="".join(o[0] for o in ops),
        missing=bool(rec.get("missing")),
    )


def metrics_without(cell: StoredCell, ids: Iterable[str]) -> Metrics:
    """The cell's metrics (with CIs, by its own scorer's bootstrap) without utterances `ids`."""
    from asrbench.scorers import get_scorer

    drop = set(ids)
    kept = [utterance_result(r) for r in cell.records().values() if r["id"] not in drop]
    sc = cell.summary.scorer
    return get_scorer(sc.get("lang", "en"), sc.get("options") or {}).summarize(kept)


@dataclass(frozen=True)
class AuditRecord:
    """One dataset's audit: who voted, on which cells, with which thresholds, what it flagged."""

    dataset: str
    dataset_hash: str | None
    thresholds: dict[str, float]
    voters: list[dict[str, Any]]
    cells: dict[str, str]  # model -> result_key of every scored cell shown (voters or not)
    suspects: list[dict[str, Any]]
    left_out: dict[str, str] = field(default_factory=dict)  # model -> why it did not vote

    @property
    def suspect_ids(self) -> list[str]:
        return [s["id"] for s in self.suspects]

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **dataclasses.asdict(self), "n_suspects": len(self.suspects)}

    @classmethod
    def from_dict(cls, d: Any, where: str = "audit") -> AuditRecord:
        check_format(d, where, FORMAT, RERUN)
        names = [f.name for f in dataclasses.fields(cls)]
        try:
            return cls(**{k: d[k] for k in names if k in d})
        except TypeError as exc:
            raise InputError(f"{where}: malformed audit ({exc}); {RERUN}") from None


def audit_path(root: Path, dataset: str) -> Path:
    return Path(root) / AUDIT_TOP / dataset / "audit.json"


def read_audit(root: Path, dataset: str) -> AuditRecord | None:
    """The stored audit of a dataset, or None where none was run."""
    path = audit_path(root, dataset)
    return read_record(path, AuditRecord.from_dict) if path.exists() else None


def _candidates(cells: list[StoredCell]) -> tuple[list[StoredCell], dict[str, str]]:
    """The cells that may vote (scored, not forced, on the most common content, utterances and
    scorer) and why the others may not. The store shows a sample only where no full result
    exists, and samples of one selection (`--max-utts N --seed S`) vote together."""
    left_out: dict[str, str] = {}
    scored = []
    for c in cells:
        if c.summary.metrics is None or c.summary.metrics.ter is None:
            left_out[c.model] = NO_REFERENCE
        elif c.summary.forced_language:
            left_out[c.model] = "run with --force on a language its card does not list"
        elif c.utterances() is None:
            left_out[c.model] = f"per-utterance results unusable ({c.utts_problem})"
        else:
            scored.append(c)
    content = [_scored_on(c) for c in scored]
    common = max(set(content), key=lambda k: (content.count(k), str(k)), default=None)
    kept = [c for c in scored if _scored_on(c) == common]
    for c in scored:
        if _scored_on(c) != common:
            left_out[c.model] = "scored on other dataset content or scorer options"
    return kept, left_out


def _scored_on(c: StoredCell) -> tuple[str | None, str, Any]:
    """Cells that may be compared: the same content, utterances and scorer configuration."""
    return (*c.comparable_on, c.summary.scorer.get("config_hash"))


def _unavailable(dataset: str, voters: list[Voter], left_out: dict[str, str]) -> str:
    if not voters and left_out and set(left_out.values()) == {NO_REFERENCE}:
        return (
            f"audit of {dataset} cannot run: the dataset has no reference text (reference-free), "
            "so there is no reference to audit"
        )
    have = ", ".join(v.name for v in voters) or "none"
    why = "".join(f"; {m} left out: {r}" for m, r in sorted(left_out.items()))
    return (
        f"audit of {dataset} cannot run: it needs results of at least 2 models with different "
        f"weights, and has {len(voters)} ({have}){why}; run ops/benchmark -d {dataset} with "
        "another model whose card lists the dataset's language"
    )


def audit_dataset(
    root: Path, dataset: str, th: Thresholds, mutual: Mutual | None = None
) -> AuditRecord:
    """Audit one dataset's stored reported cells; AuditUnavailable with fewer than 2 voters."""
    found = scan(root, datasets=[dataset]).cells
    shown = [c for (_, d), c in sorted(found.items()) if d == dataset]
    cells, left_out = _candidates(shown)
    by_model = {c.model: c for c in cells}
    ter = {
        m: c.summary.metrics.ter
        for m, c in by_model.items()
        if c.summary.metrics and c.summary.metrics.ter is not None
    }
    voters = group_voters({m: c.card for m, c in by_model.items()}, ter, th.voters)
    if len(voters) < 2:
        raise AuditUnavailable(_unavailable(dataset, voters, left_out))
    recs = {m: c.records() for m, c in by_model.items()}
    speakers = [v.speaker for v in voters]
    hyps = {m: voiced(recs[m]) for m in speakers}
    ref_mter = {m: {u: float(r["mter"]) for u, r in recs[m].items()} for m in by_model}
    refs = {u: r["ref"] for u, r in recs[speakers[0]].items()}
    sc = by_model[speakers[0]].summary.scorer
    mutual = mutual or scorer_mutual(sc.get("lang", "en"), sc.get("options") or {})
    suspects = find_suspects({m: ref_mter[m] for m in speakers}, hyps, refs, mutual, th)
    for s in suspects:  # the evidence names every audited model, not the speakers only
        s.ref_mter.update({m: round(ref_mter[m][s.id], 4) for m in by_model if s.id in ref_mter[m]})
    first = by_model[speakers[0]].summary
    return AuditRecord(
        dataset=dataset,
        dataset_hash=first.dataset_hash,
        thresholds=th.to_dict(),
        voters=[v.to_dict() for v in voters],
        cells={c.model: c.summary.result_key for c in shown if c.summary.metrics},
        suspects=[s.to_dict() for s in suspects],
        left_out=left_out,
    )


def voiced(records: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Hypotheses a voter actually gave: a missing or failed utterance abstains."""
    return {
        u: r.get("hyp") or ""
        for u, r in records.items()
        if not r.get("missing") and not r.get("failed")
    }


def cell_block(record: AuditRecord, cell: StoredCell) -> dict[str, Any]:
    """The `audit` block of one cell's summary.json: the audit and this cell's TER without the
    suspects."""
    m = metrics_without(cell, record.suspect_ids)
    return {
        **record.to_dict(),
        "without_suspects": {
            "ter": m.ter,
            "ci": m.ter_ci.to_dict() if m.ter_ci else None,
            "n_utts": m.n_utts,
            "errors": m.sub + m.ins + m.dele,
            "n_ref": m.n_ref,
        },
    }


def write_audit(root: Path, record: AuditRecord) -> list[Path]:
    """audit.json, and the `audit` block into each audited cell's summary.json."""
    write_record(audit_path(root, record.dataset), record)
    written = []
    for (model, _), cell in sorted(scan(root, datasets=[record.dataset]).cells.items()):
        if record.cells.get(model) != cell.summary.result_key:
            continue
        summary = dataclasses.replace(cell.summary, audit=cell_block(record, cell))
        write_summary(cell.folder / "summary.json", summary)
        written.append(cell.folder / "summary.json")
    return written


def is_current(record: AuditRecord, cells: dict[str, StoredCell]) -> bool:
    """True when the audit was run over exactly the scored cells shown now (same models, same
    result keys); false after a new model's benchmark or a change of dataset or scorer."""
    scored = {m: c.summary.result_key for m, c in cells.items() if c.summary.metrics}
    return scored == record.cells
