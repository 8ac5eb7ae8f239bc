"""Stop the model programs an interrupted job left running on a work folder.

A SIGKILL of `ops/benchmark` (or of a Ray worker) cannot stop what its runners started: Docker
containers are owned by dockerd and local programs run in their own session. Both are found by
what the runners give them: containers by the `org.asrbench.model` label and a mount under the
folder, local programs by a path under the folder on their command line. Used by the benchmark
job before it harvests a hypothesis-cache entry and by the executors on their shard folders.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil

from asrbench.runners.base import RunnerError


def kill_leftovers(folder: Path) -> int:
    """Stop model programs a killed job left running on `folder`; returns how many.

    A SIGKILL of `ops/benchmark` cannot stop its containers (owned by dockerd) nor its local
    programs (own session), and they would keep appending to the shard files being harvested.
    Raises RunnerError when a leftover cannot be stopped: harvesting beside a live writer
    would merge torn output.
    """
    folder = Path(folder).resolve()
    prefix = str(folder) + os.sep
    killed = 0
    for proc in psutil.process_iter(["pid", "cmdline"]):
        args = proc.info.get("cmdline") or []
        if not any(a.startswith(prefix) for a in args):
            continue
        try:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            killed += 1
        except psutil.NoSuchProcess:
            continue  # it ended by itself meanwhile
        except (psutil.AccessDenied, psutil.TimeoutExpired) as exc:
            raise RunnerError(
                f"a model program left by an interrupted run (pid {proc.pid}) "
                f"still writes into {folder} and cannot be stopped ({exc}); "
                "stop it by hand, then rerun"
            ) from None
    # Local programs first (no daemon to wait for), then containers.
    return killed + _kill_containers(prefix)


def _kill_containers(prefix: str) -> int:
    """Remove containers of ours whose mounts lie under `prefix` (none without an engine)."""
    from asrbench.images import DockerUnavailable, client

    try:
        engine = client(timeout=10)
    except (DockerUnavailable, ImportError):
        return 0  # no engine (or no docker SDK): no container of ours can be running
    from docker.errors import APIError, NotFound

    killed = 0
    try:
        # sparse: one list call (its summaries carry the mounts), no inspect per container
        containers = engine.containers.list(filters={"label": "org.asrbench.model"}, sparse=True)
    except APIError as exc:
        raise RunnerError(
            f"cannot list containers to stop leftovers of an interrupted run "
            f"({exc}); check the Docker Engine, then rerun"
        ) from None
    for c in containers:
        mounts = c.attrs.get("Mounts", [])
        if not any(str(m.get("Source", "")).startswith(prefix) for m in mounts):
            continue
        try:
            c.remove(force=True)
            killed += 1
        except NotFound:
            continue  # removed meanwhile (auto-remove or another job)
        except APIError as exc:
            raise RunnerError(
                f"container {c.short_id} left by an interrupted run still "
                f"writes into {prefix} and cannot be removed ({exc}); "
                f"`docker rm -f {c.short_id}`, then rerun"
            ) from None
    return killed
