"""ops/pull: fetch a version's missing objects with verification and resume, place it atomically."""

from __future__ import annotations

import errno
import json
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from asrbench.entries import check_replaceable, local_dir
from asrbench.errors import InputError
from asrbench.fsio import (
    atomic_write_bytes,
    atomic_write_json,
    clean_stale,
    replace_dir,
    stage_dir,
)
from asrbench.identity import bytes_sha256, hash_file
from asrbench.ids import check_id
from asrbench.resumable import ChunkedPart
from asrbench.zoo.cache import Cache
from asrbench.zoo.config import ZooConfig, entry_remote
from asrbench.zoo.errors import ZooCorrupt, ZooError, ZooInputError, ZooNotFound, ZooRemoteMissing
from asrbench.zoo.manifest import (
    FileEntry,
    check_version,
    latest_key,
    manifest_key,
    object_key,
    parse_manifest,
)
from asrbench.zoo.progress import Counter, Reporter
from asrbench.zoo.remote import Remote, open_remote

CHUNK = 8 * 1024 * 1024
MARKER = ".zoo.json"  # written into placed folders: which entry and version they hold


@dataclass
class PullResult:
    """What a pull did, for the CLI summary and for tests."""

    kind: str
    id: str
    version: str
    remote: str
    dest: str
    files: int
    bytes_total: int
    objects_downloaded: int
    bytes_downloaded: int
    placed: bool
    seconds: float

    def as_dict(self) -> dict:
        return asdict(self)


def resolve_version(rem: Remote, kind: str, entry_id: str) -> str:
    """The version `latest` points to on a remote."""
    data = rem.get_bytes(latest_key(kind, entry_id))
    if data is None and not rem.exists():
        raise ZooRemoteMissing(
            f"remote {rem.name!r} ({rem.url}) does not exist (no such folder or bucket); check "
            "its `url:` in zoo.yaml, or push to it first"
        )
    if data is None:
        raise ZooNotFound(
            f"remote {rem.name!r} holds no {kind} {entry_id!r}; check the ID "
            f"(`ops/zoo list`) or push it first"
        )
    try:
        return check_version(json.loads(data)["version"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ZooError(f"remote {rem.name!r}: {latest_key(kind, entry_id)} is malformed") from exc


def fetch_manifest(
    rem: Remote, cache: Cache, kind: str, entry_id: str, version: str
) -> tuple[dict, list[FileEntry]]:
    """The checked manifest of a version, from the cache or the remote (then cached)."""
    cached = cache.manifest_path(kind, entry_id, version)
    if cached.is_file():
        return parse_manifest(cached.read_bytes(), kind, entry_id, version, str(cached))
    key = manifest_key(kind, entry_id, version)
    data = rem.get_bytes(key)
    if data is None:
        raise ZooNotFound(
            f"remote {rem.name!r} has no version {version} of {kind} {entry_id!r}; "
            f"see `ops/zoo show {kind} {entry_id}`"
        )
    result = parse_manifest(data, kind, entry_id, version, f"{rem.name}:{key}")
    atomic_write_bytes(cached, data)
    return result


class _Download(ChunkedPart):
    """One object being fetched in CHUNK-sized ranges into the partial folder, resumable
    (`asrbench.resumable.ChunkedPart`: `<hex>.part`, finished chunks journalled in `<hex>.done`).
    The whole file is verified against its SHA-256 before it enters the cache."""

    def __init__(self, cache: Cache, sha: str, size: int, label: str):
        super().__init__(cache.partial_dir(), sha, size, CHUNK)
        self.sha, self.label = sha, label
        self.final = cache.object_path(sha)

    def _same(self, got: str) -> None:
        if got != self.sha:
            raise ZooCorrupt(
                f"{self.label}: SHA-256 verification failed (expected {self.sha}, got {got})"
            )

    def finalize(self) -> None:
        """Verify the SHA-256 and move into the cache; on mismatch drop the partial and raise."""
        self.commit(self.final, lambda p: self._same(hash_file(p, CHUNK)), read_only=True)

    def finalize_whole(self, data: bytes) -> None:
        """finalize() for an object fetched in one piece: hash the bytes before writing them."""
        self.commit_whole(data, self.final, lambda b: self._same(bytes_sha256(b)), read_only=True)


def download_objects(
    rem: Remote,
    cache: Cache,
    wanted: dict[str, tuple[int, str]],
    reporter: Reporter,
    counter: Counter,
) -> None:
    """Fetch every object in `wanted` (sha -> (size, label)) into the cache, verified.

    One pool of `rem.concurrency` threads works on chunks of all objects, so both many small
    files and a few big ones keep every connection busy. The first failure stops the rest.
    """
    downloads = [_Download(cache, sha, size, label) for sha, (size, label) in wanted.items()]
    stop = threading.Event()
    errors: list[str] = []
    corrupt: list[str] = []
    errors_lock = threading.Lock()

    def fail(msg: str, sha: str | None = None) -> None:
        with errors_lock:
            errors.append(msg)
            if sha:
                corrupt.append(sha)

    def finalize(d: _Download) -> None:
        try:
            d.finalize()
        except ZooCorrupt as exc:
            fail(str(exc), d.sha)
        except ZooError as exc:
            fail(str(exc))

    def work(d: _Download, offset: int) -> None:
        if stop.is_set():
            return
        end = min(offset + CHUNK, d.size)
        try:
            data = rem.read_range(object_key(d.sha), offset, end)
        except ZooError as exc:
            stop.set()
            fail(f"{d.label}: {exc}")
            return
        if len(data) != end - offset:
            d.discard()
            stop.set()
            fail(
                f"{d.label}: the remote object is shorter or longer than the manifest says "
                f"({d.size} bytes)"
            )
            return
        counter.advance(len(data))
        reporter.advance(len(data))
        if d.size <= CHUNK:
            # The whole object is in memory: verify it there, skip the resume bookkeeping
            # and the re-read (most dataset files are one chunk).
            try:
                d.finalize_whole(data)
            except ZooCorrupt as exc:
                fail(str(exc), d.sha)
            except ZooError as exc:
                fail(str(exc))
            return
        if d.write_chunk(offset, data):
            finalize(d)

    try:
        total = sum(d.size - d.resumed_bytes for d in downloads)
        reporter.start(f"pull <- {rem.name}", total)
        with ThreadPoolExecutor(max(1, rem.concurrency)) as pool:
            futures = []
            for d in downloads:
                if not d.todo:
                    finalize(d)  # every chunk arrived before an interruption: just verify
                for off in d.todo:
                    futures.append(pool.submit(work, d, off))
            for fut in futures:
                fut.result()
    finally:
        reporter.finish()
        for d in downloads:
            d.close()
    if errors:
        head = "\n  ".join(errors[:10])
        more = f"\n  ... and {len(errors) - 10} more" if len(errors) > 10 else ""
        hint = ""
        if corrupt:
            # Remembered, so the next push re-hashes these objects and re-uploads them.
            cache.note_corrupt(rem.name, corrupt)
            hint = (
                f"\n{len(corrupt)} object(s) on {rem.name!r} are corrupt: `ops/zoo verify "
                "--repair` (where a good copy exists) or a new `ops/push` replaces them"
            )
        raise (ZooCorrupt if corrupt else ZooError)(
            f"{len(errors)} object(s) could not be fetched from remote "
            f"{rem.name!r}:\n  {head}{more}{hint}"
        )


def _link_or_copy(src: Path, dest: Path) -> None:
    try:
        os.link(src, dest)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copyfile(src, dest)


def read_marker(folder: Path) -> dict | None:
    try:
        return json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None


CARD_FILES = {"dataset": "dataset.yaml", "model": "model.yaml"}


def check_card_id(cache: Cache, files: list[FileEntry], kind: str, label: str) -> None:
    """The `id` the entry's own card declares names folders once placed (results, caches): it
    passes the one ID check before anything is placed."""
    import yaml

    card = next((f for f in files if f.path == CARD_FILES[kind]), None)
    if card is None:
        return  # the entry's ID (already checked) names it
    try:
        data = yaml.safe_load(cache.object_path(card.sha256).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return  # the loader reports an unreadable card by file and line
    declared = data.get("id") if isinstance(data, dict) else None
    if declared in (None, ""):
        return
    try:
        check_id(
            declared,
            f"{label}: its {card.path} declares id",
            "nothing was placed; the entry must be pushed again with a valid id",
        )
    except InputError as exc:
        raise ZooInputError(str(exc)) from None


def place(cache: Cache, files: list[FileEntry], dest: Path, marker: dict, force: bool) -> bool:
    """Materialise a version at `dest` all at once: build beside it, then rename into place.

    Returns False when `dest` already holds exactly this version.
    """
    dest = Path(dest)
    if dest.is_symlink():
        raise ZooError(f"{dest} is a symlink; pass a real folder as --dest")
    current = read_marker(dest) if dest.is_dir() else None
    if (
        current
        and current.get("version") == marker["version"]
        and current.get("id") == marker["id"]
    ):
        if all(
            (dest / f.path).is_file() and (dest / f.path).stat().st_size == f.size for f in files
        ):
            return False
    if dest.exists() and not force:
        raise ZooError(
            f"{dest} already exists and does not hold {marker['kind']} "
            f"{marker['id']}@{marker['version']}; pass --force to replace it or "
            "--dest to put it elsewhere"
        )
    try:
        check_replaceable(dest, marker["kind"], "choose another --dest or remove it")
    except InputError as exc:
        raise ZooInputError(str(exc)) from None
    # after a kill -9 of an earlier version, which used its own tags
    clean_stale(dest, ("zoo-staging-", "zoo-old-"), restore=("zoo-old-",))
    staging = stage_dir(dest)
    try:
        for f in files:
            target = staging / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            if f.executable:
                shutil.copyfile(cache.object_path(f.sha256), target)
                os.chmod(target, 0o755)
            else:
                _link_or_copy(cache.object_path(f.sha256), target)
        atomic_write_json(staging / MARKER, marker)
        replace_dir(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return True


def pull(
    kind: str,
    entry_id: str,
    *,
    version: str | None = None,
    remote: str | None = None,
    dest: Path | None = None,
    config: ZooConfig | Path | None = None,
    force: bool = False,
    with_image: bool = False,
    cache: Cache | None = None,
    reporter: Reporter | None = None,
) -> PullResult:
    """Fetch a version (default: the zoo.yaml pin, else `latest`) and place it at `dest`."""
    t0 = time.monotonic()
    check_id(entry_id, "entry ID", "see `ops/zoo list` for the IDs")
    cfg, spec = entry_remote(kind, entry_id, remote, config)
    entry = cfg.entries.get((kind, entry_id))
    version = version or (entry.version if entry else None)
    cache = cache or Cache()
    reporter = reporter or Reporter()
    rem = open_remote(spec, cfg.base)
    try:
        if version is None:
            version = resolve_version(rem, kind, entry_id)
        check_version(version)
        man, files = fetch_manifest(rem, cache, kind, entry_id, version)
        wanted: dict[str, tuple[int, str]] = {}
        for f in files:
            if not cache.has_object(f.sha256, f.size):
                wanted.setdefault(f.sha256, (f.size, f.path))
        image = man.get("image")
        if with_image and image is None:
            raise ZooError(
                f"{kind} {entry_id}@{version} was pushed without an image; build it locally instead"
            )
        if with_image and image and not cache.has_object(image["sha256"], image["size"]):
            wanted[image["sha256"]] = (image["size"], f"image {image.get('ref')}")
        counter = Counter()
        if wanted:
            download_objects(rem, cache, wanted, reporter, counter)
    except ZooError as exc:
        # A rerun resumes a transfer; it cannot help with an ID or remote that is not there.
        tail = (
            ""
            if isinstance(exc, ZooInputError)
            else "\nNothing was placed; rerun to resume (verified objects are kept in the cache)."
        )
        raise type(exc)(  # keep the kind of failure (not found, bad input, network)
            f"pull {kind} {entry_id}{'@' + version if version else ''}: {exc}{tail}"
        ) from exc
    finally:
        rem.close()
    check_card_id(cache, files, kind, f"{kind} {entry_id}@{version} on remote {spec.name!r}")
    target = Path(dest) if dest else local_dir(kind, entry_id)
    marker = {
        "kind": kind,
        "id": entry_id,
        "version": version,
        "remote": spec.name,
        "created": man.get("created", ""),
    }
    placed = place(cache, files, target, marker, force)
    if with_image and image:
        from asrbench.zoo.image import load_image

        load_image(cache.object_path(image["sha256"]))
    return PullResult(
        kind,
        entry_id,
        version,
        spec.name,
        str(target),
        len(files),
        sum(f.size for f in files),
        len(wanted),
        counter.bytes,
        placed,
        time.monotonic() - t0,
    )
