"""Starting a card's `streaming:` program with its stdin and stdout as pipes.

Docker: `docker run -i` of the model's image (the program is in /opt/model, as the batch one),
from the batch runner's container spec (runners/container.py: isolation, memory, CPUs, GPUs,
secrets, settings); the container is removed when the feed ends or fails. Local: the local
runner's virtualenv and assembled source, its filtered environment.
The program's stderr goes to the cell's stream.log.
"""

from __future__ import annotations

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
    """The `docker run -i` command line of the streaming program in the model's image: the
    batch runner's container spec (runners/container.py), with stdin attached."""
    from asrbench.images.dockerfile import MODEL_DIR, PYTHON
    from asrbench.runners.container import Use, container_spec

    use = Use(
        name=name,
        image=tag,
        command=[f"{MODEL_DIR}/{streaming_program(model)}"],
        labels={"org.asrbench.stream": "1"},
        entrypoint=PYTHON,
    )
    return container_spec(model, options, use).argv()


@dataclass(frozen=True)
class Prepared:
    """A model ready to stream: its image or virtualenv built, its identity known (what a
    stream cell's cache key needs before any program starts)."""

    model: Model
    runner: str
    identity: str  # image ID (Docker) or the local runner's model identity
    tag: str | None = None  # the image (Docker)


def prepare(model: Model, runner: str) -> Prepared:
    """Build the model's image or virtualenv; nothing is started."""
    streaming_program(model)
    check_cpu(model)  # before any image or virtualenv is made (both runners run on this CPU)
    if runner == "docker":
        from asrbench.images import build_model_image

        tag, image_id = build_model_image(model)
        return Prepared(model, runner, image_id, tag)
    if runner == "local":
        from asrbench.runners.local import LocalRunner

        return Prepared(model, runner, LocalRunner().prepare(model))
    raise InputError(f"runner {runner!r}: choose one of {', '.join(RUNNERS)}")


def start(model: Model, runner: str, log: IO[bytes], options: RunOptions | None = None) -> Started:
    """Start the model's streaming program (building its image or virtualenv if need be)."""
    return launch(prepare(model, runner), log, options)


def launch(prep: Prepared, log: IO[bytes], options: RunOptions | None = None) -> Started:
    """Start the streaming program of a prepared model, its stderr to `log`."""
    options = options or RunOptions()
    model, env, container = prep.model, None, None
    if prep.runner == "docker":
        container = f"asrbench-stream-{model.id}-{uuid.uuid4().hex[:12]}"
        cmd = docker_command(model, prep.tag or "", container, options)
    else:
        from asrbench.runners.local import LocalRunner

        local = LocalRunner()
        cmd = [
            str(local.venv_dir(model) / "bin" / "python"),
            str(local.source_dir(model) / streaming_program(model)),
        ]
        env = local._env(model, options)
    try:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env
        )
    except OSError as exc:
        raise RunnerError(f"model {model.id}: the streaming program did not start ({exc})") from exc
    return Started(proc, prep.runner, prep.identity, container)
