"""Stored universal perturbations, and the attack code's identity.

A universal perturbation is an artifact named by its identity (kind `universal-perturbation`:
the target's identity, the dev utterances by content, the fit's settings and seed, the attack
code): `<cache>/adversarial/universal/<key>/` holds `perturbation.npy` (float32 samples, unit
RMS) and `universal.json` (format-tagged: the identity's inputs, the dev split, the dev CER of
every epoch and the epoch kept, and the perturbation file's SHA-256 and length). Both are written
atomically; a folder missing either file is refitted.

A stored artifact is used only if it is the one its record describes and the record is the one
its key names (`load`): the record's inputs hash to the folder's key and equal the inputs asked
for (target, dev audio, settings with the SNR, code), the perturbation file has the recorded
SHA-256, its length is `seconds` at the record's sample rate, its samples are finite at unit RMS.
Anything else (a file edited, swapped, truncated or copied from another fit) is refused naming
the folder and what differs, never attacked with: delete the folder to fit it again.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asrbench.errors import InputError
from asrbench.fsio import atomic_write_bytes, atomic_write_json
from asrbench.identity import bytes_sha256, digest, tree_files
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
    samples = np.asarray(vector, np.float32)
    np.save(buf, samples, allow_pickle=False)
    data = buf.getvalue()
    atomic_write_bytes(folder / "perturbation.npy", data)
    stored = {"sha256": bytes_sha256(data), "samples": len(samples)}
    atomic_write_json(folder / "universal.json", {**record.to_dict(), "perturbation": stored})
    return folder


def load(
    key: str, inputs: dict[str, Any] | None = None
) -> tuple[UniversalRecord, np.ndarray] | None:
    """The stored artifact of `key`, or None when it was never (wholly) written; an InputError
    naming the folder when it is not the artifact its record describes (see the module
    docstring). `inputs`: the identity's inputs the caller derived `key` from."""
    folder = artifact_dir(key)
    rec, vec = folder / "universal.json", folder / "perturbation.npy"
    if not (rec.is_file() and vec.is_file()):
        return None
    raw = json.loads(rec.read_text())
    record = UniversalRecord.from_dict(raw, rec)
    data = vec.read_bytes()
    problem = _record_problem(key, inputs, record) or _vector_problem(raw, record, data)
    if problem is None:
        vector = np.load(io.BytesIO(data), allow_pickle=False).astype(np.float64)
        problem = _samples_problem(vector, raw["perturbation"]["samples"])
    if problem is not None:
        raise InputError(
            f"{folder}: the stored universal perturbation is refused: {problem}; it was "
            "altered or corrupted: delete the folder to fit it again"
        )
    return record, vector


def _record_problem(key: str, inputs: dict[str, Any] | None, record: UniversalRecord) -> str | None:
    """What is wrong with the record itself against its key and the inputs asked for."""
    if record.key != key or universal_key(record.inputs) != key:
        return "universal.json does not describe the fit its folder is named by"
    if inputs is not None and record.inputs != json.loads(json.dumps(inputs)):
        return "universal.json's inputs differ from this fit's (target, dev audio, settings, code)"
    if not 1 <= record.epoch <= len(record.dev_cer):
        return f"universal.json keeps epoch {record.epoch} of {len(record.dev_cer)}"
    return None


def _vector_problem(raw: dict[str, Any], record: UniversalRecord, data: bytes) -> str | None:
    """The perturbation file against the record's hash and length (seconds x sample rate)."""
    stored = raw.get("perturbation") or {}
    if stored.get("sha256") != bytes_sha256(data):
        return "perturbation.npy does not have the SHA-256 its record holds"
    seconds = (record.inputs.get("settings") or {}).get("seconds")
    want = round(seconds * record.sample_rate) if isinstance(seconds, (int, float)) else None
    if stored.get("samples") != want:
        return f"the record holds {stored.get('samples')} samples, {want} expected"
    return None


def _samples_problem(vector: np.ndarray, samples: int) -> str | None:
    """The samples themselves: as many as recorded, finite, at unit RMS (each utterance's
    budget is scaled from it)."""
    if vector.shape != (samples,) or not np.isfinite(vector).all():
        return f"perturbation.npy is not one finite row of {samples} samples"
    rms = math.sqrt(float(np.mean(vector**2))) if len(vector) else 0.0
    if abs(rms - 1.0) > 1e-3:
        return f"perturbation.npy has RMS {rms:.6g}, not 1 (the SNR budget would be wrong)"
    return None
