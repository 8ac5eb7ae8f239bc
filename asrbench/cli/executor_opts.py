"""The executor flags, the same on every command that runs a grid of cells.

    --executor local|ray   where shards run (default local: this machine)
    --address auto|HOST:PORT|ray://HOST:PORT   the Ray cluster (ray only; default auto)
    --zoo-remote NAME      the zoo.yaml remote the nodes fetch datasets and models from

`ops/benchmark`, `ops/robustness` and `ops/fairness` use them through `executor_from_flags`.
"""

from __future__ import annotations

import typer

from asrbench.executors import Executor, get_executor

ExecutorOpt = typer.Option(
    "local",
    "--executor",
    help="where shards run: local (this machine) or ray (a Ray cluster; "
    "datasets and models travel through the zoo, see docs/SCALE.md)",
)
AddressOpt = typer.Option(
    None,
    "--address",
    help="Ray cluster: auto (default), HOST:PORT of the head, or "
    "ray://HOST:PORT (Ray Client); --executor ray only",
)
ZooRemoteOpt = typer.Option(
    None,
    "--zoo-remote",
    help="zoo.yaml remote the cluster nodes pull from (default: the "
    "default remote); --executor ray only",
)


def executor_from_flags(
    executor: str, address: str | None, zoo_remote: str | None, progress: bool = True
) -> Executor:
    """The executor the flags name (PreflightError, exit 2, for a bad combination)."""
    return get_executor(
        executor or "local", address=address, zoo_remote=zoo_remote, progress=progress
    )
