"""The one container spec of a model program: batch (`DockerRunner.run`), serve
(`_DockerWorker`) and stream (`streaming/program.py`) all build it here.

Every container gets the same isolation and resources: no network unless the card says
`network: true`, a non-root user, all capabilities dropped, no-new-privileges, the card's
memory limit (or the run's), the run's CPU limit and GPUs, this model's declared secrets only
(by name; the value comes from the host environment), the run's settings and unbuffered
Python. Only what differs by use is the caller's: the image's command or entry point, the
mounts, the labels naming its kind, and whether stdin is attached (a stream). The spec renders
as the Docker SDK's keyword arguments (batch, serve) or as a `docker run` command line
(stream: its stdin and stdout are the program's pipes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from asrbench.modelcard import Model
from asrbench.runners.base import RunOptions

CONTAINER_UID = 10001  # non-root user inside the container when the host user is root


def user_and_owner() -> tuple[str, int | None]:
    """The container's `uid:gid`, and the owner its writable mounts need (None: no chown)."""
    uid = os.getuid()
    if uid == 0:
        return f"{CONTAINER_UID}:{CONTAINER_UID}", CONTAINER_UID
    return f"{uid}:{os.getgid()}", None


@dataclass(frozen=True)
class ContainerSpec:
    """How one model container runs; build it with `container_spec`."""

    name: str
    image: str
    command: tuple[str, ...]
    user: str
    network: str  # "none" or "bridge"
    memory: str | None
    cpus: float | None
    gpus: str | None  # "all" or a count
    secrets: tuple[str, ...]  # declared by the card and set on the host: passed by name
    env: dict[str, str]  # the run's settings, then PYTHONUNBUFFERED
    labels: dict[str, str]
    volumes: dict[str, tuple[str, str]] = field(default_factory=dict)  # host: (bind, mode)
    entrypoint: str | None = None

    def sdk_kwargs(self) -> dict[str, Any]:
        """`docker.containers.run(**kwargs)`: detached, the secrets' values read here."""
        env = {s: os.environ[s] for s in self.secrets if s in os.environ}
        env.update(self.env)
        kwargs: dict[str, Any] = dict(
            name=self.name,
            image=self.image,
            command=list(self.command),
            volumes={h: {"bind": b, "mode": m} for h, (b, m) in self.volumes.items()},
            environment=env,
            user=self.user,
            network_mode=self.network,
            mem_limit=self.memory,
            detach=True,
            labels=dict(self.labels),
            security_opt=["no-new-privileges"],
            cap_drop=["ALL"],
        )
        if self.entrypoint:
            kwargs["entrypoint"] = self.entrypoint
        if self.cpus:
            kwargs["nano_cpus"] = int(self.cpus * 1e9)
        if self.gpus:
            from docker.types import DeviceRequest

            count = -1 if self.gpus == "all" else int(self.gpus)
            kwargs["device_requests"] = [DeviceRequest(count=count, capabilities=[["gpu"]])]
        return kwargs

    def argv(self) -> list[str]:
        """`docker run -i --rm ...`: stdin attached, removed when it ends. A secret is named
        alone (`-e NAME`): `docker run` takes its value from its own environment, so no value
        is ever on a command line."""
        env = [a for s in self.secrets for a in ("-e", s)]
        settings = sorted((k, v) for k, v in self.env.items() if k != "PYTHONUNBUFFERED")
        env += [a for k, v in settings for a in ("-e", f"{k}={v}")]
        limits = ["--memory", self.memory] if self.memory else []
        if self.cpus:
            limits += ["--cpus", f"{self.cpus:g}"]
        if self.gpus:
            limits += ["--gpus", self.gpus]
        mounts = [a for h, (b, m) in self.volumes.items() for a in ("-v", f"{h}:{b}:{m}")]
        labels = [a for k, v in self.labels.items() for a in ("--label", f"{k}={v}")]
        entry = ["--entrypoint", self.entrypoint] if self.entrypoint else []
        return [
            "docker", "run", "-i", "--rm", "--name", self.name, *env,
            "--network", self.network, "--user", self.user, *limits,
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges", *mounts, *labels,
            "-e", "PYTHONUNBUFFERED=1", *entry, self.image, *self.command,
        ]  # fmt: skip


@dataclass(frozen=True)
class Use:
    """What one use of a model container sets itself: its name, image, command (or entry
    point), the labels naming its kind and its mounts (host path: (bind, mode))."""

    name: str
    image: str
    command: list[str]
    labels: dict[str, str]
    volumes: dict[str, tuple[str, str]] = field(default_factory=dict)
    entrypoint: str | None = None


def container_spec(model: Model, options: RunOptions, use: Use) -> ContainerSpec:
    """The container of `model` run with `options`; `use.labels` are added to the model's."""
    user, _ = user_and_owner()
    # settings in the order given, PYTHONUNBUFFERED last (as the batch runner always set it)
    env = {**options.env, "PYTHONUNBUFFERED": "1"}
    return ContainerSpec(
        name=use.name,
        image=use.image,
        command=tuple(use.command),
        user=user,
        network="bridge" if model.card.network else "none",
        memory=options.memory or model.card.memory,
        cpus=options.cpus,
        gpus=options.gpus,
        secrets=tuple(s for s in model.card.secrets if s in os.environ),
        env=env,
        labels={"org.asrbench.model": model.id, **use.labels},
        volumes=dict(use.volumes),
        entrypoint=use.entrypoint,
    )
