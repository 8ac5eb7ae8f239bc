"""Every JSON record the platform writes, read and written in one place (docs/RESULTS.md).

Each record is a frozen dataclass with a format tag that carries its version, one `to_dict`
and one `from_dict` (which refuses an unknown format, and reads the older versions it knows),
in the manner of `summary.py`'s `Summary` (which uses the machinery below too):

    run.json          RunRecord          asrbench-run-v2         provenance of one result cell
    robustness.json   RobustnessRecord   asrbench-robustness-v2  ops/robustness (v1: no tag)
    fairness.json     FairnessRecord     asrbench-fairness-v1    ops/fairness
    stream.json       StreamRecord       asrbench-stream-v4      ops/stream (v1-v3 read)
    capacity.json     CapacityRecord     asrbench-stream-capacity-v1  ops/stream --capacity
    ablation.json     AblationRecord     asrbench-ablation-v1    a cell's scorer ablation
    timeline.json     TimelineRecord     asrbench-timeline-v1    a long-form cell's timelines

`write_record` writes one atomically with sorted keys (the same record gives the same bytes);
`read_record` reads one and raises `RecordError`, one line naming the file and what to do.
Readable views (robustness.md, fairness.md) are made from the record, never stored in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

# The machinery and Selection live in record_io (summary.json needs only them); all are here.
from asrbench.results.record_io import Record as Record
from asrbench.results.record_io import RecordError, Selection, read_record, write_record
from asrbench.results.record_io import read_json as read_json

RUN_FORMAT = "asrbench-run-v2"
ROBUSTNESS_FORMAT = "asrbench-robustness-v2"
FAIRNESS_FORMAT = "asrbench-fairness-v1"


def check_format(d: Any, where: str, current: str, rerun: str, older: tuple[str, ...] = ()) -> str:
    """The record's format tag: `current` or one of the `older` ones this version reads;
    anything else is refused in one line naming the file and what to do (`rerun`)."""
    if not isinstance(d, dict):
        raise RecordError(f"{where}: not a JSON object; {rerun}")
    fmt = d.get("format")
    if fmt == current or fmt in older:
        return str(fmt)
    what = current.rsplit("-v", 1)[0]
    if isinstance(fmt, str) and fmt.startswith(what + "-v"):
        raise RecordError(
            f"{where}: format {fmt!r}, expected {current!r} (written by another asrbench "
            f"version); {rerun}"
        )
    raise RecordError(
        f"{where}: not an {what} record (format {fmt!r}, expected {current!r}); {rerun}"
    )


def _malformed(where: str, exc: Exception, rerun: str) -> RecordError:
    return RecordError(f"{where}: malformed ({type(exc).__name__}: {exc}); {rerun}")


def _dict(d: dict[str, Any], key: str, required: bool = False) -> dict[str, Any]:
    """`d[key]`, an object (`{}` when absent or null, unless `required`)."""
    v = d[key] if required else d.get(key)
    if v is None and not required:
        return {}
    if not isinstance(v, dict):
        raise TypeError(f"`{key}` is {type(v).__name__}, expected an object")
    return v


def _list(d: dict[str, Any], key: str, required: bool = False) -> list[Any]:
    """`d[key]`, a list (`[]` when absent or null, unless `required`)."""
    v = d[key] if required else d.get(key)
    if v is None and not required:
        return []
    if not isinstance(v, list):
        raise TypeError(f"`{key}` is {type(v).__name__}, expected a list")
    return v


class _Fields:
    """`to_dict` for a section whose keys are its fields, in their declared order (the order its
    JSON always had) and with their values as they are: one writer, not a dict per class."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class Provenance(_Fields):
    """What ran, where and when: the same keys in robustness.json and fairness.json (run.json
    keeps them at its top level and its `times`)."""

    command: list[str]
    git: dict[str, Any]  # commit, dirty, dirty_files
    # hostname, platform, machine, cpus, cpu_model, isa_level (asrbench.host), docker
    host: dict[str, Any]
    packages: dict[str, str]  # python and the platform's packages, by version
    started: str  # UTC, ISO 8601
    ended: str
    wall_s: float

    @classmethod
    def from_dict(cls, d: Any) -> Provenance:
        if d is None:
            d = {}  # a record written without one: its fields empty
        if not isinstance(d, dict):
            raise TypeError(f"`provenance` is {type(d).__name__}, expected an object")
        return cls(
            command=[str(c) for c in _list(d, "command")],
            git=_dict(d, "git"),
            host=_dict(d, "host"),
            packages=_dict(d, "packages"),
            started=str(d.get("started") or ""),
            ended=str(d.get("ended") or ""),
            wall_s=float(d.get("wall_s") or 0.0),
        )


RUN_RERUN = "rerun the benchmark to record it (hypotheses are cached)"


def _str(d: dict[str, Any], key: str) -> str:
    v = d.get(key)
    return "" if v is None else str(v)


def _opt_str(d: dict[str, Any], key: str) -> str | None:
    v = d.get(key)
    return None if v is None else str(v)


def _num(d: dict[str, Any], key: str) -> float:
    v = d.get(key)
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise TypeError(f"`{key}` is {type(v).__name__}, expected a number")
    return v


def _int(d: dict[str, Any], key: str) -> int:
    v = d.get(key)
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"`{key}` is {type(v).__name__}, expected an integer")
    return v


def _opt_bool(d: dict[str, Any], key: str) -> bool | None:
    v = d.get(key)
    if v is not None and not isinstance(v, bool):
        raise TypeError(f"`{key}` is {type(v).__name__}, expected true or false")
    return v


def _opt_int(d: dict[str, Any], key: str) -> int | None:
    return None if d.get(key) is None else _int(d, key)


@dataclass(frozen=True)
class RunGit(_Fields):
    """run.json `git`: the checkout's commit and whether tracked files differed from it."""

    commit: str | None  # None outside a git checkout
    dirty: bool | None
    dirty_files: list[str]  # the first 50 lines of `git status --porcelain`

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunGit:
        return cls(
            commit=_opt_str(d, "commit"),
            dirty=_opt_bool(d, "dirty"),
            dirty_files=[str(f) for f in _list(d, "dirty_files")],
        )


@dataclass(frozen=True)
class RunHost(_Fields):
    """run.json `host`: the machine (asrbench.host; the CPU decides some models' kernels)."""

    hostname: str
    platform: str
    machine: str
    cpus: int | None
    cpu_model: str | None
    isa_level: str | None  # e.g. 'x86-64-v4 (avx512)'; None off x86-64
    docker: str | None  # the engine's version; None when none answered

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunHost:
        return cls(
            hostname=_str(d, "hostname"),
            platform=_str(d, "platform"),
            machine=_str(d, "machine"),
            cpus=_opt_int(d, "cpus"),
            cpu_model=_opt_str(d, "cpu_model"),
            isa_level=_opt_str(d, "isa_level"),
            docker=_opt_str(d, "docker"),
        )


@dataclass(frozen=True)
class RunLanguage(_Fields):
    """run.json `language`: what the cell did about language (benchmark/language.py)."""

    dataset: str  # the dataset's tag, as the scorer gets it
    card: list[str]  # the card's languages
    model: str | None  # the card's tag for the data; None: the card lacks it
    forced: bool  # run with --force despite a mismatch
    env: dict[str, str]  # what the platform set for the program
    mixed: list[str]  # other languages named by the LANGUAGE column

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunLanguage:
        return cls(
            dataset=_str(d, "dataset"),
            card=[str(c) for c in _list(d, "card")],
            model=_opt_str(d, "model"),
            forced=d.get("forced") is True,
            env={str(k): str(v) for k, v in _dict(d, "env").items()},
            mixed=[str(m) for m in _list(d, "mixed")],
        )


# The sections of run.json ops/benchmark fills (asrbench/benchmark/run.py): typed, written with
# the keys in the order they always had, so run.json stays byte-identical. A key the section
# does not know is not kept: run.json is versioned (RUN_FORMAT) and written by one writer.


@dataclass(frozen=True)
class RunModel(_Fields):
    """run.json `model`: what ran (the card as read, the image or environment it ran in)."""

    id: str
    identity: str
    runner: str
    image: str | None  # the Docker image tag; None for runners without images
    source_hash: str
    card: dict[str, Any]  # the model card as read (ModelCard.to_dict)
    folder: str

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunModel:
        return cls(
            id=_str(d, "id"),
            identity=_str(d, "identity"),
            runner=_str(d, "runner"),
            image=_opt_str(d, "image"),
            source_hash=_str(d, "source_hash"),
            card=_dict(d, "card"),
            folder=_str(d, "folder"),
        )


@dataclass(frozen=True)
class RunDataset(_Fields):
    """run.json `dataset`: the dataset as it was when the cell was run."""

    id: str
    hash: str
    folder: str  # resolved, absolute
    meta: dict[str, Any]  # dataset.yaml's meta section
    n_utts: int  # the whole dataset's, not the selection's

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunDataset:
        return cls(
            id=_str(d, "id"),
            hash=_str(d, "hash"),
            folder=_str(d, "folder"),
            meta=_dict(d, "meta"),
            n_utts=_int(d, "n_utts"),
        )


@dataclass(frozen=True)
class RunPlacement(_Fields):
    """run.json `placement`: where the results tree put the cell and why (results/layout.py)."""

    kind: str  # "reported", "sample" or "variant"
    note: str | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunPlacement:
        return cls(kind=_str(d, "kind"), note=_opt_str(d, "note"))


@dataclass(frozen=True)
class RunJobOptions:
    """run.json `options`: how the job was asked to run (what does not change the key too)."""

    jobs: int
    max_utts: int | None
    seed: int
    utt_timeout_s: float | None
    run: dict[str, Any]  # the runner's RunOptions as plain JSON
    scorer: dict[str, Any]  # the scorer options the user chose (`{}` for the defaults)
    segmentation: dict[str, Any] | None = None  # only for a cell run on segments

    def to_dict(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
            "max_utts": self.max_utts,
            "seed": self.seed,
            "utt_timeout_s": self.utt_timeout_s,
            "run": self.run,
            "scorer": self.scorer,
            **({"segmentation": self.segmentation} if self.segmentation else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunJobOptions:
        max_utts, timeout = d.get("max_utts"), d.get("utt_timeout_s")
        return cls(
            jobs=_int(d, "jobs"),
            max_utts=None if max_utts is None else _int(d, "max_utts"),
            seed=_int(d, "seed"),
            utt_timeout_s=None if timeout is None else _num(d, "utt_timeout_s"),
            run=_dict(d, "run"),
            scorer=_dict(d, "scorer"),
            segmentation=_dict(d, "segmentation") or None,
        )


@dataclass(frozen=True)
class RunCache(_Fields):
    """run.json `cache`: the hypothesis cache entry the cell was scored from."""

    key: str
    inputs: dict[str, Any]  # what the key is a digest of
    folder: str
    hit: bool  # every hypothesis came from the cache
    utts_run: int  # utterances the model ran on in this invocation

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunCache:
        return cls(
            key=_str(d, "key"),
            inputs=_dict(d, "inputs"),
            folder=_str(d, "folder"),
            hit=d.get("hit") is True,
            utts_run=_int(d, "utts_run"),
        )


@dataclass(frozen=True)
class RunTimes:
    """run.json `times`: when the cell ran and the seconds of each phase (rounded to ms)."""

    started: str  # ISO 8601, UTC
    ended: str
    wall_s: float
    prepare_s: float
    dataset_hash_s: float
    run_s: float
    score_s: float
    write_s: float
    overhead_s: float  # wall less run, score and prepare
    segment_s: float | None = None  # only for a cell run on segments of long recordings

    def to_dict(self) -> dict[str, Any]:
        return {
            "started": self.started,
            "ended": self.ended,
            "wall_s": self.wall_s,
            "prepare_s": self.prepare_s,
            "dataset_hash_s": self.dataset_hash_s,
            **({"segment_s": self.segment_s} if self.segment_s is not None else {}),
            "run_s": self.run_s,
            "score_s": self.score_s,
            "write_s": self.write_s,
            "overhead_s": self.overhead_s,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunTimes:
        return cls(
            started=_str(d, "started"),
            ended=_str(d, "ended"),
            wall_s=_num(d, "wall_s"),
            prepare_s=_num(d, "prepare_s"),
            dataset_hash_s=_num(d, "dataset_hash_s"),
            run_s=_num(d, "run_s"),
            score_s=_num(d, "score_s"),
            write_s=_num(d, "write_s"),
            overhead_s=_num(d, "overhead_s"),
            segment_s=_num(d, "segment_s") if d.get("segment_s") is not None else None,
        )


@dataclass(frozen=True)
class RunRecord:
    """run.json: how one result cell was produced (the summary.json beside it says what)."""

    command: list[str]
    cwd: str
    git: RunGit
    model: RunModel
    dataset: RunDataset
    selection: Selection  # as in summary.json
    result_key: str
    placement: RunPlacement
    executor: dict[str, Any]
    options: RunJobOptions
    cache: RunCache
    contract_problems: list[str]
    scorer: dict[str, Any]  # the scorer identity and its `config` (data files by SHA-256)
    packages: dict[str, str]  # python and the platform's packages: name -> version
    host: RunHost
    times: RunTimes
    shards: list[dict[str, Any]] = field(default_factory=list)
    language: RunLanguage | None = None  # None in a run.json written before issue 24

    @property
    def forced_language(self) -> bool:
        return self.language is not None and self.language.forced

    @property
    def dataset_folder(self) -> str | None:
        return self.dataset.folder or None

    @property
    def dataset_meta(self) -> dict[str, Any]:
        return self.dataset.meta

    @property
    def card(self) -> dict[str, Any]:
        return self.model.card

    @property
    def scorer_options(self) -> dict[str, Any]:
        """The scorer options the user chose (`{}` for the defaults)."""
        return self.options.scorer

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RUN_FORMAT,
            "command": self.command,
            "cwd": self.cwd,
            "git": self.git.to_dict(),
            "model": self.model.to_dict(),
            "dataset": self.dataset.to_dict(),
            "selection": self.selection.to_dict(),
            "result_key": self.result_key,
            "placement": self.placement.to_dict(),
            "executor": self.executor,
            "options": self.options.to_dict(),
            "cache": self.cache.to_dict(),
            "contract_problems": self.contract_problems,
            "scorer": self.scorer,
            "packages": self.packages,
            "host": self.host.to_dict(),
            "times": self.times.to_dict(),
            "shards": self.shards,
            **({"language": self.language.to_dict()} if self.language else {}),
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "run.json") -> RunRecord:
        check_format(d, where, RUN_FORMAT, RUN_RERUN)
        try:
            return cls(
                command=[str(c) for c in _list(d, "command")],
                cwd=str(d.get("cwd") or ""),
                git=RunGit.from_dict(_dict(d, "git")),
                model=RunModel.from_dict(_dict(d, "model")),
                dataset=RunDataset.from_dict(_dict(d, "dataset")),
                selection=Selection.from_dict(_dict(d, "selection", required=True)),
                result_key=str(d.get("result_key") or ""),
                placement=RunPlacement.from_dict(_dict(d, "placement")),
                executor=_dict(d, "executor"),
                options=RunJobOptions.from_dict(_dict(d, "options")),
                cache=RunCache.from_dict(_dict(d, "cache")),
                contract_problems=[str(p) for p in _list(d, "contract_problems")],
                scorer=_dict(d, "scorer"),
                packages=_dict(d, "packages"),
                host=RunHost.from_dict(_dict(d, "host")),
                times=RunTimes.from_dict(_dict(d, "times")),
                shards=_list(d, "shards"),
                language=RunLanguage.from_dict(_dict(d, "language")) if d.get("language") else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise _malformed(where, exc, RUN_RERUN) from None


ROBUSTNESS_RERUN = "rerun ops/robustness (hypotheses are cached)"
ROW_KEYS = ("model", "condition", "wer", "werd", "wer_clean")


@dataclass(frozen=True)
class RobustnessRecord:
    """robustness.json: WER, WERD and NWERD of models over a perturbation grid.

    Version 1 (written before the format tag) had no tag, no `cells` and no `provenance`, and
    embedded its Markdown view; it is read as version 2 with no cells and no provenance.
    """

    dataset: str  # the dataset as given (an ID or a folder)
    seed: int
    normaliser: str  # the NWERD difficulty: a quality metric, model:ID or none
    conditions: list[str]  # the perturbed conditions run (clean is the baseline)
    rows: list[dict[str, Any]]  # per model x condition: wer_clean, wer, werd, nwerd, quality
    summary: list[dict[str, Any]]  # per model: mean_werd
    aurora_average_accuracy: dict[str, dict[str, float]]
    severity_curves: dict[str, dict[str, list[list[float]]]]
    warnings: list[str]
    cells: list[dict[str, Any]] = field(default_factory=list)  # model, condition, result_key, ...
    provenance: Provenance | None = None  # None when read from a version-1 file
    version: int = 2  # the version it was read from (written: always the current one)
    # Across languages (several datasets, docs/ROBUSTNESS.md); written only when present:
    # per model x dataset x condition WERD with its bootstrap CI, and each pair's difference
    languages: list[dict[str, Any]] = field(default_factory=list)
    language_disparity: list[dict[str, Any]] = field(default_factory=list)
    # Attack conditions (family `attack`), written only when present: per model x attack,
    # white-box or transfer, WERD, and Gaussian noise at the same SNR (perturb.attack_table)
    attacks: list[dict[str, Any]] = field(default_factory=list)
    # A long-form dataset, written only when present: per model x condition (clean first),
    # each session metric of the cell (summary.session_figures: DER, cpWER...) with its
    # interval over sessions
    sessions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(str(r["model"]) for r in self.rows))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": ROBUSTNESS_FORMAT,
            "dataset": self.dataset,
            "seed": self.seed,
            "normaliser": self.normaliser,
            "conditions": self.conditions,
            "rows": self.rows,
            "summary": self.summary,
            "aurora_average_accuracy": self.aurora_average_accuracy,
            "severity_curves": self.severity_curves,
            "warnings": self.warnings,
            "cells": self.cells,
            "provenance": self.provenance.to_dict() if self.provenance else None,
            **(
                {"languages": self.languages, "language_disparity": self.language_disparity}
                if self.languages
                else {}
            ),
            **({"attacks": self.attacks} if self.attacks else {}),
            **({"sessions": self.sessions} if self.sessions else {}),
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "robustness.json") -> RobustnessRecord:
        if isinstance(d, dict) and "format" not in d and "rows" in d:
            version = 1  # before the tag: the same keys, plus `markdown`
        else:
            check_format(d, where, ROBUSTNESS_FORMAT, ROBUSTNESS_RERUN)
            version = 2
        rows = d.get("rows")
        for i, r in enumerate(rows if isinstance(rows, list) else []):
            if not isinstance(r, dict) or not set(ROW_KEYS) <= set(r):
                raise RecordError(
                    f"{where}: row {i} lacks {'/'.join(ROW_KEYS)} (an older "
                    f"ops/robustness?); {ROBUSTNESS_RERUN}"
                )
        try:
            prov = d.get("provenance")
            return cls(
                dataset=str(d.get("dataset")),
                seed=int(d.get("seed") or 0),
                normaliser=str(d.get("normaliser") or "none"),
                conditions=[str(c) for c in _list(d, "conditions")],
                rows=_list(d, "rows", required=True),
                summary=_list(d, "summary"),
                aurora_average_accuracy=_dict(d, "aurora_average_accuracy"),
                severity_curves=_dict(d, "severity_curves"),
                warnings=[str(w) for w in _list(d, "warnings")],
                cells=_list(d, "cells"),
                provenance=Provenance.from_dict(prov) if prov is not None else None,
                version=version,
                languages=_list(d, "languages"),
                language_disparity=_list(d, "language_disparity"),
                attacks=_list(d, "attacks"),
                sessions=_list(d, "sessions"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise _malformed(where, exc, ROBUSTNESS_RERUN) from None


FAIRNESS_RERUN = "rerun ops/fairness (hypotheses are cached)"
# fairness.json's sections, in docs/FAIRNESS.md's order; each is kept as written
FAIRNESS_SECTIONS = (
    "dataset",
    "selection",
    "by",
    "cluster",
    "models",
    "analyses",
    "options",
    "groups",
    "unlabelled",
    "conditions",
    "transformations",
    "accuracy",
    "lwerr",
    "robustness",
    "metamorphic",
    "differential",
    "localiser",
    "notes",
    "warnings",
    "inputs",
    "normaliser",
)


@dataclass(frozen=True)
class FairnessRecord:
    """fairness.json: per-group accuracy, LWERR, robustness disparity, AequeVox and the fault
    localiser (every section's keys are in docs/FAIRNESS.md)."""

    dataset: dict[str, Any]  # id, hash, reference_free, sample_rate, language, n_utts, folder
    selection: dict[str, Any]  # n_utts, n_dataset_utts, ids_sha256, utts, per_speaker, sample
    by: str
    cluster: dict[str, Any]
    models: list[str]
    analyses: list[str]
    options: dict[str, Any]
    groups: list[dict[str, Any]]
    unlabelled: dict[str, Any]
    conditions: list[dict[str, Any]]
    transformations: dict[str, Any]
    accuracy: list[dict[str, Any]]
    lwerr: list[dict[str, Any]]
    robustness: list[dict[str, Any]]
    metamorphic: list[dict[str, Any]]
    differential: list[dict[str, Any]]
    localiser: list[dict[str, Any]]
    notes: list[str]
    warnings: list[str]
    inputs: list[dict[str, Any]]  # per model x condition: the result cell and its keys
    normaliser: dict[str, Any]  # the scorer identity that normalised the words
    provenance: Provenance

    @property
    def is_sample(self) -> bool:
        return bool(self.selection.get("sample"))

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in FAIRNESS_SECTIONS}
        return {"format": FAIRNESS_FORMAT, **out, "provenance": self.provenance.to_dict()}

    @classmethod
    def from_dict(cls, d: Any, where: str = "fairness.json") -> FairnessRecord:
        check_format(d, where, FAIRNESS_FORMAT, FAIRNESS_RERUN)
        try:
            return cls(
                dataset=_dict(d, "dataset", required=True),
                selection=_dict(d, "selection", required=True),
                by=str(d["by"]),
                cluster=_dict(d, "cluster"),
                models=[str(m) for m in _list(d, "models", required=True)],
                analyses=[str(a) for a in _list(d, "analyses")],
                options=_dict(d, "options"),
                groups=_list(d, "groups"),
                unlabelled=_dict(d, "unlabelled"),
                conditions=_list(d, "conditions"),
                transformations=_dict(d, "transformations"),
                accuracy=_list(d, "accuracy"),
                lwerr=_list(d, "lwerr"),
                robustness=_list(d, "robustness"),
                metamorphic=_list(d, "metamorphic"),
                differential=_list(d, "differential"),
                localiser=_list(d, "localiser"),
                notes=[str(n) for n in _list(d, "notes")],
                warnings=[str(w) for w in _list(d, "warnings")],
                inputs=_list(d, "inputs"),
                normaliser=_dict(d, "normaliser"),
                provenance=Provenance.from_dict(d.get("provenance")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise _malformed(where, exc, FAIRNESS_RERUN) from None


STREAM_FORMAT = "asrbench-stream-v4"
# v1 (the first slice) had the same fields; v2 adds the word metrics to `pooled` and the rows
# and measures the cursor lag by the scorer's alignment, not a common prefix; v3 adds
# `latency_guard` (streaming/guard.py) and the rows' feed lateness and backlog growth (older
# records read with `latency_guard` null: not judged); v4 adds `runs` (the runs of the program
# that fed the cell: a resumed cell has several, streaming/cache.py) and each row's `run`
# (older records read with `runs` null)
STREAM_OLDER = ("asrbench-stream-v1", "asrbench-stream-v2", "asrbench-stream-v3")
STREAM_RERUN = "rerun ops/stream"
CAPACITY_FORMAT = "asrbench-stream-capacity-v1"
CAPACITY_RERUN = "rerun ops/stream --capacity"

F = TypeVar("F")


def _from_fields(
    cls: type[F], d: Any, where: str, kind: str, fmt: tuple[str, str, tuple[str, ...]]
) -> F:
    """A record whose JSON keys are exactly its dataclass fields (plus `format`): the format
    checked (`fmt`: current, what to do, older versions read), every field required."""
    current, rerun, older = fmt
    check_format(d, where, current, rerun, older)
    try:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})  # type: ignore[attr-defined]
    except (KeyError, TypeError) as exc:
        raise RecordError(f"{where}: malformed {kind} record ({exc}); {rerun}") from None


@dataclass(frozen=True)
class StreamRecord:
    """stream.json: how a model streamed a dataset (ops/stream): the feed's settings, its
    accuracy, the metrics (docs/STREAMING.md). Beside it in the cell: `summary.json` (the
    finals scored, producer `stream`) and `events.jsonl` (every event with its clocks)."""

    model: str
    model_identity: str
    runner: str
    dataset: str
    dataset_hash: str
    result_key: str  # the summary.json's result key (the finals' identity)
    chunk_ms: int
    speed: float
    n_utts: int
    n_failed: int
    pooled: dict[str, Any]  # metrics.pooled
    pacing: dict[str, Any]  # metrics.pacing
    overhead_s: dict[str, Any]  # metrics.overhead
    utterances: list[dict[str, Any]]  # metrics.per_utterance + guard.per_utterance rows
    notes: list[str]
    # guard.judge: whether the latencies are the model's; None in records older than v3
    latency_guard: dict[str, Any] | None = None
    # each run that fed the cell (run ID, utterances, host measures); None before v4
    runs: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": STREAM_FORMAT,
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "stream.json") -> StreamRecord:
        fmt = (STREAM_FORMAT, STREAM_RERUN, STREAM_OLDER)
        if isinstance(d, dict) and d.get("format") in STREAM_OLDER:
            # written before the guard (not judged) or before the runs were recorded
            d = {"latency_guard": None, "runs": None, **d}
        return _from_fields(cls, d, where, "stream", fmt)


def write_stream(path: Path, record: StreamRecord) -> None:
    write_record(path, record)


def read_stream(path: Path) -> StreamRecord:
    return read_record(Path(path), StreamRecord.from_dict)


@dataclass(frozen=True)
class CapacityRecord:
    """capacity.json: how many simultaneous paced streams of a model this machine sustained
    (ops/stream --capacity, asrbench/streaming/capacity.py)."""

    model: str
    model_identity: str
    runner: str
    dataset: str
    dataset_hash: str
    chunk_ms: int
    speed: float
    n_utts: int  # utterances per stream
    criterion: dict[str, Any]  # capacity.Criterion
    tried: list[int]  # the N probed, in order
    capacity: int  # the largest N sustained (0: not even one)
    levels: list[dict[str, Any]]  # capacity.level_figures per N, judged
    machine: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": CAPACITY_FORMAT,
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "capacity.json") -> CapacityRecord:
        return _from_fields(cls, d, where, "capacity", (CAPACITY_FORMAT, CAPACITY_RERUN, ()))


def write_capacity(path: Path, record: CapacityRecord) -> None:
    write_record(path, record)


def read_capacity(path: Path) -> CapacityRecord:
    return read_record(Path(path), CapacityRecord.from_dict)


ABLATION_FILE = "ablation.json"
TIMELINE_FILE = "timeline.json"
ABLATION_FORMAT = "asrbench-ablation-v1"
TIMELINE_FORMAT = "asrbench-timeline-v1"
SPEAKERS_FILE = "speakers.json"
SPEAKERS_FORMAT = "asrbench-speakers-v1"
# the command that writes them into cells stored before they existed (results/derived.py)
BACKFILL = "ops/report --backfill"
DERIVED_RERUN = f"run `{BACKFILL}` (or rerun ops/benchmark --replace) to rewrite it"


@dataclass(frozen=True)
class AblationRecord:
    """ablation.json: a cell's TER and mTER after each cumulative normalisation step, computed
    when the cell was written (asrbench/results/derived.py), and which steps changed which
    utterance; the report renders it as stored."""

    stages: list[str]  # "raw" then the ladder's labels, in order
    rows: list[dict[str, Any]]  # per stage: stage, applied; ter, mter, sub, ins, del, n_ref, n_hyp
    matches_stored: bool  # the last step reproduced summary.json's counts
    note: str | None  # why not, when it did not
    applied: dict[str, list[str]]  # utterance ID -> the steps that changed its tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": ABLATION_FORMAT,
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "ablation.json") -> AblationRecord:
        return _from_fields(cls, d, where, "ablation", (ABLATION_FORMAT, DERIVED_RERUN, ()))


@dataclass(frozen=True)
class TimelineRecord:
    """timeline.json: a long-form cell's error timeline per recording (time bins of S/D/I,
    reference speech, dropped stretches, loops, timed output), computed when the cell was
    written from its alignment and the dataset's reference segments; `note` says why there
    are none (the segments could not be read)."""

    recordings: list[dict[str, Any]]  # derived.TIMELINE_KEYS per recording, in ID order
    note: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": TIMELINE_FORMAT,
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "timeline.json") -> TimelineRecord:
        return _from_fields(cls, d, where, "timeline", (TIMELINE_FORMAT, DERIVED_RERUN, ()))


@dataclass(frozen=True)
class SpeakersRecord:
    """speakers.json: who spoke when in each recording of a long-form cell whose reference and
    hypothesis both name speakers: both sides' turns, the DER mapping of hypothesis speakers to
    reference speakers and the recording's DER, JER and cpWER (asrbench/results/speaker_view.py),
    computed when the cell was written; `note` says why there are none."""

    recordings: list[dict[str, Any]]  # speaker_view.SPEAKER_KEYS per recording, in ID order
    note: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": SPEAKERS_FORMAT,
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "speakers.json") -> SpeakersRecord:
        return _from_fields(cls, d, where, "speakers", (SPEAKERS_FORMAT, DERIVED_RERUN, ()))
