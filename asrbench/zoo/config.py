"""`zoo.yaml`: named remotes and the dataset and model entries they hold."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import yaml

from asrbench.zoo.errors import ZooInputError

KINDS = ("dataset", "model")


@dataclass(frozen=True)
class RemoteSpec:
    """One remote: `s3://bucket/prefix` (with endpoint, region, profile, anonymous) or `file://path`."""

    name: str
    url: str
    endpoint_url: str | None = None
    region: str | None = None
    profile: str | None = None
    anonymous: bool = False
    max_attempts: int = 5  # botocore retries, including the first try
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    concurrency: int = 0  # parallel transfers; 0 = auto (see effective_concurrency)

    @property
    def effective_concurrency(self) -> int:
        """`concurrency`, or by default 2 per CPU within [4, 16]: on a fast link the CPU is
        the limit and more threads only contend; raise it for high-latency links."""
        if self.concurrency > 0:
            return self.concurrency
        return max(4, min(16, 2 * (os.cpu_count() or 2)))

    @property
    def scheme(self) -> str:
        return urlparse(self.url).scheme

    def file_root(self, base: Path) -> Path:
        """For `file://` remotes: the folder; relative to `base` (zoo.yaml's folder)."""
        rest = self.url[len("file://") :]
        path = Path(os.path.expanduser(rest))
        return path if path.is_absolute() else (base / path)

    def bucket_prefix(self) -> tuple[str, str]:
        """For `s3://` remotes: (bucket, prefix without slashes at the ends)."""
        parsed = urlparse(self.url)
        return parsed.netloc, parsed.path.strip("/")


@dataclass(frozen=True)
class Entry:
    """A dataset or model listed in zoo.yaml: which remote holds it, optionally a pinned version."""

    kind: str
    id: str
    remote: str
    version: str | None = None
    description: str = ""


@dataclass
class ZooConfig:
    """Parsed zoo.yaml."""

    path: Path
    default_remote: str
    remotes: dict[str, RemoteSpec]
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)

    @property
    def base(self) -> Path:
        return self.path.parent

    def remote(self, name: str | None) -> RemoteSpec:
        name = name or self.default_remote
        if name not in self.remotes:
            known = ", ".join(sorted(self.remotes)) or "none"
            raise ZooInputError(f"{self.path}: no remote named {name!r} (known: {known})")
        return self.remotes[name]

    def remote_for(self, kind: str, entry_id: str, override: str | None = None) -> RemoteSpec:
        """The remote to use for an entry: override, else its zoo.yaml entry, else default."""
        if override:
            return self.remote(override)
        entry = self.entries.get((kind, entry_id))
        return self.remote(entry.remote if entry else None)


def default_config_path() -> Path:
    """$ASRBENCH_ZOO_CONFIG, else `<repo>/zoo.yaml`."""
    from asrbench.settings import settings

    return settings().zoo_config


_REMOTE_KEYS = {
    "url",
    "endpoint_url",
    "region",
    "profile",
    "anonymous",
    "max_attempts",
    "connect_timeout",
    "read_timeout",
    "concurrency",
    "description",
}


def load_config(path: str | Path | None = None) -> ZooConfig:
    """Read and check zoo.yaml; errors name the file and the key at fault."""
    path = Path(path) if path else default_config_path()
    if not path.is_file():
        raise ZooInputError(f"{path}: zoo config not found; create it (see docs/ZOO.md)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ZooInputError(f"{path}: cannot parse YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ZooInputError(f"{path}: top level must be a mapping")
    remotes: dict[str, RemoteSpec] = {}
    for name, spec in (data.get("remotes") or {}).items():
        if not isinstance(spec, dict) or "url" not in spec:
            raise ZooInputError(
                f"{path}: remotes.{name} needs a 'url' (s3://bucket/prefix or file://path)"
            )
        unknown = set(spec) - _REMOTE_KEYS
        if unknown:
            raise ZooInputError(f"{path}: remotes.{name}: unknown key(s) {sorted(unknown)}")
        url = str(spec["url"])
        if not (url.startswith("s3://") or url.startswith("file://")):
            raise ZooInputError(
                f"{path}: remotes.{name}.url {url!r} must start with s3:// or file://"
            )
        if url.startswith("s3://") and not urlparse(url).netloc:
            raise ZooInputError(f"{path}: remotes.{name}.url {url!r} has no bucket")
        kwargs = {
            k: v for k, v in spec.items() if k in _REMOTE_KEYS and k not in ("url", "description")
        }
        remotes[str(name)] = RemoteSpec(name=str(name), url=url, **kwargs)
    # Without `default_remote`: `local` if defined, else the first remote listed.
    fallback = "local" if "local" in remotes else next(iter(remotes), "")
    default = str(data.get("default_remote") or fallback)
    if not remotes:
        raise ZooInputError(
            f"{path}: no remotes defined; add at least `remotes: {{local: {{url: file://.zoo}}}}`"
        )
    if default not in remotes:
        raise ZooInputError(f"{path}: default_remote {default!r} is not one of the remotes")
    entries: dict[tuple[str, str], Entry] = {}
    for kind in KINDS:
        for entry_id, spec in (data.get(kind + "s") or {}).items():
            spec = spec or {}
            if not isinstance(spec, dict):
                raise ZooInputError(f"{path}: {kind}s.{entry_id} must be a mapping")
            remote = str(spec.get("remote", default))
            if remote not in remotes:
                raise ZooInputError(f"{path}: {kind}s.{entry_id}.remote {remote!r} is not defined")
            version = spec.get("version")
            entries[(kind, str(entry_id))] = Entry(
                kind,
                str(entry_id),
                remote,
                str(version) if version else None,
                str(spec.get("description", "")),
            )
    return ZooConfig(path=path, default_remote=default, remotes=remotes, entries=entries)


def entry_remote(
    kind: str, entry_id: str, remote: str | None, config: ZooConfig | Path | None
) -> tuple[ZooConfig, RemoteSpec]:
    """Check an entry's kind and ID and find its remote: what push, pull and verify start with."""
    from asrbench.zoo.manifest import check_id

    if kind not in KINDS:
        raise ZooInputError(f"kind must be one of {KINDS}")
    check_id(entry_id)
    cfg = config if isinstance(config, ZooConfig) else load_config(config)
    return cfg, cfg.remote_for(kind, entry_id, remote)
