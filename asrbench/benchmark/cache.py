"""The raw-hypothesis cache: what a model wrote, keyed by everything that can change it.

Layout of one entry, `<cache>/hyps/<key>/`:

    key.json        the key's inputs (model identity, dataset hash, runtime options)
    hyp.tsv         merged, complete `ID<TAB>TEXT` lines, sorted by ID
    timing.tsv      `ID<TAB>PROCESSING_S<TAB>AUDIO_S`
    hyp.timed.jsonl the programs' optional timed output (timed.py), for transcribed IDs
    failed.tsv      `ID<TAB>REASON`
    attempts/<A>/shard-<k>/   work dirs of a run in progress (wav.lst, out/, run.log)
    .lock           held (flock) by the job using this entry

A run only ever adds utterances to an entry. After an interruption, the next run first kills
programs left over from the dead one, harvests every complete line its shards wrote (torn last
lines are dropped), and runs only what is still missing, so the result equals that of an
uninterrupted run.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from asrbench.benchmark.output import Records, given_ids, read_output
from asrbench.fsio import atomic_write_bytes, atomic_write_json, atomic_write_text
from asrbench.identity import digest, short
from asrbench.results.timed import TIMED_FILE, write_hyp_timed
from asrbench.secrets import Redactor


def cache_key(model_identity: str, dataset_hash: str, runtime: dict) -> tuple[str, dict]:
    """Key of a cache entry and the inputs it hashes (kept in key.json and run.json)."""
    inputs = {"model": model_identity, "dataset": dataset_hash, "runtime": runtime}
    return short(digest("hyps", **inputs), 32), inputs


def read_records(folder: Path) -> Records:
    """The merged tables of a cache entry (written by `HypCache.save`, trusted)."""
    return read_output(folder)[0]


class HypCache:
    """One cache entry; use `with entry.locked():` around anything that reads or writes it."""

    def __init__(self, root: Path, key: str, inputs: dict):
        self.root = Path(root) / key
        self.key = key
        self.inputs = inputs
        self.attempts = self.root / "attempts"

    @contextlib.contextmanager
    def locked(self, label: str = "") -> Iterator[None]:
        """Exclusive lock, released by the kernel even when the holder is killed with -9."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(
                    f"{label}: another job is using cache entry {self.root}; waiting for it",
                    file=sys.stderr,
                )
                fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def load(self) -> Records:
        return read_records(self.root)

    def save(self, rec: Records) -> None:
        """Write the merged tables atomically, sorted by ID (byte-stable whatever the run order)."""

        def text(d: dict[str, str]) -> str:
            return "".join(f"{k}\t{d[k]}\n" for k in sorted(d))

        atomic_write_json(self.root / "key.json", self.inputs)
        atomic_write_text(self.root / "timing.tsv", text(rec.timing))
        if rec.cost or (self.root / "cost.tsv").exists():
            atomic_write_text(self.root / "cost.tsv", text(rec.cost))
        atomic_write_text(self.root / "failed.tsv", text(rec.failed))
        if rec.timed or (self.root / TIMED_FILE).exists():
            write_hyp_timed(self.root / TIMED_FILE, rec.timed)
        # hyp.tsv last: a reader that sees it sees the other two as well.
        atomic_write_text(self.root / "hyp.tsv", text(rec.hyp))

    def shard_dirs(self) -> list[Path]:
        if not self.attempts.is_dir():
            return []
        return sorted(p for p in self.attempts.glob("*/shard-*") if p.is_dir())

    def harvest(
        self, redactor: Redactor | None = None
    ) -> tuple[Records, int, list[Path], list[str]]:
        """Merge every complete line left in attempt folders into the entry; drop the folders.

        Call only while no program writes into them (`runners.leftovers.kill_leftovers`).
        Returns the merged records, how many utterances were newly transcribed, the shard logs
        (kept under `logs/`) and the contract problems found in the programs' output. Secret
        values the model may have echoed (an API error body quoting its key) are redacted from
        failure reasons, logs and problems before anything is stored; hypotheses are never
        altered.
        """
        red = redactor or Redactor()
        rec = self.load()
        recovered = 0
        problems: list[str] = []
        changed = False
        for shard in self.shard_dirs():
            out, found = read_output(shard / "out", given_ids(shard / "wav.lst"))
            if red:  # failure reasons are messages (redacted); hypotheses are transcripts,
                # kept as written and scored as written (a hit is flagged in the cell instead)
                out = Records(
                    out.hyp,
                    out.timing,
                    {k: red.redact(v) for k, v in out.failed.items()},
                    out.cost,
                    out.timed,
                )
            problems += [red.redact(f"{shard.parent.name}/{shard.name}: {p}") for p in found]
            before = (len(rec.hyp), dict(rec.failed))
            recovered += rec.absorb(out)
            changed |= (len(rec.hyp), rec.failed) != before
        if changed or not (self.root / "hyp.tsv").exists():
            self.save(rec)
        kept: list[Path] = []
        if self.attempts.is_dir():
            logs = self.root / "logs"
            for shard in self.shard_dirs():
                # Keep the logs, interrupted attempts included: they explain what happened.
                log = shard / "run.log"
                if log.is_file():
                    logs.mkdir(exist_ok=True)
                    dest = logs / f"{shard.parent.name}-{shard.name}.log"
                    atomic_write_bytes(dest, red.redact_bytes(log.read_bytes()))
                    kept.append(dest)
            shutil.rmtree(self.attempts, ignore_errors=True)
        return rec, recovered, kept, problems

    def attempt_dir(self, shards: list[list[str]], round_: int) -> Path:
        """Work folder of one attempt: its shards' utterance IDs and its isolation round."""
        return self.attempts / short(digest("attempt", shards=shards, round=round_), 12)
