"""Docker runner: the model's image, the dataset mounted read-only, no network by default."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import requests

from asrbench.dataset import Dataset, Utterance
from asrbench.host import check_cpu
from asrbench.images import BuildOptions, build_model_image, client
from asrbench.modelcard import Model
from asrbench.runners.base import (
    WATCHDOG,
    RedactingLog,
    Runner,
    RunnerError,
    RunOptions,
    RunResult,
    Worker,
    failure,
    prepare_work_dir,
    prepare_worker_dir,
    redactor_for,
)
from asrbench.runners.container import Use, container_spec, user_and_owner

DATA_MOUNT = "/data"
WORK_MOUNT = "/work"


class DockerRunner(Runner):
    """Runs the model's image; one container per call."""

    name = "docker"

    def __init__(self, build: BuildOptions | None = None):
        self.build = build or BuildOptions()
        self._images: dict[tuple[Path, str, str], tuple[str, str]] = {}

    def _image(self, model: Model) -> tuple[str, str]:
        """(tag, image ID), built once per model source for this runner."""
        key = (model.root, model.source_hash(), model.variant)
        if key not in self._images:
            # before the build: the container runs on this CPU and would die of SIGILL
            check_cpu(model)
            self._images[key] = build_model_image(model, self.build)
        return self._images[key]

    def prepare(self, model: Model) -> str:
        return self._image(model)[1]

    def start_worker(
        self, model: Model, data_dir: Path, work_dir: Path, options: RunOptions | None = None
    ) -> Worker:
        return _DockerWorker(self, model, data_dir, work_dir, options or RunOptions())

    def image_tag(self, model: Model) -> str:
        return self._image(model)[0]

    def run(
        self,
        model: Model,
        dataset: Dataset,
        work_dir: Path,
        utterances: Sequence[Utterance] | None = None,
        options: RunOptions | None = None,
    ) -> RunResult:
        from docker.errors import APIError

        options = options or RunOptions()
        tag, image_id = self._image(model)
        work_dir, out_dir = prepare_work_dir(
            work_dir, dataset, utterances, lambda u: f"{DATA_MOUNT}/{u.audio}"
        )
        _, owner = user_and_owner()
        if owner is not None:
            for p in (work_dir, out_dir, *out_dir.iterdir()):
                os.chown(p, owner, owner)
        # A name chosen here, so the watchdog can remove the container even if this process dies
        # between its creation and the moment `run` returns its ID.
        name = f"asrbench-{model.id}-{uuid.uuid4().hex[:12]}"
        use = Use(
            name=name,
            image=tag,
            command=[f"{WORK_MOUNT}/wav.lst", f"{WORK_MOUNT}/out"],
            labels={"org.asrbench.work": str(work_dir)},
            volumes={
                str(dataset.root.resolve()): (DATA_MOUNT, "ro"),
                str(work_dir): (WORK_MOUNT, "rw"),
            },
        )
        kwargs = container_spec(model, options, use).sdk_kwargs()
        log_path = work_dir / "run.log"
        redactor = redactor_for(model)
        c = client()
        watchdog = _Watchdog(name)
        start = time.monotonic()
        try:
            container = c.containers.run(**kwargs)
        except APIError as exc:
            watchdog.release(clean_up=True)
            raise RunnerError(
                redactor.redact(f"model {model.id}: the container did not start: {exc}")
            ) from exc
        except requests.RequestException as exc:
            watchdog.release(clean_up=True)
            raise RunnerError(
                f"model {model.id}: lost the Docker Engine while starting the "
                f"container ({_what(exc)})"
            ) from exc
        except BaseException:
            watchdog.release(clean_up=True)
            raise
        try:
            return self._finish(
                model, container, tag, image_id, start, out_dir, log_path, options, redactor
            )
        finally:
            watchdog.release()

    def _finish(
        self,
        model: Model,
        container,
        tag: str,
        image_id: str,
        start: float,
        out_dir: Path,
        log_path: Path,
        options: RunOptions,
        redactor,
    ) -> RunResult:
        from docker.errors import APIError

        first_output: list[float] = []
        streamer = threading.Thread(
            target=_stream_logs, args=(container, log_path, first_output, redactor), daemon=True
        )
        streamer.start()
        try:
            status = container.wait(timeout=options.timeout_s)
        except BaseException as exc:
            if isinstance(exc, (requests.RequestException, APIError)):
                raise self._wait_failed(
                    model, container, exc, options, streamer, out_dir, log_path, redactor
                ) from None
            _discard(container)  # Ctrl-C: the container goes with us
            raise
        return self._collect(
            model,
            container,
            tag,
            image_id,
            start,
            status,
            streamer,
            out_dir,
            log_path,
            redactor,
            first_output,
        )

    @staticmethod
    def _wait_failed(
        model, container, exc, options, streamer, out_dir, log_path, redactor
    ) -> RunnerError:
        # Only a read timeout means the program outlived --timeout; an engine that stops
        # answering or answers with an error is reported as what it is.
        what = (
            f"timed out after {options.timeout_s:.0f} s"
            if _is_timeout(exc)
            else f"could not be waited for: {_what(exc)}"
        )
        note = _discard(container)
        streamer.join(timeout=10)
        return failure(model.id, what + note, "docker runner", out_dir, log_path, None, redactor)

    def _collect(
        self,
        model,
        container,
        tag,
        image_id,
        start,
        status,
        streamer,
        out_dir,
        log_path,
        redactor,
        first_output,
    ) -> RunResult:
        from docker.errors import APIError

        streamer.join(timeout=30)
        wall = time.monotonic() - start
        rc = int(status.get("StatusCode", -1))
        try:
            container.reload()  # State.OOMKilled is only known once the container has stopped
            oom = container.attrs.get("State", {}).get("OOMKilled", False)
        except (requests.RequestException, APIError) as exc:
            raise failure(
                model.id,
                f"exited with status {rc}, then its state could not be read "
                f"({_what(exc)}){_discard(container)}",
                "docker runner",
                out_dir,
                log_path,
                rc,
                redactor,
            ) from None
        note = _discard(container)
        if rc != 0:
            what = "was killed for using too much memory" if oom else f"exited with status {rc}"
            raise failure(
                model.id,
                what + note,
                f"docker runner, image {tag}",
                out_dir,
                log_path,
                rc,
                redactor,
            )
        if note:
            print(f"model {model.id}: {note.lstrip('; ')}", file=sys.stderr)
        startup = (first_output[0] - start) if first_output else wall
        return RunResult(
            self.name,
            image_id,
            out_dir,
            out_dir / "hyp.tsv",
            out_dir / "timing.tsv",
            log_path,
            wall,
            rc,
            startup,
        )


class _DockerWorker(Worker):
    """The model's container reading the named pipe in its work mount; see `Worker`."""

    def __init__(
        self,
        runner: DockerRunner,
        model: Model,
        data_dir: Path,
        work_dir: Path,
        options: RunOptions,
    ):
        from docker.errors import APIError

        tag, _ = runner._image(model)
        work_dir, self.out_dir, fifo = prepare_worker_dir(work_dir)
        self.fifo, self.log_path = fifo, work_dir / "run.log"
        self.data_dir = Path(data_dir).resolve()
        _, owner = user_and_owner()
        if owner is not None:
            for p in (work_dir, self.out_dir, self.data_dir):
                os.chown(p, owner, owner)
        self.name = f"asrbench-serve-{model.id}-{uuid.uuid4().hex[:12]}"
        self._watchdog = _Watchdog(self.name)
        # the batch spec: serving gains the run's GPUs, which it used to drop
        use = Use(
            name=self.name,
            image=tag,
            command=[f"{WORK_MOUNT}/{fifo.name}", f"{WORK_MOUNT}/out"],
            labels={"org.asrbench.work": str(work_dir), "org.asrbench.serve": "1"},
            volumes={
                str(self.data_dir): (DATA_MOUNT, "ro"),
                str(work_dir): (WORK_MOUNT, "rw"),
            },
        )
        kwargs = container_spec(model, options, use).sdk_kwargs()
        try:
            self.container = client().containers.run(**kwargs)
        except (APIError, requests.RequestException) as exc:
            self._watchdog.release(clean_up=True)
            raise RunnerError(
                redactor_for(model).redact(
                    f"model {model.id}: the serving container did not start: {_what(exc)}"
                )
            ) from exc
        self._streamer = threading.Thread(
            target=_stream_logs,
            args=(self.container, self.log_path, [], redactor_for(model)),
            daemon=True,
        )
        self._streamer.start()

    def path_for(self, host_path: Path) -> str:
        return f"{DATA_MOUNT}/{Path(host_path).resolve().relative_to(self.data_dir).as_posix()}"

    def alive(self) -> bool:
        from docker.errors import APIError, NotFound

        try:
            self.container.reload()
        except NotFound:
            return False
        except (APIError, requests.RequestException):
            return True  # the engine did not answer: assume it runs, the wait will tell
        return self.container.status in ("created", "running")

    def stop(self) -> None:
        _discard(self.container)
        self._watchdog.release()
        self._streamer.join(timeout=5)


def _is_timeout(exc: BaseException) -> bool:
    """Whether a docker SDK call ended on its read timeout (over the Unix socket, requests
    reports it as a ConnectionError wrapping urllib3's ReadTimeoutError)."""
    from urllib3.exceptions import ReadTimeoutError

    if isinstance(exc, requests.ReadTimeout):
        return True
    return isinstance(exc, requests.ConnectionError) and any(
        isinstance(arg, ReadTimeoutError) for arg in exc.args
    )


def _what(exc: BaseException) -> str:
    """An engine failure in words: the engine's own explanation, or the connection error."""
    from docker.errors import APIError

    if isinstance(exc, APIError):
        status = f" {exc.status_code}" if exc.status_code else ""
        return f"the Docker Engine answered{status}: {exc.explanation or exc}"
    return f"the Docker Engine stopped answering ({type(exc).__name__}: {exc})"


def _discard(container) -> str:
    """Kill and remove a container; '' when done, else a note for the error message."""
    from docker.errors import APIError, NotFound

    try:
        container.remove(force=True)  # force: kills it first if it still runs
    except NotFound:
        pass  # already gone
    except (APIError, requests.RequestException) as exc:
        return f"; container {container.short_id} may still exist: {_what(exc)}"
    return ""


def _stream_logs(container, log_path: Path, first: list[float], redactor) -> None:
    from docker.errors import APIError

    with open(log_path, "ab") as log:
        sink = RedactingLog(log, redactor)
        try:
            for chunk in container.logs(stream=True, follow=True):
                if not first:
                    first.append(time.monotonic())
                sink.write(chunk)
        except (APIError, requests.RequestException) as exc:
            # The run's outcome is decided by `wait`; the log only says where it stopped.
            sink.write(f"\n[asrbench: the log stream ended early: {_what(exc)}]\n".encode())
        finally:
            sink.close()


class _Watchdog:
    """A small process that removes the container if this process dies (watchdog.py)."""

    def __init__(self, name: str):
        read, self._w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [*WATCHDOG, "container", name],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            os.close(read)

    def release(self, clean_up: bool = False) -> None:
        """Done: the watchdog exits; with `clean_up` it removes the container first."""
        if self._w < 0:
            return
        try:
            if not clean_up:
                os.write(self._w, b"done")
        except OSError:
            pass
        os.close(self._w)
        self._w = -1
        if not clean_up:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
