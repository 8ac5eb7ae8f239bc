"""ops/push: upload an entry's missing objects, then publish its manifest (last)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from asrbench.fsio import file_sha256
from asrbench.zoo.cache import Cache
from asrbench.zoo.config import KINDS, ZooConfig, load_config
from asrbench.zoo.errors import ZooError
from asrbench.zoo.manifest import (
    FileEntry,
    build_manifest,
    check_id,
    dump_manifest,
    latest_key,
    manifest_key,
    object_key,
    parse_manifest,
    scan_folder,
)
from asrbench.zoo.progress import Counter, Reporter
from asrbench.zoo.remote import Remote, open_remote


@dataclass
class PushResult:
    """What a push did, for the CLI summary and for tests."""

    kind: str
    id: str
    version: str
    remote: str
    files: int
    bytes_total: int
    objects_uploaded: int
    bytes_uploaded: int
    already_published: bool
    seconds: float

    def as_dict(self) -> dict:
        return asdict(self)


def default_source(kind: str, entry_id: str) -> Path:
    """The local folder of an entry (same rule as pull's default destination)."""
    from asrbench.zoo.pull import default_dest

    return default_dest(kind, entry_id)


def dataset_content_hash(root: Path, files: list[FileEntry]) -> str:
    """The dataset's identity, as `asrbench.dataset.content_hash`, from hashes already computed.

    Same formula (and a test checks equality), so that pushing does not hash the audio twice.
    """
    from asrbench.dataset import load_dataset

    ds = load_dataset(root, check_audio=False)
    by_path = {f.path: f.sha256 for f in files}
    h = hashlib.sha256()
    h.update(b"asrbench-dataset-v1\0")
    h.update((root / "metadata.tsv").read_bytes())
    for utt in ds.utterances:
        rel = Path(utt.audio).as_posix()
        sha = by_path.get(rel) or file_sha256(root / utt.audio)
        h.update(b"\0" + utt.id.encode() + b"\0")
        h.update(sha.encode())
    return "sha256:" + h.hexdigest()


def _entry_meta(kind: str, root: Path, files: list[FileEntry]) -> dict:
    """Metadata stored in the manifest: the dataset or model card, plus identity."""
    if kind == "dataset":
        from asrbench.dataset import DatasetError, load_dataset

        try:
            ds = load_dataset(root)
        except DatasetError as exc:
            raise ZooError(f"{root}: not a valid dataset, fix it before pushing:\n{exc}") from exc
        return {
            "card": ds.meta,
            "utterances": len(ds),
            "duration_s": round(ds.total_duration, 3),
            "content_hash": dataset_content_hash(root, files),
        }
    card = root / "model.yaml"
    if not card.is_file():
        raise ZooError(f"{root}: model.yaml not found; a model folder needs its card")
    try:
        data = yaml.safe_load(card.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ZooError(f"{card}: cannot parse YAML: {exc}") from exc
    return {"card": data}


def _missing_objects(remote: Remote, wanted: dict[str, int]) -> dict[str, int]:
    """Objects not yet on the remote (or there with the wrong size: an interrupted upload)."""

    def check(item: tuple[str, int]) -> tuple[str, int, bool]:
        sha, size = item
        return sha, size, remote.stat(object_key(sha)) != size

    with ThreadPoolExecutor(max(4, remote.concurrency)) as pool:
        results = list(pool.map(check, wanted.items()))
    return {sha: size for sha, size, missing in results if missing}


def push(
    kind: str,
    entry_id: str,
    *,
    source: Path | None = None,
    remote: str | None = None,
    config: ZooConfig | Path | None = None,
    with_image: bool = False,
    image_ref: str | None = None,
    reporter: Reporter | None = None,
) -> PushResult:
    """Publish the folder of a dataset or model as a new immutable version (idempotent)."""
    if kind not in KINDS:
        raise ZooError(f"kind must be one of {KINDS}")
    check_id(entry_id)
    t0 = time.monotonic()
    cfg = config if isinstance(config, ZooConfig) else load_config(config)
    spec = cfg.remote_for(kind, entry_id, remote)
    root = Path(source) if source else default_source(kind, entry_id)
    reporter = reporter or Reporter()
    files = scan_folder(root)
    if not files:
        raise ZooError(f"{root}: no files to push")
    meta = _entry_meta(kind, root, files)

    image = None
    image_path: Path | None = None
    if with_image:
        if kind != "model":
            raise ZooError("--with-image applies to models only")
        from asrbench.zoo.image import save_image

        ref = image_ref or f"asrbench/{entry_id.lower()}:latest"
        image_path = Cache().tmp_dir() / f"image-{entry_id}-{os.getpid()}.tar"
        info = save_image(ref, image_path)
        image = {**info, "sha256": file_sha256(image_path), "size": image_path.stat().st_size}

    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest = build_manifest(kind, entry_id, files, meta, image, created)
    version = manifest["version"]
    rem = open_remote(spec, cfg.base)
    try:
        mkey = manifest_key(kind, entry_id, version)
        total = sum(f.size for f in files) + (image["size"] if image else 0)
        if rem.stat(mkey) is not None:
            # Published versions are immutable and complete: nothing to upload.
            _set_latest(rem, kind, entry_id, version, created)
            return PushResult(
                kind,
                entry_id,
                version,
                spec.name,
                len(files),
                total,
                0,
                0,
                True,
                time.monotonic() - t0,
            )
        wanted: dict[str, int] = {f.sha256: f.size for f in files}
        source_of: dict[str, Path] = {f.sha256: root / f.path for f in files}
        if image and image_path:
            wanted[image["sha256"]] = image["size"]
            source_of[image["sha256"]] = image_path
        missing = _missing_objects(rem, wanted)
        counter = Counter()

        class _Both(Reporter):
            def advance(self, n: int) -> None:
                counter.advance(n)
                reporter.advance(n)

        reporter.start(f"push {kind} {entry_id}@{version} -> {spec.name}", sum(missing.values()))
        try:
            rem.upload_files(
                [(source_of[sha], object_key(sha)) for sha in missing], _Both().advance
            )
        finally:
            reporter.finish()
        # Only now, with every object in place, does the version become visible.
        if not rem.put_bytes(mkey, dump_manifest(manifest), if_absent=True):
            # A concurrent push published the same version first: same content by construction.
            existing = rem.get_bytes(mkey) or b""
            parse_manifest(existing, kind, entry_id, version, f"{spec.name}:{mkey}")
        _set_latest(rem, kind, entry_id, version, created)
        return PushResult(
            kind,
            entry_id,
            version,
            spec.name,
            len(files),
            total,
            len(missing),
            counter.bytes,
            False,
            time.monotonic() - t0,
        )
    finally:
        rem.close()
        if image_path is not None:
            with contextlib.suppress(FileNotFoundError):
                image_path.unlink()


def _set_latest(rem: Remote, kind: str, entry_id: str, version: str, created: str) -> None:
    """Point `latest` at `version` (last writer wins; every version it can name is complete)."""
    body = json.dumps({"version": version, "created": created}, sort_keys=True).encode() + b"\n"
    rem.put_bytes(latest_key(kind, entry_id), body)
