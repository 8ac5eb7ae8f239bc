"""Stored universal perturbations, and the attack code's identity.

A universal perturbation is an artifact named by its identity (kind `universal-perturbation`:
the target's identity, the dev utterances by content, the fit's settings and seed, the attack
code): `<cache>/adversarial/universal/<key>/` holds `perturbation.npy` (float32 samples, unit
RMS) and `universal.json` (format-tagged: the identity's inputs, the dev split, the dev CER of
every epoch and the epoch kept). Both are written atomically; a folder missing either file is
refitted.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asrbench.errors import InputError
from asrbench.fsio import atomic_write_bytes, atomic_write_json
from asrbench.identity import digest, tree_files
from asrbench.settings import settings

FORMAT = "asrbench.universal-perturbation/1"
ATTACK_FILES = ("pgd.py", "universal.py", "artifact.py")


def attack_code() -> list[list[str]]:
    """The attack files by (name, SHA-256); the port's code is in the target's identity."""
    return tree_files(Path(__file__).parent, ATTACK_FILES)


@dataclass(frozen=True)
class UniversalRecord:
    """What universal.json says about one fitted perturbation."""

    key: str
    inputs: dict[str, Any]
    dev: list[str]
    dev_cer: list[float]  # mean CER (clean vs attacked transcript) after each epoch
    epoch: int  # the epoch kept (1-based): the highest dev CER
    sample_rate: int

    @property
    def best_cer(self) -> float:
        return self.dev_cer[self.epoch - 1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "key": self.key,
            "inputs": self.inputs,
            "dev": self.dev,
            "dev_cer": self.dev_cer,
            "epoch": self.epoch,
            "best_dev_cer": self.best_cer,
            "sample_rate": self.sample_rate,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: Path) -> UniversalRecord:
        if d.get("format") != FORMAT:
            raise InputError(f"{where}: not a {FORMAT} record (format {d.get('format')!r})")
        return cls(d["key"], d["inputs"], d["dev"], d["dev_cer"], d["epoch"], d["sample_rate"])


def universal_key(inputs: dict[str, Any]) -> str:
    """The artifact's identity from (target, dev, settings, seed, code)."""
    return digest("universal-perturbation", **inputs)


def artifact_dir(key: str) -> Path:
    return settings().cache / "adversarial" / "universal" / key


def save(record: UniversalRecord, vector: np.ndarray) -> Path:
    """Write the perturbation then its record (the record last: its presence means whole)."""
    folder = artifact_dir(record.key)
    buf = io.BytesIO()
    np.save(buf, np.asarray(vector, np.float32), allow_pickle=False)
    atomic_write_bytes(folder / "perturbation.npy", buf.getvalue())
    atomic_write_json(folder / "universal.json", record.to_dict())
    return folder


def load(key: str) -> tuple[UniversalRecord, np.ndarray] | None:
    """The stored artifact of `key`, or None when it was never (wholly) written."""
    folder = artifact_dir(key)
    rec, vec = folder / "universal.json", folder / "perturbation.npy"
    if not (rec.is_file() and vec.is_file()):
        return None
    record = UniversalRecord.from_dict(json.loads(rec.read_text()), rec)
    return record, np.load(vec, allow_pickle=False).astype(np.float64)
