"""ops/push: upload an entry's missing objects, then publish its manifest (last)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from asrbench.identity import file_sha256
from asrbench.zoo.cache import Cache
from asrbench.zoo.config import ZooConfig, entry_remote
from asrbench.zoo.errors import ZooError, ZooInputError
from asrbench.zoo.manifest import (
    FileEntry,
    build_manifest,
    dump_manifest,
    file_entry,
    latest_key,
    list_files,
    manifest_key,
    object_key,
    parse_manifest,
)
from asrbench.zoo.progress import Counter, Reporter
from asrbench.zoo.remote import Remote, open_remote

HASH_WORKERS = 4  # hashing and HEAD checks run ahead of the uploads


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
    from asrbench.entries import local_dir

    return local_dir(kind, entry_id)


def _check_entry(kind: str, root: Path) -> None:
    """Refuse a folder that is not a valid dataset or model (before any upload)."""
    if kind == "dataset":
        from asrbench.dataset import DatasetError, load_dataset

        try:
            load_dataset(root)
        except DatasetError as exc:
            raise ZooError(f"{root}: not a valid dataset, fix it before pushing:\n{exc}") from exc
    else:
        from asrbench.modelcard import ModelCardError, load_model

        try:
            load_model(root)
        except ModelCardError as exc:
            raise ZooInputError(
                f"{root}: not a valid model folder, fix it before pushing: {exc}"
            ) from exc


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
            "content_hash": ds.content_hash(),  # file hashes memoised by the scan above
        }
    card = root / "model.yaml"
    if not card.is_file():
        raise ZooError(f"{root}: model.yaml not found; a model folder needs its card")
    try:
        data = yaml.safe_load(card.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ZooError(f"{card}: cannot parse YAML: {exc}") from exc
    return {"card": data}


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
    verify_remote: bool = False,
) -> PushResult:
    """Publish the folder of a dataset or model as a new immutable version (idempotent).

    Files are hashed by a few threads while the first missing ones already upload; the
    manifest, which makes the version visible, is written only after every object is in place.
    """
    t0 = time.monotonic()
    cfg, spec = entry_remote(kind, entry_id, remote, config)
    root = Path(source) if source else default_source(kind, entry_id)
    reporter = reporter or Reporter()
    paths = list_files(root)
    if not paths:
        raise ZooError(f"{root}: no files to push")
    _check_entry(kind, root)  # refuse an invalid dataset or model before uploading anything
    # rel path in the entry -> the file holding it; a model also carries its shared helpers
    sources = {p.relative_to(root).as_posix(): p for p in paths}
    if kind == "model":
        sources.update(_shared_helpers(root, sources))
        sources = dict(sorted(sources.items()))  # the version hashes the file list in order
    paths = list(sources.values())

    image = None
    image_path: Path | None = None
    if with_image:
        if kind != "model":
            raise ZooInputError("--with-image applies to models only")
        from asrbench.zoo.image import save_image

        ref = image_ref or _built_image(root)
        image_path = Cache().tmp_dir() / f"image-{entry_id}-{os.getpid()}.tar"
        info = save_image(ref, image_path)
        image = {**info, "sha256": file_sha256(image_path), "size": image_path.stat().st_size}

    rem = open_remote(spec, cfg.base)
    counter = Counter()
    files: list[FileEntry] = []
    stamps: dict[str, tuple[int, int]] = {}  # path -> (size, mtime_ns) when hashed
    uploaded: dict[str, Path] = {}  # sha -> source, for the objects this push sent

    suspect = Cache().corrupt(spec.name)  # objects a pull found corrupt on this remote

    def intact(sha: str, size: int) -> bool:
        """Whether the remote holds this object intact: same size, and re-hashed when a pull
        found it corrupt before (or always, with verify_remote)."""
        if rem.stat(object_key(sha)) != size:
            return False
        if verify_remote or sha in suspect:
            from asrbench.zoo.verify import remote_sha256

            return remote_sha256(rem, object_key(sha), size) == sha
        return True

    def prepare(item: tuple[str, Path]) -> tuple[FileEntry, tuple[int, int], bool]:
        rel, path = item
        st = path.stat()
        entry = file_entry(root, path, rel)
        return entry, (st.st_size, st.st_mtime_ns), intact(entry.sha256, entry.size)

    def plan() -> Iterator[tuple[Path, str]]:
        """Yield the objects to upload as hashing and HEAD checks finish, in order."""
        seen: set[str] = set()
        if image and image_path:
            seen.add(image["sha256"])
            if intact(image["sha256"], image["size"]):
                reporter.advance(image["size"])
            else:
                uploaded[image["sha256"]] = image_path
                yield image_path, object_key(image["sha256"])
        with ThreadPoolExecutor(HASH_WORKERS) as pool:
            items = list(sources.items())
            for (_, path), (entry, stamp, present) in zip(
                items, pool.map(prepare, items), strict=True
            ):
                files.append(entry)
                stamps[entry.path] = stamp
                if entry.sha256 in seen:
                    continue
                seen.add(entry.sha256)
                if present:
                    reporter.advance(entry.size)  # already there: counts as done, not as sent
                    continue
                uploaded[entry.sha256] = path
                yield path, object_key(entry.sha256)

    def sent(n: int) -> None:
        counter.advance(n)
        reporter.advance(n)

    try:
        total = sum(p.stat().st_size for p in paths) + (image["size"] if image else 0)
        reporter.start(f"push {kind} {entry_id} -> {spec.name}", total)
        try:
            rem.upload_files(plan(), sent)
        finally:
            reporter.finish()
        _check_unchanged(root, rem, files, stamps, uploaded, sources)
        if suspect:
            Cache().clear_corrupt(spec.name, set(uploaded) | {f.sha256 for f in files})
        meta = _entry_meta(kind, root, files)
        created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        manifest = build_manifest(kind, entry_id, files, meta, image, created)
        version = manifest["version"]
        mkey = manifest_key(kind, entry_id, version)
        # Only now, with every object in place, does the version become visible.
        published = rem.put_bytes(mkey, dump_manifest(manifest), if_absent=True)
        if not published:
            # Already there (a rerun, or a concurrent push of the same content won the race):
            # the same content by construction; check it reads back consistently.
            parse_manifest(
                rem.get_bytes(mkey) or b"", kind, entry_id, version, f"{spec.name}:{mkey}"
            )
        _set_latest(rem, kind, entry_id, version, created)
        return PushResult(
            kind,
            entry_id,
            version,
            spec.name,
            len(files),
            total,
            len(uploaded),
            counter.bytes,
            not published,
            time.monotonic() - t0,
        )
    finally:
        rem.close()
        if image_path is not None:
            with contextlib.suppress(FileNotFoundError):
                image_path.unlink()


def _check_unchanged(
    root: Path,
    rem: Remote,
    files: list[FileEntry],
    stamps: dict[str, tuple[int, int]],
    uploaded: dict[str, Path],
    sources: dict[str, Path],
) -> None:
    """Refuse to publish if a file changed while it was pushed: its object could be misnamed."""
    changed = []
    for f in files:
        st = sources[f.path].stat()
        if (st.st_size, st.st_mtime_ns) != stamps[f.path]:
            changed.append(f)
    if changed:
        for f in changed:
            if f.sha256 in uploaded:
                rem.delete(object_key(f.sha256))
        names = ", ".join(f.path for f in changed[:5])
        raise ZooError(
            f"{root}: {len(changed)} file(s) changed during the push ({names}); "
            "nothing was published, rerun when the folder is stable"
        )


def _shared_helpers(root: Path, own: dict[str, Path]) -> dict[str, Path]:
    """A model's declared shared helpers as `_shared/<name>` entries, so a pulled model folder
    is complete on its own (its `_shared/` then serves as its helpers' folder)."""
    from asrbench.modelcard import SHARED_DIR, load_model

    model = load_model(root)
    return {
        f"{SHARED_DIR}/{name}": model.common / name
        for name in model.card.image.shared
        if f"{SHARED_DIR}/{name}" not in own
    }


def _set_latest(rem: Remote, kind: str, entry_id: str, version: str, created: str) -> None:
    """Point `latest` at `version` (last writer wins; every version it can name is complete)."""
    body = json.dumps({"version": version, "created": created}, sort_keys=True).encode() + b"\n"
    rem.put_bytes(latest_key(kind, entry_id), body)


def _built_image(root: Path) -> str:
    """The model's own content-addressed image (built now if missing), as ops/benchmark uses."""
    from asrbench.images import build_model_image
    from asrbench.modelcard import load_model

    tag, _ = build_model_image(load_model(root))
    return tag
