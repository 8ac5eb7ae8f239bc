"""Small file helpers used everywhere: atomic writes (hashing is in asrbench.identity)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, fsync, rename: no reader sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    """Deterministic JSON (sorted keys, 2-space indent, trailing newline), written atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def stage_dir(target: Path) -> Path:
    """An empty folder beside `target` (same file system, so `replace_dir` is a rename)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = target.with_name(f".{target.name}.tmp{os.getpid()}")
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    return stage


def replace_dir(stage: Path, target: Path) -> Path:
    """Move a fully written folder into place whole: a reader sees the old folder or the new
    one, never a mix; an old folder there is swapped out and removed."""
    stage, target = Path(stage), Path(target)
    if target.exists():
        old = target.with_name(f".{target.name}.old{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
        os.replace(stage, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(stage, target)
    return target
