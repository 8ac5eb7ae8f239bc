"""Small file helpers used everywhere: atomic writes and staged folders (hashing is in
asrbench.identity).

A folder is built in a staging folder beside its target (`stage_dir`) and moved into place whole
(`replace_dir`). Nothing half-written stays behind:
- a write that fails because the disk is full raises `DiskFullError` (one line: the folder, the
  bytes that could not be written, the space left) and removes the staging folder it was in;
- a staging folder this process never moved into place is removed when the process exits;
- leftovers of a process killed with SIGKILL (`.<name>.tmp<PID>`, `.<name>.old<PID>`, and any
  other tag passed to `clean_stale`) are removed by the next run that stages the same target,
  once that PID is no longer alive; an `.old<PID>` whose target is missing is moved back.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from asrbench.errors import AsrbenchError

_FULL = (errno.ENOSPC, errno.EDQUOT)
_LOCK = threading.Lock()
_LIVE: dict[Path, tuple[Path, int]] = {}  # staging folder -> (its target, the creating PID)


class DiskFullError(AsrbenchError):
    """A write failed for lack of space; the message names the folder and the bytes."""


def _free_bytes(path: Path) -> int | None:
    for p in (path, *path.parents):
        try:
            st = os.statvfs(p)
        except OSError:
            continue
        return st.f_bavail * st.f_frsize
    return None


def _disk_full(path: Path, nbytes: int | None) -> DiskFullError:
    """The one-line error for a write into `path` that ran out of space; a staging folder that
    held `path` is removed first (it can never be completed), so the old target stays as it was."""
    path = Path(path)
    free = _free_bytes(path.parent)  # before anything is removed: what the write had
    stage, target = None, None
    with _LOCK:
        for s, (t, pid) in _LIVE.items():
            if pid == os.getpid() and (path == s or s in path.parents):
                stage, target = s, t
                break
        if stage is not None:
            del _LIVE[stage]
    if stage is not None:
        shutil.rmtree(stage, ignore_errors=True)
    what = (
        f"{nbytes} bytes of {path.name} could not be written"
        if nbytes is not None
        else f"{path.name} could not be created"
    )
    room = f" (the device had {free} bytes free)" if free is not None else ""
    if target is not None:
        return DiskFullError(
            f"no space left on the device of {target.parent}: {what}{room}; "
            f"nothing was changed in {target} (the partial copy was removed): "
            "free some space and rerun the same command"
        )
    return DiskFullError(
        f"no space left on the device of {path.parent}: {what}{room}; "
        "free some space and rerun the same command"
    )


@contextlib.contextmanager
def disk_full_is_one_line(path: Path) -> Iterator[None]:
    """Any write inside the block that runs out of space (a log copied with shutil, a report
    written by the standalone scorer) becomes the same one-line `DiskFullError` naming `path`,
    and a staging folder holding `path` is removed, as for `atomic_write_bytes`."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        names = [Path(f) for f in (exc.filename, exc.filename2) if f]
        inner = next((f for f in names if Path(path) in f.parents), Path(path) / "a file")
        raise _disk_full(inner, None) from None


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, fsync, rename: no reader sees half a file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        err = _disk_full(path, len(data))
        tmp.unlink(missing_ok=True)
        raise err from None
    os.replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    """Deterministic JSON (sorted keys, 2-space indent, trailing newline), written atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def pid_alive(pid: int) -> bool:
    """True while a process with this PID exists on this host (ours included)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(
    target: Path, tags: tuple[str, ...] = ("tmp", "old"), restore: tuple[str, ...] = ("old",)
) -> list[Path]:
    """Remove `.<name>.<tag><PID>` siblings of `target` left by processes no longer alive (a
    `kill -9`); one whose tag is in `restore` (a folder swapped out just before the new one
    was moved in) is moved back when `target` is missing. Returns what was removed or restored."""
    target = Path(target)
    alternatives = "|".join(re.escape(t) for t in tags)
    pattern = re.compile(rf"\.{re.escape(target.name)}\.({alternatives})(\d+)")
    done: list[Path] = []
    try:
        siblings = list(target.parent.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return done
    for sib in sorted(siblings):
        m = pattern.fullmatch(sib.name)
        if not m or pid_alive(int(m.group(2))):
            continue
        if m.group(1) in restore and not target.exists() and not target.is_symlink():
            os.replace(sib, target)
        elif sib.is_dir() and not sib.is_symlink():
            shutil.rmtree(sib, ignore_errors=True)
        else:
            sib.unlink(missing_ok=True)
        done.append(sib)
    return done


def stage_dir(target: Path) -> Path:
    """An empty folder beside `target` (same file system, so `replace_dir` is a rename).

    Stale staging folders of dead processes for the same target are removed first; this one is
    removed at exit unless `replace_dir` moved it into place.
    """
    target = Path(target)
    stage = target.with_name(f".{target.name}.tmp{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        clean_stale(target)
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir()
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        raise _disk_full(stage, None) from None
    with _LOCK:
        _LIVE[stage] = (target, os.getpid())
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
    with _LOCK:
        _LIVE.pop(stage, None)
    return target


@atexit.register
def _remove_unfinished_stages() -> None:
    """Staging folders this process made and never moved into place are of no use to anyone."""
    with _LOCK:
        mine = [s for s, (_, pid) in _LIVE.items() if pid == os.getpid()]
        for s in mine:
            del _LIVE[s]
    for s in mine:
        shutil.rmtree(s, ignore_errors=True)
