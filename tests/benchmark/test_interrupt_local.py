"""Ctrl-C of a real `ops/benchmark` (local runner, PocketSphinx): programs stop, rerun resumes."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from asrbench.settings import REPO_ROOT


def _running_under(folder: Path) -> list[int]:
    prefix = str(folder.resolve())
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if prefix.encode() in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def test_ctrl_c_stops_shards_and_rerun_resumes(stateless_pocketsphinx: Path,
                                               tmp_path: Path) -> None:
    cache, results = tmp_path / "cache", tmp_path / "r"
    cmd = [str(REPO_ROOT / "ops" / "benchmark"), "-m", str(stateless_pocketsphinx), "-d",
           "mini_en", "--runner", "local", "--jobs", "2", "--max-utts", "6", "--cache",
           str(cache), "--results", str(results), "--no-progress", "--score-opt", "nsw=false"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if sum(p.read_text().count("\n") for p in cache.glob("*/attempts/*/shard-*/out/hyp.tsv")):
            break
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "rerun the same command to continue" in err
    assert _running_under(cache) == []  # no model program outlives the job
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "resumed:" in p.stderr
    run = json.loads((results / "pocketsphinx_en" / "mini_en" / "run.json").read_text())
    assert run["cache"]["utts_run"] < 6
    assert (results / "pocketsphinx_en" / "mini_en" / "hyp.raw.tsv").read_text().count("\n") == 6
