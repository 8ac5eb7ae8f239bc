"""ops/zoo list|show: what each remote and the local cache hold."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from asrbench.zoo.cache import Cache
from asrbench.zoo.errors import ZooError
from asrbench.zoo.manifest import latest_key, manifest_key, parse_manifest
from asrbench.zoo.remote import Remote


@dataclass
class EntrySummary:
    """One entry on a remote: its versions (oldest first by creation time) and `latest`."""

    kind: str
    id: str
    versions: list[dict] = field(default_factory=list)  # {version, created, files, bytes, cached}
    latest: str | None = None


def list_entries(rem: Remote) -> dict[tuple[str, str], list[str]]:
    """(kind, ID) -> version names, from the remote's keys alone."""
    out: dict[tuple[str, str], list[str]] = {}
    for key, _size in rem.list("entries/"):
        parts = key.split("/")
        if len(parts) == 5 and parts[3] == "versions" and parts[4].endswith(".json"):
            kind = parts[1].removesuffix("s")
            out.setdefault((kind, parts[2]), []).append(parts[4][: -len(".json")])
    return out


def describe(
    rem: Remote, kind: str, entry_id: str, versions: list[str], cache: Cache | None = None
) -> EntrySummary:
    """Read each version's manifest for sizes and dates; mark what the local cache holds."""
    cache = cache or Cache()
    summary = EntrySummary(kind, entry_id)
    raw = rem.get_bytes(latest_key(kind, entry_id))
    if raw:
        try:
            summary.latest = json.loads(raw).get("version")
        except ValueError:
            summary.latest = None
    for v in versions:
        data = rem.get_bytes(manifest_key(kind, entry_id, v))
        try:
            man, files = parse_manifest(data or b"", kind, entry_id, v, f"{rem.name}:{v}")
        except ZooError as exc:
            summary.versions.append({"version": v, "error": str(exc)})
            continue
        summary.versions.append(
            {
                "version": v,
                "created": man.get("created", ""),
                "files": len(files),
                "bytes": sum(f.size for f in files) + ((man.get("image") or {}).get("size") or 0),
                "image": (man.get("image") or {}).get("ref"),
                "cached": all(cache.has_object(f.sha256, f.size) for f in files),
            }
        )
    summary.versions.sort(key=lambda d: d.get("created", ""))
    return summary
