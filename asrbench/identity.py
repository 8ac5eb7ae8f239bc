"""Content identity: every cache key, tag and version in asrbench is `digest(kind, **inputs)`.

DVC-style: a thing is named by the SHA-256 of its kind and its declared inputs, serialised as
canonical JSON. Each kind declares its inputs in `KINDS`; building a key with an input missing
or undeclared raises, so an input cannot be left out of a key silently (tests/test_identity.py
changes every input of every kind in turn and checks that the key moves).

Files enter keys through `file_sha256`, memoised on disk by (real path, size, mtime, inode) so a
large dataset or a noise bank is read once, not once per command or per worker process.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import zlib
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

IDENTITY_VERSION = 1

# kind -> the inputs that define it; see docs/ARCHITECTURE.md ("Identity") for what each means.
KINDS: dict[str, tuple[str, ...]] = {
    # a dataset's content: metadata.tsv's bytes and every utterance's audio bytes
    "dataset": ("metadata", "audio"),
    # a model folder as built: every file (shared helpers included) by relative path
    "model-source": ("files",),
    # a model image: its source, the base image, how it is built and the template rendering it
    "image": ("source", "base", "mode", "ca_bundle", "build_args", "template"),
    # a host-side environment (wheelhouse, local-runner virtualenv): requirements + interpreter
    "environment": ("requirements", "python"),
    # a model's local-runner identity: its source and its environment
    "local-model": ("source", "environment"),
    # raw hypotheses: what ran (model identity), on what (dataset), with which settings
    "hyps": ("model", "dataset", "runtime"),
    # which utterances a result covers (a sample or the whole dataset), by ID in order
    "selection": ("utterances",),
    # one attempt of a job: the utterances of each shard, and which isolation round it is
    "attempt": ("shards", "round"),
    # one perturbed utterance: parent audio, spec, seed, utterance, the bank's code and its assets
    "perturb-audio": ("audio", "spec", "seed", "utterance", "code", "assets"),
    # the perturbation bank's code: its source files, DSP library versions, the sox binary
    "perturb-code": ("files", "libraries", "sox"),
    # what noise, babble and reverberation can draw from (see asrbench/perturb/bank.py)
    "perturb-assets": ("shipped", "moh", "overrides", "rir", "babble_dataset"),
    # a simulated RIR bank: the code that simulates it, the rate and the RT60 bin
    "rir-bank": ("code", "sr", "bin"),
    # quality scores (PESQ, STOI, DNSMOS) of a degraded file against its reference
    "quality": ("reference", "degraded", "code"),
    # the scorer's configuration, data files by content, scorer code by content
    "scorer": ("config",),
    # DAE's rules compiled (forms normalised, indexed): the scorer's configuration, its data
    # files by content, the scoring package's code, the interpreter's Unicode tables and regex
    "dae-rules": ("config", "files", "code", "runtime"),
    # one version of a zoo entry
    "zoo-version": ("entry_kind", "id", "meta", "image", "files"),
    # one result cell: the hypotheses, the utterances scored and the scorer
    "result": ("hyps", "dataset", "selection", "scorer"),
    # a long-form dataset cut into pieces: the parent's content, the rate, the segmentation
    # (method, parameters, detector) and which recordings were cut or kept whole
    "segment-pieces": ("dataset", "rate", "segmentation", "cut", "whole"),
    # the folder of a sample result: what was sampled, and how it is scored, but not which
    # model ran, so several models' samples of one selection share a key and are compared
    "sample-cell": ("dataset", "selection", "scorer_options"),
    # a recipe's downloaded file in <cache>/downloads: keyed by where it came from (its URL)
    "download": ("source",),
    # a universal adversarial perturbation: the attacked model's identity, the dev utterances
    # (ID, audio SHA-256), the fit's settings (SNR, epochs, length, seed...) and the attack code
    "universal-perturbation": ("target", "dev", "settings", "code"),
}


class IdentityError(ValueError):
    """A key built with missing or undeclared inputs: a programming error, not a user one."""


def canonical(obj: Any) -> bytes:
    """The one serialisation hashed everywhere: sorted keys, no spaces, UTF-8."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default
    ).encode("utf-8")


def _default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return obj.as_posix()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"{type(obj).__name__} is not part of a key; pass plain data")


def digest(kind: str, /, **inputs: Any) -> str:
    """64-hex SHA-256 of `kind` and exactly its declared inputs."""
    declared = KINDS.get(kind)
    if declared is None:
        raise IdentityError(f"unknown identity kind {kind!r}; declare it in KINDS")
    given = set(inputs)
    if given != set(declared):
        missing = sorted(set(declared) - given)
        extra = sorted(given - set(declared))
        raise IdentityError(f"identity {kind!r}: missing inputs {missing}, undeclared {extra}")
    body = {"identity": IDENTITY_VERSION, "kind": kind, "inputs": inputs}
    return hashlib.sha256(canonical(body)).hexdigest()


def short(hex_digest: str, n: int = 16) -> str:
    """A readable prefix for folder names and tags (64 bits by default: collisions are moot)."""
    return hex_digest.removeprefix("sha256:")[:n]


def bytes_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stream_sha256(chunks: Iterable[bytes]) -> str:
    """SHA-256 of bytes that arrive in pieces (a remote object read in ranges)."""
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(chunk)
    return h.hexdigest()


def hash_file(path: Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file read now (no memo): for verifying bytes just downloaded or written."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def file_digests(path: Path, chunk: int = 1 << 20) -> dict[str, str]:
    """MD5 and SHA-256 of a file in one read: a downloaded archive checked against whichever
    of the two its publisher gives (MD5 is a published checksum here, never one of our keys)."""
    md5, sha = hashlib.md5(usedforsecurity=False), hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            md5.update(block)
            sha.update(block)
    return {"md5": md5.hexdigest(), "sha256": sha.hexdigest()}


class _FileMemo:
    """(real path, size, mtime_ns, inode) -> SHA-256, in memory and in one SQLite file.

    SQLite serialises writers across processes (perturbation workers, parallel jobs); a cache
    folder that cannot be written only costs re-hashing.
    """

    def __init__(self) -> None:
        self._mem: dict[tuple, str] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._db_path: Path | None = None
        self._pid = 0

    def _conn(self) -> sqlite3.Connection | None:
        from asrbench.settings import settings

        path = settings().cache / "identity" / "files.sqlite"
        if self._db is not None and self._db_path == path and self._pid == os.getpid():
            return self._db
        self._db, self._db_path, self._pid = None, path, os.getpid()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                str(path), timeout=30, check_same_thread=False, isolation_level=None
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, "
                "mtime_ns INTEGER, ino INTEGER, sha256 TEXT)"
            )
            self._db = db
        except (OSError, sqlite3.Error):
            self._db = None
        return self._db

    def lookup(self, path: Path) -> tuple[tuple, str | None]:
        """The file's memo key, and its SHA-256 where the memo holds it for that key."""
        return self._lookup(path, self._conn)

    def lookup_many(self, paths: Sequence[str | Path]) -> list[str | None]:
        """`lookup`'s SHA-256 of each file, the memo's file found once for them all (the
        settings read from the environment once, not once a file)."""
        with self._lock:
            db = self._conn()
        return [self._lookup(Path(p), lambda: db)[1] for p in paths]

    def _lookup(
        self, path: Path, conn: Callable[[], sqlite3.Connection | None]
    ) -> tuple[tuple, str | None]:
        real = os.path.realpath(path)
        st = os.stat(real)
        key = (real, st.st_size, st.st_mtime_ns, st.st_ino)
        hit = self._mem.get(key)
        if hit is not None:
            return key, hit
        with self._lock:
            db = conn()
            if db is not None:
                try:
                    row = db.execute(
                        "SELECT size, mtime_ns, ino, sha256 FROM files WHERE path=?", (real,)
                    ).fetchone()
                except sqlite3.Error:
                    row = None
                if row is not None and tuple(row[:3]) == key[1:]:
                    self._mem[key] = row[3]
                    return key, row[3]
        return key, None

    def sha256(self, path: Path) -> str:
        key, hit = self.lookup(path)
        if hit is not None:
            return hit
        real = key[0]
        value = hash_file(Path(real))
        with self._lock:
            self._mem[key] = value
            db = self._conn()
            if db is not None:
                try:
                    db.execute(
                        "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                        (real, *key[1:], value),
                    )
                except sqlite3.Error:
                    pass
        return value


_MEMO = _FileMemo()


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, memoised by path, size, mtime and inode."""
    return _MEMO.sha256(Path(path))


def files_sha256(paths: Sequence[str | Path], workers: int = 4) -> list[str]:
    """`file_sha256` of many files; threads overlap I/O (hashlib releases the GIL) for the
    files the memo does not hold. A memo hit (the usual case: the scorer's own code, read at
    every `ops/score`) is a stat and a lookup, cheaper than a thread's start and hand-offs."""
    if len(paths) < 8 or workers <= 1:
        return [file_sha256(p) for p in paths]
    hits = _MEMO.lookup_many(paths)
    todo = [p for p, hit in zip(paths, hits, strict=True) if hit is None]
    if len(todo) < 8:
        fresh = [file_sha256(p) for p in todo]
    else:
        with ThreadPoolExecutor(workers) as pool:
            fresh = list(pool.map(file_sha256, todo))
    hashed = iter(fresh)
    return [hit if hit is not None else next(hashed) for hit in hits]


def tree_paths(
    root: Path,
    *,
    suffixes: Collection[str] | None = None,
    skip_suffixes: Collection[str] = (),
    skip_names: Collection[str] = (),
    hidden: bool = True,
    on_symlink: Callable[[Path], None] | None = None,
) -> list[str]:
    """The files of a folder's identity: relative POSIX paths, sorted, of every file under
    `root` (symlinked files followed, symlinked folders not entered).

    The one walk behind the scorer's code, the perturbation bank's code, the Ray node's code,
    a model's source and a zoo entry. Each caller's rules are parameters, since its digest is in
    stored keys and must not move (tests/test_tree_identity.py): `suffixes` keeps only files
    with those (`Path.suffix`, case as written); `skip_suffixes` leaves files out by suffix,
    `skip_names` files and folders by name, at any depth;
    `hidden=False` leaves out every name starting with a dot; `on_symlink` is called with each
    symlink met (it may raise to refuse them).
    """
    root = Path(root)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if d not in skip_names and (hidden or not d.startswith("."))
        )
        if on_symlink is not None:
            for d in dirnames:
                if (here / d).is_symlink():
                    on_symlink(here / d)
        for name in sorted(filenames):
            if name in skip_names or (not hidden and name.startswith(".")):
                continue
            suffix = Path(name).suffix
            if suffix in skip_suffixes or (suffixes is not None and suffix not in suffixes):
                continue
            path = here / name
            if on_symlink is not None and path.is_symlink():
                on_symlink(path)
            if path.is_file():
                out.append(path.relative_to(root).as_posix())
    return sorted(out)


def tree_files(root: Path, relpaths: Iterable[str]) -> list[list[str]]:
    """[[relative path, sha256], ...] sorted by path: the `files` input of a folder's identity."""
    rels = sorted(set(relpaths))
    shas = files_sha256([root / r for r in rels])
    return [[r, s] for r, s in zip(rels, shas, strict=True)]


def seed_digest(*parts: int | str) -> bytes:
    """32 bytes derived from `parts`: SHA-256 of their text joined by NUL. Ranks items for a
    seeded sample (`sample_utterances`) and seeds per-item generators (`derive_seed(hashed=True)`)
    without a random stream, so the result does not depend on processing order."""
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).digest()


def derive_seed(*parts: int | str, hashed: bool = False) -> list[int]:
    """The one derivation of a random seed: entropy words for `numpy.random.default_rng` (or
    `SeedSequence`) from a user's seed and what the draws are for.

    `hashed=True`: the eight little-endian 32-bit words of `seed_digest(*parts)`; for anything
    new, and for a perturbed utterance (seed, spec, utterance ID, step). Default: integers as
    they are and text by its CRC-32 (a fairness analysis (seed, name), a simulated RIR bin
    (20260, bin, rate)); `derive_seed(seed)` is what `scoring.stats` uses as
    `default_rng(seed)` (scoring imports nothing from asrbench). Both rules are kept because
    seeds derived by either are behind stored results and cached audio
    (tests/test_seeds.py holds values computed before they were merged here).
    """
    if hashed:
        d = seed_digest(*parts)
        return [int.from_bytes(d[i : i + 4], "little") for i in range(0, len(d), 4)]
    return [p if isinstance(p, int) else zlib.crc32(p.encode("utf-8")) for p in parts]


def dataset_digest(metadata: Path, audio: Sequence[tuple[str, str]]) -> str:
    """A dataset's identity from metadata.tsv and (utterance ID, audio SHA-256) pairs, in order."""
    return "sha256:" + digest(
        "dataset", metadata=file_sha256(metadata), audio=[list(pair) for pair in audio]
    )
