"""A stream cell's cache: each utterance kept as its final arrives, so a rerun resumes.

The key follows the benchmark's rules (`benchmark/cache.py::cache_key`, identity kind `hyps`):
the program's identity (image ID or local digest), the dataset's content hash and the runtime
settings that can change what the program writes (`streaming/run.py::cache_runtime`): the
feed (chunk length, speed), the `env` settings and the GPUs. Not the selection: as a batch
entry, an entry only gains utterances, and a sample and the whole dataset share what both
streamed. Layout of `<cache>/streams/<key>/` (`ops/stream --cache DIR` or
$ASRBENCH_STREAM_CACHE=DIR: `DIR/<key>/`):

    key.json            the key's inputs
    utts/<h>.json       one fed utterance (its sends, lateness, events) and the run that fed it;
                        `<h>` is a digest of the utterance ID; written atomically (fsio) as soon
                        as its final arrived, so a `kill -9` loses at most the one in flight
    logs/<run>.log      the program's stderr in that run
    runs/<run>.json     one run of the program: when it started and the host's state around it
                        (guard.Host), written at its start and again at its end: a run that was
                        killed keeps what its start saw, and the guard judges it on that
    .lock               held (flock) by the job using this entry

Only utterances with a final are kept: a failed one is streamed again by the next run. A
resumed cell mixes utterances timed in two or more runs; each row of stream.json names its run
and the latency guard judges each run on its own host measures (guard.judge_runs).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from asrbench.benchmark.cache import HypCache, cache_key
from asrbench.fsio import atomic_write_json
from asrbench.identity import bytes_sha256, short
from asrbench.streaming.feed import FedUtterance


@dataclass(frozen=True)
class Kept:
    """One utterance from the cache: what was fed, and which run fed it."""

    run: str
    fed: FedUtterance


class StreamCache:
    """One stream cell's cache entry; use `with entry.locked(label):` around a run."""

    def __init__(self, root: Path, identity: str, dataset_hash: str, runtime: dict):
        key, inputs = cache_key(identity, dataset_hash, runtime)
        # the batch entry's lock (flock: released by the kernel when its holder is killed)
        self._entry = HypCache(Path(root), key, inputs)
        self.root, self.key, self.inputs = self._entry.root, key, inputs

    @contextlib.contextmanager
    def locked(self, label: str) -> Iterator[None]:
        with self._entry.locked(label):
            atomic_write_json(self.root / "key.json", self.inputs)
            yield

    def _utt_path(self, uid: str) -> Path:
        # utterance IDs are the dataset's (any text without a tab): a digest names the file
        return self.root / "utts" / f"{short(bytes_sha256(uid.encode('utf-8')), 32)}.json"

    def kept(self, uids: list[str]) -> dict[str, Kept]:
        """The utterances of `uids` this entry holds (a file that cannot be read is streamed
        again, as one never written)."""
        out: dict[str, Kept] = {}
        for uid in uids:
            try:
                d = json.loads(self._utt_path(uid).read_text(encoding="utf-8"))
                if d["fed"]["id"] == uid:
                    out[uid] = Kept(d["run"], FedUtterance.from_dict(d["fed"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return out

    def keep(self, run: str, fed: FedUtterance) -> None:
        """Store one utterance as soon as it is done; a failed one is not kept."""
        if fed.failed or fed.final is None:
            return
        body = {"run": run, "fed": {**fed.to_dict(), "lateness": fed.lateness}}
        atomic_write_json(self._utt_path(fed.uid), body)

    def new_run(self) -> str:
        """A fresh run ID (random: two runs of one entry never share one). IDs sort in order
        of start (a cell lists its runs so): the time to the microsecond, since a killed run
        and its resumption can start within one second, where the random part would order them."""
        return f"{datetime.now(UTC):%Y%m%dT%H%M%S.%fZ}-{uuid.uuid4().hex[:8]}"

    def log(self, run: str) -> Path:
        """Where the program's stderr of `run` goes."""
        path = self.root / "logs" / f"{run}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def record_run(self, run: str, host: dict[str, Any]) -> None:
        atomic_write_json(self.root / "runs" / f"{run}.json", {"run": run, "host": host})

    def runs(self, ids: set[str]) -> dict[str, dict[str, Any]]:
        """The host measures of each run in `ids` (an empty dict for one never recorded)."""
        out: dict[str, dict[str, Any]] = {}
        for run in sorted(ids):
            try:
                d = json.loads((self.root / "runs" / f"{run}.json").read_text(encoding="utf-8"))
                out[run] = d["host"]
            except (OSError, ValueError, KeyError):
                out[run] = {}
        return out
