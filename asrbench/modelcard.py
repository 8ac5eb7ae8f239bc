"""Model folders and their cards (`models/<ID>/model.yaml`), checked where they enter.

A model folder holds `model.yaml`, a `Dockerfile`, `requirements.txt` and one program that
implements the contract in `models/README.md`: `<program> <wav_list> <result_dir>`.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from asrbench.errors import InputError

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_]*$")
_SECRET_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
REQUIRED = ("id", "name", "family", "architecture", "licence", "languages", "sample_rate",
            "program")
# Files that are build products or local state, never part of a model's identity.
_IGNORED = {"__pycache__", ".venv", ".pytest_cache"}


class ModelCardError(InputError):
    """A model folder or card that breaks the contract; the message names the file and field."""


@dataclass(frozen=True)
class ModelCard:
    """The model card: what the SpeechColab paper's Table II gives, plus runtime needs."""

    id: str
    name: str
    family: str
    architecture: str
    licence: str
    languages: list[str]
    sample_rate: int
    program: str
    parameters: int | None = None
    size_bytes: int | None = None
    network: bool = False
    secrets: list[str] = field(default_factory=list)
    gpu: str = "none"  # none | optional | required
    memory: str = "4g"
    type: str = "open-source"  # open-source | commercial-api
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        extra = d.pop("extra")
        d.update(extra)
        return d


@dataclass(frozen=True)
class Model:
    """A model folder on disk and its validated card."""

    root: Path
    card: ModelCard

    @property
    def id(self) -> str:
        return self.card.id

    def card_json(self) -> dict[str, Any]:
        """The card in full plus the source identity (`ops/models --json`)."""
        return {**self.card.to_dict(), "source_hash": self.source_hash()}

    def source_files(self) -> list[Path]:
        files = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED)
            for name in sorted(filenames):
                if not name.endswith(".pyc"):
                    files.append(Path(dirpath) / name)
        return files

    def source_hash(self) -> str:
        """SHA-256 over every file's relative path and bytes: the model's source identity."""
        h = hashlib.sha256(b"asrbench-model-v1\0")
        for path in self.source_files():
            rel = path.relative_to(self.root).as_posix()
            h.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
        return h.hexdigest()


def has_requirements(path: Path) -> bool:
    """Whether a requirements file names anything to install (not just comments)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return any(ln.strip() and not ln.strip().startswith("#") for ln in lines)


def load_model(folder: str | Path) -> Model:
    """Load and check a model folder; raise ModelCardError naming the file and field.

    Takes a folder; `asrbench.resolve.resolve_model` turns IDs and `ID@VERSION` into one.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        raise ModelCardError(f"model folder {folder} not found")
    card_path = root / "model.yaml"
    if not card_path.is_file():
        raise ModelCardError(f"{card_path}: not found; every model folder needs a model.yaml")
    try:
        raw = yaml.safe_load(card_path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ModelCardError(f"{card_path}: cannot parse: {exc}") from exc
    if not isinstance(raw, dict):
        raise ModelCardError(f"{card_path}: top level must be a mapping")
    missing = [k for k in REQUIRED if k not in raw]
    if missing:
        raise ModelCardError(f"{card_path}: missing field(s): {', '.join(missing)}")
    known = set(ModelCard.__dataclass_fields__) - {"extra"}
    fields = {k: v for k, v in raw.items() if k in known}
    extra = {k: v for k, v in raw.items() if k not in known}
    try:
        card = ModelCard(**fields, extra=extra)
    except TypeError as exc:
        raise ModelCardError(f"{card_path}: {exc}") from exc
    _check(card, root, card_path)
    return Model(root=root, card=card)


def _check(card: ModelCard, root: Path, card_path: Path) -> None:
    def bad(msg: str) -> ModelCardError:
        return ModelCardError(f"{card_path}: {msg}")

    if not _ID_RE.match(card.id):
        raise bad(f"id {card.id!r} must be lower-case letters, digits and '_'")
    if card.id != root.name:
        raise bad(f"id {card.id!r} differs from the folder name {root.name!r}")
    if not isinstance(card.languages, list) or not card.languages:
        raise bad("languages must be a non-empty list, e.g. [en]")
    if not isinstance(card.sample_rate, int) or card.sample_rate <= 0:
        raise bad("sample_rate must be a positive integer (Hz)")
    if not isinstance(card.network, bool):
        raise bad("network must be true or false")
    if not isinstance(card.secrets, list) or not all(
        isinstance(s, str) and _SECRET_RE.match(s) for s in card.secrets
    ):
        raise bad("secrets must be a list of environment variable names (UPPER_CASE)")
    if card.secrets and not card.network:
        raise bad("a model with secrets talks to a remote API: set network: true")
    if card.gpu not in ("none", "optional", "required"):
        raise bad("gpu must be none, optional or required")
    for name in (card.program, "Dockerfile", "requirements.txt"):
        if not (root / name).is_file():
            raise bad(f"{name} not found in {root}")
    for key in ("parameters", "size_bytes"):
        value = getattr(card, key)
        if value is not None and (not isinstance(value, int) or value < 0):
            raise bad(f"{key} must be a non-negative integer or absent")


SUMMARY_COLUMNS = ("id", "type", "family", "architecture", "parameters", "size", "licence",
                   "languages", "secrets")


def human(n: int | None, unit: str = "") -> str:
    """1234567 -> '1.2 M' (with `unit` appended), None -> '-'."""
    if n is None:
        return "-"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f} {suffix}{unit}"
    return f"{n} {unit}".strip()


def summary_row(model: Model) -> dict[str, str]:
    """One row of `ops/models`: the card's headline fields."""
    c = model.card
    return {"id": c.id, "type": c.type, "family": c.family,
            "architecture": c.architecture if len(c.architecture) <= 40
            else c.architecture[:39] + "…",
            "parameters": human(c.parameters), "size": human(c.size_bytes, "B"),
            "licence": c.licence.split(" (")[0], "languages": ",".join(c.languages),
            "secrets": ",".join(c.secrets) or "-"}


def model_dirs(root: Path) -> list[Path]:
    """Folders under `root` that hold a model card (`_common` and friends have none)."""
    return sorted(p for p in Path(root).iterdir() if (p / "model.yaml").is_file())


def load_all(root: Path) -> tuple[list[Model], list[str]]:
    """Every model under `root`, and one message per folder whose card breaks the contract."""
    models, problems = [], []
    for folder in model_dirs(root):
        try:
            models.append(load_model(folder))
        except ModelCardError as exc:
            problems.append(str(exc))
    return models, problems
