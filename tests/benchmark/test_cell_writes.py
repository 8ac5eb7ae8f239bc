"""Issue 30 items 3 and 5 and the staging leftovers: a reported cell whose summary cannot be read
is never replaced; a disk that fills during the write of a cell is one line and leaves nothing;
the leftovers of a process killed with SIGKILL are cleaned by the next run of the same kind.

The disk-full test mounts a real small tmpfs (we run as root in CI): service name "tmpfs" in
ASRBENCH_REQUIRE makes a refused mount fail instead of skip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from asrbench.benchmark import JobSpec, run_benchmark
from asrbench.settings import REPO_ROOT
from tests.conftest import own_cache

OPS = REPO_ROOT / "ops"


def small_copy(mini_en: Path, dest: Path, n: int = 3, edit: str | None = None) -> Path:
    """The first n utterances of mini_en under the same ID; `edit` replaces the first text."""
    shutil.copytree(mini_en, dest, ignore=shutil.ignore_patterns("audio"))
    lines = (mini_en / "metadata.tsv").read_text().splitlines()
    head, rows = lines[0], lines[1 : n + 1]
    if edit is not None:
        cols = rows[0].split("\t")
        cols[3] = edit
        rows[0] = "\t".join(cols)
    (dest / "metadata.tsv").write_text("\n".join([head, *rows]) + "\n")
    (dest / "audio").mkdir()
    for r in rows:
        rel = r.split("\t")[1]
        shutil.copy(mini_en / rel, dest / rel)
    return dest


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def dead_pid() -> int:
    """The PID of a process that has exited (and been reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def break_summary(cell: Path, how: str) -> None:
    path = cell / "summary.json"
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:120])
    else:  # a format this version does not read
        data = json.loads(path.read_text())
        data["format"] = "asrbench-summary-v0"
        path.write_text(json.dumps(data))


@pytest.mark.parametrize("how", ["truncated", "older-format"])
def test_an_unreadable_reported_cell_is_never_replaced(fake_models, mini_en, tmp_path, how):
    folder = fake_models("fake_ok")
    first_ds = small_copy(mini_en, tmp_path / "a" / "mini_en")
    other_ds = small_copy(mini_en, tmp_path / "b" / "mini_en", edit="a different reference")
    kw = dict(
        runner="local", results_root=tmp_path / "r", cache_root=tmp_path / "c", progress=False
    )
    reported = run_benchmark(folder, first_ds, JobSpec(**kw)).out_dir
    break_summary(reported, how)
    kept = tree(reported)
    assert "utterances.jsonl" in kept

    other = run_benchmark(folder, other_ds, JobSpec(**kw))
    assert other.placement.kind == "variant" and other.out_dir != reported
    assert other.out_dir.parent == reported.parent and other.out_dir.name.startswith("mini_en~")
    assert "unreadable summary.json" in other.placement.note and "kept" in other.placement.note
    assert tree(reported) == kept  # not a byte changed

    # --replace makes the new one the reported cell and moves the unreadable one aside, whole
    swapped = run_benchmark(folder, other_ds, JobSpec(replace=True, **kw))
    assert swapped.placement.kind == "reported" and swapped.out_dir == reported
    assert "moved, whole, to mini_en~unreadable-" in swapped.placement.note
    aside = list(reported.parent.glob("mini_en~unreadable-*"))
    assert len(aside) == 1 and tree(aside[0]) == kept
    assert (
        json.loads((reported / "summary.json").read_text())["dataset_hash"]
        == other.summary.dataset_hash
    )


def test_disk_full_during_the_write_of_a_cell_is_one_line_and_leaves_nothing(
    fake_models, mini_en, tmp_path, small_disk
):
    folder = fake_models("fake_ok")
    ds = small_copy(mini_en, tmp_path / "ds" / "mini_en")
    results = small_disk / "r"
    cache = own_cache(tmp_path / "c")  # the checkout's virtualenvs: none made in this test
    env = {**os.environ, "ASRBENCH_MIN_FREE_MB": "0", "ASRBENCH_CACHE": str(cache)}
    cmd = [
        str(OPS / "benchmark"),
        "-m",
        str(folder),
        "-d",
        str(ds),
        "--runner",
        "local",
        "--results",
        str(results),
        "--no-progress",
    ]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert first.returncode == 0, first.stderr
    cell = results / "fake_ok" / "mini_en"
    kept = tree(cell)
    # fill the disk but for a few pages: the rerun's cell (same content, so it would replace
    # the reported one) cannot be written whole
    st = os.statvfs(small_disk)
    with open(small_disk / "filler", "wb") as f:
        f.write(b"\0" * (st.f_bavail * st.f_frsize - 3 * 4096))
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "Traceback" not in again.stderr
    errors = [ln for ln in again.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and len(again.stderr.strip().splitlines()) == 1, again.stderr
    line = errors[0]
    assert "no space left" in line and str(results / "fake_ok") in line
    assert "bytes of" in line and "could not be written" in line and "bytes free)" in line
    assert tree(cell) == kept  # the old cell intact
    assert sorted(p.name for p in cell.parent.iterdir()) == ["mini_en"]  # no staging left


def test_staging_leftovers_of_a_killed_run_are_removed_by_the_next_run(
    fake_models, mini_en, tmp_path, cli
):
    folder = fake_models("fake_ok")
    ds = small_copy(mini_en, tmp_path / "ds" / "mini_en")
    kw = dict(
        runner="local", results_root=tmp_path / "r", cache_root=tmp_path / "c", progress=False
    )
    cell = run_benchmark(folder, ds, JobSpec(**kw)).out_dir
    pid = dead_pid()
    stale = cell.with_name(f".mini_en.tmp{pid}")
    stale.mkdir()
    (stale / "summary.json").write_text("{half")
    mine = cell.with_name(f".mini_en.tmp{os.getpid()}x")  # not a staging name: left alone
    mine.mkdir()
    again = run_benchmark(folder, ds, JobSpec(**kw))
    assert again.out_dir == cell and (cell / "summary.json").is_file()
    assert {p.name for p in cell.parent.iterdir()} == {"mini_en", mine.name}

    # killed between the two renames of a swap: the old cell is moved back, not lost
    old = cell.with_name(f".mini_en.old{dead_pid()}")
    os.replace(cell, old)
    again = run_benchmark(folder, ds, JobSpec(**kw))
    assert {p.name for p in cell.parent.iterdir()} == {"mini_en", mine.name}

    # an importer's `.ID.importing-PID` left by a kill -9 goes at the next import there
    out = tmp_path / "datasets" / "x"
    out.parent.mkdir()
    leftover = out.with_name(f".x.importing-{dead_pid()}")
    (leftover / "audio").mkdir(parents=True)
    work = tmp_path / "in"
    shutil.copytree(REPO_ROOT / "tests" / "bad_inputs", work)
    code, _, err = cli("import", "folder", work, work / "table_bom.tsv", "--id", "x", "--out", out)
    assert code == 0, err
    assert sorted(p.name for p in out.parent.iterdir()) == ["x"]


def test_a_live_process_staging_folder_is_left_alone(tmp_path):
    from asrbench.fsio import clean_stale

    target = tmp_path / f"cell-{uuid.uuid4().hex[:6]}"
    live = subprocess.Popen(["sleep", "60"])
    try:
        busy = target.with_name(f".{target.name}.tmp{live.pid}")
        busy.mkdir()
        assert clean_stale(target) == [] and busy.is_dir()
    finally:
        live.kill()
        live.wait()
    assert clean_stale(target) == [busy] and not busy.exists()


def test_a_write_outside_fsio_on_a_full_disk_is_the_same_one_line(tmp_path, small_disk):
    """Shard logs are copied with shutil and the standalone scorer writes its own reports: a
    full disk there is the same DiskFullError, and the staging folder goes."""
    import shutil

    from asrbench.fsio import DiskFullError, disk_full_is_one_line, stage_dir

    log = tmp_path / "shard.log"
    log.write_bytes(b"x" * (64 * 1024))
    stage = stage_dir(small_disk / "r" / "m" / "d")
    st = os.statvfs(small_disk)
    with open(small_disk / "filler", "wb") as f:
        f.write(b"\0" * (st.f_bavail * st.f_frsize - 4096))
    with pytest.raises(
        DiskFullError,
        match=r"no space left on the device of .*/r/m: "
        r".* could not be created",
    ):
        with disk_full_is_one_line(stage):
            shutil.copy2(log, stage / "shard-0.log")
    assert not stage.exists() and list((small_disk / "r" / "m").iterdir()) == []
