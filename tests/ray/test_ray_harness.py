"""The local cluster harness itself (asrbench.testing.raylocal), on the session's cluster.

Ray prints warnings of its own wherever it likes; on a busy machine a driver's console once
ended with "raylet has lagging heartbeats due to slow network or busy workload" and the harness,
which parsed that console's last line as JSON, failed a test. The node table is now read
through Ray's API and handed over in a file: whatever Ray (or anything else) prints changes
nothing. Nodes are known by their raylet port, so joins and deaths are waited on by identity,
not by counting.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ray, pytest.mark.s3]

LAGGING = "raylet has lagging heartbeats due to slow network or busy workload"


def _chatter(folder: Path) -> Path:
    """A `sitecustomize` that makes every Python started with it print Ray's warning on
    stdout and stderr, first and last (after whatever the program itself printed)."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import atexit, sys\n"
        f"LINE = '(raylet) {LAGGING}'\n"
        "print(LINE, flush=True)\n"
        "print(LINE, file=sys.stderr, flush=True)\n"
        "atexit.register(lambda: (print(LINE, flush=True), print(LINE, file=sys.stderr)))\n"
    )
    return folder


def test_node_table_is_read_whatever_ray_prints_on_the_console(
    cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chatter = _chatter(tmp_path / "chatter")
    # the harness's queries (and a node started now) run with the chatter on their path
    monkeypatch.setitem(
        cluster.env, "PYTHONPATH", f"{chatter}{os.pathsep}{cluster.env['PYTHONPATH']}"
    )
    running = [n for n in cluster.nodes if n.alive()]
    alive = cluster.alive_nodes()
    assert sorted(int(n["NodeManagerPort"]) for n in alive) == sorted(n.port for n in running)

    extra = cluster.add_node("h")  # returns once the cluster lists h alive, by its port
    try:
        node_id = cluster.node_id(extra)
        assert node_id in {n["NodeID"] for n in cluster.alive_nodes()}
        assert LAGGING in extra.log.read_text()  # the node did print it (into its log)
    finally:
        cluster.remove_node(extra)  # returns once the cluster has marked h dead
    assert node_id not in {n["NodeID"] for n in cluster.alive_nodes()}
    assert sorted(int(n["NodeManagerPort"]) for n in cluster.alive_nodes()) == sorted(
        n.port for n in running
    )


def test_a_node_whose_start_dies_is_started_again(cluster, tmp_path: Path) -> None:
    """Ray gives a raylet 30 s to register with the GCS, then `ray start` exits 1 ("The
    current node timed out during startup"): too little on a busy host, and a port chosen
    for the node may be taken before Ray binds it. Such a node is started again on fresh
    ports instead of failing the whole session; its log keeps both starts."""
    flaky = tmp_path / "flaky"
    flaky.mkdir()
    marker = tmp_path / "first-start-done"
    (flaky / "sitecustomize.py").write_text(
        "import os\n"
        f"MARKER = {str(marker)!r}\n"
        "with open('/proc/self/cmdline', 'rb') as f:\n"
        "    argv = f.read().split(b'\\0')\n"
        "if b'start' in argv and b'--block' in argv and not os.path.exists(MARKER):\n"
        "    open(MARKER, 'w').close()\n"
        "    print('Exception: The current node timed out during startup.', flush=True)\n"
        "    os._exit(1)\n"
    )
    node = cluster.add_node(
        "f", env={"PYTHONPATH": f"{flaky}{os.pathsep}{cluster.env['PYTHONPATH']}"}
    )
    try:
        assert marker.exists() and node.attempts == 2
        assert cluster.node_id(node)  # the second start joined
        assert "timed out during startup" in node.log.read_text()
    finally:
        cluster.remove_node(node)
