"""Runners: Docker and local give identical outputs; crashes keep partial work; no network."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from asrbench.dataset import Dataset, load_dataset
from asrbench.images import engine_available
from asrbench.modelcard import load_model
from asrbench.resolve import resolve_model
from asrbench.runners import RunnerError, RunOptions, get_runner, read_tsv_pairs
from asrbench.settings import REPO_ROOT
from tests.conftest import require

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "models"


@pytest.fixture(scope="module")
def docker_runner():
    require("docker", engine_available(), "no Docker Engine answers")
    return get_runner("docker", quiet=True)


@pytest.fixture(scope="module")
def dataset(mini_en: Path) -> Dataset:
    return load_dataset(mini_en)


def _subset(ds: Dataset, ids: list[str]):
    return [u for u in ds.utterances if u.id in ids]


SAMPLE = [
    "LJ001-0002",
    "1089-134691-0000",
    "cmu_arctic_us_axb_a0005",
    "sense_and_sensibility_01_austen_64kb-0880",
]


def test_docker_and_local_produce_identical_hyp(docker_runner, dataset, tmp_path) -> None:
    model = resolve_model("pocketsphinx_en")
    utts = _subset(dataset, SAMPLE)
    via_docker = docker_runner.run(model, dataset, tmp_path / "docker", utts)
    via_local = get_runner("local").run(model, dataset, tmp_path / "local", utts)
    d = via_docker.hyp_path.read_bytes()
    assert d == via_local.hyp_path.read_bytes()
    hyps = read_tsv_pairs(via_docker.hyp_path)
    assert list(hyps) == SAMPLE
    assert "comparatively" in hyps["LJ001-0002"]  # a real transcript, not an echo
    timing = read_tsv_pairs(via_docker.timing_path)
    assert set(timing) == set(SAMPLE)
    assert all(float(v.split("\t")[1]) > 0 for v in timing.values())


@pytest.mark.parametrize("runner_name", ["local", "docker"])
def test_crash_keeps_partial_hyp_and_reports_log_tail(runner_name, dataset, tmp_path) -> None:
    if runner_name == "docker":
        require("docker", engine_available(), "no Docker Engine answers")
    runner = get_runner(runner_name, quiet=True)
    model = load_model(FIXTURES / "crashy_en")
    utts = dataset.utterances[:5]
    with pytest.raises(RunnerError) as err:
        runner.run(model, dataset, tmp_path, utts, RunOptions(env={"CRASH_AFTER": "2"}))
    msg = str(err.value)
    assert "exited with status 3" in msg
    assert f"simulated failure on {utts[2].id}" in msg  # the log tail is in the error
    assert err.value.log_path and err.value.log_path.is_file()
    assert "done " + utts[1].id in err.value.log_path.read_text()
    hyp = tmp_path / "out" / "hyp.tsv"
    assert hyp.read_text().endswith("this line is torn")
    # The two finished utterances survive; the torn third line is not taken as a result.
    assert list(read_tsv_pairs(hyp)) == [u.id for u in utts[:2]]


def test_network_is_off_and_data_read_only(docker_runner, dataset, tmp_path) -> None:
    model = load_model(FIXTURES / "netprobe")
    assert model.card.network is False
    result = docker_runner.run(model, dataset, tmp_path, dataset.utterances[:1])
    status = read_tsv_pairs(result.hyp_path)[dataset.utterances[0].id]
    fields = dict(item.split("=", 1) for item in status.split())
    assert fields["ifaces"] == "lo"  # no interface but loopback
    assert fields["connect"] == "ENETUNREACH"  # the connection attempt fails: no route
    assert fields["dns"] == "failed"
    assert fields["data"] == "EROFS"  # the dataset mount is read-only
    assert fields["uid"] != "0"  # not root inside the container


def test_timeout_is_reported(docker_runner, dataset, tmp_path) -> None:
    model = resolve_model("pocketsphinx_en")
    with pytest.raises(RunnerError, match="timed out"):
        docker_runner.run(
            model, dataset, tmp_path, dataset.utterances[:3], RunOptions(timeout_s=0.5)
        )


def test_image_is_reused_when_folder_unchanged(docker_runner, tmp_path) -> None:
    from asrbench.images import build_model_image

    src = FIXTURES / "crashy_en"
    copy = tmp_path / "crashy_en"
    shutil.copytree(src, copy)
    tag1, id1 = build_model_image(load_model(copy))
    tag2, id2 = build_model_image(load_model(copy))
    assert (tag1, id1) == (tag2, id2)
    (copy / "transcribe.py").write_text((copy / "transcribe.py").read_text() + "\n# changed\n")
    tag3, id3 = build_model_image(load_model(copy))
    assert tag3 != tag1 and id3 != id1


def _pypi_reachable() -> bool:
    import socket

    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


def test_network_build_with_extra_ca_bundle(docker_runner, tmp_path) -> None:
    """Build mode `network`: pip runs inside the build and trusts the CA bundle passed in, as
    behind a TLS-intercepting proxy; the result really has the package installed."""
    import os

    from asrbench.images import BuildOptions, build_model_image, client

    require("pypi", _pypi_reachable(), "pypi.org:443 cannot be reached")
    bundle = Path(os.environ.get("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"))
    copy = tmp_path / "crashy_en"
    shutil.copytree(FIXTURES / "crashy_en", copy)
    (copy / "requirements.txt").write_text("six==1.17.0\n")
    opts = BuildOptions(mode="network", ca_bundle=bundle)
    tag, _ = build_model_image(load_model(copy), opts)
    out = client().containers.run(
        tag,
        entrypoint=["/opt/venv/bin/python", "-c", "import six; print(six.__version__)"],
        network_mode="none",
        remove=True,
    )
    assert out.decode().strip() == "1.17.0"
    assert tag != build_model_image(load_model(copy), BuildOptions(mode="wheelhouse"))[0]


class _FakeContainer:
    """A container whose `wait` fails as the docker SDK does, for the runner's error reports."""

    short_id = "c0ffee"
    attrs: dict = {}

    def __init__(self, wait_error: Exception):
        self.wait_error, self.removed = wait_error, False

    def wait(self, timeout: float) -> dict:
        raise self.wait_error

    def logs(self, stream: bool, follow: bool) -> list[bytes]:
        return [b"started\n"]

    def remove(self, force: bool) -> None:
        self.removed = True


def _wait_failure(monkeypatch, dataset: Dataset, tmp_path: Path, error: Exception):
    from asrbench.runners import docker as docker_runner

    container = _FakeContainer(error)

    class Engine:
        class containers:
            @staticmethod
            def run(**kwargs):
                return container

    monkeypatch.setattr(docker_runner, "client", lambda *a, **k: Engine())
    monkeypatch.setattr(
        docker_runner,
        "build_model_image",
        lambda model, opts: ("asrbench/crashy_en:test", "sha256:test"),
    )
    runner = docker_runner.DockerRunner()
    with pytest.raises(RunnerError) as err:
        runner.run(
            load_model(FIXTURES / "crashy_en"),
            dataset,
            tmp_path,
            dataset.utterances[:1],
            RunOptions(timeout_s=5),
        )
    assert container.removed
    return str(err.value)


def test_docker_wait_timeout_is_reported_as_a_timeout(monkeypatch, dataset, tmp_path) -> None:
    import requests
    from urllib3.exceptions import ReadTimeoutError

    # What the docker SDK raises over the Unix socket when `wait(timeout=...)` expires.
    timeout = requests.ConnectionError(ReadTimeoutError(None, "/wait", "Read timed out."))
    message = _wait_failure(monkeypatch, dataset, tmp_path, timeout)
    assert "timed out after 5 s" in message


@pytest.mark.parametrize("kind", ["api", "connection"])
def test_docker_engine_errors_are_not_reported_as_timeouts(
    kind, monkeypatch, dataset, tmp_path
) -> None:
    import requests
    from docker.errors import APIError

    error = (
        APIError("500 Server Error", explanation="container state is corrupt")
        if kind == "api"
        else requests.ConnectionError("Connection aborted")
    )
    message = _wait_failure(monkeypatch, dataset, tmp_path, error)
    assert "timed out" not in message and "could not be waited for" in message
    expected = "container state is corrupt" if kind == "api" else "stopped answering"
    assert expected in message


# --- a model run dies with its job (watchdog) and never shows a secret ----------------------


def _model_processes(prefix: str) -> list[int]:
    import psutil

    return [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if any(prefix in a for a in (p.info["cmdline"] or []))
    ]


def _containers_under(prefix: str) -> list[str]:
    from asrbench.images import client

    # One list call (the low-level API): `containers.list` inspects each listed container
    # after listing, and one removed in between raised NotFound (a race with the teardown).
    listed = client().api.containers(all=True, filters={"label": "org.asrbench.model=sleepy_en"})
    return [
        c["Id"][:12]
        for c in listed
        if (c.get("Labels") or {}).get("org.asrbench.work", "").startswith(prefix)
    ]


@pytest.mark.parametrize("runner_name", ["local", "docker"])
def test_sigkill_of_benchmark_takes_the_model_down(runner_name, tmp_path) -> None:
    """`kill -9` of a real ops/benchmark: the model program / container is gone within seconds,
    not left running until the next run (the runner starts it from a worker thread)."""
    import signal
    import subprocess
    import time

    if runner_name == "docker":
        require("docker", engine_available(), "no Docker Engine answers")
    cache = tmp_path / "cache"
    proc = subprocess.Popen(
        [
            str(REPO_ROOT / "ops" / "benchmark"),
            "-m",
            str(FIXTURES / "sleepy_en"),
            "-d",
            "mini_en",
            "--runner",
            runner_name,
            "--max-utts",
            "2",
            "--cache",
            str(cache),
            "--results",
            str(tmp_path / "results"),
            "--no-progress",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    prefix = str(cache.resolve())
    running = _containers_under if runner_name == "docker" else _model_processes
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if list(cache.glob("*/attempts/*/shard-*/out/hyp.tsv")) and running(prefix):
            break
        time.sleep(0.2)
    assert proc.poll() is None and running(prefix), proc.stderr.read().decode()[-2000:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    gone_by = time.monotonic() + 5
    while time.monotonic() < gone_by and running(prefix):
        time.sleep(0.1)
    assert running(prefix) == [], f"the model outlived its job by more than 5 s ({runner_name})"


@pytest.mark.parametrize("runner_name", ["local", "docker"])
def test_runner_redacts_declared_secrets_from_log_and_error(
    runner_name, dataset, tmp_path, monkeypatch
) -> None:
    if runner_name == "docker":
        require("docker", engine_available(), "no Docker Engine answers")
    secret = "sk-LEAKY-0123456789abcdef"
    monkeypatch.setenv("LEAKY_API_KEY", secret)
    runner = get_runner(runner_name, quiet=True)
    with pytest.raises(RunnerError) as err:
        runner.run(load_model(FIXTURES / "leaky_en"), dataset, tmp_path, dataset.utterances[:1])
    message = str(err.value)
    assert "exited with status 3" in message
    assert secret not in message and "[REDACTED:LEAKY_API_KEY]" in message
    log = err.value.log_path.read_text()
    assert secret not in log and secret[:12] not in log.replace("[REDACTED", "")
    assert log.count("[REDACTED:LEAKY_API_KEY]") == 3, log  # clear, split in two, in an error


def test_kill_leftovers_stops_a_program_and_a_container_on_the_folder(
    docker_runner, tmp_path
) -> None:
    """What a rerun does before harvesting: a process whose command line names the folder and a
    labelled container with a mount under it are stopped; one elsewhere is left alone."""
    import subprocess
    import sys

    from asrbench.images import client
    from asrbench.runners.leftovers import kill_leftovers
    from asrbench.settings import BASE_IMAGE

    work, other = tmp_path / "attempts" / "a1" / "shard-0", tmp_path / "elsewhere"
    work.mkdir(parents=True)
    other.mkdir()
    nap = [sys.executable, "-c", "import time; time.sleep(300)"]
    mine = subprocess.Popen([*nap, str(work / "wav.lst")], start_new_session=True)
    theirs = subprocess.Popen([*nap, str(other / "wav.lst")], start_new_session=True)
    engine = client()
    box = engine.containers.run(
        BASE_IMAGE,
        ["sleep", "300"],
        detach=True,
        labels={"org.asrbench.model": "leftover_test"},
        volumes={str(work): {"bind": "/work", "mode": "rw"}},
        network_disabled=True,
    )
    try:
        assert kill_leftovers(tmp_path / "attempts") == 2
        mine.wait(timeout=30)  # gone (kill_leftovers reaped it: the status is not ours to see)
        assert theirs.poll() is None
        assert [c.id for c in engine.containers.list(all=True) if c.id == box.id] == []
    finally:
        theirs.kill()
        theirs.wait()
        mine.kill()
        mine.wait()
        try:
            box.remove(force=True)
        except Exception:
            pass
