"""Local dataset and model folders: where an entry lives and what makes a folder one.

An entry is a folder holding its kind's marker file (`metadata.tsv`, `model.yaml`), under the
datasets or models folder of the settings. The resolver looks entries up here; the zoo places
them here and the importers write them here, both replacing only what is an entry already:
every command that writes a folder and takes `--force` (import, export, pull) asks `check_out`.
"""

from __future__ import annotations

from collections.abc import Callable
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


def check_out(
    folder: Path,
    kind: str,
    force: bool,
    option: str = "--out",
    owned: Callable[[Path], bool] | None = None,
) -> None:
    """The one rule of every command that writes a folder (`--out`, `--dest`) and takes
    `--force`: an existing path is refused without `--force`, and with it only a folder of
    `kind` or an empty one is replaced (`check_replaceable`). Call it before any work."""
    folder = Path(folder)
    if not (folder.exists() or folder.is_symlink()):
        return
    if not force:
        raise InputError(
            f"{folder} already exists; pass --force to replace it or choose another {option}"
        )
    check_replaceable(folder, kind, f"choose another {option} or remove it", owned)


def check_replaceable(
    folder: Path, kind: str, fix: str, owned: Callable[[Path], bool] | None = None
) -> None:
    """`--force` replaces a dataset or model folder (or an empty folder), never anything else:
    refuse, naming the folder, when `folder` exists and holds no `MARKER_FILES[kind]`. A kind
    without a marker file (an export's manifests) says what it owns with `owned(folder)`."""
    folder = Path(folder)
    a = "an" if kind[:1] in "aeiou" else "a"
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise InputError(
            f"{folder} exists and is not {a} {kind} folder; --force replaces {kind}s only: {fix}"
        )
    if not folder.is_dir() or not any(folder.iterdir()):
        return
    if owned is not None and not owned(folder):
        raise InputError(
            f"{folder} exists and is not {a} {kind} folder (it holds other files); --force "
            f"replaces {kind}s only: {fix}"
        )
    if owned is None and not is_entry(folder, kind):
        raise InputError(
            f"{folder} exists and is not {a} {kind} folder (no "
            f"{MARKER_FILES[kind]}); --force replaces {kind}s only: {fix}"
        )
