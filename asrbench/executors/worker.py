"""What a cluster node does for one shard: fetch by hash, run, hand the outputs back.

Nothing here knows about Ray: a remote executor (Ray today; Dask or a Slurm array tomorrow)
ships a `ShardSpec` to a node and calls `run_shard` there. The spec holds IDs, zoo versions,
hashes and options, never a path of the driver's machine: the node pulls the dataset and the
model (and, for the Docker runner, the image's `docker save` archive) from the zoo into its own
cache (`ASRBENCH_CACHE` of the node), verified and content-addressed, so a node that already
holds a version or an image does not fetch it again. The shard's output files come back as
bytes; the driver writes them where a local run would have left them and merges them as usual.

Node-local layout, under the node's cache:

    zoo/objects/                                      verified objects (asrbench.zoo)
    executor/<kind>s/<V>/<ID>/                        the versions this node ran (hard links)
    executor/work/<cache key>/<attempt>/shard-<k>/   a shard while it runs (.owner: the pid)
    executor/locks/                                   one pull at a time per entry version
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asrbench.errors import AsrbenchError
from asrbench.fsio import exclusive, pid_alive
from asrbench.runners.base import RunOptions

MAX_LOG_BYTES = 4 * 2**20  # a shard's log travels back whole up to this, then its tail
OUTPUT_FILES = (
    "out/hyp.tsv",
    "out/timing.tsv",
    "out/failed.tsv",
    "out/cost.tsv",
    "wav.lst",
    "run.log",
)


class NodeError(AsrbenchError):
    """A node that could not run a shard for a reason of its own (zoo, engine, identity);
    retried elsewhere by the executor, then reported with the node's name."""


@dataclass(frozen=True)
class EntryRef:
    """A zoo entry version: what a node pulls (IDs and hashes only, no driver path)."""

    kind: str
    id: str
    version: str


@dataclass(frozen=True)
class ZooSpec:
    """The remote every node pulls from: its zoo.yaml entry (no secret: credentials come from
    each node's own environment, as for `ops/pull`)."""

    name: str
    fields: tuple[tuple[str, Any], ...]  # RemoteSpec's fields, `file://` made absolute

    def remote(self):
        from asrbench.zoo.config import RemoteSpec

        return RemoteSpec(**dict(self.fields))

    def config(self):
        from asrbench.settings import settings
        from asrbench.zoo.config import ZooConfig

        return ZooConfig(
            path=settings().cache / "executor" / "zoo.yaml",
            default_remote=self.name,
            remotes={self.name: self.remote()},
        )


@dataclass(frozen=True)
class ShardSpec:
    """Everything a node needs to run one shard, as plain data."""

    label: str
    cache_key: str
    attempt: str
    index: int
    runner: str  # docker | local
    model: EntryRef
    dataset: EntryRef
    dataset_hash: str
    identity: str  # the model identity the driver computed; the node must compute the same
    image: tuple[str, str] | None  # (tag, image ID) for the Docker runner
    utterances: tuple[str, ...]  # utterance IDs, in shard order
    options: RunOptions
    zoo: ZooSpec
    secrets: tuple[str, ...] = ()  # the model's declared secret *names* (values stay on nodes)


@dataclass
class ShardReturn:
    """What comes back from a node: the shard's files as bytes, how it went, where it ran."""

    files: dict[str, bytes]
    error: str | None
    node: dict[str, Any]
    wall_s: float
    startup_s: float
    fetch_s: float
    run_s: float
    fetched: dict[str, int] = field(default_factory=dict)  # bytes downloaded from the zoo


def node_info() -> dict[str, Any]:
    """Who this node is: Ray's node ID when inside Ray, host name, address, cache folder."""
    from asrbench.settings import settings

    info: dict[str, Any] = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "cache": str(settings().cache),
    }
    try:
        import ray

        if ray.is_initialized():
            ctx = ray.get_runtime_context()
            info["id"] = ctx.get_node_id()
            info["ip"] = ray.util.get_node_ip_address()
    except ImportError:
        pass
    return info


def _node_name(info: dict[str, Any]) -> str:
    short = str(info.get("id", ""))[:12]
    return f"node {short or info['host']} ({info.get('ip', info['host'])})"


# --- fetching, once per node -----------------------------------------------------------------

_READY: dict[tuple, Path] = {}  # per worker process: entry versions already placed and checked
_READY_LOCK = threading.Lock()


@contextlib.contextmanager
def _node_lock(name: str) -> Iterator[None]:
    """One process of this node at a time (Ray runs several workers per node)."""
    from asrbench.settings import settings

    with exclusive(settings().cache / "executor" / "locks" / f"{name}.lock"):
        yield


def checkout(ref: EntryRef) -> Path:
    """Where a version is placed on this node: `<cache>/executor/<kind>s/<V>/<ID>/` (a model
    folder must be named by its ID)."""
    from asrbench.settings import settings

    return settings().cache / "executor" / f"{ref.kind}s" / ref.version / ref.id


def ensure_entry(ref: EntryRef, zoo: ZooSpec) -> tuple[Path, int]:
    """The node's checkout of a zoo version, pulled (verified) once and then reused, and the
    bytes this call downloaded (0 when the node held it, or held every object by hash)."""
    from asrbench.zoo.errors import ZooError
    from asrbench.zoo.pull import pull, read_marker

    key = (ref.kind, ref.id, ref.version)
    if key in _READY:
        return _READY[key], 0
    dest = checkout(ref)
    fetched = 0
    with _node_lock(f"{ref.kind}-{ref.id}-{ref.version}"):
        marker = read_marker(dest)
        if not (marker and marker.get("version") == ref.version):
            try:
                fetched = pull(
                    ref.kind,
                    ref.id,
                    version=ref.version,
                    dest=dest,
                    force=True,
                    config=zoo.config(),
                ).bytes_downloaded
            except ZooError as exc:
                raise NodeError(
                    f"pulling {ref.kind} {ref.id}@{ref.version} from zoo remote "
                    f"{zoo.name!r} failed: {exc}"
                ) from None
    with _READY_LOCK:
        _READY[key] = dest
    return dest, fetched


def ensure_image(ref: EntryRef, zoo: ZooSpec, tag: str, image_id: str) -> int:
    """Make the engine here hold `image_id` under `tag`: nothing to do when it already holds it
    (by ID: content-addressed), else the zoo's `docker save` archive is pulled and loaded.
    Returns the bytes downloaded."""
    from asrbench.images import DockerUnavailable, client

    try:
        engine = client(timeout=30)
    except DockerUnavailable as exc:
        raise NodeError(f"no Docker Engine answers here: {exc}") from None
    from docker.errors import ImageNotFound

    def have() -> bool:
        try:
            img = engine.images.get(image_id)
        except ImageNotFound:
            return False
        if tag not in (img.tags or []):
            repo, _, version = tag.rpartition(":")
            img.tag(repo, version)
        return True

    if have():
        return 0
    with _node_lock(f"image-{image_id.removeprefix('sha256:')[:16]}"):
        if have():
            return 0
        from asrbench.zoo.errors import ZooError
        from asrbench.zoo.pull import pull

        try:
            fetched = pull(
                "model",
                ref.id,
                version=ref.version,
                with_image=True,
                force=True,
                dest=checkout(ref),
                config=zoo.config(),
            ).bytes_downloaded
        except ZooError as exc:
            raise NodeError(
                f"pulling the image of model {ref.id}@{ref.version} from zoo remote "
                f"{zoo.name!r} failed: {exc}"
            ) from None
        if not have():
            raise NodeError(
                f"the image archive of model {ref.id}@{ref.version} loaded, but the "
                f"engine holds no image {image_id}: the zoo version names another "
                "image; re-push the model with --with-image"
            )
    return fetched


# --- running one shard -----------------------------------------------------------------------


def _work_root() -> Path:
    from asrbench.settings import settings

    return settings().cache / "executor" / "work"


def sweep_stale(root: Path | None = None) -> int:
    """Stop programs left by dead workers of this node (a killed Ray worker cannot stop its
    container or its program's session) and drop their folders; returns how many folders."""
    from asrbench.runners.leftovers import kill_leftovers

    root = root or _work_root()
    n = 0
    for owner in root.glob("*/*/shard-*/.owner"):
        try:
            pid = int(owner.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        if pid_alive(pid):
            continue
        shard = owner.parent
        kill_leftovers(shard)
        shutil.rmtree(shard, ignore_errors=True)
        n += 1
    return n


def _read_back(work: Path, redact) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for rel in OUTPUT_FILES:
        path = work / rel
        if not path.is_file():
            continue
        data = path.read_bytes()
        if rel == "run.log" and len(data) > MAX_LOG_BYTES:
            data = b"[asrbench: log cut to its last 4 MiB]\n" + data[-MAX_LOG_BYTES:]
        # Hypotheses come back as written: a transcript is never altered to redact (the
        # driver flags one that holds a secret's value); everything else is redacted here.
        files[rel] = data if rel in ("wav.lst", "out/hyp.tsv") else redact(data)
    return files


def run_shard(spec: ShardSpec) -> ShardReturn:
    """Run one shard on this node; the model's own failures come back in `error`, the node's
    (zoo unreachable, no engine, another identity) raise NodeError so it can be retried."""
    from asrbench.dataset import load_dataset
    from asrbench.modelcard import load_model
    from asrbench.runners.base import RunnerError, log_tail
    from asrbench.secrets import Redactor

    t0 = time.monotonic()
    info = node_info()
    where = _node_name(info)
    try:
        sweep_stale()
        model_dir, model_bytes = ensure_entry(spec.model, spec.zoo)
        data_dir, data_bytes = ensure_entry(spec.dataset, spec.zoo)
        image_bytes = 0
        if spec.runner == "docker":
            if spec.image is None:
                raise NodeError("the Docker runner needs the model's image; none was published")
            image_bytes = ensure_image(spec.model, spec.zoo, *spec.image)
        mdl = load_model(model_dir)
        ds = _dataset(data_dir, spec.dataset_hash, load_dataset)
        runner = _runner(spec)
        identity = runner.prepare(mdl)
        if identity != spec.identity:
            raise NodeError(
                f"model {mdl.id} has identity {identity} here but {spec.identity} on "
                "the driver (another Python or image?): install the driver's "
                "versions on every node"
            )
        by_id = {u.id: u for u in ds.utterances}
        missing = [i for i in spec.utterances if i not in by_id]
        if missing:
            raise NodeError(f"dataset {ds.id}@{spec.dataset.version} lacks {missing[:3]}")
        utts = [by_id[i] for i in spec.utterances]
    except NodeError as exc:
        raise NodeError(f"{where}: {spec.label}, shard {spec.index}: {exc}") from None
    except AsrbenchError as exc:
        raise NodeError(
            f"{where}: {spec.label}, shard {spec.index}: {type(exc).__name__}: {exc}"
        ) from None
    fetch_s = time.monotonic() - t0
    work = _work_root() / spec.cache_key / spec.attempt / f"shard-{spec.index}"
    if work.exists():  # a retry on the same node: stop what the dead try left, start afresh
        from asrbench.runners.leftovers import kill_leftovers

        kill_leftovers(work)
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    _claim(work)
    red = Redactor.for_names(spec.secrets)  # this node's values of the model's secrets
    error: str | None = None
    startup = 0.0
    t_run = time.monotonic()
    try:
        res = runner.run(mdl, ds, work, utts, spec.options)
        startup = res.startup_s
    except RunnerError as exc:
        error = str(exc)
    except Exception as exc:  # engine hiccups: reported per shard, with the log, as locally
        error = (
            f"model {mdl.id}, shard {spec.index}: {type(exc).__name__}: {exc}; log tail:\n"
            f"{log_tail(work / 'run.log')}"
        )
    run_s = time.monotonic() - t_run
    files = _read_back(work, red.redact_bytes)
    shutil.rmtree(work, ignore_errors=True)
    if error:
        error = red.redact(f"{where}: {error}")
    return ShardReturn(
        files,
        error,
        info,
        time.monotonic() - t0,
        startup,
        fetch_s,
        run_s,
        {"dataset": data_bytes, "model": model_bytes, "image": image_bytes},
    )


_DATASETS: dict[tuple[str, str], Any] = {}


def _dataset(folder: Path, expected_hash: str, load):
    """The node's copy of a dataset, checked once per process to hash as the driver's did."""
    key = (str(folder), expected_hash)
    if key not in _DATASETS:
        ds = load(folder, check_audio=False)
        got = ds.content_hash()
        if got != expected_hash:
            raise NodeError(
                f"dataset {ds.id} in {folder} hashes to {got}, the driver's to "
                f"{expected_hash}; the zoo version does not hold the driver's data"
            )
        _DATASETS[key] = ds
    return _DATASETS[key]


def _claim(work: Path) -> None:
    """Mark the shard's folder as this process's (`.owner`, read by `sweep_stale`). Tests:
    then wait while the file ASRBENCH_SHARD_HOLD names exists, so a test kills a node while it
    surely runs a shard."""
    from asrbench.settings import settings

    (work / ".owner").write_text(f"{os.getpid()}\n")
    gate = settings().shard_hold
    while gate is not None and gate.exists():
        time.sleep(0.05)


def _runner(spec: ShardSpec):
    """The node's runner for the name the driver resolved (`asrbench.runners.get_runner`; never
    "auto" here): "local" is the same runner, "docker" runs the job's image fetched by hash
    from the zoo (NodeDockerRunner) rather than one built here."""
    if spec.runner == "local":
        from asrbench.runners import get_runner

        return get_runner("local", quiet=True)
    if spec.runner == "docker":
        from asrbench.executors.node_docker import NodeDockerRunner

        return NodeDockerRunner(*spec.image)  # type: ignore[misc]
    raise NodeError(f"unknown runner {spec.runner!r}")


# --- the preflight probe ---------------------------------------------------------------------


def probe(
    zoo: ZooSpec | None,
    docker: bool,
    code: list[list[str]],
    python: str | None,
    min_free_mb: int | None = None,
) -> dict[str, Any]:
    """Check this node can take shards: same code and Python as the driver, a writable cache,
    the zoo readable with this node's credentials, a Docker Engine when `docker`. Returns
    {"node": ..., "problems": [...]} (problems in words, empty when all is well)."""
    from asrbench.settings import settings

    info = node_info()
    problems: list[str] = []
    mine: dict[str, str] = {path: sha for path, sha in code_files()}
    theirs: dict[str, str] = {path: sha for path, sha in code}
    differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if differ:
        problems.append(
            f"runs other asrbench code than the driver ({len(differ)} file(s) "
            f"differ: {', '.join(differ[:5])}): install the driver's version on "
            "every node"
        )
    if python is not None and sys.version != python:
        problems.append(
            f"runs Python {sys.version.split()[0]} ({sys.version}), the driver "
            f"{python}: the local runner's model identities would differ"
        )
    cache = settings().cache
    try:
        cache.mkdir(parents=True, exist_ok=True)
        probe_file = cache / f".probe-{os.getpid()}"
        probe_file.write_bytes(b"ok")
        probe_file.unlink()
        free_mb = shutil.disk_usage(cache).free / 2**20
        need = settings().min_free_mb if min_free_mb is None else min_free_mb
        if free_mb < need:
            problems.append(f"cache {cache}: only {free_mb:.0f} MiB free, need {need} MiB")
    except OSError as exc:
        problems.append(
            f"cache {cache} is not writable ({exc.strerror or exc}); set "
            "ASRBENCH_CACHE on this node to a writable folder"
        )
    if zoo is not None:
        problems += _probe_zoo(zoo)
    if docker:
        from asrbench.images import DockerUnavailable, client

        try:
            client(timeout=15)
        except DockerUnavailable as exc:
            problems.append(f"offers the `docker` resource but {exc}")
    return {"node": info, "problems": problems}


def _probe_zoo(zoo: ZooSpec) -> list[str]:
    from asrbench.zoo.errors import ZooError
    from asrbench.zoo.remote import open_remote

    spec = zoo.remote()
    try:
        rem = open_remote(spec, Path("/"))
        try:
            if spec.scheme == "file" and not Path(spec.file_root(Path("/"))).is_dir():
                return [
                    f"cannot see zoo remote {zoo.name!r}: {spec.url} is not a folder on "
                    "this node (a file:// zoo must be on a file system every node mounts; "
                    "use an S3 remote)"
                ]
            rem.get_bytes("entries/.asrbench-probe")  # None when absent: reachable, allowed
        finally:
            rem.close()
    except ZooError as exc:
        return [f"cannot read zoo remote {zoo.name!r} with this node's credentials: {exc}"]
    except Exception as exc:  # boto3 may raise its own types before our wrapper sees them
        return [f"cannot read zoo remote {zoo.name!r}: {type(exc).__name__}: {exc}"]
    return []


# The code that decides what a shard produces on a node: how the program is run (runners,
# images), what it is given (dataset, zoo, executors), the identities it must match (modelcard,
# identity) and what is redacted (secrets). Nodes must run the driver's version of these.
NODE_CODE = (
    "asrbench/executors",
    "asrbench/runners",
    "asrbench/images",
    "asrbench/zoo",
    "asrbench/dataset.py",
    "asrbench/modelcard.py",
    "asrbench/identity.py",
    "asrbench/secrets.py",
    "asrbench/fsio.py",
    "asrbench/benchmark/cache.py",
    "asrbench/benchmark/output.py",
)


def code_files() -> list[list[str]]:
    """[[path, sha256], ...] of NODE_CODE here, compared with the driver's (file hashes are
    memoised by size and mtime, so this costs a stat per file)."""
    from asrbench.identity import tree_files, tree_paths
    from asrbench.settings import REPO_ROOT

    rels = []
    for entry in NODE_CODE:
        path = REPO_ROOT / entry
        if path.is_file():
            rels.append(entry)
        else:
            rels += [
                f"{entry}/{r}"
                for r in tree_paths(path, suffixes=(".py",), skip_names=("__pycache__",))
            ]
    return tree_files(REPO_ROOT, rels)
