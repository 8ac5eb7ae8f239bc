"""Local dataset and model folders: where an entry lives and what makes a folder one.

An entry is a folder holding its kind's marker file (`metadata.tsv`, `model.yaml`), under the
datasets or models folder of the settings. The resolver looks entries up here; the zoo places
them here and the importers write them here, both replacing only what is an entry already.
"""

from __future__ import annotations

from pathlib import Path

from asrbench.errors import InputError
from asrbench.settings import settings

# kind -> the file that makes a folder an entry of that kind
MARKER_FILES = {"dataset": "metadata.tsv", "model": "model.yaml"}


def local_dir(kind: str, entry_id: str) -> Path:
    """Where an entry of `kind` lives locally: `datasets/<ID>` or `models/<ID>` (settings)."""
    s = settings()
    return (s.datasets_dir if kind == "dataset" else s.models_dir) / entry_id


def is_entry(folder: Path, kind: str) -> bool:
    """Whether `folder` holds an entry of `kind` (its marker file)."""
    return (folder / MARKER_FILES[kind]).is_file()


def check_replaceable(folder: Path, kind: str, fix: str) -> None:
    """`--force` replaces a dataset or model folder (or an empty folder), never anything else:
    refuse, naming the folder, when `folder` exists and holds no `MARKER_FILES[kind]`."""
    folder = Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise InputError(
            f"{folder} exists and is not a {kind} folder; --force replaces {kind}s only: {fix}"
        )
    if folder.is_dir() and not is_entry(folder, kind) and any(folder.iterdir()):
        raise InputError(
            f"{folder} exists and is not a {kind} folder (no "
            f"{MARKER_FILES[kind]}); --force replaces {kind}s only: {fix}"
        )
