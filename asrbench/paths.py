"""Well-known locations of the repository and the local cache."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """Local cache root: $ASRBENCH_CACHE, else <repo>/.cache."""
    return Path(os.environ.get("ASRBENCH_CACHE", REPO_ROOT / ".cache")).resolve()


def shared_dir() -> Path:
    """The `shared/` folder beside the checkout (real audio, noise), or $ASRBENCH_SHARED."""
    return Path(os.environ.get("ASRBENCH_SHARED", REPO_ROOT.parent / "shared")).resolve()
