"""Shared test fixtures.

External services (Docker Engine, SeaweedFS, sclite, a browser: Debian's `chromium` driven by
Playwright for the report's tests) may be missing on a laptop, where their tests skip.
`.ci/run` sets ASRBENCH_REQUIRE=all (or docker,s3,sclite,browser,...) so that in CI a missing
service fails the test instead of skipping it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from asrbench.dataset import Dataset, load_dataset
from asrbench.settings import REPO_ROOT

MINI_EN = REPO_ROOT / "datasets" / "mini_en"


def _required() -> set[str]:
    return {s.strip() for s in os.environ.get("ASRBENCH_REQUIRE", "").split(",") if s.strip()}


def require(service: str, available: bool, why: str) -> None:
    """Skip when `service` is unavailable, unless CI declared it required: then fail."""
    if available:
        return
    if service in _required() or "all" in _required():
        pytest.fail(f"{service} is required here (ASRBENCH_REQUIRE) but unavailable: {why}")
    pytest.skip(f"{service} unavailable: {why}")


def require_cpu(what: str, available: bool, why: str) -> None:
    """Skip a test this CPU cannot run (a library built for instructions it lacks). Unlike a
    service, no setup can provide an instruction set, so `all` does not cover it: name `what`
    in ASRBENCH_REQUIRE to make its absence a failure."""
    if available:
        return
    if what in _required():
        pytest.fail(f"{what} is required here (ASRBENCH_REQUIRE) but this CPU cannot: {why}")
    pytest.skip(f"this CPU cannot run {what}: {why}")


# Under pytest-xdist with `--dist loadfile` (`make test`: `-n 2 --dist loadfile`), the scheduler
# below hands out work by group: a file's tests go to one worker, so a module-scoped fixture (a
# model run, a server, a site build) is made once, not once per worker that drew one of its
# tests. A folder whose session fixtures are expensive is one group: tests/ray (a SeaweedFS zoo
# and a four-node Ray cluster: started twice, two clusters would also compete for the two
# cores) and tests/report (the results tree every page test reads: three benchmark runs and a
# robustness grid). xdist's own `--dist loadgroup` with `xdist_group` marks does not group
# anything under pytest 9 (xdist 3.8 renames `item._nodeid`, which pytest 9 no longer reads).
SESSION_GROUPS = ("ray", "report")
# Handed out longest first, by each group's seconds in the last whole run
# (tests/durations.json, written by `scripts/test_durations.py JUNIT.xml`): no worker should
# start the Ray tests (about 6 minutes) when the other has nothing left to do, and the short
# files fill the end. A group the file does not know yet (a new test file) counts
# UNKNOWN_TEST_S a test. Whatever the order, each test still runs once, on one worker.
DURATIONS = Path(__file__).with_name("durations.json")
UNKNOWN_TEST_S = 1.0


def xdist_group(nodeid: str) -> str:
    """The group of a test ID (`tests/ray/test_x.py::test_y` -> `ray`), see above."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    if len(parts) > 2 and parts[0] == "tests" and parts[1] in SESSION_GROUPS:
        return parts[1]
    return path


def longest_first(groups: dict[str, dict], seconds: dict[str, float]) -> list[str]:
    """The groups in hand-out order: recorded (or estimated) seconds, longest first; ties by
    name, so the order is the same on every run."""

    def cost(group: str) -> float:
        return seconds.get(group, UNKNOWN_TEST_S * len(groups[group]))

    return sorted(groups, key=lambda g: (-cost(g), g))


def recorded_seconds(path: Path = DURATIONS) -> dict[str, float]:
    """tests/durations.json's group -> seconds; empty when it is missing or unreadable (the
    order then falls back to the test counts: a slower run, never a wrong one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in data["seconds"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown where it is not installed
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadfile` with the groups above; any other `--dist` is xdist's own."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    seconds = recorded_seconds()

    class GroupScheduling(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # once, when the whole queue is known
                for group in longest_first(dict(self.workqueue), seconds):
                    self.workqueue.move_to_end(group)
                self.ordered = True
            super()._assign_work_unit(node)

    return GroupScheduling(config, log)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared() -> Path:
    """The optional ../shared folder of test material (ASRBENCH_SHARED overrides it); the
    platform itself never reads it."""
    path = Path(os.environ.get("ASRBENCH_SHARED") or REPO_ROOT.parent / "shared").resolve()
    require("shared", path.is_dir(), f"{path} not found")
    return path


@pytest.fixture(scope="session")
def mini_en() -> Path:
    return MINI_EN


@pytest.fixture(autouse=True)
def own_stream_cache(request, tmp_path_factory, monkeypatch) -> None:
    """Every test streams into a stream cache of its own (not created unless used): a stream
    cell resumes from its cache (asrbench/streaming/cache.py), so utterances another test or
    an earlier session kept for the same stand-in would be served instead of streamed."""
    from asrbench.identity import bytes_sha256

    name = bytes_sha256(request.node.nodeid.encode("utf-8"))[:16]
    cache = tmp_path_factory.getbasetemp() / "stream-caches" / name
    monkeypatch.setenv("ASRBENCH_STREAM_CACHE", str(cache))


@pytest.fixture(scope="session")
def mini(mini_en: Path) -> Dataset:
    return load_dataset(mini_en)


@pytest.fixture(scope="session")
def few(mini: Dataset) -> list:
    """Four short real utterances: enough to exercise concurrency, retries and a timeout."""
    return sorted(mini.utterances, key=lambda u: u.duration)[:4]


@pytest.fixture
def cli(capsys):
    """Run `asrbench ARGS...` in-process: (exit code, stdout, stderr), as a user would see them."""
    from asrbench.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def sigint_as_in_a_terminal() -> None:
    """`preexec_fn` for a command a test will Ctrl-C: SIGINT back to its default. A process
    started where SIGINT is ignored (a test run launched as a background job of a script, or
    under nohup) passes the ignore on to its children, and Python then installs no
    KeyboardInterrupt handler: the command would never see the test's SIGINT."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_job(cmd: list[str]):
    """Start an `ops/*` command as the interruption tests need it: in its own session (the test
    signals it, or kills the whole session), output piped as text, SIGINT at its default."""
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_as_in_a_terminal,
    )


def hyp_lines_written(cache: Path) -> int:
    """Hypothesis lines the shards of a running `ops/benchmark` have written so far into the
    attempt folders of its `--cache` (what the interruption tests wait on)."""
    return sum(p.read_text().count("\n") for p in cache.glob("*/attempts/*/shard-*/out/hyp.tsv"))


def communicate_or_explain(proc, timeout: float) -> tuple[str, str]:
    """`proc.communicate(timeout)` for an `ops/*` command started with `start_new_session`;
    when it does not exit in time, fail with what it was doing: every thread's stack (the CLI
    prints them on SIGUSR1) and the processes it started, then kill its session."""
    import contextlib
    import signal

    import psutil

    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    tree = []
    try:
        job = psutil.Process(proc.pid)
        for c in [job, *job.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                tree.append(
                    f"{c.pid} (parent {c.ppid()}, {c.status()}): {' '.join(c.cmdline())[:300]}"
                )
    except psutil.NoSuchProcess:
        tree.append(f"{proc.pid} has exited; a process it started holds its output pipes")
    try:
        proc.send_signal(signal.SIGUSR1)
        _, err = proc.communicate(timeout=10)  # if it exits now, we still have the stacks
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # a process outside the session holds the pipes
            proc.kill()
            err = "(its output pipes stayed open after the session was killed)"
    pytest.fail(
        f"{proc.args[0]} did not exit within {timeout:.0f} s (rc now {proc.returncode}); "
        "it and its descendants:\n  "
        + "\n  ".join(tree)
        + "\nstderr (stacks at the end):\n"
        + (err or "")[-12000:]
    )


def own_cache(cache: Path) -> Path:
    """A cache folder of a test's own (its derived datasets and hypotheses never meet the
    checkout's) that shares the checkout's NSW grammars, whose compiling takes minutes (45-130 s
    a language on a quiet machine), and its local-runner virtualenvs, each named by the digest
    of its requirements and Python (`python -m venv` with pip: 3-60 s, by the machine's load).
    A test that sets ASRBENCH_CACHE to a bare new folder pays both again. The NSW readings
    cached so far come as a copy (the test's own readings stay in its folder)."""
    import sqlite3

    cache.mkdir(parents=True)
    for name in ("nemo_tn", "venvs"):
        shared = REPO_ROOT / ".cache" / name
        shared.mkdir(parents=True, exist_ok=True)
        (cache / name).symlink_to(shared)
    readings = REPO_ROOT / ".cache" / "nsw_results.sqlite"
    if readings.exists():
        # through SQLite's backup, not a file copy: another test worker may be writing
        # readings into it, and a copy taken mid-commit is a corrupt database
        src, dst = sqlite3.connect(readings, timeout=30), sqlite3.connect(cache / readings.name)
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()
    return cache


@pytest.fixture
def datasets_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty datasets folder the commands write to (ASRBENCH_DATASETS_DIR)."""
    d = tmp_path / "datasets"
    d.mkdir()
    monkeypatch.setenv("ASRBENCH_DATASETS_DIR", str(d))
    return d


@pytest.fixture
def small_disk(tmp_path: Path):
    """A real 2 MiB tmpfs, unmounted afterwards."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    p = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    require("tmpfs", p.returncode == 0, f"cannot mount a tmpfs: {p.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)
