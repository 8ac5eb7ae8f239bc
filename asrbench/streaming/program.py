"""Starting a card's `streaming:` program with its stdin and stdout as pipes.

Docker: `docker run -i` of the model's image (the program is in /opt/model, as the batch one),
with the batch runner's isolation: no network, non-root, all capabilities dropped,
no-new-privileges, the card's memory limit; the container is removed when the feed ends or
fails. Local: the local runner's virtualenv and assembled source, its filtered environment.
The program's stderr goes to the cell's stream.log.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from dataclasses import dataclass
from typing import IO

from asrbench.errors import InputError
from asrbench.host import check_cpu
from asrbench.modelcard import Model
from asrbench.runners.base import RunnerError, RunOptions

RUNNERS = ("docker", "local")


@dataclass
class Started:
    """A running streaming program: its process, identity, and how to end it."""

    proc: subprocess.Popen
    runner: str
    identity: str  # image ID (Docker) or the local runner's model identity
    container: str | None = None

    def stop(self) -> None:
        """End the program (closing its stdin first lets it finish on its own)."""
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.container:
            subprocess.run(
                ["docker", "rm", "-f", self.container],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )


def streaming_program(model: Model) -> str:
    """The card's `streaming:` program; InputError when the model has none."""
    program = model.card.streaming
    if not program:
        raise InputError(
            f"{model.card_path}: the model has no `streaming:` program; streaming needs one "
            "(models/README.md, 'Streaming contract')"
        )
    return program


def docker_command(model: Model, tag: str, name: str, options: RunOptions) -> list[str]:
    """The `docker run -i` command line of the streaming program in the model's image."""
    from asrbench.images.dockerfile import MODEL_DIR, PYTHON
    from asrbench.runners.docker import _user_and_owner

    user, _ = _user_and_owner()
    # As the batch runner: this model's declared secrets (by name only: `docker run` takes each
    # value from its own environment, so none is on a command line) and the run's settings.
    env = [a for s in model.card.secrets if s in os.environ for a in ("-e", s)]
    env += [a for k, v in sorted(options.env.items()) for a in ("-e", f"{k}={v}")]
    return [
        "docker", "run", "-i", "--rm", "--name", name, *env,
        "--network", "bridge" if model.card.network else "none",
        "--user", user,
        "--memory", options.memory or model.card.memory,
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        "--label", f"org.asrbench.model={model.id}", "--label", "org.asrbench.stream=1",
        "-e", "PYTHONUNBUFFERED=1",
        "--entrypoint", PYTHON,
        tag, f"{MODEL_DIR}/{streaming_program(model)}",
    ]  # fmt: skip


def start(model: Model, runner: str, log: IO[bytes], options: RunOptions | None = None) -> Started:
    """Start the model's streaming program (building its image or virtualenv if need be)."""
    options = options or RunOptions()
    program = streaming_program(model)
    check_cpu(model)  # before any image or virtualenv is made (both runners run on this CPU)
    if runner == "docker":
        from asrbench.images import build_model_image

        tag, image_id = build_model_image(model)
        name = f"asrbench-stream-{model.id}-{uuid.uuid4().hex[:12]}"
        cmd, identity, container = docker_command(model, tag, name, options), image_id, name
        env = None
    elif runner == "local":
        from asrbench.runners.local import LocalRunner

        local = LocalRunner()
        identity = local.prepare(model)
        cmd = [
            str(local.venv_dir(model) / "bin" / "python"),
            str(local.source_dir(model) / program),
        ]
        env, container = local._env(model, options), None
    else:
        raise InputError(f"runner {runner!r}: choose one of {', '.join(RUNNERS)}")
    try:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env
        )
    except OSError as exc:
        raise RunnerError(f"model {model.id}: the streaming program did not start ({exc})") from exc
    return Started(proc, runner, identity, container)
