"""The executor interface: where the shards of a benchmark cell run.

The job logic (`asrbench/benchmark/run.py`) decides *what* runs: the utterances still to do, split
into shards, attempt after attempt (isolation rounds). An executor decides *where*: in threads on
this machine (`LocalExecutor`), or as tasks on a cluster (`RayExecutor`). The whole contract:

    executor.preflight(needs)        # once per command, before any work: fail early and clearly
    executor.run_shards(job, shards, attempt)
        -> one ShardOutcome per shard; on return, `attempt/shard-<k>/` holds `wav.lst`,
           `out/{hyp,timing,failed}.tsv` and `run.log` exactly as shard k's program wrote them
           (as the local runner leaves them), and nothing else writes there any more
    executor.close()

Everything after that (harvest, contract checks, redaction, merging, isolation rounds, scoring)
stays in the job logic, so a Dask or Slurm-array executor only has to implement `run_shards`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asrbench.dataset import Dataset, Utterance
from asrbench.errors import AsrbenchError, InputError
from asrbench.modelcard import Model
from asrbench.runners.base import Runner, RunOptions


class ExecutorError(AsrbenchError):
    """An executor that cannot run (cluster, node, zoo); the message names the cause."""


class PreflightError(ExecutorError, InputError):
    """A check before any work started failed: fix the cluster or the command, then rerun."""


@dataclass
class ShardOutcome:
    """How one shard went: counts, timings and, on failure, the runner's message."""

    index: int
    n_utts: int
    work_dir: Path
    wall_s: float = 0.0
    startup_s: float = 0.0
    error: str | None = None
    node: dict[str, Any] | None = None  # where it ran, for remote executors (run.json)

    @property
    def log_path(self) -> Path:
        return self.work_dir / "run.log"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "shard": self.index,
            "n_utts": self.n_utts,
            "wall_s": round(self.wall_s, 3),
            "startup_s": round(self.startup_s, 3),
            "error": self.error,
        }
        if self.node is not None:
            out["node"] = self.node
        return out


@dataclass(frozen=True)
class ShardJob:
    """One cell's shards as the job logic hands them to an executor."""

    runner: Runner
    model: Model
    dataset: Dataset
    identity: str  # the model identity the job computed (image ID or `local:` digest)
    dataset_hash: str
    cache_key: str  # the cell's hypothesis-cache key: names its work folders anywhere
    options: RunOptions
    label: str  # "model x dataset", for messages and progress


@dataclass(frozen=True)
class Needs:
    """What one model's shards ask of the machine that runs them."""

    model: str
    runner: str
    cpus: int = 1
    gpus: float = 0
    docker: bool = False
    memory_bytes: int | None = None

    def resources(self) -> dict[str, float]:
        """The Ray-style resource request (`CPU`, `GPU`, custom `docker`)."""
        out: dict[str, float] = {"CPU": float(self.cpus)}
        if self.gpus:
            out["GPU"] = float(self.gpus)
        if self.docker:
            out["docker"] = DOCKER_SHARE
        return out

    def describe(self) -> str:
        parts = [f"{self.cpus} CPU"]
        if self.gpus:
            parts.append(f"{self.gpus:g} GPU")
        if self.docker:
            parts.append("docker")
        return ", ".join(parts)


# A task that needs an engine asks for a sliver of the node's `docker` resource, so a node
# started with `--resources '{"docker": 1}'` takes as many as its CPUs allow.
DOCKER_SHARE = 0.001


def card_cpus(model: Model) -> int:
    """CPUs a model's program uses, from its card: `runtime.threads` (or `runtime.cpu_threads`)
    when a positive integer, else 1."""
    runtime = model.card.extra.get("runtime") or {}
    if isinstance(runtime, dict):
        for key in ("threads", "cpu_threads"):
            value = runtime.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return 1


_UNITS = {"b": 1, "k": 2**10, "m": 2**20, "g": 2**30}


def memory_bytes(text: str | None) -> int | None:
    """'1g' -> 1073741824 (Docker's memory notation, as in the card's `memory`)."""
    if not text:
        return None
    t = text.strip().lower()
    unit = _UNITS.get(t[-1], None)
    number = float(t[:-1]) if unit else float(t)
    return int(number * (unit or 1))


def needs_for(model: Model, runner: str, options: RunOptions | None = None) -> Needs:
    """The resources one shard of `model` asks for: CPUs from the card (or `cpus` in the run
    options), a GPU when the card requires one or `--gpus` is given to a GPU-capable model,
    `docker` for the Docker runner, memory from the card."""
    opts = options or RunOptions()
    cpus = math.ceil(opts.cpus) if opts.cpus else card_cpus(model)
    gpus = 0.0
    if model.card.gpu == "required":
        gpus = 1.0
    if opts.gpus and model.card.gpu != "none":
        gpus = 1.0 if opts.gpus == "all" else float(opts.gpus)
    return Needs(
        model=model.id,
        runner=runner,
        cpus=max(1, cpus),
        gpus=gpus,
        docker=runner == "docker",
        memory_bytes=memory_bytes(opts.memory or model.card.memory),
    )


class Executor(abc.ABC):
    """Runs the shards of benchmark cells somewhere; see the module docstring."""

    name: str = "executor"
    # Whether shards run on this machine. If not, the job's per-cell progress line (which polls
    # shard folders here) cannot see them (remote executors show their own line), and the
    # local runner's model identity is computed without building its virtualenv here.
    runs_here: bool = True
    # How many cells `run_matrix` keeps in flight at once (their shards queue together).
    cells_in_flight: int = 1

    def preflight(self, needs: Sequence[Needs]) -> None:  # noqa: B027 - nothing to check here
        """Check, before any work starts, that every need can be met; raise PreflightError."""

    @abc.abstractmethod
    def run_shards(
        self,
        job: ShardJob,
        shards: Sequence[Sequence[Utterance]],
        attempt: Path,
        progress: Any = None,
    ) -> list[ShardOutcome]:
        """Run every shard of one attempt; see the module docstring for what must hold after."""

    def describe(self) -> dict[str, Any]:
        """What run.json records about where the shards ran."""
        return {"name": self.name}

    def cancel(self) -> None:  # noqa: B027 - the local executor stops on KeyboardInterrupt
        """Make every `run_shards` in progress (other threads) stop and raise
        KeyboardInterrupt; finished shards stay where they were written."""

    def close(self) -> None:  # noqa: B027 - most executors hold nothing
        """Release what the executor holds (connections, progress lines)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
