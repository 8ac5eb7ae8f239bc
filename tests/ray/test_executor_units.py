"""The executor interface's pure parts: addresses, resource needs, the cluster progress line,
and the platform without Ray installed."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

from asrbench.executors import PreflightError, get_executor, needs_for
from asrbench.executors.progress import ClusterProgress
from asrbench.executors.ray_executor import parse_address
from asrbench.runners import RunOptions
from asrbench.settings import REPO_ROOT
from tests.ray.support import make_model


def test_addresses() -> None:
    assert parse_address("auto") == ("auto", None, None)
    assert parse_address("10.0.0.5:6379") == ("gcs", "10.0.0.5", 6379)
    assert parse_address("ray://head.example.org:10001") == ("client", "head.example.org", 10001)
    for bad in ("head", "head:port", ":6379", "ray://head", "h:70000"):
        with pytest.raises(PreflightError, match="--address"):
            parse_address(bad)


def test_needs_come_from_the_card_and_the_runner(tmp_path) -> None:
    from asrbench.modelcard import load_model

    plain = load_model(make_model(tmp_path, "u_plain"))
    n = needs_for(plain, "local")
    assert (n.cpus, n.gpus, n.docker, n.memory_bytes) == (1, 0.0, False, 256 * 2**20)
    assert n.resources() == {"CPU": 1.0}
    assert needs_for(plain, "docker").resources() == {"CPU": 1.0, "docker": 0.001}
    threads = load_model(make_model(tmp_path, "u_threads", card={"runtime": {"threads": 4}}))
    assert needs_for(threads, "docker").cpus == 4
    assert needs_for(threads, "docker", RunOptions(cpus=1.5)).cpus == 2  # --cpus wins
    gpu = load_model(make_model(tmp_path, "u_gpu", card={"gpu": "required"}))
    assert needs_for(gpu, "docker").resources()["GPU"] == 1.0
    opt = load_model(make_model(tmp_path, "u_opt", card={"gpu": "optional"}))
    assert needs_for(opt, "docker").gpus == 0
    assert needs_for(opt, "docker", RunOptions(gpus="2")).gpus == 2.0
    assert needs_for(plain, "docker", RunOptions(gpus="all")).gpus == 0  # gpu: none
    whisper = load_model(REPO_ROOT / "models" / "pocketsphinx_en")
    assert needs_for(whisper, "docker").cpus == 1  # runtime.threads: 1


def test_cluster_progress_line_and_node_lines() -> None:
    out = io.StringIO()
    p = ClusterProgress("ray", stream=out, every_s=3600)
    p.submitted(4, 40)
    p.finished("node aa (10.0.0.1)", 10, 20.0, 4.0, failed=False)
    p.finished("node bb (10.0.0.2)", 10, 30.0, 5.0, failed=True)
    assert p.line().startswith("ray: 2/4 shards, 20/40 utts (50%), ")
    assert "ETA" in p.line() and "2 node(s)" in p.line()
    lines = p.node_lines()
    assert lines == [
        "ray:   node aa (10.0.0.1): 1 shard(s), 10 utts, 5.00 audio-s per busy s",
        "ray:   node bb (10.0.0.2): 1 shard(s), 10 utts, 6.00 audio-s per busy s, 1 shard error(s)",
    ]
    p.close()
    assert out.getvalue().count("ray: 2/4 shards") == 1  # the final line, then node lines


def test_unknown_executor_and_flags() -> None:
    with pytest.raises(PreflightError, match="unknown executor 'dask'"):
        get_executor("dask")
    with pytest.raises(PreflightError, match="--executor ray only"):
        get_executor("local", address="auto")


def test_the_platform_imports_and_runs_locally_without_ray() -> None:
    code = textwrap.dedent("""
        import sys
        import asrbench.benchmark, asrbench.executors, asrbench.cli.benchmark
        import asrbench.perturb.robustness
        assert "ray" not in sys.modules, "ray imported by the platform"
        sys.modules["ray"] = None  # from here on, `import ray` fails as if not installed
        from asrbench.executors import PreflightError, get_executor
        ex = get_executor("ray", address="127.0.0.1:1")
        try:
            ex.connect()
        except PreflightError as exc:
            print("ERR", exc)
    """)
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120
    )
    assert p.returncode == 0, p.stderr
    assert "ERR --executor ray needs the `ray` package: pip install 'asrbench[ray]'" in p.stdout


def test_a_shard_is_stored_whole_or_not_at_all(tmp_path, monkeypatch) -> None:
    """A driver killed while writing a shard's files must not leave a hypothesis without its
    timing (the rerun would harvest it and the cell would count one utterance untimed)."""
    from asrbench.benchmark.cache import HypCache
    from asrbench.executors import ray_executor
    from asrbench.executors.base import ShardOutcome
    from asrbench.executors.worker import ShardReturn

    files = {
        "wav.lst": b"u1\t/a/u1.wav\nu2\t/a/u2.wav\n",
        "out/hyp.tsv": b"u1\thello\nu2\tworld\n",
        "out/timing.tsv": b"u1\t0.0100\t1.000\nu2\t0.0100\t1.000\n",
        "out/failed.tsv": b"",
        "run.log": b"ran\n",
    }
    ret = ShardReturn(files, None, {"id": "n1"}, 1.0, 0.1, 0.0, 0.9)
    cache = HypCache(tmp_path / "cache", "k", {})
    shard = cache.attempt_dir([["u1", "u2"]], 0) / "shard-0"
    ex = ray_executor.RayExecutor("127.0.0.1:1", progress=False)

    real = ray_executor.atomic_write_bytes

    def dies_after_the_hypotheses(path, data):
        if path.name == "timing.tsv":
            raise KeyboardInterrupt  # the driver stops between two files
        real(path, data)

    monkeypatch.setattr(ray_executor, "atomic_write_bytes", dies_after_the_hypotheses)
    with pytest.raises(KeyboardInterrupt):
        ex._store(ShardOutcome(0, 2, shard), ret, 1.0)
    assert not shard.exists() and not cache.shard_dirs()
    rec, recovered, _, _ = cache.harvest()
    assert (recovered, rec.hyp, rec.timing) == (0, {}, {})

    monkeypatch.setattr(ray_executor, "atomic_write_bytes", real)
    ex._store(ShardOutcome(0, 2, shard), ret, 1.0)
    assert [p.name for p in cache.shard_dirs()] == ["shard-0"]
    rec, recovered, _, _ = cache.harvest()
    assert recovered == 2 and sorted(rec.hyp) == sorted(rec.timing) == ["u1", "u2"]
