"""One container spec for batch, serve and stream (asrbench/runners/container.py).

The streaming program's `docker run` command line and the batch runner's Docker SDK arguments
are two renderings of one spec: the stream keeps the CPU limit and the GPUs (which the hand-built
command of ops/stream dropped), and the batch arguments are what they were.
"""

from __future__ import annotations

import pytest

from asrbench.images.dockerfile import PYTHON
from asrbench.resolve import resolve_model
from asrbench.runners.base import RunOptions
from asrbench.runners.container import Use, container_spec, user_and_owner
from asrbench.streaming import program
from asrbench.streaming.run import StreamSpec, run_options


def _after(cmd: list[str], flag: str) -> str | None:
    return cmd[cmd.index(flag) + 1] if flag in cmd else None


def test_the_streaming_container_carries_the_cpu_limit_and_the_gpus() -> None:
    model = resolve_model("deepgram_en")
    cmd = program.docker_command(model, "img:tag", "n", RunOptions(cpus=1.5, gpus="all"))
    assert _after(cmd, "--cpus") == "1.5" and _after(cmd, "--gpus") == "all"
    assert _after(cmd, "--memory") == model.card.memory
    cmd = program.docker_command(model, "img:tag", "n", RunOptions(memory="2g", gpus="1"))
    assert _after(cmd, "--memory") == "2g" and _after(cmd, "--gpus") == "1"
    assert "--cpus" not in cmd


def test_without_limits_the_streaming_command_is_the_one_it_was(monkeypatch) -> None:
    """Byte for byte the command ops/stream built by hand before the one spec."""
    monkeypatch.delenv("DEEPGRAM_API_KEY", raising=False)
    model = resolve_model("deepgram_en")
    user, _ = user_and_owner()
    cmd = program.docker_command(model, "img:tag", "n", RunOptions(env={"B": "2", "A": "1"}))
    assert cmd == [
        "docker", "run", "-i", "--rm", "--name", "n", "-e", "A=1", "-e", "B=2",
        "--network", "bridge", "--user", user, "--memory", model.card.memory,
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        "--label", "org.asrbench.model=deepgram_en", "--label", "org.asrbench.stream=1",
        "-e", "PYTHONUNBUFFERED=1", "--entrypoint", PYTHON,
        "img:tag", f"/opt/model/{model.card.streaming}",
    ]  # fmt: skip


def test_batch_and_stream_render_the_same_spec(monkeypatch) -> None:
    monkeypatch.setenv("DEEPGRAM_API_KEY", "dg-0123456789abcdef")
    model = resolve_model("deepgram_en")
    opts = RunOptions(cpus=2.0, gpus="2", env={"K": "v"})
    spec = container_spec(model, opts, Use(name="n", image="i", command=["c"], labels={"x": "1"}))
    kw, argv = spec.sdk_kwargs(), spec.argv()
    assert kw["nano_cpus"] == 2_000_000_000 and _after(argv, "--cpus") == "2"
    assert kw["device_requests"][0]["Count"] == 2 and _after(argv, "--gpus") == "2"
    assert kw["mem_limit"] == _after(argv, "--memory") == model.card.memory
    assert kw["network_mode"] == _after(argv, "--network") == "bridge"
    assert kw["user"] == _after(argv, "--user")
    assert kw["cap_drop"] == ["ALL"] and kw["security_opt"] == ["no-new-privileges"]
    # the secret: its value in the SDK's environment, only its name on the command line
    assert kw["environment"]["DEEPGRAM_API_KEY"] == "dg-0123456789abcdef"
    assert argv[argv.index("DEEPGRAM_API_KEY") - 1] == "-e"
    assert not any("dg-0123456789abcdef" in a for a in argv)
    assert kw["environment"]["K"] == "v" and "K=v" in argv
    assert kw["labels"] == {"org.asrbench.model": "deepgram_en", "x": "1"}


@pytest.mark.parametrize("card_gpu, passed", [("none", None), ("optional", "all")])
def test_ops_stream_passes_gpus_as_ops_benchmark_does(card_gpu, passed, capsys) -> None:
    from dataclasses import replace

    model = resolve_model("deepgram_en")
    model = replace(model, card=model.card.model_copy(update={"gpu": card_gpu}))
    _, opts = run_options(model, StreamSpec(gpus="all", cpus=1.0))
    assert opts.gpus == passed and opts.cpus == 1.0
    assert ("--gpus ignored" in capsys.readouterr().err) == (passed is None)
