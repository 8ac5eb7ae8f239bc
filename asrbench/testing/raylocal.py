"""A real multi-node Ray cluster on one machine: a head and worker nodes, each its own
`ray start --block` process (own session, own ports, own `--resources`, own environment).

Used by the tests and `benchmarks/ray_scale.py`, and handy to try `--executor ray` on a
laptop. Every node gets its own `ASRBENCH_CACHE` (and datasets/models folders), so nodes share
nothing but the zoo, as on a real cluster. Ray registers every node under this host's own
address (it never advertises 127.0.0.1 on Linux), so traffic stays on this machine. A node is
stopped, or killed as a fault, through its process group: `ray start --block`'s pid.
Never `ray stop`: it would stop every Ray process of the machine, other users' included.

The cluster's state is read through Ray's API (`ray.nodes()`) by a short-lived driver that
writes it as JSON to a file, never from a console: Ray prints warnings of its own ("raylet has
lagging heartbeats due to slow network or busy workload") wherever it likes. A node is known
by its raylet port (`NodeManagerPort`, chosen here), and every wait is on a state with a
deadline: a node joined, a node gone. Nodes start one at a time, and one whose `ray start`
dies before it joined (Ray gives a raylet 30 s to register: too little on a busy host) is
started again on fresh ports, up to START_ATTEMPTS times.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from asrbench.executors.base import ExecutorError
from asrbench.testing.ports import free_ports

WORKER_PORTS = 24  # per node: Ray's worker processes each listen on one
# Faster failure detection than Ray's defaults (a dead node is noticed in ~3 s, not ~30 s).
FAST_HEALTH_CHECKS = {
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
    "RAY_health_check_initial_delay_ms": "1000",
}
START_ATTEMPTS = 5  # `ray start` runs per node before its death is an error
POLL_S = 1.0  # between two looks at the cluster's node table while waiting on a state
QUERY_TIMEOUT_S = 120.0  # one look: start a Python, connect, ray.nodes() (slow on a busy host)

# The node table, read by a driver of its own and written to argv[2] as JSON (then renamed
# into place): nothing Ray prints on stdout or stderr can mix with it.
_NODES_SCRIPT = """
import json, os, sys
import ray
address, out = sys.argv[1], sys.argv[2]
ray.init(address=address, logging_level="ERROR", log_to_driver=False)
try:
    nodes = ray.nodes()
finally:
    ray.shutdown()
with open(out + ".part", "w") as f:
    json.dump(nodes, f, default=str)
os.replace(out + ".part", out)
"""


class ClusterQueryError(ExecutorError):
    """The cluster's node table could not be read (the head not up yet, or a busy host)."""


def ray_binary() -> str:
    """The `ray` command beside this Python (the virtualenv's bin/)."""
    here = Path(sys.executable).parent / "ray"
    if not here.is_file():
        raise ExecutorError(
            "the `ray` command was not found beside this Python; pip install 'asrbench[ray]'"
        )
    return str(here)


@dataclass
class RayNode:
    """One `ray start` process and what it was started with."""

    name: str
    cache: Path
    resources: dict[str, float]
    cpus: int
    log: Path
    env: dict[str, str]  # its own environment, beside the cluster's
    head: bool = False
    slot: int = 0  # its place in the cluster (its temporary folder's name)
    proc: subprocess.Popen | None = None
    port: int = 0  # its raylet's port: the cluster lists the node under it (NodeManagerPort)
    attempts: int = 0  # `ray start` runs so far (a start that dies on a busy host is retried)

    @property
    def process(self) -> subprocess.Popen:
        """Its `ray start` process; a node is started (`_launch`) before anything asks."""
        if self.proc is None:
            raise ExecutorError(f"ray node {self.name} was never started")
        return self.proc

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Kill the whole node (raylet, agents, workers: the process group of `ray start`)."""
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


@dataclass
class LocalRayCluster:
    """A head (GCS at `address`, Ray Client at `client_address`) and its worker nodes."""

    root: Path
    address: str
    client_address: str
    env: dict[str, str]
    tmp: Path  # Ray's own temporary folders, under a short path (socket path limits)
    nodes: list[RayNode] = field(default_factory=list)
    _abandoned: set[int] = field(default_factory=set)  # raylet ports of starts given up

    @property
    def head(self) -> RayNode:
        return self.nodes[0]

    def add_node(
        self,
        name: str,
        cpus: int = 1,
        resources: dict[str, float] | None = None,
        env: dict[str, str] | None = None,
        wait: bool = True,
        timeout: float = 300.0,
    ) -> RayNode:
        """Start a worker node; with `wait`, return once the cluster lists it alive."""
        node = _start_node(self, name, cpus, resources or {}, env or {}, head=False)
        if wait:
            self.wait_joined([node], timeout)
        return node

    def remove_node(self, node: RayNode, timeout: float = 120.0) -> None:
        """Kill `node` (its whole process group) and wait until the cluster has marked it
        dead, so that no later scheduling decision or preflight still counts it."""
        node.kill()
        self.wait_gone(node, timeout)

    def node_table(self, timeout: float = QUERY_TIMEOUT_S) -> list[dict]:
        """`ray.nodes()` of the cluster (dead nodes included), asked by a short-lived driver
        (so this process stays free of Ray's global state) that writes it to a file as JSON.
        ClusterQueryError when it cannot be read, with the driver's last words."""
        with tempfile.TemporaryDirectory(prefix="nodes-", dir=self.tmp) as folder:
            out = Path(folder) / "nodes.json"
            try:
                proc = subprocess.run(
                    [sys.executable, "-c", _NODES_SCRIPT, self.address, str(out)],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    env=self._cli_env(),
                )
            except subprocess.TimeoutExpired:
                raise ClusterQueryError(
                    f"reading the node table of the Ray cluster at "
                    f"{self.address} took over {timeout:.0f} s"
                ) from None
            if proc.returncode != 0 or not out.is_file():
                last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1][-300:]
                raise ClusterQueryError(
                    f"reading the node table of the Ray cluster at "
                    f"{self.address} failed (exit {proc.returncode}): "
                    f"{last}"
                )
            return json.loads(out.read_text())

    def alive_nodes(self, timeout: float = QUERY_TIMEOUT_S) -> list[dict]:
        """The alive entries of `node_table()`."""
        return [n for n in self.node_table(timeout) if n.get("Alive")]

    def node_id(self, node: RayNode) -> str:
        """The cluster's ID of `node` (alive), found by its raylet port."""
        for n in self.alive_nodes():
            if _port_of(n) == node.port:
                return n["NodeID"]
        raise ExecutorError(
            f"ray node {node.name} (raylet port {node.port}) is not alive in "
            f"the cluster; see {node.log}"
        )

    def _cli_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def wait_joined(self, nodes: list[RayNode], timeout: float) -> list[dict]:
        """Wait until every one of `nodes` is listed alive (by its raylet port), and no
        abandoned start of theirs is. One whose `ray start` dies before it joined (Ray gives
        a raylet 30 s to register, too little on a busy host; a port taken meanwhile) is
        started again on fresh ports, up to START_ATTEMPTS times."""
        names = ", ".join(n.name for n in nodes)

        def joined(alive: list[dict]) -> bool:
            ports = {_port_of(n) for n in alive}
            return {n.port for n in nodes} <= ports and not (self._abandoned & ports)

        return self.wait_for(joined, timeout, f"ray node(s) {names} to join", restart=nodes)

    def wait_gone(self, node: RayNode, timeout: float) -> list[dict]:
        """Wait until `node` is no longer listed alive (Ray's health check marked it dead)."""
        return self.wait_for(
            lambda alive: node.port not in {_port_of(n) for n in alive},
            timeout,
            f"ray node {node.name} to be marked dead",
        )

    def wait_for(
        self,
        cond,
        timeout: float,
        what: str,
        restart: list[RayNode] | None = None,
    ) -> list[dict]:
        """Look at the alive nodes until `cond(alive)` holds (returns them) or `timeout` s
        pass (ExecutorError naming `what` and the last failed look, if any). A look that
        fails (the head still starting, a busy host) is looked at again, within the deadline;
        a node whose `ray start` exited on its own ends the wait at once, unless it is one of
        `restart` (still joining) with attempts left: that one is started again."""
        deadline = time.monotonic() + timeout
        last_error: ClusterQueryError | None = None
        while True:
            for n in self.nodes:
                if n.alive() or n.proc is None or n.proc.returncode in (-9, -15):
                    continue
                if n in (restart or []) and n.attempts < START_ATTEMPTS:
                    self._abandoned.add(n.port)
                    n.kill()  # what that start left in its process group
                    _launch(self, n)
                    continue
                raise ExecutorError(
                    f"ray node {n.name} exited ({n.proc.returncode}) "
                    f"after {n.attempts} start(s): {_last_words(n.log)}; "
                    f"see {n.log}"
                )
            left = deadline - time.monotonic()
            try:
                alive = self.alive_nodes(timeout=max(10.0, min(QUERY_TIMEOUT_S, left)))
            except ClusterQueryError as exc:
                last_error = exc
            else:
                last_error = None
                if cond(alive):
                    return alive
            if time.monotonic() >= deadline:
                why = f" ({last_error})" if last_error else ""
                raise ExecutorError(
                    f"timed out after {timeout:.0f} s waiting for {what}{why}; "
                    f"the nodes' logs are under {self.root}"
                )
            time.sleep(POLL_S)  # the pace of the looks, not a wait on a state

    def stop(self) -> None:
        """Stop every node, workers first, then the head: SIGKILL to each one's process group
        (raylet, agents, workers). No SIGTERM first: given one, `ray start --block` nodes stayed
        up 15-34 s (measured with a head and two workers), so the 10 s this waited always ended
        in the SIGKILL; the cluster is thrown away with its folders."""
        import shutil

        for node in reversed(self.nodes):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(node.pid, signal.SIGKILL)
        for node in self.nodes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=10)
        for logs in self.tmp.glob("*/session_*/logs"):  # kept beside each node's folder
            if logs.parent.name != "session_latest":
                shutil.copytree(
                    logs,
                    self.root / "ray-logs" / logs.parent.parent.name,
                    dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.sock"),
                )
        shutil.rmtree(self.tmp, ignore_errors=True)


def _start_node(
    cluster: LocalRayCluster,
    name: str,
    cpus: int,
    resources: dict[str, float],
    env: dict[str, str],
    head: bool,
) -> RayNode:
    """A node's folders, its first `ray start`; the node is added to `cluster.nodes`."""
    root = cluster.root / name
    for sub in ("cache", "datasets", "models", "tmp"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    node = RayNode(
        name,
        root / "cache",
        resources,
        cpus,
        root / "ray-start.log",
        env,
        head,
        slot=len(cluster.nodes),
    )
    _launch(cluster, node)
    cluster.nodes.append(node)
    return node


def _launch(cluster: LocalRayCluster, node: RayNode) -> None:
    """Run `ray start --block` for `node` on fresh ports (the head keeps its GCS and client
    ports: they are the cluster's address)."""
    root = node.cache.parent
    ports = free_ports(7 + WORKER_PORTS)
    args = [
        ray_binary(),
        "start",
        "--block",
        "--disable-usage-stats",
        f"--num-cpus={node.cpus}",
        "--num-gpus=0",
        f"--node-manager-port={ports[0]}",
        f"--object-manager-port={ports[1]}",
        f"--dashboard-agent-listen-port={ports[2]}",
        f"--dashboard-agent-grpc-port={ports[3]}",
        f"--runtime-env-agent-port={ports[4]}",
        f"--metrics-export-port={ports[5]}",
        "--worker-port-list=" + ",".join(str(p) for p in ports[7:]),
        "--object-store-memory=100000000",
        "--include-log-monitor=false",
    ]
    if node.resources:
        args.append("--resources=" + json.dumps(node.resources))
    temp = cluster.tmp / (f"{node.slot}" if not node.attempts else f"{node.slot}r{node.attempts}")
    args.append(f"--temp-dir={temp}")
    if node.head:
        gcs = cluster.address.rsplit(":", 1)[1]
        client = cluster.client_address.rsplit(":", 1)[1]
        args += [
            "--head",
            f"--port={gcs}",
            f"--ray-client-server-port={client}",
            "--include-dashboard=false",
            f"--dashboard-port={ports[6]}",
        ]
    else:
        args += [f"--address={cluster.address}"]
    node_env = {
        **os.environ,
        **cluster.env,
        "ASRBENCH_CACHE": str(node.cache),
        "ASRBENCH_DATASETS_DIR": str(root / "datasets"),
        "ASRBENCH_MODELS_DIR": str(root / "models"),
        "TMPDIR": str(root / "tmp"),
        **node.env,
    }
    with open(node.log, "ab") as out:
        if node.attempts:
            out.write(
                f"\n--- start {node.attempts + 1} (the last one exited on its own)\n".encode()
            )
            out.flush()
        node.proc = subprocess.Popen(
            args,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=node_env,
            cwd=str(root),
            start_new_session=True,
        )
    node.port = ports[0]
    node.attempts += 1


def _last_words(log: Path) -> str:
    """The last non-empty line of a node's `ray start` log, for an error message."""
    try:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][-300:] if lines else "(empty log)"


def _port_of(entry: dict) -> int | None:
    """The raylet port of a `ray.nodes()` entry."""
    try:
        return int(entry["NodeManagerPort"])
    except (KeyError, TypeError, ValueError):
        return None


@contextmanager
def run_local_cluster(
    root: Path,
    workers: list[dict] | None = None,
    head_cpus: int = 0,
    head_resources: dict[str, float] | None = None,
    env: dict[str, str] | None = None,
    head_env: dict[str, str] | None = None,
    fast_failure_detection: bool = True,
    timeout: float = 300.0,
) -> Iterator[LocalRayCluster]:
    """Start a head (by default with 0 CPUs: it schedules, it does not run shards) and the
    `workers` (dicts of add_node's arguments: name, cpus, resources, env), one after the
    other, each given `timeout` s to join; yield; stop all.

    `env` goes to every node (e.g. the zoo's AWS credentials, PYTHONPATH); `head_env` to the
    head only. Ray's temporary files go under a short folder in /tmp (Ray's sockets live
    there and Unix socket paths are limited to about 107 bytes), removed at the end.
    """
    import tempfile

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    gcs, client = free_ports(2)
    host = "127.0.0.1"
    base_env = {"RAY_USAGE_STATS_ENABLED": "0", **(env or {})}
    cluster = LocalRayCluster(
        root,
        f"{host}:{gcs}",
        f"ray://{host}:{client}",
        base_env,
        Path(tempfile.mkdtemp(prefix="asrb-ray-", dir="/tmp")),
    )
    try:
        # One node at a time, each joined before the next starts: nodes starting together
        # compete for the CPU, and on a busy host each then misses Ray's 30 s to register.
        head = _start_node(
            cluster,
            "head",
            head_cpus,
            head_resources or {},
            {**(FAST_HEALTH_CHECKS if fast_failure_detection else {}), **(head_env or {})},
            head=True,
        )
        cluster.wait_joined([head], timeout)
        for spec in workers or []:
            cluster.add_node(
                spec["name"],
                spec.get("cpus", 1),
                spec.get("resources"),
                spec.get("env"),
                timeout=timeout,
            )
        yield cluster
    finally:
        cluster.stop()
