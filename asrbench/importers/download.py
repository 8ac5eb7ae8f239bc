"""Fetching archives for recipes: resumable HTTP(S)/file:// downloads, checksums, safe extraction.

A download goes to `<cache>/downloads/<key>/<name>.part` (`asrbench.resumable.InOrderPart`, the
one home of partial downloads); an interrupted one is resumed with an HTTP Range request (or a
seek, for file://) on the next run. Once its size is reached it is checked against the
published MD5/SHA-256, renamed to `<name>` and never re-downloaded. A file that fails its
checksum is deleted (a half or corrupted archive is never kept) and fetched again once from
scratch; a second mismatch is an error.
"""

from __future__ import annotations

import http.client
import shutil
import sys
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from asrbench.errors import AsrbenchError, InputError
from asrbench.resumable import InOrderPart

CHUNK = 1 << 20
TIMEOUT_S = 60


class DownloadError(AsrbenchError):
    """A download or an archive that failed (network, checksum, truncation): exit 1, rerun."""


@dataclass(frozen=True)
class Archive:
    """One file of a recipe: where it lives (relative to the recipe's base URL) and its digest.

    `md5`/`sha256` are the published values (`checksum_source` says where they were published);
    None where no checksum is published: the file is then accepted and its SHA-256 recorded in
    dataset.yaml with `verified: no published checksum`.
    """

    path: str
    size: int | None = None
    md5: str | None = None
    sha256: str | None = None
    checksum_source: str = ""

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def digests(path: Path) -> dict[str, str]:
    """MD5 and SHA-256 of a file in one read (asrbench.identity does the hashing)."""
    from asrbench.identity import file_digests

    return file_digests(path)


def verify(path: Path, archive: Archive) -> dict[str, str]:
    """Digests of `path`; raises DownloadError when they contradict the published ones."""
    if archive.size is not None and path.stat().st_size != archive.size:
        raise DownloadError(f"{path.name}: {path.stat().st_size} bytes, expected {archive.size}")
    got = digests(path)
    for algo in ("sha256", "md5"):
        want = getattr(archive, algo)
        if want and got[algo] != want.lower():
            raise DownloadError(
                f"{path.name}: {algo} {got[algo]} does not match the published "
                f"{want} ({archive.checksum_source or 'recipe'})"
            )
    return got


def _open(url: str, offset: int):
    if url.startswith("file://"):
        local = Path(urllib.request.url2pathname(url[len("file://") :]))
        if not local.is_file():
            raise DownloadError(f"{url}: not found")
        f = open(local, "rb")
        size = local.stat().st_size
        f.seek(min(offset, size))
        return f, size, True
    req = urllib.request.Request(url, headers={"User-Agent": "asrbench"})
    if offset:
        req.add_header("Range", f"bytes={offset}-")
    try:
        resp = urllib.request.urlopen(req, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:  # already complete
            return None, offset, True
        raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise DownloadError(f"{url}: {getattr(exc, 'reason', exc)}") from None
    resumed = resp.status == 206
    length = resp.headers.get("Content-Length")
    total = (int(length) + (offset if resumed else 0)) if length is not None else None
    return resp, total, resumed


def _progress(total: int | None, name: str):
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TransferSpeedColumn,
    )

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        transient=True,
        disable=not sys.stderr.isatty(),
    )


def _transfer(url: str, part: InOrderPart, expected: int | None) -> None:
    offset = part.resume_from(expected)
    if offset is None:
        return
    stream, total, resumed = _open(url, offset)
    if stream is None:
        return
    if not resumed:
        offset = 0
    total = expected or total
    try:
        with _progress(total, part.name) as prog:
            task = prog.add_task(part.name, total=total, completed=offset)
            blocks = iter(lambda: stream.read(CHUNK), b"")
            part.write(blocks, offset, lambda n: prog.update(task, advance=n))
    except (OSError, urllib.error.URLError, http.client.HTTPException) as exc:
        raise DownloadError(
            f"{url}: interrupted after {part.size} bytes ({exc}); rerun the same command to resume"
        ) from None
    finally:
        stream.close()
    got = part.size
    if total is not None and got < total:
        raise DownloadError(
            f"{url}: connection closed after {got} of {total} bytes; rerun the "
            "same command to resume"
        )


def fetch(url: str, archive: Archive, cache: Path) -> tuple[Path, dict[str, str]]:
    """Download `url` into the cache (resuming a partial file), verify it; (path, digests)."""
    from asrbench.identity import digest, short

    folder = cache / "downloads" / short(digest("download", source=url))
    final, part = folder / archive.name, InOrderPart(folder, archive.name)
    if final.is_file():
        try:
            return final, verify(final, archive)
        except DownloadError:
            final.unlink()
    for attempt in (1, 2):
        _transfer(url, part, archive.size)
        try:
            return final, part.commit(final, lambda p: verify(p, archive))
        except DownloadError as exc:
            if attempt == 2:
                raise DownloadError(
                    f"{exc}; downloaded twice, the file was removed. If you "
                    "trust this copy, pass --checksum "
                    f"{archive.name}=sha256:<its hash>"
                ) from None
    raise AssertionError("unreachable")


def local(path: Path, archive: Archive) -> tuple[Path, dict[str, str]]:
    """An archive the user already has: verified in place, never copied."""
    if not path.is_file():
        raise InputError(f"{path}: not found (the recipe needs {archive.path})")
    return path, verify(path, archive)


def safe_member(name: str) -> bool:
    parts = Path(name).parts
    return not (name.startswith(("/", "\\")) or ".." in parts or not parts)


def extract(archive: Path, dest: Path, wanted: Callable[[str], bool]) -> list[str]:
    """Extract the members `wanted` keeps (tar, tar.gz/bz2/xz, zip) into `dest`, in one streamed
    pass; a truncated or corrupt archive is a DownloadError (and it is deleted from the cache)."""
    names: list[str] = []
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    if info.is_dir() or not wanted(info.filename):
                        continue
                    if not safe_member(info.filename):
                        raise DownloadError(f"{archive.name}: unsafe member {info.filename!r}")
                    target = dest / info.filename
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with z.open(info) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out, CHUNK)
                    names.append(info.filename)
            return names
        with tarfile.open(archive, "r|*") as tar:
            for member in tar:
                if not member.isfile() or not wanted(member.name):
                    continue
                if not safe_member(member.name):
                    raise DownloadError(f"{archive.name}: unsafe member {member.name!r}")
                tar.extract(member, dest, filter="data")
                names.append(member.name)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise DownloadError(
            f"{archive.name}: archive is truncated or corrupt ({exc}); remove "
            f"{archive} and rerun to download it again"
        ) from None
    return names
