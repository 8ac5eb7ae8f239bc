"""How `make test` (`-n 2 --dist loadfile`) hands the suite to its two pytest-xdist workers:
tests/conftest.py's scheduler, driven here as xdist's controller drives it, over test IDs made
from the suite's real files. xdist's `WorkerController` and pytest's config are stood in for
by the least they are asked for (what was sent to which worker)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from asrbench.settings import REPO_ROOT
from tests.conftest import (
    UNKNOWN_TEST_S,
    longest_first,
    pytest_xdist_make_scheduler,
    recorded_seconds,
    xdist_group,
)


class Worker:
    """What the scheduler is given of a worker: its ID, the test indices it is sent."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices

    def shutdown(self) -> None:
        self.shutting_down = True


class Config:
    def __init__(self, dist: str) -> None:
        self.option = SimpleNamespace(dist=dist, tx=["popen", "popen"], loadscopereorder=True)

    def getoption(self, name: str):
        return getattr(self.option, name)

    getvalue = getoption


def _suite_ids() -> list[str]:
    """Two test IDs for each test file of the suite, in collection order."""
    found = REPO_ROOT.glob("tests/**/test_*.py")
    files = sorted(p.relative_to(REPO_ROOT).as_posix() for p in found)
    return [f"{f}::test_{n}" for f in files for n in (1, 2)]


def _scheduled(ids: list[str]):
    """Our scheduler with two workers that collected `ids`, after its first hand-outs."""
    sched = pytest_xdist_make_scheduler(Config("loadfile"), None)
    workers = [Worker("gw0"), Worker("gw1")]
    for w in workers:
        sched.add_node(w)
    for w in workers:
        sched.add_node_collection(w, ids)
    sched.schedule()
    return sched, workers


def _run(ids: list[str]) -> dict[str, str]:
    """Schedule `ids` on two workers and complete what each is sent, the workers taking turns
    one test at a time, as xdist's controller would: test ID -> the worker it ran on."""
    sched, workers = _scheduled(ids)
    ran: dict[str, str] = {}
    done = {w.gateway.id: 0 for w in workers}
    while any(done[w.gateway.id] < len(w.sent) for w in workers):
        for w in workers:
            if done[w.gateway.id] < len(w.sent):
                index = w.sent[done[w.gateway.id]]
                done[w.gateway.id] += 1
                ran[ids[index]] = w.gateway.id
                sched.mark_test_complete(w, index)
    assert sched.tests_finished
    return ran


def test_a_files_tests_and_the_ray_and_report_folders_each_run_on_one_worker() -> None:
    ids = _suite_ids()
    ran = _run(ids)
    assert sorted(ran) == sorted(ids)  # every test once
    by_group: dict[str, set[str]] = {}
    for nodeid, worker in ran.items():
        path = nodeid.split("::")[0]
        group = path.split("/")[1] if path.split("/")[1] in ("ray", "report") else path
        by_group.setdefault(group, set()).add(worker)
    assert {g for g, w in by_group.items() if len(w) > 1} == set()
    assert {"ray", "report", "tests/test_fsio.py"} <= set(by_group)
    assert len(set(ran.values())) == 2  # both workers had work


def test_the_ray_tests_are_handed_out_first() -> None:
    ids = _suite_ids()
    sched = pytest_xdist_make_scheduler(Config("loadfile"), None)
    first = Worker("gw0")
    sched.add_node(first)
    sched.add_node(Worker("gw1"))
    for w in sched.nodes:
        sched.add_node_collection(w, ids)
    sched.schedule()
    ray = [i for i, nodeid in enumerate(ids) if nodeid.startswith("tests/ray/")]
    assert first.sent[: len(ray)] == ray


def test_groups_are_handed_out_longest_first_by_the_recorded_seconds() -> None:
    ids = _suite_ids()
    _, workers = _scheduled(ids)
    # what the first two hand-outs sent: the two groups the durations file says are longest
    firsts = {xdist_group(ids[w.sent[0]]) for w in workers}
    seconds = recorded_seconds()
    groups = {xdist_group(i) for i in ids}
    known = sorted((g for g in groups if g in seconds), key=lambda g: -seconds[g])
    assert firsts == set(known[:2])


def test_the_order_estimates_new_files_and_survives_a_missing_record(tmp_path) -> None:
    groups = {"a": {"t1": False}, "b": {"t1": False, "t2": False, "t3": False}, "c": {"t": False}}
    assert longest_first(groups, {"a": 10.0, "c": 0.5}) == ["a", "b", "c"]  # b: 3 tests, unknown
    assert UNKNOWN_TEST_S * 3 < 10.0
    assert longest_first(groups, {}) == ["b", "a", "c"]  # counts, then names
    assert recorded_seconds(tmp_path / "missing.json") == {}
    (tmp_path / "bad.json").write_text("{not json")
    assert recorded_seconds(tmp_path / "bad.json") == {}


def test_the_durations_record_is_read_and_names_the_slow_groups() -> None:
    seconds = recorded_seconds()
    assert seconds["ray"] > 60 and seconds["report"] > 60  # the file is there and parsed


@pytest.mark.parametrize("dist", ["load", "loadscope", "loadgroup", "no"])
def test_other_dist_modes_are_xdists_own(dist: str) -> None:
    assert pytest_xdist_make_scheduler(Config(dist), None) is None
