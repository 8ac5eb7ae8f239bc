"""What a build checks in a card beyond its schema: no unknown field, and the weights it names.

The card's schema (`asrbench.modelcard`) keeps free-form fields so that a model's own program
can read them; at build time every top-level field must be one the contract documents
(models/README.md), so a typo (`weigths:`) stops the build instead of being silently ignored.

`weights:` (read by the programs through `models/_common/weights.py`) is checked here too, and
user-supplied weights (`weights.dir`, a folder on the building host) are verified against the
card's `sha256` and copied into the build context, so a missing or corrupt file fails the build
with a message naming the file and the checksum the card expects.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from asrbench.identity import file_sha256
from asrbench.images.dockerfile import WEIGHTS_CONTEXT
from asrbench.images.weightslock import fetch_hub, folder_files, pin
from asrbench.modelcard import ModelCard, ModelCardError, describe

# Free-form top-level fields the contract documents (models/README.md, "The model card").
DOCUMENTED_FIELDS = frozenset(
    {
        "training_data",
        "paper",
        "engine",
        "vendor_docs",
        "weights",
        "runtime",
        "decoding",
        "pricing",
        "expected_rtf",
    }
)
__all__ = [
    "DOCUMENTED_FIELDS",
    "WEIGHTS_CONTEXT",
    "HubSpec",
    "WeightsSpec",
    "check_card",
    "user_weights_dir",
    "verify_user_weights",
]

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Rel = Annotated[str, StringConstraints(min_length=1)]
HubRepo = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
]


class HubSpec(BaseModel):
    """`weights.hub`: files of a hub repository at a revision, fetched at build time."""

    model_config = ConfigDict(strict=True, extra="forbid")

    repo: HubRepo  # ORG/NAME
    revision: Annotated[str, StringConstraints(min_length=1)] = "main"  # a commit, tag or branch
    files: Annotated[list[Rel], Field(min_length=1)]


class WeightsSpec(BaseModel):
    """The card's `weights:` section (models/_common/weights.py reads it in the image)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    source: str | None = None  # in words, for people
    files: dict[Rel, Rel | list[Rel]] | None = None  # name -> package file(s) or dir file(s)
    sha256: dict[Rel, Sha256] | None = None  # of each assembled file
    dir: str | None = None  # user-supplied weights: a folder on the building host
    link: bool = False  # link package files where they are instead of copying them
    ggml: str | None = None  # whispercpp: the converted file's name
    ggml_sha256: Sha256 | None = None
    hub_build_arg: str | None = None  # Whisper: the build argument that downloads from a hub
    hub: HubSpec | None = None  # weights fetched from a hub at build time, pinned by the lock

    @property
    def locked(self) -> bool:
        """Checked against `weights.lock` (written on first build) instead of `sha256`."""
        return (self.hub is not None or self.dir is not None) and not self.sha256


def check_card(model: Any) -> WeightsSpec | None:
    """Unknown top-level fields and a malformed `weights:` are ModelCardErrors naming the card."""
    unknown = sorted(set(model.card.extra) - DOCUMENTED_FIELDS)
    if unknown:
        raise ModelCardError(
            f"{model.card_path}: field '{unknown[0]}': unknown field (the card's fields are "
            f"listed in models/README.md: {', '.join(sorted(ModelCard.model_fields))}, "
            f"{', '.join(sorted(DOCUMENTED_FIELDS))}); fix or remove it"
        )
    raw = model.card.extra.get("weights")
    if raw is None:
        return None
    try:
        spec = WeightsSpec.model_validate(raw)
    except ValidationError as exc:
        errors = [{**e, "loc": ("weights", *e["loc"])} for e in exc.errors()]
        raise ModelCardError(f"{model.card_path}: {describe(errors)}") from None
    if spec.hub is not None and (spec.dir is not None or spec.files or spec.sha256):
        raise ModelCardError(
            f"{model.card_path}: field 'weights.hub': hub weights name their files under "
            "weights.hub.files and are pinned by weights.lock; remove weights.dir, "
            "weights.files and weights.sha256"
        )
    if spec.dir is not None and not spec.locked:
        missing = sorted(set(spec.files or {}) - set(spec.sha256 or {}))
        if not spec.files or missing:
            raise ModelCardError(
                f"{model.card_path}: field 'weights.sha256': user-supplied weights (weights.dir) "
                f"need a checksum for every file in weights.files; missing: "
                f"{', '.join(missing) or 'weights.files is empty'}"
            )
    return spec


def user_weights_dir(model: Any, spec: WeightsSpec) -> Path:
    """`weights.dir` with `~` and `$VARS` expanded, relative to the model folder."""
    raw = os.path.expandvars(os.path.expanduser(spec.dir or ""))
    if not raw or "$" in raw:
        raise ModelCardError(
            f"{model.card_path}: field 'weights.dir': {spec.dir!r} names no folder here (set the "
            "variable it uses, or write the folder holding the weights)"
        )
    path = Path(raw)
    return path if path.is_absolute() else (model.root / path)


def verify_user_weights(
    model: Any, spec: WeightsSpec, dest: Path | None = None, mode: str = "wheelhouse"
) -> Path:
    """Check the card's own weights (`weights.dir`, or `weights.hub` fetched with `mode`
    network) against `weights.sha256` or the lock; copy them into `dest`; their folder."""
    if spec.hub is not None:
        folder, source = fetch_hub(model.card_path, spec.hub, mode)
        names = {name: name for name in spec.hub.files}
    else:
        folder = user_weights_dir(model, spec)
        source = {"dir": str(spec.dir)}
        names = _dir_files(model, spec, folder)
    if spec.locked:
        pin(model.card_path, folder, sorted(names.values()), source)
    else:
        _check_sha256(model, spec, folder, names)
    if dest is not None:
        _copy(folder, names, dest)
    return folder


def _copy(folder: Path, names: dict[str, str], dest: Path) -> None:
    for name, rel in sorted(names.items()):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / rel, target)
        os.chmod(target, 0o644)  # the container's user is not the owner (safetensors: 0600)


def _dir_files(model: Any, spec: WeightsSpec, folder: Path) -> dict[str, str]:
    """name in the image -> file in `weights.dir` (every file of it when `files` is absent)."""
    if not spec.files:
        if not folder.is_dir():
            raise ModelCardError(
                f"{model.card_path}: field 'weights.dir': {folder} is not a folder"
            )
        return {name: name for name in folder_files(folder)}
    out = {}
    for name, parts in spec.files.items():
        parts = parts if isinstance(parts, list) else [parts]
        if len(parts) != 1:
            raise ModelCardError(
                f"{model.card_path}: field 'weights.files.{name}': user-supplied "
                "weights are whole files (one path each)"
            )
        out[name] = parts[0]
    return out


def _check_sha256(model: Any, spec: WeightsSpec, folder: Path, names: dict[str, str]) -> None:
    for name, rel in sorted(names.items()):
        want = (spec.sha256 or {})[name]
        path = folder / rel
        if not path.is_file():
            raise ModelCardError(
                f"weights file {name} is missing: {path} not found; "
                f"{model.card_path} expects sha256 {want}"
            )
        got = file_sha256(path)
        if got != want:
            raise ModelCardError(
                f"weights file {name} is corrupt: {path} has sha256 {got}, "
                f"{model.card_path} expects {want}"
            )
