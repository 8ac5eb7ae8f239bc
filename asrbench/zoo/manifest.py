"""Entry manifests: the list of (path, size, sha256) of one immutable version, plus metadata.

A version's name is derived from its content (files, metadata, image), so pushing the same
content twice, even concurrently, names the same version, and a manifest can be checked
against its own name when it is read back.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from asrbench.errors import InputError
from asrbench.identity import digest, file_sha256, short, tree_paths
from asrbench.ids import check_id as check_safe_id
from asrbench.zoo.errors import ZooError, ZooInputError

FORMAT = "asrbench-zoo-manifest/1"
_VERSION = re.compile(r"^[0-9a-f]{16}$")
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
    """An entry ID names `datasets/<ID>`, `models/<ID>` and a prefix on the remote: the one ID
    check (asrbench/ids.py)."""
    try:
        return check_safe_id(entry_id, "entry ID", "see `ops/zoo list` for the IDs")
    except InputError as exc:
        raise ZooInputError(str(exc)) from None


def check_version(version: str) -> str:
    if not _VERSION.match(version or ""):
        raise ZooInputError(f"version {version!r} is not a zoo version (16 hex digits)")
    return version


def list_files(root: Path) -> list[Path]:
    """Every regular file under `root` (hidden files skipped), sorted; symlinks are refused."""
    root = Path(root)
    if not root.is_dir():
        raise ZooError(f"{root}: folder not found")
    rels = tree_paths(root, hidden=False, skip_names=_SKIP_NAMES, on_symlink=_refuse_symlink)
    return [root / r for r in rels]


def _refuse_symlink(path: Path) -> None:
    if path.is_dir():
        raise ZooError(
            f"{path}: symlinked folders cannot be pushed; replace the link with the real folder"
        )
    raise ZooError(f"{path}: symlinks cannot be pushed; replace it with the file itself")


def file_entry(root: Path, path: Path, rel: str | None = None) -> FileEntry:
    """Hash one file into its manifest entry (stored at `rel`, default its path under root)."""
    st = path.stat()
    return FileEntry(
        rel or path.relative_to(root).as_posix(),
        st.st_size,
        file_sha256(path),
        bool(st.st_mode & 0o111),
    )


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
    return short(
        digest(
            "zoo-version",
            entry_kind=kind,
            id=entry_id,
            meta=meta,
            image=image,
            files=[[f.path, f.size, f.sha256] + (["x"] if f.executable else []) for f in files],
        ),
        16,
    )


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


class _File(BaseModel):
    """One file of a manifest, as stored: only regular files, never links."""

    model_config = ConfigDict(extra="forbid", strict=True)
    path: str
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    executable: bool = False
    type: Literal["file"] = "file"

    @field_validator("path")
    @classmethod
    def _safe(cls, v: str) -> str:
        try:
            return check_relpath(v)
        except ZooError as exc:
            raise ValueError(str(exc)) from None


class _Image(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    format: Literal["asrbench-zoo-manifest/1"]
    kind: str
    id: str
    version: str
    meta: dict = Field(default_factory=dict)
    image: _Image | None = None
    files: list[_File]


def _first_error(exc: ValidationError, raw: dict) -> str:
    """The first schema error, worded for a user: where (files[3], path) and what is wrong."""
    err = exc.errors()[0]
    loc = err["loc"]
    where = ".".join(f"[{x}]" if isinstance(x, int) else str(x) for x in loc).replace(".[", "[")
    if loc and loc[0] == "files" and len(loc) > 1 and isinstance(loc[1], int):
        item = raw["files"][loc[1]]
        if isinstance(item, dict) and (
            item.get("type", "file") != "file" or "target" in item or "link" in item
        ):
            return (
                f"files[{loc[1]}] ({item.get('path')!r}) is a {item.get('type', 'link')}, "
                "not a regular file (symlinks are never placed)"
            )
    return f"{where}: {err['msg']} (got {err.get('input')!r})"


def parse_manifest(
    data: bytes, kind: str, entry_id: str, version: str | None, source: str
) -> tuple[dict, list[FileEntry]]:
    """Check a manifest read from a remote; refuse anything unsafe or inconsistent.

    Refused: bad JSON, another entry's manifest, absolute paths, '..', symlinks or other
    non-file entries, duplicate paths (also a file that is a folder of another), bad hashes,
    and a version that does not match the content (tampering or corruption). The shape is a
    pydantic schema; the cross-field rules follow it.
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
    try:
        checked = _Manifest.model_validate(man)
    except ValidationError as exc:
        raise bad(_first_error(exc, man)) from None
    files: list[FileEntry] = []
    seen: set[str] = set()
    folded: set[str] = set()
    for i, f in enumerate(checked.files):
        if f.path in seen or f.path.casefold() in folded:
            raise bad(f"files[{i}]: duplicate path {f.path!r}")
        seen.add(f.path)
        folded.add(f.path.casefold())
        files.append(FileEntry(f.path, f.size, f.sha256, f.executable))
    # A path that is also the folder of another path cannot be placed.
    for entry in files:
        for parent in PurePosixPath(entry.path).parents:
            if str(parent) != "." and str(parent) in seen:
                raise bad(f"{entry.path!r} lies under {str(parent)!r}, which is also a file")
    image = man.get("image")
    expected = compute_version(kind, entry_id, files, checked.meta, image)
    if man.get("version") != expected:
        raise bad(
            f"its content hashes to version {expected}, but it claims "
            f"{man.get('version')!r}: the manifest was altered or corrupted"
        )
    return man, files
