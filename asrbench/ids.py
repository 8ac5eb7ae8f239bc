"""The one check for an ID that becomes a folder name, and the last check that a path stays put.

A dataset or model ID names a folder: `datasets/<ID>`, `results/<model>/<dataset>/`, the zoo's
`entries/<kind>s/<ID>/`, a derived dataset under the cache. Whatever spelled it (a command line,
a `dataset.yaml`, a zoo card), it passes `check_id` before it is joined into a path, so it can
never climb out of the folder it is joined to.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from asrbench.errors import InputError

MAX_ID_LEN = 128
COMBINE = "+"  # a combined model's name, `ASR+DIARIZER` (asrbench/benchmark/speakers.py)
_SAFE_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.\-]{{0,{MAX_ID_LEN - 1}}}")


def check_id(value: object, what: str = "dataset ID", fix: str = "e.g. --id my_test_set") -> str:
    """Return `value` if it can name one folder (a safe charset, no separator, no '..'), else
    raise InputError naming `what` and `fix`."""
    if not isinstance(value, str) or not _SAFE_ID.fullmatch(value) or ".." in value:
        raise InputError(
            f"{what} {value!r} is not allowed: use letters, digits, '_', '.', '-' "
            f"(start with a letter or digit, no '/' or '..', at most {MAX_ID_LEN} "
            f"characters); {fix}"
        )
    return value


def contained(root: Path, path: Path) -> bool:
    """True if `path` lies strictly under `root` once both are resolved (symlinks followed, `..`
    collapsed). The one containment rule: the root itself is not inside it, since every caller
    asks about a file or a folder it will read, write or replace *within* the root, and replacing
    or reading the root in place of one of its entries is always a mistake."""
    real_root = Path(os.path.realpath(root))
    return real_root in Path(os.path.realpath(path)).parents


def inside(root: Path, path: Path, what: str) -> Path:
    """Return `path` if it lies under `root` (`contained`), else raise InputError: the last line
    of defence before a folder is written or replaced."""
    if not contained(root, path):
        raise InputError(
            f"{what} {path} is not inside {root}; nothing was written. Check the "
            "model and dataset IDs (dataset.yaml `id:`)"
        )
    return path
