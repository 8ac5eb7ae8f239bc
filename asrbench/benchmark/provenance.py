"""What `run.json`, robustness.json and fairness.json record so that a number can be traced
and reproduced (the records are `asrbench.results.records`)."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata

from asrbench.host import cpu_model, isa_level
from asrbench.results.records import Provenance
from asrbench.settings import REPO_ROOT

PACKAGES = (
    "asrbench",
    "docker",
    "numpy",
    "pynini",
    "nemo-text-processing",
    "num2words",
    "PyYAML",
    "soundfile",
    "typer",
    "boto3",
)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def provenance(command: Sequence[str] | None, started: str, t0: float) -> Provenance:
    """The provenance of a campaign that began at `started` (`utc_now()`) and monotonic `t0`,
    ending now; `command` defaults to this process's argv."""
    return Provenance(
        command=list(command) if command is not None else list(sys.argv),
        git=git_state(),
        host=host_info(),
        packages=package_versions(),
        started=started,
        ended=utc_now(),
        wall_s=round(time.monotonic() - t0, 3),
    )


def git_state() -> dict:
    """Commit of the checkout and whether tracked files differ from it (dirty)."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=20
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": commit,
        "dirty": bool(status) if status is not None else None,
        "dirty_files": status.splitlines()[:50] if status else [],
    }


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def host_info() -> dict:
    # cpu_model and isa_level: CTranslate2 and ONNX Runtime pick their kernels by the CPU's
    # instruction sets, and decode some utterances differently with and without AVX-512.
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "isa_level": isa_level(),
        "docker": _docker_version(),
    }


def _docker_version() -> str | None:
    try:
        from asrbench.images import client

        return client(timeout=5).version().get("Version")
    except Exception:  # no engine: the local runner was used, nothing to record
        return None
