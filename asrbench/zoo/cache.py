"""The local cache: verified objects and manifests, plus resumable partial downloads.

<cache>/zoo/objects/sha256/<aa>/<hex>            verified, read-only (hard-linked into places)
<cache>/zoo/manifests/<kind>s/<ID>/<V>.json       manifests already checked
<cache>/zoo/partial/<hex>.part, <hex>.done       a download in progress and its finished chunks
<cache>/zoo/checkouts/<kind>s/<ID>/<V>/           versions materialised beside a local folder
<cache>/zoo/corrupt/<remote>.txt                  objects found corrupt there (re-hashed by push)
"""

from __future__ import annotations

from pathlib import Path

from asrbench.fsio import atomic_write_text
from asrbench.settings import settings
from asrbench.zoo.manifest import object_key


class Cache:
    """Paths inside the zoo cache; `root` defaults to `<cache>/zoo`."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else settings().cache / "zoo"

    def object_path(self, sha256: str) -> Path:
        return self.root / object_key(sha256)

    def has_object(self, sha256: str, size: int) -> bool:
        try:
            return self.object_path(sha256).stat().st_size == size
        except FileNotFoundError:
            return False

    def manifest_path(self, kind: str, entry_id: str, version: str) -> Path:
        return self.root / "manifests" / f"{kind}s" / entry_id / f"{version}.json"

    def partial_dir(self) -> Path:
        return self.root / "partial"

    def tmp_dir(self) -> Path:
        return self.root / "tmp"

    def checkout_path(self, kind: str, entry_id: str, version: str) -> Path:
        return self.root / "checkouts" / f"{kind}s" / entry_id / version

    def cached_versions(self, kind: str, entry_id: str) -> list[str]:
        folder = self.root / "manifests" / f"{kind}s" / entry_id
        return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []

    def cached_entries(self) -> dict[str, list[str]]:
        """'<kind> <ID>' -> versions whose manifests the cache holds."""
        base = self.root / "manifests"
        out: dict[str, list[str]] = {}
        if base.is_dir():
            for folder in sorted(p for p in base.glob("*/*") if p.is_dir()):
                kind = folder.parent.name.removesuffix("s")
                out[f"{kind} {folder.name}"] = self.cached_versions(kind, folder.name)
        return out

    def _corrupt_file(self, remote: str) -> Path:
        return self.root / "corrupt" / f"{remote}.txt"

    def corrupt(self, remote: str) -> set[str]:
        """Objects a pull found corrupt on `remote` and no push or repair has replaced yet."""
        path = self._corrupt_file(remote)
        return set(path.read_text().split()) if path.is_file() else set()

    def note_corrupt(self, remote: str, shas: list[str]) -> None:
        atomic_write_text(
            self._corrupt_file(remote),
            "".join(f"{s}\n" for s in sorted(self.corrupt(remote) | set(shas))),
        )

    def clear_corrupt(self, remote: str, shas: set[str]) -> None:
        left = self.corrupt(remote) - shas
        atomic_write_text(self._corrupt_file(remote), "".join(f"{s}\n" for s in sorted(left)))

    def usage(self) -> tuple[int, int]:
        """(number of objects, bytes) held in the cache."""
        count = size = 0
        base = self.root / "objects"
        if base.is_dir():
            for p in base.rglob("*"):
                if p.is_file():
                    count += 1
                    size += p.stat().st_size
        return count, size
