"""The Ray executor: every (model, dataset, shard) becomes a Ray task on a cluster.

    ops/benchmark -m M1 -m M2 -d D1 -d D2 --executor ray --address HOST:PORT

Each task declares what it needs (`Needs`: CPUs from the card, `GPU` when the card asks for
one, a sliver of the custom `docker` resource for the Docker runner, the card's memory), so Ray
places it only on a node that offers them. The task (`worker.run_shard`) pulls the dataset and
the model from the zoo into the node's own cache and returns the shard's files, which this
driver writes where a local run would have left them: the job logic then merges them exactly
as it merges local shards, so the result is byte-identical to a local run.

Faults: a task whose worker process or node dies is retried by Ray on another node
(`max_retries`); a node-side problem (NodeError: zoo, engine, identity) is retried too. Only the
one result Ray delivers per task reaches the driver, so nothing is counted twice. A driver
killed mid-run leaves every finished shard in the cache entry's attempt folder; the rerun
harvests them and runs only the rest.

Preflight (before any work): the address answers, the cluster has a node offering every need,
and a probe on each node that could take a shard checks the node's code, cache, zoo access
(with the node's own credentials) and, where it offers `docker`, its engine.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from asrbench.dataset import Utterance
from asrbench.executors.base import (
    Executor,
    ExecutorError,
    Needs,
    PreflightError,
    ShardJob,
    ShardOutcome,
    needs_for,
)
from asrbench.executors.progress import ClusterProgress
from asrbench.executors.publish import Publisher
from asrbench.executors.worker import NodeError, ShardReturn, ShardSpec, code_files
from asrbench.fsio import atomic_write_bytes, replace_dir, stage_dir

PROBE_TIMEOUT_S = 60.0
CONNECT_TIMEOUT_S = 5.0


def ray_available() -> bool:
    """Whether the optional `ray` package is installed (`pip install 'asrbench[ray]'`)."""
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def _import_ray():
    try:
        import ray
    except ImportError:
        raise PreflightError(
            "--executor ray needs the `ray` package: pip install "
            "'asrbench[ray]' (or `make setup`, which installs every extra)"
        ) from None
    return ray


def parse_address(address: str) -> tuple[str, str | None, int | None]:
    """'auto', 'HOST:PORT' or 'ray://HOST:PORT' -> (kind, host, port); InputError if neither."""
    text = (address or "auto").strip()
    if text == "auto":
        return "auto", None, None
    kind = "client" if text.startswith("ray://") else "gcs"
    hostport = text.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise PreflightError(
            f"--address {address!r}: give auto, HOST:PORT (the head node's GCS "
            "port, 6379 by default) or ray://HOST:PORT (Ray Client, 10001)"
        )
    return kind, host.strip("[]"), int(port)


def _tcp_check(address: str, host: str, port: int) -> None:
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise PreflightError(
            f"cannot reach the Ray cluster at {address}: {why} (after "
            f"{CONNECT_TIMEOUT_S:.0f} s); start its head with `ray start --head "
            "--port PORT` or fix --address"
        ) from None


class RayExecutor(Executor):
    """Shards as Ray tasks; the zoo remote `zoo_remote` (of zoo.yaml) is what nodes read."""

    name = "ray"
    runs_here = False

    def __init__(
        self,
        address: str = "auto",
        *,
        zoo_remote: str | None = None,
        zoo_config: Path | None = None,
        max_retries: int = 3,
        cells_in_flight: int = 128,
        progress: bool = True,
        progress_every_s: float = 10.0,
        probe_timeout_s: float = PROBE_TIMEOUT_S,
    ):
        self.address = address or "auto"
        self.kind, self.host, self.port = parse_address(self.address)
        self.zoo_remote, self.zoo_config = zoo_remote, zoo_config
        self.max_retries = max_retries
        self.cells_in_flight = max(1, cells_in_flight)
        self.probe_timeout_s = probe_timeout_s
        self.progress = ClusterProgress("ray", every_s=progress_every_s, enabled=progress)
        self._publisher: Publisher | None = None
        self._connected = False
        self._owns_connection = False
        self._checked: set[Needs] = set()
        self._lock = threading.Lock()
        self._tasks: Any = None
        self._cancelled = threading.Event()
        self.nodes_used: dict[str, dict] = {}

    # -- connection and preflight ---------------------------------------------------------

    @property
    def publisher(self) -> Publisher:
        if self._publisher is None:
            self._publisher = Publisher(self.zoo_config, self.zoo_remote)
        return self._publisher

    def connect(self) -> None:
        """Connect this process to the cluster (PreflightError naming the cause)."""
        with self._lock:
            if self._connected:
                return
            ray = _import_ray()
            if self.host is not None and self.port is not None:  # parsed together
                _tcp_check(self.address, self.host, self.port)  # a closed port fails at once
            if ray.is_initialized():
                self._connected = True  # a caller (a test, a notebook) connected already
                return
            target = self.address if self.kind != "gcs" else f"{self.host}:{self.port}"
            try:
                self._init(ray, target)
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
                hint = (
                    "no running cluster was found from this machine (auto reads RAY_ADDRESS "
                    "and the address file of a `ray start --head` run here); pass "
                    "--address HOST:PORT"
                    if self.kind == "auto"
                    else "is it a Ray head (GCS port, or the Ray Client port for ray://)?"
                )
                raise PreflightError(
                    f"cannot connect to the Ray cluster at {self.address}: {_gist(exc)}; {hint}"
                ) from None
            self._connected = self._owns_connection = True

    def _init(self, ray, target: str) -> None:
        kwargs = {"namespace": "asrbench", "logging_level": logging.WARNING, "log_to_driver": False}
        try:
            ray.init(address=target, **kwargs)
        except (ConnectionError, RuntimeError) as exc:
            # The Ray Client proxy starts a server process per connection; under load that
            # start sometimes fails once ("Starting Ray client server failed", or the proxy's
            # psutil scan tripping over an exited, not yet reaped server process:
            # "Initialization failure from server: ... ZombieProcess"): try again.
            transient = ("client server", "Initialization failure from server")
            if self.kind != "client" or not any(t in str(exc) for t in transient):
                raise
            time.sleep(2.0)
            ray.init(address=target, **kwargs)

    def _alive_nodes(self) -> list[dict]:
        import ray

        return [n for n in ray.nodes() if n.get("Alive")]

    def preflight(self, needs: Sequence[Needs]) -> None:
        """Address, resources, then a probe on every node that could take a shard."""
        needs = list(dict.fromkeys(needs))
        if needs and all(n in self._checked for n in needs):
            return
        self.connect()
        self.publisher.check_reachable()
        nodes = self._alive_nodes()
        problems = []
        for need in needs:
            if not any(_offers(n, need) for n in nodes):
                problems.append(
                    f"model {need.model} needs a node offering {need.describe()}"
                    f"{_why(need)}, and none does"
                )
        if problems:
            listing = "\n".join(f"  {_name(n)}: {_resources(n)}" for n in nodes) or "  (none)"
            raise PreflightError(
                f"the Ray cluster at {self.address} cannot run this: "
                + "; ".join(problems)
                + f".\nIts nodes:\n{listing}\nStart nodes with what is missing (`ray start "
                "--address HEAD:PORT --num-cpus N --num-gpus G --resources '{\"docker\": 1}'` on "
                "a machine with a Docker Engine) or change the request."
            )
        self._probe(nodes, needs)
        self._checked.update(needs)

    def _probe(self, nodes: list[dict], needs: list[Needs]) -> None:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from asrbench.executors import worker

        probe = ray.remote(worker.probe)
        code = code_files()
        python = sys.version if any(n.runner == "local" for n in needs) else None
        refs = {}
        for node in nodes:
            usable = [nd for nd in needs if _offers(node, nd)]
            if not usable:
                continue  # takes no shard of this run (e.g. a head started with 0 CPUs)
            docker = any(nd.docker for nd in usable)
            strategy = NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
            ref = probe.options(
                num_cpus=0, max_retries=0, scheduling_strategy=strategy, name="asrbench-probe"
            ).remote(self.publisher.zoo, docker, code, python)
            refs[ref] = node
        ready, late = ray.wait(list(refs), num_returns=len(refs), timeout=self.probe_timeout_s)
        problems = [
            f"{_name(refs[r])} did not answer the probe within "
            f"{self.probe_timeout_s:.0f} s (overloaded, or its worker ports blocked?)"
            for r in late
        ]
        for r in late:
            ray.cancel(r, force=True)
        for r in ready:
            try:
                answer = ray.get(r)
            except Exception as exc:  # the probe itself crashed: asrbench missing there?
                problems.append(
                    f"{_name(refs[r])}: the probe failed: {_gist(exc)} (is "
                    "asrbench installed on that node?)"
                )
                continue
            problems += [f"{_name(refs[r])} {p}" for p in answer["problems"]]
        if problems:
            raise PreflightError(
                "a node of the Ray cluster at "
                + self.address
                + " cannot take shards, nothing was started:\n  "
                + "\n  ".join(problems)
            )

    # -- running shards -------------------------------------------------------------------

    def _task(self):
        import ray

        from asrbench.executors import worker

        with self._lock:
            if self._tasks is None:
                self._tasks = ray.remote(worker.run_shard)
            return self._tasks

    def run_shards(
        self,
        job: ShardJob,
        shards: Sequence[Sequence[Utterance]],
        attempt: Path,
        progress: Any = None,
    ) -> list[ShardOutcome]:
        need = needs_for(job.model, job.runner.name, job.options)
        if need not in self._checked:
            self.preflight([need])  # called as a library without a preflight first
        ds_ref = self.publisher.dataset(job.dataset, job.dataset_hash)
        model_ref, image = self.publisher.model(
            job.model,
            job.runner.name,
            job.identity,
            job.runner.image_tag(job.model) if job.runner.name == "docker" else None,
        )
        opts: dict[str, Any] = {
            "num_cpus": need.cpus,
            "max_retries": self.max_retries,
            "retry_exceptions": [NodeError],
        }
        if need.gpus:
            opts["num_gpus"] = need.gpus
        if need.memory_bytes:
            opts["memory"] = need.memory_bytes
        custom = {k: v for k, v in need.resources().items() if k not in ("CPU", "GPU")}
        if custom:
            opts["resources"] = custom
        task = self._task()
        outcomes = [ShardOutcome(k, len(s), attempt / f"shard-{k}") for k, s in enumerate(shards)]
        durations = [sum(u.duration for u in s) for s in shards]
        pending: dict[Any, int] = {}
        started = time.monotonic()
        for k, shard in enumerate(shards):
            spec = ShardSpec(
                label=job.label,
                cache_key=job.cache_key,
                attempt=attempt.name,
                index=k,
                runner=job.runner.name,
                model=model_ref,
                dataset=ds_ref,
                dataset_hash=job.dataset_hash,
                identity=job.identity,
                image=image,
                utterances=tuple(u.id for u in shard),
                options=job.options,
                zoo=self.publisher.zoo,
                secrets=tuple(job.model.card.secrets),
            )
            ref = task.options(name=f"{job.label} shard {k}", **opts).remote(spec)
            pending[ref] = k
        self.progress.submitted(len(shards), sum(len(s) for s in shards))
        import ray

        lost: list[str] = []  # shards the cluster could not run, retries included
        try:
            while pending:
                if self._cancelled.is_set():
                    raise KeyboardInterrupt
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    k = pending.pop(ref)
                    oc = outcomes[k]
                    latency = time.monotonic() - started
                    oc.wall_s = latency
                    node_name = "(tasks that failed)"
                    try:
                        ret: ShardReturn = ray.get(ref)
                    except Exception as exc:
                        oc.error = _task_error(exc, self.max_retries)
                        lost.append(f"shard {k}: {oc.error}")
                    else:
                        self._store(oc, ret, latency)
                        node_name = _short(ret.node)
                    self.progress.finished(
                        node_name,
                        oc.n_utts,
                        durations[k],
                        oc.node.get("run_s", 0.0) if oc.node else 0.0,
                        oc.error is not None,
                    )
        except BaseException:
            for ref in pending:  # Ctrl-C: stop what still runs; finished shards are kept
                ray.cancel(ref, force=True)
            raise
        if lost:
            # Not the model's doing: isolation rounds would only fail the same way. The shards
            # that did finish stay in the attempt folder, so a rerun runs only these.
            raise ExecutorError(
                f"{job.label}: the Ray cluster at {self.address} could not run "
                f"{len(lost)} of {len(shards)} shard(s); the finished ones are "
                "kept for the rerun:\n  " + "\n  ".join(lost)
            )
        return outcomes

    def cancel(self) -> None:
        self._cancelled.set()

    def _store(self, oc: ShardOutcome, ret: ShardReturn, latency: float) -> None:
        """Write a shard's files where the local executor would have left them, in one step.

        The files are staged in a hidden sibling folder and renamed into place together: a
        driver killed while storing leaves either the whole shard or none of it (never a
        hypothesis whose timing or failure table is missing, which a rerun would harvest).
        """
        stage = stage_dir(oc.work_dir)
        (stage / "out").mkdir()
        for rel in (
            "wav.lst",
            "out/hyp.tsv",
            "out/timing.tsv",
            "out/failed.tsv",
            "out/cost.tsv",
            "run.log",
        ):
            if rel in ret.files:
                atomic_write_bytes(stage / rel, ret.files[rel])
        replace_dir(stage, oc.work_dir)
        oc.error = ret.error
        oc.startup_s = ret.startup_s
        oc.wall_s = ret.run_s  # the program's wall, as the local executor records it
        # submitted -> result on the driver = queueing + fetching + running + transfers
        oc.node = {
            **{k: ret.node.get(k) for k in ("id", "ip", "host", "cache")},
            "fetch_s": round(ret.fetch_s, 3),
            "run_s": round(ret.run_s, 3),
            "node_wall_s": round(ret.wall_s, 3),
            "latency_s": round(latency, 3),
            "fetched_bytes": ret.fetched,
        }
        with self._lock:
            self.nodes_used[str(ret.node.get("id"))] = {
                k: ret.node.get(k) for k in ("id", "ip", "host")
            }

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "address": self.address,
            "zoo_remote": self.publisher.spec.name,
            "max_retries": self.max_retries,
        }
        try:
            import ray

            out["ray"] = ray.__version__
        except ImportError:
            pass
        return out

    def close(self) -> None:
        self.progress.close()
        if self._owns_connection:
            import ray

            ray.shutdown()
            self._owns_connection = self._connected = False


def _gist(exc: BaseException, limit: int = 600) -> str:
    """An exception in one line; of a remote traceback, its last lines (where the cause is)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    if any(ln.startswith("Traceback") for ln in lines):
        head = lines[0] if not lines[0].startswith("Traceback") else ""
        lines = [head, "...", *lines[-3:]] if head else lines[-3:]
    text = " ".join(lines) or type(exc).__name__
    return text if len(text) <= limit else "..." + text[-limit:]


def _task_error(exc: BaseException, retries: int) -> str:
    """A task that failed for good, in words (the node's own message when it gave one)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, NodeError):
        return f"{cause} (after {retries} retr{'y' if retries == 1 else 'ies'})"
    return (
        f"the Ray task failed after {retries} retr{'y' if retries == 1 else 'ies'}: "
        f"{type(exc).__name__}: {_gist(exc)}"
    )


def _offers(node: dict, need: Needs) -> bool:
    res = node.get("Resources", {})
    want = need.resources()
    if any(res.get(k, 0.0) < v for k, v in want.items()):
        return False
    return not (need.memory_bytes and res.get("memory", 0) < need.memory_bytes)


def _why(need: Needs) -> str:
    reasons = []
    if need.cpus > 1:
        reasons.append(f"{need.cpus} CPUs from its card's runtime.threads")
    if need.gpus:
        reasons.append("a GPU (its card says gpu: required, or --gpus)")
    if need.docker:
        reasons.append("`docker` for the Docker runner")
    return f" ({'; '.join(reasons)})" if reasons else ""


def _name(node: dict) -> str:
    return f"node {node.get('NodeID', '')[:12]} ({node.get('NodeManagerAddress', '?')})"


def _short(info: dict) -> str:
    return f"node {str(info.get('id', ''))[:12] or info.get('host')} ({info.get('ip', '?')})"


def _resources(node: dict) -> str:
    res = node.get("Resources", {})
    shown = {
        k: v
        for k, v in sorted(res.items())
        if not k.startswith("node:") and k not in ("object_store_memory", "memory")
    }
    return ", ".join(f"{k}={v:g}" for k, v in shown.items()) or "no resources"


__all__ = ["ExecutorError", "RayExecutor", "parse_address", "ray_available"]
