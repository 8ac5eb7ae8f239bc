"""The local executor (the default): every shard in its own thread on this machine."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from asrbench.dataset import Utterance
from asrbench.executors.base import Executor, ShardJob, ShardOutcome
from asrbench.runners.base import RunnerError, log_tail


class LocalExecutor(Executor):
    """Runs each shard through the job's runner in `attempt/shard-<k>/`, one thread per shard
    (runners block on a container or a process, so threads are enough)."""

    name = "local"

    def run_shards(
        self,
        job: ShardJob,
        shards: Sequence[Sequence[Utterance]],
        attempt: Path,
        progress: Any = None,
    ) -> list[ShardOutcome]:
        """A failing shard does not stop the others: their work is kept for the next run.
        Ctrl-C stops every program of this attempt before it propagates."""
        outcomes = [ShardOutcome(k, len(s), attempt / f"shard-{k}") for k, s in enumerate(shards)]

        def one(k: int) -> ShardOutcome:
            oc = outcomes[k]
            t0 = time.monotonic()
            try:
                res = job.runner.run(
                    job.model, job.dataset, oc.work_dir, list(shards[k]), job.options
                )
                oc.startup_s = res.startup_s
            except RunnerError as exc:
                oc.error = str(exc)
            except Exception as exc:  # docker API hiccups etc.: reported per shard, with the log
                oc.error = (
                    f"model {job.model.id}, shard {k}: {type(exc).__name__}: {exc}; "
                    f"log tail:\n{log_tail(oc.log_path)}"
                )
            oc.wall_s = time.monotonic() - t0
            return oc

        ctx = progress if progress is not None else contextlib.nullcontext()
        pool = ThreadPoolExecutor(max_workers=max(1, len(shards)), thread_name_prefix="shard")
        try:
            with ctx:
                futures = [pool.submit(one, k) for k in range(len(shards))]
                for f in futures:
                    f.result()
        except BaseException:
            # KeyboardInterrupt / SystemExit: stop the containers/processes, then propagate.
            from asrbench.runners.leftovers import kill_leftovers

            kill_leftovers(attempt)
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return outcomes
