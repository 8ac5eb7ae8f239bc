"""Watchdog: a model run dies with the job that started it, even when that job is SIGKILLed.

The runner keeps the write end of a pipe (the lifeline); the watchdog, a separate small process,
reads the other end as its stdin. The kernel closes the write end when the runner's *process*
ends, however it ends (exit, exception, `kill -9`), so the watchdog reads EOF and cleans up.
This holds although the runner starts programs from worker threads, where PR_SET_PDEATHSIG
would fire when the starting *thread* exits. A runner that finishes normally writes `done` first,
so the watchdog leaves without doing anything.

Two modes, both run as a plain script (`python -I watchdog.py ...`: standard library only, no
import of the platform, so it starts in a few tens of milliseconds):

- `group -- PROGRAM ARGS...` (local runner): starts PROGRAM in the watchdog's own process group
  (the runner made the watchdog a session leader) and waits for it; on EOF it kills the whole
  group, the program and anything it started. Exits with the program's status.
- `container NAME` (Docker runner): on EOF it removes the container NAME (`docker rm -f` through
  the Engine API on the Unix socket), whether or not the container had started yet.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.parse

DOCKER_SOCKET = "/var/run/docker.sock"


def _lifeline_cut() -> bool:
    """Block until the runner writes `done` (False) or its end closes (True)."""
    data = b""
    while True:
        chunk = os.read(0, 64)
        if not chunk:
            return b"done" not in data
        data += chunk
        if b"done" in data:
            return False


def run_group(argv: list[str]) -> int:
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)  # same process group as us

    def watch() -> None:
        if _lifeline_cut():
            os.killpg(os.getpgid(0), signal.SIGKILL)  # the program, its children and us

    threading.Thread(target=watch, daemon=True).start()
    rc = proc.wait()
    if rc < 0:  # killed by a signal: die the same way, so the runner sees the same status
        signal.signal(-rc, signal.SIG_DFL)
        os.kill(os.getpid(), -rc)
    return rc


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str):
        super().__init__("localhost", timeout=60)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(self._path)


def remove_container(name: str) -> None:
    """DELETE /containers/NAME?force=1 on the Engine (a missing container is fine)."""
    host = os.environ.get("DOCKER_HOST", "")
    path = host[len("unix://") :] if host.startswith("unix://") else DOCKER_SOCKET
    conn = _UnixConnection(path)
    try:
        conn.request("DELETE", f"/containers/{urllib.parse.quote(name)}?force=1&v=1")
        conn.getresponse().read()
    finally:
        conn.close()


def run_container(name: str) -> int:
    if _lifeline_cut():
        for _ in range(3):  # the Engine may be busy creating it right now
            try:
                remove_container(name)
                break
            except OSError:
                continue
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "group" and argv[1] == "--":
        return run_group(argv[2:])
    if len(argv) == 2 and argv[0] == "container":
        return run_container(argv[1])
    print("usage: watchdog.py group -- PROGRAM ARGS... | container NAME", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
