"""Faults against a real SeaweedFS: SIGKILL half way, corruption, outage, races, bad keys."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from zoo_support import (
    BUCKET,
    SECRET_KEY,
    ThrottledProxy,
    tree_bytes,
    write_zoo_yaml,
    zoo_cli,
    zoo_popen,
)

from asrbench.testing.ports import free_ports
from asrbench.zoo import ZooError, pull, push
from asrbench.zoo.cache import Cache
from asrbench.zoo.config import load_config
from asrbench.zoo.listing import list_entries
from asrbench.zoo.manifest import manifest_key, object_key, scan_folder
from asrbench.zoo.remote import open_remote

pytestmark = pytest.mark.s3


def _prefix(zoo_cfg: Path) -> str:
    return load_config(zoo_cfg).remote("s3").bucket_prefix()[1]


def _proxied_cfg(
    zoo_cfg: Path, proxy: ThrottledProxy, tmp_path: Path, concurrency: int = 4
) -> Path:
    return write_zoo_yaml(
        tmp_path / "zoo-proxy.yaml",
        {
            "s3": {
                "url": f"s3://{BUCKET}/{_prefix(zoo_cfg)}",
                "endpoint_url": f"http://127.0.0.1:{proxy.port}",
                "max_attempts": 2,
                "concurrency": concurrency,
            },
        },
    )


def _wait_for(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_push_killed_half_way_then_rerun_completes(seaweed, zoo_cfg, synth, tmp_path, s3_env):
    client = seaweed.client()
    prefix = _prefix(zoo_cfg)
    total_objects = len({f.sha256 for f in scan_folder(synth)})

    def uploaded() -> int:
        resp = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/objects/")
        return resp.get("KeyCount", 0)

    proxy = ThrottledProxy(seaweed.port, rate=1_000_000)
    try:
        cfg = _proxied_cfg(zoo_cfg, proxy, tmp_path)
        proc = zoo_popen(
            "push", "-d", "synth", "--source", str(synth), "--config", str(cfg), "-q", env=s3_env
        )
        try:
            _wait_for(lambda: uploaded() >= 3, 60, "some objects to arrive")
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    finally:
        proxy.close()
    partial = uploaded()
    assert 3 <= partial < total_objects
    # A half-finished push is never visible: no version, no latest pointer.
    cfg_obj = load_config(zoo_cfg)
    rem = open_remote(cfg_obj.remote("s3"), cfg_obj.base)
    assert list_entries(rem) == {}

    out = zoo_cli(
        "push",
        "-d",
        "synth",
        "--source",
        str(synth),
        "--config",
        str(zoo_cfg),
        "--json",
        "-q",
        env=s3_env,
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["objects_uploaded"] <= total_objects - partial + 1  # +1: metadata.tsv
    assert res["objects_uploaded"] < total_objects
    back = pull("dataset", "synth", config=zoo_cfg, dest=tmp_path / "back")
    assert tree_bytes(Path(back.dest)) == tree_bytes(synth)


def test_pull_killed_half_way_resumes_and_verifies(seaweed, zoo_cfg, synth, tmp_path, s3_env):
    push("dataset", "synth", source=synth, config=zoo_cfg)
    cache = Cache()
    objects = cache.root / "objects"
    partial = cache.root / "partial"

    def progressed() -> bool:
        done = sum(1 for _ in objects.rglob("*")) if objects.is_dir() else 0
        parts = len(list(partial.glob("*.done"))) if partial.is_dir() else 0
        return done >= 3 or parts >= 3

    proxy = ThrottledProxy(seaweed.port, rate=1_000_000)
    dest = tmp_path / "dest"
    try:
        cfg = _proxied_cfg(zoo_cfg, proxy, tmp_path)
        proc = zoo_popen(
            "pull", "-d", "synth", "--config", str(cfg), "--dest", str(dest), "-q", env=s3_env
        )
        try:
            _wait_for(progressed, 60, "part of the download")
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    finally:
        proxy.close()
    assert not dest.exists()  # nothing placed by the killed pull
    out = zoo_cli(
        "pull",
        "-d",
        "synth",
        "--config",
        str(zoo_cfg),
        "--dest",
        str(dest),
        "--json",
        "-q",
        env=s3_env,
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert 0 < res["bytes_downloaded"] < res["bytes_total"]  # resumed, not restarted
    assert tree_bytes(dest) == tree_bytes(synth)
    assert not list(partial.glob("*.part"))


def test_corrupted_object_fails_pull_and_places_nothing(
    seaweed, zoo_cfg, mini_en, tmp_path, s3_env
):
    push("dataset", "mini_en", source=mini_en, config=zoo_cfg)
    victim = next(f for f in scan_folder(mini_en) if f.path.endswith(".wav"))
    key = f"{_prefix(zoo_cfg)}/{object_key(victim.sha256)}"
    client = seaweed.client()
    good = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0xFF  # same size, one flipped byte
    client.put_object(Bucket=BUCKET, Key=key, Body=bytes(bad))
    dest = tmp_path / "dest"
    with pytest.raises(ZooError) as err:
        pull("dataset", "mini_en", config=zoo_cfg, dest=dest)
    msg = str(err.value)
    assert victim.path in msg and "SHA-256 verification failed" in msg
    assert "Nothing was placed" in msg
    assert not dest.exists()
    assert not Cache().object_path(victim.sha256).exists()
    assert not list((Cache().root / "partial").glob(f"{victim.sha256}*"))


def test_unreachable_server_retries_then_clear_error(tmp_path, s3_env, mini_en):
    (port,) = free_ports(1)  # nothing listens there
    cfg = write_zoo_yaml(
        tmp_path / "zoo.yaml",
        {
            "down": {
                "url": "s3://zoo/x",
                "endpoint_url": f"http://127.0.0.1:{port}",
                "max_attempts": 3,
                "connect_timeout": 1,
            },
        },
    )
    t0 = time.monotonic()
    with pytest.raises(ZooError, match=r"server unreachable .* after 3 attempt\(s\)"):
        pull("dataset", "mini_en", config=cfg, dest=tmp_path / "d")
    assert time.monotonic() - t0 < 30
    out = zoo_cli(
        "push", "-d", "mini_en", "--source", str(mini_en), "--config", str(cfg), "-q", env=s3_env
    )
    assert out.returncode == 1  # the job failed (asrbench.errors.EXIT_FAILED), input was fine
    assert "unreachable" in out.stderr and "Traceback" not in out.stderr


def test_concurrent_pushes_leave_one_consistent_version(zoo_cfg, synth, tmp_path, s3_env):
    procs = [
        zoo_popen(
            "push",
            "-d",
            "synth",
            "--source",
            str(synth),
            "--config",
            str(zoo_cfg),
            "--json",
            "-q",
            env=s3_env,
        )
        for _ in range(2)
    ]
    results = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
        results.append(json.loads(stdout))
    assert results[0]["version"] == results[1]["version"]
    cfg = load_config(zoo_cfg)
    rem = open_remote(cfg.remote("s3"), cfg.base)
    assert list_entries(rem) == {("dataset", "synth"): [results[0]["version"]]}
    back = pull("dataset", "synth", config=zoo_cfg, dest=tmp_path / "back")
    assert tree_bytes(Path(back.dest)) == tree_bytes(synth)


def test_wrong_and_missing_credentials_give_clear_errors(
    seaweed, zoo_cfg, mini_en, monkeypatch, s3_env
):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-at-all")
    with pytest.raises(ZooError) as err:
        push("dataset", "mini_en", source=mini_en, config=zoo_cfg)
    msg = str(err.value)
    assert "rejected the credentials" in msg and "AWS_SECRET_ACCESS_KEY" in msg
    assert "not-the-secret-at-all" not in msg and SECRET_KEY not in msg
    env = {**s3_env, "AWS_SECRET_ACCESS_KEY": "not-the-secret-at-all"}
    out = zoo_cli(
        "push", "-d", "mini_en", "--source", str(mini_en), "--config", str(zoo_cfg), env=env
    )
    assert out.returncode == 2 and "rejected the credentials" in out.stderr
    assert "not-the-secret-at-all" not in out.stdout + out.stderr

    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ZooError, match="no usable credentials found"):
        push("dataset", "mini_en", source=mini_en, config=zoo_cfg)


def test_anonymous_read_of_public_zoo(seaweed, zoo_cfg, mini_en, tmp_path, monkeypatch):
    res = push("dataset", "mini_en", source=mini_en, config=zoo_cfg)
    public = write_zoo_yaml(
        tmp_path / "public.yaml",
        {
            "public": {
                "url": f"s3://{BUCKET}/{_prefix(zoo_cfg)}",
                "endpoint_url": seaweed.endpoint,
                "anonymous": True,
            },
        },
    )
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    back = pull("dataset", "mini_en", config=public, dest=tmp_path / "anon")
    assert back.version == res.version
    assert tree_bytes(tmp_path / "anon") == tree_bytes(mini_en)
    with pytest.raises(ZooError, match="access denied"):
        push("dataset", "mini_en", source=mini_en, config=public, remote="public")


def test_manifest_published_last(seaweed, zoo_cfg, mini_en, s3_env):
    """Every object a published manifest names is on the server."""
    res = push("dataset", "mini_en", source=mini_en, config=zoo_cfg)
    client = seaweed.client()
    prefix = _prefix(zoo_cfg)
    body = client.get_object(
        Bucket=BUCKET, Key=f"{prefix}/{manifest_key('dataset', 'mini_en', res.version)}"
    )
    man = json.loads(body["Body"].read())
    for f in man["files"]:
        head = client.head_object(Bucket=BUCKET, Key=f"{prefix}/{object_key(f['sha256'])}")
        assert head["ContentLength"] == f["size"]


def test_pull_of_big_object_resumes_from_finished_chunks(seaweed, zoo_cfg, tmp_path, s3_env):
    """Objects over one 8 MB chunk resume chunk by chunk (`<sha>.done`), not from zero."""
    from zoo_support import make_dataset

    big = make_dataset(tmp_path / "src" / "big", n=1, seconds=800.0)  # one 25.6 MB file
    push("dataset", "big", source=big, config=zoo_cfg)
    partial = Cache().root / "partial"

    chunk = 8 * 1024 * 1024
    size = (big / "audio" / "u0000.wav").stat().st_size

    def chunk_done() -> bool:  # a full-size chunk finished (the short last one may come first)
        try:
            offsets = [int(x) for p in partial.glob("*.done") for x in p.read_text().split()]
        except (OSError, ValueError):  # being written or removed right now
            return False
        return any(o + chunk <= size for o in offsets)

    proxy = ThrottledProxy(seaweed.port, rate=2_000_000)
    dest = tmp_path / "dest"
    try:
        # One chunk at a time, so that the kill lands between chunks of the one object.
        cfg = _proxied_cfg(zoo_cfg, proxy, tmp_path, concurrency=1)
        proc = zoo_popen(
            "pull", "-d", "big", "--config", str(cfg), "--dest", str(dest), "-q", env=s3_env
        )
        try:
            _wait_for(chunk_done, 60, "a finished chunk")
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    finally:
        proxy.close()
    assert not dest.exists()
    res = pull("dataset", "big", config=zoo_cfg, dest=dest)
    assert 0 < res.bytes_downloaded <= res.bytes_total - chunk
    assert tree_bytes(dest) == tree_bytes(big)


def _flip_one_byte(seaweed, zoo_cfg, sha: str) -> None:
    key = f"{_prefix(zoo_cfg)}/{object_key(sha)}"
    client = seaweed.client()
    bad = bytearray(client.get_object(Bucket=BUCKET, Key=key)["Body"].read())
    bad[len(bad) // 2] ^= 0xFF  # same size: a HEAD size check cannot see it
    client.put_object(Bucket=BUCKET, Key=key, Body=bytes(bad))


def test_push_after_a_detected_corruption_repairs_the_remote(
    seaweed, zoo_cfg, mini_en, tmp_path, s3_env
):
    """The reported bug: push said 'already published, uploaded 0' and the remote stayed broken."""
    push("dataset", "mini_en", source=mini_en, config=zoo_cfg)
    victim = next(f for f in scan_folder(mini_en) if f.path.endswith(".wav"))
    _flip_one_byte(seaweed, zoo_cfg, victim.sha256)
    with pytest.raises(ZooError, match="corrupt"):
        pull("dataset", "mini_en", config=zoo_cfg, dest=tmp_path / "a")
    again = push("dataset", "mini_en", source=mini_en, config=zoo_cfg)
    assert again.already_published and again.objects_uploaded == 1  # only the corrupt one
    pull("dataset", "mini_en", config=zoo_cfg, dest=tmp_path / "b")
    assert tree_bytes(tmp_path / "b") == tree_bytes(mini_en)


def test_zoo_verify_finds_and_repairs_corruption(seaweed, zoo_cfg, mini_en, tmp_path, s3_env):
    from asrbench.zoo.verify import verify

    push("dataset", "mini_en", source=mini_en, config=zoo_cfg)
    clean = verify("dataset", "mini_en", config=zoo_cfg)
    assert clean.ok and not clean.bad and clean.bytes_read > 0
    victims = [f for f in scan_folder(mini_en) if f.path.endswith(".wav")][:2]
    for v in victims:
        _flip_one_byte(seaweed, zoo_cfg, v.sha256)
    out = zoo_cli("verify", "-d", "mini_en", "--config", str(zoo_cfg), "--json", env=s3_env)
    assert out.returncode == 1, out.stderr
    found = json.loads(out.stdout)
    assert sorted(b["path"] for b in found["bad"]) == sorted(v.path for v in victims)
    # Without a good copy nothing can be repaired, and it says where it looked.
    empty = tmp_path / "empty"
    empty.mkdir()
    res = verify("dataset", "mini_en", config=zoo_cfg, repair=True, source=empty)
    assert not res.ok and len(res.unrepaired) == 2 and "no local copy" in res.unrepaired[0]["why"]
    out = zoo_cli(
        "verify",
        "-d",
        "mini_en",
        "--config",
        str(zoo_cfg),
        "--repair",
        "--source",
        str(mini_en),
        env=s3_env,
    )
    assert out.returncode == 0 and "2 repaired" in out.stdout, out.stdout + out.stderr
    assert verify("dataset", "mini_en", config=zoo_cfg).ok
