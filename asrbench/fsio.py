"""Small file helpers used everywhere: atomic writes and staged folders (hashing is in
asrbench.identity).

A file is written whole with `atomic_file` (or `atomic_write_bytes`/`_text`/`_json`): into a temp
file beside it, fsynced, then renamed over it, so a reader sees the old file or the new one.

A folder is built in a staging folder beside its target (`stage_dir`) and moved into place whole
(`replace_dir`): the two are exchanged in one step (Linux), or the old folder is renamed aside and
the new one renamed in; only then is the old one deleted, so the target path always holds the old
folder or the new one (where two renames are needed, a kill between them leaves
`.<name>.old<PID>`, which the next `stage_dir` of that target moves back). Every folder the
platform replaces goes through here: copies that deleted the old folder before the rename left
a moment, or after a crash a state, with no folder at all. Nothing half-written stays behind:
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
import ctypes
import errno
import functools
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

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


@contextlib.contextmanager
def atomic_file(
    path: Path, *, tmp: Path | None = None, exclusive: bool = False, size: int | None = None
) -> Iterator[BinaryIO]:
    """Write one file whole: the block writes into a temp file beside `path` (`tmp`, by default
    `.<name>.tmp<PID>`), which is fsynced and renamed over `path` when the block ends; if the
    block raises, the temp file is removed and `path` is as it was. `exclusive` places the file
    only if `path` does not exist yet (a hard link: atomic create-if-absent on POSIX) and raises
    `FileExistsError` otherwise. Running out of space is the one-line `DiskFullError` (naming
    `size` bytes when the caller knows how many it was writing)."""
    path = Path(path)
    tmp = Path(tmp) if tmp is not None else path.with_name(f".{path.name}.tmp{os.getpid()}")
    placed = False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if exclusive:
            os.link(tmp, path)
        else:
            os.replace(tmp, path)
            placed = True
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        raise _disk_full(path, size) from None
    finally:
        if not placed:
            tmp.unlink(missing_ok=True)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, fsync, rename: no reader sees half a file."""
    with atomic_file(path, size=len(data)) as f:
        f.write(data)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    """Deterministic JSON (sorted keys, 2-space indent, trailing newline), written atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def atomic_link(src: Path, dst: Path) -> None:
    """Place `dst` as a hard link to `src` (a copy when they are on different file systems),
    atomically: a reader sees the old `dst` or the whole new one, never a partial copy."""
    dst = Path(dst)
    tmp = dst.with_name(f".{dst.name}.tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    try:
        try:
            os.link(src, tmp)
        except OSError as exc:  # another file system: copy instead
            if exc.errno in _FULL:
                raise
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno not in _FULL:
            raise
        raise _disk_full(dst, None) from None


@contextlib.contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive flock on the file `lock` (created if missing) for the block: one
    process at a time, whatever its parent; the kernel releases it when a holder is killed."""
    import fcntl

    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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


def replace_dir(stage: Path, target: Path, keep_old: Path | None = None) -> Path:
    """Move a fully written folder into place whole: a reader sees the old folder or the new
    one, never a mix, and `target` never goes missing. On Linux the two are exchanged in one
    step (renameat2 RENAME_EXCHANGE); elsewhere the old folder is renamed aside
    (`.<name>.old<PID>`), the new one renamed in, the old one moved back if that fails, and a
    kill between the two renames leaves the `.old<PID>` that `clean_stale` moves back. Only
    then is the old folder deleted, or moved to `keep_old` when given (a cell displaced, not
    thrown away)."""
    stage, target = Path(stage), Path(target)
    if keep_old is not None:
        _remove(keep_old)
    if not (target.exists() or target.is_symlink()):
        os.replace(stage, target)
    elif _exchange(stage, target):
        _retire(stage, keep_old)  # `stage` now holds the old folder
    else:
        old = target.with_name(f".{target.name}.old{os.getpid()}")
        _remove(old)
        os.replace(target, old)
        try:
            os.replace(stage, target)
        except BaseException:
            os.replace(old, target)
            raise
        _retire(old, keep_old)
    with _LOCK:
        _LIVE.pop(stage, None)
    return target


def _retire(old: Path, keep_old: Path | None) -> None:
    if keep_old is not None:
        os.replace(old, keep_old)
    else:
        _remove(old)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


@functools.cache
def _renameat2() -> Any:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.renameat2
    except (OSError, AttributeError):
        return None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where the system or
    the file system has no such call, so the caller falls back to two renames."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def _remove(path: Path) -> None:
    """Delete a folder (or file) that nothing points at any more; a failure leaves a leftover
    that `clean_stale` removes later, never a missing target."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@atexit.register
def _remove_unfinished_stages() -> None:
    """Staging folders this process made and never moved into place are of no use to anyone."""
    with _LOCK:
        mine = [s for s, (_, pid) in _LIVE.items() if pid == os.getpid()]
        for s in mine:
            del _LIVE[s]
    for s in mine:
        shutil.rmtree(s, ignore_errors=True)
