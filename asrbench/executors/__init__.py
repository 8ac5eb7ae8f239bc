"""Executors: where the shards of benchmark cells run (see base.py for the interface).

- `local` (default): threads on this machine, each shard through the runner;
- `ray`: Ray tasks on a cluster, with the zoo as the only shared storage (ray_executor.py; the
  `ray` package is an optional extra, imported only when this executor is used).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from asrbench.executors.base import (
    Executor,
    ExecutorError,
    Needs,
    PreflightError,
    ShardJob,
    ShardOutcome,
    needs_for,
)
from asrbench.executors.local import LocalExecutor

NAMES = ("local", "ray")

__all__ = [
    "NAMES",
    "Executor",
    "ExecutorError",
    "LocalExecutor",
    "Needs",
    "PreflightError",
    "ShardJob",
    "ShardOutcome",
    "get_executor",
    "needs_for",
]


def get_executor(
    name: str = "local",
    *,
    address: str | None = None,
    zoo_remote: str | None = None,
    zoo_config: Path | None = None,
    progress: bool = True,
    **kwargs: Any,
) -> Executor:
    """An executor by name; `address`, `zoo_remote` and `zoo_config` apply to `ray` only."""
    if name == "local":
        if address or zoo_remote:
            raise PreflightError("--address and --zoo-remote apply to --executor ray only")
        return LocalExecutor()
    if name == "ray":
        from asrbench.executors.ray_executor import RayExecutor

        return RayExecutor(
            address or "auto",
            zoo_remote=zoo_remote,
            zoo_config=zoo_config,
            progress=progress,
            **kwargs,
        )
    raise PreflightError(f"unknown executor {name!r}; choose one of {', '.join(NAMES)}")
