"""`ops/zoo verify`: re-hash a version's objects on the remote; `--repair` re-uploads bad ones.

A pull detects a corrupt object (its SHA-256 check fails) but cannot fix the remote; a push
that trusts a HEAD size check would say "already published" and leave it broken. Verify reads
every object of a version back (in ranges, hashing as it goes, storing nothing), and with
`repair` uploads a replacement from a good local copy: the zoo cache, or the entry's folder.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from asrbench.entries import local_dir
from asrbench.identity import hash_file, stream_sha256
from asrbench.zoo.cache import Cache
from asrbench.zoo.config import ZooConfig, entry_remote
from asrbench.zoo.errors import ZooError
from asrbench.zoo.manifest import object_key
from asrbench.zoo.progress import Reporter
from asrbench.zoo.pull import fetch_manifest, resolve_version
from asrbench.zoo.remote import Remote, open_remote

CHUNK = 8 * 1024 * 1024


@dataclass
class VerifyResult:
    """What a verify found and did."""

    kind: str
    id: str
    version: str
    remote: str
    objects: int
    bytes_read: int
    bad: list[dict] = field(default_factory=list)  # {"path", "sha256", "why"}
    repaired: list[str] = field(default_factory=list)  # paths re-uploaded and checked again
    unrepaired: list[dict] = field(default_factory=list)  # {"path", "why"}
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.bad or len(self.repaired) == len(self.bad)

    def as_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def remote_sha256(rem: Remote, key: str, size: int, reporter: Reporter | None = None) -> str:
    """SHA-256 of a remote object's bytes, read in ranges (nothing is stored)."""

    def chunks() -> Iterator[bytes]:
        for start in range(0, size, CHUNK):
            data = rem.read_range(key, start, min(start + CHUNK, size))
            if reporter:
                reporter.advance(len(data))
            yield data

    return stream_sha256(chunks())


def _good_copy(cache: Cache, source: Path, path: str, sha: str) -> Path | None:
    """A local file with exactly these bytes: the zoo cache's object, else the entry folder's."""
    for candidate in (cache.object_path(sha), source / path):
        if candidate.is_file() and hash_file(candidate) == sha:
            return candidate
    return None


def verify(
    kind: str,
    entry_id: str,
    *,
    version: str | None = None,
    remote: str | None = None,
    config: ZooConfig | Path | None = None,
    repair: bool = False,
    source: Path | None = None,
    reporter: Reporter | None = None,
) -> VerifyResult:
    """Re-hash every object of one version on its remote; repair bad ones when asked."""
    t0 = time.monotonic()
    cfg, spec = entry_remote(kind, entry_id, remote, config)
    reporter = reporter or Reporter()
    cache = Cache()
    rem = open_remote(spec, cfg.base)
    try:
        version = version or resolve_version(rem, kind, entry_id)
        man, files = fetch_manifest(rem, cache, kind, entry_id, version)
        objects = {f.sha256: (f.path, f.size) for f in files}
        if man.get("image"):
            img = man["image"]
            objects.setdefault(img["sha256"], (f"image {img.get('ref')}", img["size"]))
        result = VerifyResult(kind, entry_id, version, spec.name, len(objects), 0)
        reporter.start(
            f"verify {kind} {entry_id}@{version} on {spec.name}",
            sum(size for _, size in objects.values()),
        )
        try:
            for sha, (path, size) in sorted(objects.items(), key=lambda x: x[1][0]):
                key = object_key(sha)
                stored = rem.stat(key)
                if stored is None:
                    why: str | None = "missing"
                elif stored != size:
                    why = f"size {stored}, expected {size}"
                else:
                    got = remote_sha256(rem, key, size, reporter)
                    result.bytes_read += size
                    why = None if got == sha else f"SHA-256 {got}"
                if why:
                    result.bad.append({"path": path, "sha256": sha, "why": why})
        finally:
            reporter.finish()
        if repair and result.bad:
            folder = Path(source) if source else local_dir(kind, entry_id)
            fixed: set[str] = set()
            for b in result.bad:
                good = _good_copy(cache, folder, b["path"], b["sha256"])
                if good is None:
                    result.unrepaired.append(
                        {
                            "path": b["path"],
                            "why": "no local copy with "
                            f"SHA-256 {b['sha256']} (zoo cache or {folder})",
                        }
                    )
                    continue
                rem.upload_files([(good, object_key(b["sha256"]))])
                size = good.stat().st_size
                if remote_sha256(rem, object_key(b["sha256"]), size) != b["sha256"]:
                    raise ZooError(
                        f"{spec.name}: {b['path']} still reads back wrong after "
                        "re-upload; the remote corrupts what it stores"
                    )
                result.repaired.append(b["path"])
                fixed.add(b["sha256"])
            cache.clear_corrupt(spec.name, fixed)
        elif not result.bad:
            cache.clear_corrupt(spec.name, set(objects))
    finally:
        rem.close()
    result.seconds = round(time.monotonic() - t0, 3)
    return result
