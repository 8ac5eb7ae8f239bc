"""Resumable downloads: the one home of a file that arrives in pieces and may be interrupted.

A download is written to `<folder>/<name>.part`; it becomes the final file only once the
caller's check accepts it (a published MD5/SHA-256, a content hash), by one rename. A part the
check rejects is removed, never kept nor resumed. Two ways of filling a part, one per transport:

- in order (`InOrderPart`): one stream from an offset (HTTP `Range: bytes=N-`, a seek for
  file://); the resume point is the part's size. The recipes' archive downloads.
- by chunk (`ChunkedPart`): fixed-size byte ranges fetched in any order, from several threads;
  each finished chunk's offset is journalled, one line each, in `<name>.done`, and a rerun
  fetches only the others. The journal is trusted only beside a part of the full size, and the
  whole file is checked before it is committed, so a journalled chunk that never reached the
  disk (power loss) is caught there. The zoo's object pulls.

The transports (urllib, the zoo's S3 client), their parallelism and their error messages stay
with the callers (`asrbench.importers.download`, `asrbench.zoo.pull`); this module owns the
`.part`/`.done` files.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
PART, JOURNAL = ".part", ".done"


class _Part:
    """`<folder>/<name>.part` and how it ends: verified and renamed, or removed."""

    def __init__(self, folder: Path, name: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.part = folder / f"{name}{PART}"

    def _drop(self) -> None:
        self.part.unlink(missing_ok=True)

    def _replace(self, final: Path, read_only: bool) -> None:
        if read_only:
            # cache objects are hard-linked into places: keep them intact
            os.chmod(self.part, 0o444)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.part, final)

    def commit(self, final: Path, check: Callable[[Path], T], *, read_only: bool = False) -> T:
        """Run `check` on the whole part (it raises on a mismatch); on success rename the part
        to `final` and return what `check` returned, else remove the part and re-raise."""
        try:
            got = check(self.part)
        except Exception:
            self._drop()  # a corrupted file is never kept, nor resumed
            raise
        self._replace(final, read_only)
        return got


class InOrderPart(_Part):
    """A download filled in order: it resumes from the bytes already in the part."""

    def resume_from(self, expected: int | None) -> int | None:
        """Where to resume: the part's size, or 0 after dropping a part longer than `expected`;
        None when `expected` bytes are all there already."""
        offset = self.part.stat().st_size if self.part.exists() else 0
        if expected is not None and offset > expected:
            self._drop()
            offset = 0
        if expected is not None and offset == expected:
            return None
        return offset

    def write(self, blocks: Iterable[bytes], offset: int, advance: Callable[[int], None]) -> None:
        """Append `blocks` to the part (offset > 0), or start it afresh (offset 0: the source
        did not resume); `advance(n)` after each block (progress)."""
        with open(self.part, "ab" if offset else "wb") as out:
            for block in blocks:
                out.write(block)
                advance(len(block))

    @property
    def size(self) -> int:
        return self.part.stat().st_size


class ChunkedPart(_Part):
    """A download of `size` bytes filled chunk by chunk, in any order and from several threads;
    finished chunks are journalled in `<name>.done` so a rerun fetches only the others."""

    def __init__(self, folder: Path, name: str, size: int, chunk: int):
        super().__init__(folder, name)
        self.size, self.chunk = size, chunk
        self.journal = folder / f"{name}{JOURNAL}"
        finished = self._journalled()
        self.fd = os.open(self.part, os.O_RDWR | os.O_CREAT, 0o644)
        os.ftruncate(self.fd, size)
        self.resumed_bytes = sum(min(chunk, size - o) for o in finished)
        self.todo = [o for o in range(0, size, chunk) if o not in finished]
        self.lock = threading.Lock()
        self.left = len(self.todo)

    def _journalled(self) -> set[int]:
        """The offsets the journal lists, when the part beside it has the full size; otherwise
        none (and a stale journal is dropped)."""
        finished: set[int] = set()
        if self.part.exists() and self.journal.exists() and self.part.stat().st_size == self.size:
            for line in self.journal.read_text(errors="replace").splitlines():
                if line.strip().isdigit():
                    finished.add(int(line))
        else:
            with contextlib.suppress(FileNotFoundError):
                self.journal.unlink()
        return finished

    def write_chunk(self, offset: int, data: bytes) -> bool:
        """Store one chunk and journal it; True when it was the last one."""
        os.pwrite(self.fd, data, offset)
        with self.lock:
            with open(self.journal, "a") as f:
                f.write(f"{offset}\n")
            self.left -= 1
            return self.left == 0

    def commit(self, final: Path, check: Callable[[Path], T], *, read_only: bool = False) -> T:
        """`_Part.commit` once every chunk is in: the file is closed first, the journal dropped."""
        self.close()
        got = super().commit(final, check, read_only=read_only)
        self._drop_journal()
        return got

    def commit_whole(
        self, data: bytes, final: Path, check: Callable[[bytes], T], *, read_only: bool = False
    ) -> T:
        """commit() for a download that arrived in one piece: `check` the bytes in memory before
        they are written (no re-read), then write, rename and drop the journal."""
        try:
            got = check(data)
        except Exception:
            self.discard()
            raise
        os.pwrite(self.fd, data, 0)
        self.close()
        self._replace(final, read_only)
        self._drop_journal()
        return got

    def _drop(self) -> None:
        self.discard()

    def _drop_journal(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.journal.unlink()

    def discard(self) -> None:
        """Remove the part and its journal (the next run starts from zero)."""
        self.close()
        for p in (self.part, self.journal):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
