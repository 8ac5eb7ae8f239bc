"""Runners: Docker (default where an engine answers) and local (per-model virtualenv)."""

from __future__ import annotations

import sys
import threading

from asrbench.runners.base import Runner, RunnerError, RunOptions, RunResult, read_tsv_pairs

__all__ = [
    "RUNNERS",
    "Runner",
    "RunnerError",
    "RunOptions",
    "RunResult",
    "get_runner",
    "read_tsv_pairs",
    "shared_runner",
]


RUNNERS = ("docker", "local")  # and "auto": docker where an engine answers, else local
_SHARED: dict[str, Runner] = {}
_SHARED_LOCK = threading.Lock()


def shared_runner(name: str = "auto") -> Runner:
    """`get_runner(name)` made once per process and shared: a benchmark matrix's cells (and
    the preflight before them) use one runner, so a DockerRunner's image lookups are kept."""
    with _SHARED_LOCK:
        if name not in _SHARED:
            _SHARED[name] = get_runner(name)
        return _SHARED[name]


def get_runner(name: str = "auto", quiet: bool = False) -> Runner:
    """`docker`, `local`, or `auto`: Docker when an engine answers, else local; says which.

    An unknown name is an InputError (exit 2); `docker` without an engine that answers is a
    RunnerError (exit 1)."""
    from asrbench.images import DockerUnavailable, engine_available

    if name == "auto":
        name = "docker" if engine_available() else "local"
        if not quiet:
            why = "a Docker Engine answers" if name == "docker" else "no Docker Engine answers"
            print(f"runner: {name} ({why})", file=sys.stderr)
    if name == "docker":
        from asrbench.images import client
        from asrbench.runners.docker import DockerRunner

        try:
            client(timeout=10)
        except DockerUnavailable as exc:
            raise RunnerError(str(exc)) from exc
        return DockerRunner()
    if name == "local":
        from asrbench.runners.local import LocalRunner

        return LocalRunner()
    from asrbench.errors import InputError

    raise InputError(f"--runner {name!r}: unknown runner; choose {', '.join(RUNNERS)} or auto")
