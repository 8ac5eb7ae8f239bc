"""Running the shards of one attempt: now the executors' job (asrbench/executors/).

Kept for callers of the earlier API: `run_shards(runner, model, dataset, shards, attempt,
options, progress)` runs them with the local executor, exactly as before.
"""

from __future__ import annotations

from pathlib import Path

from asrbench.benchmark.progress import Progress
from asrbench.dataset import Dataset, Utterance
from asrbench.executors import LocalExecutor, ShardJob, ShardOutcome
from asrbench.modelcard import Model
from asrbench.runners.base import Runner, RunOptions

__all__ = ["ShardOutcome", "run_shards"]


def run_shards(
    runner: Runner,
    model: Model,
    dataset: Dataset,
    shards: list[list[Utterance]],
    attempt: Path,
    options: RunOptions,
    progress: Progress | None = None,
) -> list[ShardOutcome]:
    """Every shard in its own thread through `runner` (see LocalExecutor)."""
    job = ShardJob(
        runner=runner,
        model=model,
        dataset=dataset,
        identity="",
        dataset_hash="",
        cache_key="",
        options=options,
        label=f"{model.id} x {dataset.id}",
    )
    return LocalExecutor().run_shards(job, shards, attempt, progress)
