"""Local runner: the model's own program in a per-model virtualenv, no container.

For development and for machines without a Docker Engine. Isolation is weaker than Docker's
(no network cut-off, no read-only mount), which `run.json` records through the runner name.
The program runs from the model's assembled source (its folder plus the shared helpers its card
declares, as in the image's /opt/model), kept under the cache by source digest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from asrbench.dataset import Dataset, Utterance
from asrbench.fsio import atomic_write_text, exclusive
from asrbench.host import check_cpu
from asrbench.identity import digest, short
from asrbench.modelcard import Model, has_requirements
from asrbench.runners.base import (
    WATCHDOG,
    RedactingLog,
    Runner,
    RunnerError,
    RunOptions,
    RunResult,
    Worker,
    failure,
    log_tail,
    prepare_work_dir,
    prepare_worker_dir,
    redactor_for,
)
from asrbench.settings import settings

# Variables a model program may need to run at all; everything else is withheld, as in Docker.
_BASE_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "HOME",
    "TMPDIR",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "PIP_CERT",
    "PIP_FIND_LINKS",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
)


class LocalRunner(Runner):
    """Runs `<venv>/bin/python <source>/<program> <wav_list> <result_dir>` on the host."""

    name = "local"

    def __init__(
        self, venv_root: Path | None = None, quiet: bool = True, source_root: Path | None = None
    ):
        self.venv_root = venv_root or settings().cache / "venvs"
        self.source_root = source_root or settings().cache / "model-sources"
        self.quiet = quiet

    def venv_dir(self, model: Model) -> Path:
        """The virtualenv, keyed by `digest("environment", requirements, python)`."""
        return self.venv_root / f"{model.id}-{short(model.environment_digest())}"

    def source_dir(self, model: Model) -> Path:
        """The model's assembled source (folder + shared helpers), keyed by its digest."""
        return self.source_root / f"{model.id}-{short(model.source_hash())}"

    def program(self, model: Model) -> Path:
        """The card's program in the assembled source: what this runner executes."""
        return self.source_dir(model) / model.card.program

    def identity(self, model: Model) -> str:
        """`local:` + digest("local-model", source, environment)."""
        return "local:" + digest(
            "local-model", source=model.source_hash(), environment=model.environment_digest()
        )

    def _assemble(self, model: Model) -> Path:
        dest = self.source_dir(model)
        if dest.is_dir():
            return dest  # content-addressed: an existing folder holds exactly this source
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
        model.assemble(tmp)
        try:
            os.rename(tmp, dest)
        except OSError:  # another process placed the same source first
            shutil.rmtree(tmp, ignore_errors=True)
        return dest

    def prepare(self, model: Model) -> str:
        check_cpu(model)  # before the virtualenv: a runtime this CPU cannot run dies with SIGILL
        self._verify_user_weights(model)
        self._assemble(model)
        venv = self.venv_dir(model)
        marker = venv / ".asrbench-ready"
        if not marker.is_file():
            # one maker at a time: a second `venv --clear` would empty the virtualenv that a
            # first is installing into, or already runs a program from (two jobs, or two test
            # workers, preparing the same card at once)
            with exclusive(venv.parent / f"{venv.name}.lock"):
                if not marker.is_file():
                    self._make_venv(model, venv)
                    atomic_write_text(marker, "ok\n")
        return self.identity(model)

    def _make_venv(self, model: Model, venv: Path) -> None:
        """A fresh virtualenv at `venv` with the card's requirements; RunnerError if pip fails."""
        venv.parent.mkdir(parents=True, exist_ok=True)
        log = venv.parent / f"{venv.name}.install.log"
        with open(log, "w") as out:
            steps = [[sys.executable, "-m", "venv", "--clear", str(venv)]]
            if has_requirements(model.requirements):
                steps.append(
                    [
                        str(venv / "bin" / "python"),
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        *(["--no-deps"] if model.card.image.no_deps else []),
                        "-r",
                        str(model.requirements),
                    ]
                )
            for cmd in steps:
                rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
                if rc != 0:
                    raise RunnerError(
                        f"model {model.id}: installing its requirements failed (exit {rc}); "
                        f"log {log}:\n{log_tail(log)}",
                        log,
                        rc,
                    )

    def run(
        self,
        model: Model,
        dataset: Dataset,
        work_dir: Path,
        utterances: Sequence[Utterance] | None = None,
        options: RunOptions | None = None,
    ) -> RunResult:
        options = options or RunOptions()
        identity = self.prepare(model)
        work_dir, out_dir = prepare_work_dir(
            work_dir, dataset, utterances, lambda u: str((dataset.root / u.audio).resolve())
        )
        wav_list = work_dir / "wav.lst"
        env = self._env(model, options)
        log_path = work_dir / "run.log"
        cmd = [
            str(self.venv_dir(model) / "bin" / "python"),
            str(self.program(model)),
            str(wav_list),
            str(out_dir),
        ]
        redactor = redactor_for(model)
        start = time.monotonic()
        with open(log_path, "ab") as log:
            rc = self._run_watched(cmd, env, work_dir, log, redactor, options.timeout_s)
        if rc is None:
            raise failure(
                model.id,
                f"timed out after {options.timeout_s:.0f} s",
                "local runner",
                out_dir,
                log_path,
                None,
                redactor,
            )
        wall = time.monotonic() - start
        if rc != 0:
            what = f"killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
            raise failure(model.id, what, "local runner", out_dir, log_path, rc, redactor)
        return RunResult(
            self.name,
            identity,
            out_dir,
            out_dir / "hyp.tsv",
            out_dir / "timing.tsv",
            log_path,
            wall,
            rc,
        )

    def _env(self, model: Model, options: RunOptions) -> dict[str, str]:
        """What the program gets: the base variables, its declared secrets, the options."""
        env = {k: os.environ[k] for k in _BASE_ENV if k in os.environ}
        env.update({s: os.environ[s] for s in model.card.secrets if s in os.environ})
        env.update(options.env)
        env["PYTHONUNBUFFERED"] = "1"
        env.update(self._user_weights(model))
        return env

    def start_worker(
        self, model: Model, data_dir: Path, work_dir: Path, options: RunOptions | None = None
    ) -> Worker:
        options = options or RunOptions()
        self.prepare(model)
        work_dir, out_dir, fifo = prepare_worker_dir(work_dir)
        cmd = [
            str(self.venv_dir(model) / "bin" / "python"),
            str(self.program(model)),
            str(fifo),
            str(out_dir),
        ]
        return _LocalWorker(
            cmd, self._env(model, options), work_dir, out_dir, fifo, redactor_for(model)
        )

    @staticmethod
    def _verify_user_weights(model: Model) -> None:
        """The card's own weights checked before its program runs, as a build checks them: a
        `weights.dir` folder against `weights.sha256` or `weights.lock` (the first run writes
        the lock), hub files in the cache against the lock a network build wrote."""
        from asrbench.images.weights import check_card, verify_user_weights
        from asrbench.images.weightslock import pin, pinned_snapshot

        spec = check_card(model)  # as a build does: unknown fields, malformed weights
        if spec is None:
            return
        if spec.hub is not None:
            folder = pinned_snapshot(model.card_path, spec.hub)
            pin(model.card_path, folder, sorted(spec.hub.files), {"hub": spec.hub.repo})
        elif spec.dir is not None:
            verify_user_weights(model, spec)

    @staticmethod
    def _user_weights(model: Model) -> dict[str, str]:
        """ASRBENCH_WEIGHTS_SRC: the card's user-supplied weights folder (or the pinned hub
        files' cache folder), resolved here (the program runs from a copy of its folder;
        models/_common/weights.py and the runtime programs read it)."""
        from asrbench.images.weights import check_card, user_weights_dir
        from asrbench.images.weightslock import pinned_snapshot

        spec = check_card(model)
        if spec is not None and spec.hub is not None:
            return {"ASRBENCH_WEIGHTS_SRC": str(pinned_snapshot(model.card_path, spec.hub))}
        if spec is None or spec.dir is None:
            return {}
        return {"ASRBENCH_WEIGHTS_SRC": str(user_weights_dir(model, spec).resolve())}

    @staticmethod
    def _run_watched(
        cmd: list[str], env: dict[str, str], cwd: Path, log, redactor, timeout_s: float
    ) -> int | None:
        """Run `cmd` under the watchdog; its exit status, or None after a timeout.

        The watchdog leads a new session (its own process group, out of reach of the terminal's
        Ctrl-C, which the benchmark handles) and starts the program in that group. Its stdin is
        the lifeline: if this process dies, even by SIGKILL, the kernel closes our end and the
        watchdog kills the group. Without declared secrets the program writes to run.log
        directly; with them its output passes through here, a line at a time, redacted.
        """
        lifeline_r, lifeline_w = os.pipe()
        piped = bool(redactor)
        try:
            proc = subprocess.Popen(
                [*WATCHDOG, "group", "--", *cmd],
                stdin=lifeline_r,
                stdout=subprocess.PIPE if piped else log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=str(cwd),
                start_new_session=True,
            )
        finally:
            os.close(lifeline_r)
        pump = None
        if piped:
            sink = RedactingLog(log, redactor)

            out = proc.stdout
            assert out is not None  # piped: Popen was given stdout=PIPE

            def copy() -> None:
                for line in iter(out.readline, b""):
                    sink.write(line)
                sink.close()

            pump = threading.Thread(target=copy, daemon=True)
            pump.start()
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _killpg(proc.pid)
            proc.wait()
            rc = None
        except BaseException:  # Ctrl-C: take the program down with us, then propagate
            _killpg(proc.pid)
            raise
        finally:
            try:
                os.write(lifeline_w, b"done")  # nothing left to clean up
            except OSError:
                pass
            os.close(lifeline_w)
            if pump is not None:
                pump.join(timeout=10)
        return rc


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, 9)
    except ProcessLookupError:
        pass  # already gone


class _LocalWorker(Worker):
    """The program under its watchdog, reading the named pipe; see `Worker`."""

    def __init__(
        self,
        cmd: list[str],
        env: dict[str, str],
        work_dir: Path,
        out_dir: Path,
        fifo: Path,
        redactor,
    ) -> None:
        self.fifo, self.out_dir, self.log_path = fifo, out_dir, work_dir / "run.log"
        self._log = open(self.log_path, "ab")
        lifeline_r, self._lifeline = os.pipe()
        piped = bool(redactor)
        try:
            self.proc = subprocess.Popen(
                [*WATCHDOG, "group", "--", *cmd],
                stdin=lifeline_r,
                stdout=subprocess.PIPE if piped else self._log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=str(work_dir),
                start_new_session=True,
            )
        finally:
            os.close(lifeline_r)
        self._pump = None
        if piped:
            sink = RedactingLog(self._log, redactor)

            out = self.proc.stdout
            assert out is not None  # piped: Popen was given stdout=PIPE

            def copy() -> None:
                for line in iter(out.readline, b""):
                    sink.write(line)
                sink.close()

            self._pump = threading.Thread(target=copy, daemon=True)
            self._pump.start()

    def path_for(self, host_path: Path) -> str:
        return str(Path(host_path).resolve())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            _killpg(self.proc.pid)
            self.proc.wait()
        if self._lifeline >= 0:
            os.close(self._lifeline)  # the watchdog has nothing left to kill
            self._lifeline = -1
        if self._pump is not None:
            self._pump.join(timeout=5)
        self._log.close()
