"""The machinery every JSON record is read and written with, and `Selection`, the section
summary.json and run.json share: what `asrbench.results.summary` needs, without defining the
other records (asrbench.results.records re-exports all of it, the records' one home).

`ops/score` writes summary.json only: importing records.py would build its nineteen record
classes (~25 ms of each start-up) for nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from asrbench.errors import InputError
from asrbench.fsio import atomic_write_json
from asrbench.identity import digest


class RecordError(InputError):
    """A stored JSON record that cannot be used: missing, truncated, not JSON, another format."""


class Record(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R")


def read_json(path: Path) -> Any:
    """JSON from a file; RecordError naming the file if absent, unreadable or truncated."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot read ({exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); the "
            "file is truncated or corrupt, rerun the command that produced it"
        ) from None


def read_record(path: Path, from_dict: Callable[[Any, str], R]) -> R:
    """One record from its file, e.g. `read_record(p, RunRecord.from_dict)`."""
    return from_dict(read_json(path), str(path))


def write_record(path: Path, record: Record) -> None:
    """Write a record atomically (sorted keys: byte-identical for the same record)."""
    atomic_write_json(path, record.to_dict())


@dataclass(frozen=True)
class Selection:
    """Which utterances were scored: all of them, or a seeded sample."""

    n_utts: int
    n_dataset_utts: int
    ids_sha256: str
    max_utts: int | None = None
    seed: int | None = None

    @classmethod
    def of(
        cls,
        ids: Sequence[str],
        n_dataset_utts: int,
        max_utts: int | None = None,
        seed: int | None = None,
    ) -> Selection:
        """The selection of the utterances `ids` (in scoring order) out of `n_dataset_utts`;
        the seed is recorded only when a sample was asked for (`max_utts`)."""
        return cls(
            n_utts=len(ids),
            n_dataset_utts=n_dataset_utts,
            ids_sha256=digest("selection", utterances=list(ids)),
            max_utts=max_utts,
            seed=seed if max_utts else None,
        )

    @property
    def is_sample(self) -> bool:
        return self.n_utts < self.n_dataset_utts

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_utts": self.n_utts,
            "n_dataset_utts": self.n_dataset_utts,
            "ids_sha256": self.ids_sha256,
            "max_utts": self.max_utts,
            "seed": self.seed,
            "sample": self.is_sample,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Selection:
        return cls(
            d["n_utts"], d["n_dataset_utts"], d["ids_sha256"], d.get("max_utts"), d.get("seed")
        )
