"""Run the shards of one job in parallel, each through the runner in its own work folder."""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from asrbench.benchmark.cache import kill_leftovers
from asrbench.benchmark.progress import Progress
from asrbench.dataset import Dataset, Utterance
from asrbench.modelcard import Model
from asrbench.runners.base import Runner, RunnerError, RunOptions, log_tail


@dataclass
class ShardOutcome:
    """How one shard went: counts, timings and, on failure, the runner's message."""

    index: int
    n_utts: int
    work_dir: Path
    wall_s: float = 0.0
    startup_s: float = 0.0
    error: str | None = None

    @property
    def log_path(self) -> Path:
        return self.work_dir / "run.log"

    def to_dict(self) -> dict:
        return {"shard": self.index, "n_utts": self.n_utts, "wall_s": round(self.wall_s, 3),
                "startup_s": round(self.startup_s, 3), "error": self.error}


def run_shards(runner: Runner, model: Model, dataset: Dataset, shards: list[list[Utterance]],
               attempt: Path, options: RunOptions, progress: Progress | None = None
               ) -> list[ShardOutcome]:
    """Run every shard (one thread each, since runners block on a container or process).

    A failing shard does not stop the others: their work is kept for the next run. Ctrl-C stops
    every program of this attempt before it propagates, so nothing keeps running behind.
    """
    outcomes = [ShardOutcome(k, len(s), attempt / f"shard-{k}") for k, s in enumerate(shards)]

    def one(k: int) -> ShardOutcome:
        oc = outcomes[k]
        t0 = time.monotonic()
        try:
            res = runner.run(model, dataset, oc.work_dir, shards[k], options)
            oc.startup_s = res.startup_s
        except RunnerError as exc:
            oc.error = str(exc)
        except Exception as exc:  # docker API hiccups etc.: report them per shard, with the log
            oc.error = (f"model {model.id}, shard {k}: {type(exc).__name__}: {exc}; log tail:\n"
                        f"{log_tail(oc.log_path)}")
        oc.wall_s = time.monotonic() - t0
        return oc

    ctx = progress if progress is not None else contextlib.nullcontext()
    pool = ThreadPoolExecutor(max_workers=len(shards), thread_name_prefix="shard")
    try:
        with ctx:
            futures = [pool.submit(one, k) for k in range(len(shards))]
            for f in futures:
                f.result()
    except BaseException:
        # KeyboardInterrupt / SystemExit: stop the containers/processes, then let it propagate.
        kill_leftovers(attempt)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return outcomes
