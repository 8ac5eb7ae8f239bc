"""Entry manifests: the list of (path, size, sha256) of one immutable version, plus metadata.

A version's name is derived from its content (files, metadata, image), so pushing the same
content twice, even concurrently, names the same version, and a manifest can be checked
against its own name when it is read back.
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from asrbench.identity import digest, file_sha256, short
from asrbench.zoo.errors import ZooError, ZooInputError

FORMAT = "asrbench-zoo-manifest/1"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_VERSION = re.compile(r"^[0-9a-f]{16}$")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
# Files a push leaves out: the pull marker, temp files, editor and OS litter.
_SKIP_NAMES = {"__pycache__", ".DS_Store", ".git"}


@dataclass(frozen=True)
class FileEntry:
    """One file of a version: a safe relative POSIX path, its size and SHA-256."""

    path: str
    size: int
    sha256: str
    executable: bool = False  # placed as a 0755 copy (model programs), not a read-only link


def object_key(sha256: str) -> str:
    """Where an object lives on a remote (and, by the same layout, in the local cache)."""
    return f"objects/sha256/{sha256[:2]}/{sha256}"


def entry_prefix(kind: str, entry_id: str) -> str:
    return f"entries/{kind}s/{entry_id}/"


def manifest_key(kind: str, entry_id: str, version: str) -> str:
    return f"{entry_prefix(kind, entry_id)}versions/{version}.json"


def latest_key(kind: str, entry_id: str) -> str:
    return f"{entry_prefix(kind, entry_id)}latest.json"


def check_id(entry_id: str) -> str:
    if not _ID.match(entry_id or ""):
        raise ZooInputError(f"entry ID {entry_id!r} must be letters, digits, '_', '.', '-'")
    return entry_id


def check_version(version: str) -> str:
    if not _VERSION.match(version or ""):
        raise ZooInputError(f"version {version!r} is not a zoo version (16 hex digits)")
    return version


def list_files(root: Path) -> list[Path]:
    """Every regular file under `root` (hidden files skipped), sorted; symlinks are refused."""
    root = Path(root)
    if not root.is_dir():
        raise ZooError(f"{root}: folder not found")
    paths: list[Path] = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_NAMES)
        for d in dirs:
            if (Path(dirpath) / d).is_symlink():
                raise ZooError(
                    f"{Path(dirpath) / d}: symlinked folders cannot be pushed; "
                    "replace the link with the real folder"
                )
        for fn in sorted(files):
            if fn.startswith(".") or fn in _SKIP_NAMES:
                continue
            p = Path(dirpath) / fn
            if p.is_symlink():
                raise ZooError(f"{p}: symlinks cannot be pushed; replace it with the file itself")
            if p.is_file():
                paths.append(p)
    return sorted(paths, key=lambda p: p.relative_to(root).as_posix())


def file_entry(root: Path, path: Path) -> FileEntry:
    """Hash one file into its manifest entry."""
    st = path.stat()
    return FileEntry(path.relative_to(root).as_posix(), st.st_size, file_sha256(path),
                     bool(st.st_mode & 0o111))


def scan_folder(root: Path, hash_workers: int = 4) -> list[FileEntry]:
    """Every file under `root` hashed (see list_files), sorted by path."""
    paths = list_files(root)
    # hashlib releases the GIL on large buffers, so threads hash files in parallel.
    with ThreadPoolExecutor(hash_workers) as pool:
        return list(pool.map(lambda p: file_entry(Path(root), p), paths))


def compute_version(
    kind: str, entry_id: str, files: list[FileEntry], meta: dict, image: dict | None
) -> str:
    """16 hex digits of the identity of everything that defines the version's content."""
    return short(digest("zoo-version", entry_kind=kind, id=entry_id, meta=meta, image=image,
                        files=[[f.path, f.size, f.sha256] + (["x"] if f.executable else [])
                               for f in files]), 16)


def build_manifest(
    kind: str,
    entry_id: str,
    files: list[FileEntry],
    meta: dict,
    image: dict | None = None,
    created: str = "",
) -> dict:
    """A manifest dict ready to publish (its version computed from its content)."""
    return {
        "format": FORMAT,
        "kind": kind,
        "id": entry_id,
        "version": compute_version(kind, entry_id, files, meta, image),
        "created": created,
        "meta": meta,
        "image": image,
        "files": [
            {"path": f.path, "size": f.size, "sha256": f.sha256}
            | ({"executable": True} if f.executable else {})
            for f in files
        ],
    }


def dump_manifest(manifest: dict) -> bytes:
    return json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False).encode() + b"\n"


def check_relpath(path: Any) -> str:
    """Return `path` if it is a safe relative POSIX path inside the entry, else raise why not."""
    if not isinstance(path, str) or not path:
        raise ZooError(f"path {path!r} is empty or not a string")
    if "\\" in path or "\0" in path or any(ord(c) < 32 for c in path):
        raise ZooError(f"path {path!r} contains a backslash or control character")
    if path.startswith("/") or path.startswith("~") or re.match(r"^[A-Za-z]:", path):
        raise ZooError(f"path {path!r} is absolute")
    parts = PurePosixPath(path).parts
    if any(p in ("..", ".") for p in path.split("/")) or "" in path.split("/"):
        raise ZooError(f"path {path!r} contains '..', '.' or an empty component")
    if parts and parts[0].startswith(".zoo"):
        raise ZooError(f"path {path!r} uses the reserved name .zoo*")
    return path


def parse_manifest(
    data: bytes, kind: str, entry_id: str, version: str | None, source: str
) -> tuple[dict, list[FileEntry]]:
    """Check a manifest read from a remote; refuse anything unsafe or inconsistent.

    Refused: bad JSON, another entry's manifest, absolute paths, '..', symlinks or other
    non-file entries, duplicate paths (also a file that is a folder of another), bad hashes,
    and a version that does not match the content (tampering or corruption).
    """

    def bad(why: str) -> ZooError:
        return ZooError(f"{source}: refusing manifest: {why}")

    try:
        man = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise bad(f"not valid JSON ({exc})") from exc
    if not isinstance(man, dict) or man.get("format") != FORMAT:
        raise bad(f"format is not {FORMAT}")
    if man.get("kind") != kind or man.get("id") != entry_id:
        raise bad(f"it describes {man.get('kind')} {man.get('id')!r}, not {kind} {entry_id!r}")
    if version is not None and man.get("version") != version:
        raise bad(f"it names version {man.get('version')!r}, expected {version!r}")
    raw = man.get("files")
    if not isinstance(raw, list):
        raise bad("'files' is not a list")
    files: list[FileEntry] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise bad(f"files[{i}] is not a mapping")
        kind_of = item.get("type", "file")
        if kind_of != "file" or "target" in item or "link" in item:
            raise bad(
                f"files[{i}] ({item.get('path')!r}) is a {kind_of}, not a regular file "
                "(symlinks are never placed)"
            )
        try:
            path = check_relpath(item.get("path"))
        except ZooError as exc:
            raise bad(f"files[{i}]: {exc}") from None
        if path in seen or path.casefold() in {s.casefold() for s in seen}:
            raise bad(f"files[{i}]: duplicate path {path!r}")
        seen.add(path)
        size, sha = item.get("size"), item.get("sha256")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise bad(f"files[{i}] ({path}): size {size!r} is not a non-negative integer")
        if not isinstance(sha, str) or not _HEX64.match(sha):
            raise bad(f"files[{i}] ({path}): sha256 {sha!r} is not 64 lowercase hex digits")
        executable = item.get("executable", False)
        if not isinstance(executable, bool):
            raise bad(f"files[{i}] ({path}): 'executable' must be true or false")
        files.append(FileEntry(path, size, sha, executable))
    # A path that is also the folder of another path cannot be placed.
    for f in files:
        for parent in PurePosixPath(f.path).parents:
            if str(parent) != "." and str(parent) in seen:
                raise bad(f"{f.path!r} lies under {str(parent)!r}, which is also a file")
    image = man.get("image")
    if image is not None:
        if not isinstance(image, dict) or not _HEX64.match(str(image.get("sha256", ""))):
            raise bad("'image' lacks a valid sha256")
        if not isinstance(image.get("size"), int):
            raise bad("'image' lacks a size")
    meta = man.get("meta") or {}
    if not isinstance(meta, dict):
        raise bad("'meta' is not a mapping")
    expected = compute_version(kind, entry_id, files, meta, image)
    if man.get("version") != expected:
        raise bad(
            f"its content hashes to version {expected}, but it claims "
            f"{man.get('version')!r}: the manifest was altered or corrupted"
        )
    return man, files
