"""Issue 30 item 4: no error exits 0. Every exception class the platform defines maps to a
non-zero exit status, and the grid commands exit non-zero when the runner cannot be made."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import socket
import subprocess
from pathlib import Path

import pytest

import asrbench
import scoring
from asrbench.errors import EXIT_FAILED, EXIT_INPUT, AsrbenchError, exit_code_for
from asrbench.settings import REPO_ROOT

# Programming errors (a key built with undeclared inputs): not a user's to fix, so the CLI
# shows their traceback; they still exit non-zero.
PROGRAMMING_ERRORS = {"asrbench.identity.IdentityError"}


def _error_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for pkg in (asrbench, scoring):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue  # runs the CLI when imported
            module = importlib.import_module(info.name)
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


def _instance(cls: type[BaseException]) -> BaseException:
    """An instance built as the platform builds it: from a message, or from a list of problems
    (DatasetError), or from one text per required argument."""
    try:
        params = inspect.signature(cls).parameters.values()
    except ValueError:  # a builtin's signature: (*args)
        params = []
    required = [
        p
        for p in params
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    for args in (("what went wrong, naming the file",), ([],), ("x",) * len(required)):
        try:
            return cls(*args)
        except (TypeError, AttributeError):
            continue
    raise AssertionError(f"cannot build {cls}")


def test_the_walk_finds_the_platforms_errors() -> None:
    names = {f"{c.__module__}.{c.__qualname__}" for c in _error_classes()}
    for expected in (
        "asrbench.runners.base.RunnerError",
        "asrbench.errors.InputError",
        "asrbench.benchmark.errors.BenchmarkError",
        "scoring.errors.ScoringError",
    ):
        assert expected in names


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_error_class_maps_to_a_non_zero_exit(cls: type[BaseException]) -> None:
    name = f"{cls.__module__}.{cls.__qualname__}"
    exc = _instance(cls)
    code = exit_code_for(exc)
    assert isinstance(code, int) and code != 0, (name, code)
    if name in PROGRAMMING_ERRORS:
        return
    from scoring.errors import ScoringError

    assert issubclass(cls, (AsrbenchError, ScoringError)), (
        f"{name} neither derives from asrbench.errors.AsrbenchError nor is mapped there"
    )
    assert code in (EXIT_FAILED, EXIT_INPUT), (name, code)


def test_a_runner_error_keeps_the_programs_status_apart_from_the_exit_code() -> None:
    from asrbench.runners import RunnerError

    exc = RunnerError("model m exited with status 3", None, 3)
    assert exc.status == 3 and exc.exit_code == EXIT_FAILED and exit_code_for(exc) == 1
    assert exit_code_for(RunnerError("no status")) == EXIT_FAILED


def _closed_docker_socket(tmp_path: Path) -> str:
    """A unix socket path where nothing listens (bound, then closed: connection refused)."""
    path = tmp_path / "docker.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.close()
    return f"unix://{path}"


def _ops(name: str, *args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO_ROOT / "ops" / name), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


COMMANDS = {
    "benchmark": ["-m", "whisper_tiny_en", "-d", "mini_en", "--no-progress"],
    "robustness": [
        "-m",
        "whisper_tiny_en",
        "-d",
        "mini_en",
        "-g",
        "gaussian_noise:2",
        "--utts",
        "2",
    ],
    "fairness": [
        "-m",
        "whisper_tiny_en",
        "-d",
        "mini_en",
        "--by",
        "SPEAKER",
        "-q",
        "-t",
        "gaussian_noise:2",
        "--per-speaker",
        "1",
    ],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unknown_runner_is_an_input_error(command: str, tmp_path: Path) -> None:
    p = _ops(
        command,
        *COMMANDS[command],
        "--runner",
        "nosuch",
        "--results",
        tmp_path / "r",
        env={"ASRBENCH_CACHE": str(tmp_path / "c")},
    )
    assert p.returncode == EXIT_INPUT, (p.returncode, p.stderr)
    assert "--runner 'nosuch'" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("*.json"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_docker_engine_that_does_not_answer_exits_1(command: str, tmp_path: Path) -> None:
    host = _closed_docker_socket(tmp_path)
    p = _ops(
        command,
        *COMMANDS[command],
        "--runner",
        "docker",
        "--results",
        tmp_path / "r",
        env={"DOCKER_HOST": host, "ASRBENCH_CACHE": str(tmp_path / "c")},
    )
    assert p.returncode == EXIT_FAILED, (p.returncode, p.stderr)
    assert "error:" in p.stderr and "Traceback" not in p.stderr
    # nothing was derived before the check (robustness and fairness derive conditions first)
    assert not (tmp_path / "c" / "perturb").exists()
