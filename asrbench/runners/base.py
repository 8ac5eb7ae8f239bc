"""The one small interface every runner implements, and what a run returns."""

from __future__ import annotations

import abc
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from asrbench.dataset import Dataset, Utterance
from asrbench.errors import AsrbenchError
from asrbench.fsio import atomic_write_text
from asrbench.modelcard import Model
from asrbench.secrets import Redactor, for_models

# The watchdog that makes a model run die with the job (asrbench/runners/watchdog.py), run as a
# plain script by the same interpreter: `python -I` keeps it free of the platform's imports.
WATCHDOG = [sys.executable, "-I", str(Path(__file__).resolve().with_name("watchdog.py"))]

LOG_TAIL_LINES = 30


class RunnerError(AsrbenchError):
    """A model run that failed; the message carries the exit status and the log tail.

    `status` is the program's exit status (None when it never ran or was stopped);
    `exit_code` stays the platform's (1: the job failed), as for every AsrbenchError.
    """

    def __init__(self, message: str, log_path: Path | None = None, status: int | None = None):
        self.log_path = log_path
        self.status = status
        super().__init__(message)


@dataclass
class RunOptions:
    """Runtime options that may change a model's output or its resources."""

    timeout_s: float = 3600.0
    memory: str | None = None  # default: the card's `memory`
    cpus: float | None = None  # CPU limit (Docker); None = no limit
    gpus: str | None = None  # "all" or a count; None = no GPU
    env: dict[str, str] = field(default_factory=dict)  # extra non-secret settings


@dataclass
class RunResult:
    """Where a finished run left its outputs."""

    runner: str
    model_identity: str  # image ID (Docker) or source+environment hash (local)
    result_dir: Path
    hyp_path: Path
    timing_path: Path
    log_path: Path
    wall_s: float
    exit_code: int
    startup_s: float = 0.0  # container/process start until the program's first line of output


def read_tsv_pairs(path: Path) -> dict[str, str]:
    """Read `ID<TAB>VALUE` lines as a model writes them; a torn last line (crash) is ignored."""
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    data = path.read_text(encoding="utf-8", errors="replace")
    lines = data.split("\n")
    if not data.endswith("\n"):
        lines = lines[:-1]  # the program died mid-line: that utterance is not done
    for line in lines:
        if not line:
            continue
        uid, _, value = line.partition("\t")
        out[uid] = value
    return out


def prepare_work_dir(
    work_dir: Path,
    dataset: Dataset,
    utterances: Sequence[Utterance] | None,
    audio_path: Callable[[Utterance], str],
) -> tuple[Path, Path]:
    """Make `work_dir/out/` and write `work_dir/wav.lst` (paths as the program will see them)."""
    work_dir = Path(work_dir).resolve()
    out_dir = work_dir / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    utts = utterances if utterances is not None else dataset.utterances
    atomic_write_text(work_dir / "wav.lst", "".join(f"{u.id}\t{audio_path(u)}\n" for u in utts))
    return work_dir, out_dir


def redactor_for(model: Model) -> Redactor:
    """The redactor of the secrets this model declares (the values the runner passes it)."""
    return for_models([model])


def failure(
    model_id: str,
    what: str,
    where: str,
    out_dir: Path,
    log_path: Path,
    status: int | None,
    redactor: Redactor | None = None,
) -> RunnerError:
    """The error for a run that stopped: what happened, where partial results are, log tail;
    every declared secret's value redacted (the log tail may quote what the model printed)."""
    message = (
        f"model {model_id} {what} ({where}); partial results kept in {out_dir}; "
        f"log {log_path}, tail:\n{log_tail(log_path)}"
    )
    return RunnerError(redactor.redact(message) if redactor else message, log_path, status)


class RedactingLog:
    """Writes a model's output to its run.log a line at a time, secrets redacted.

    Lines are completed before redaction so a value split across two reads is still found; a
    last line without a newline is written at `close`.
    """

    def __init__(self, out: BinaryIO, redactor: Redactor):
        self.out, self.redactor, self._pending = out, redactor, b""

    def write(self, data: bytes) -> None:
        data = self._pending + data
        cut = data.rfind(b"\n") + 1
        self._pending = data[cut:]
        if cut:
            self.out.write(self.redactor.redact_bytes(data[:cut]))
            self.out.flush()

    def close(self) -> None:
        if self._pending:
            self.out.write(self.redactor.redact_bytes(self._pending))
            self._pending = b""
        self.out.flush()


def log_tail(path: Path, n: int = LOG_TAIL_LINES) -> str:
    if not path.is_file():
        return "(no log)"
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(lines[-n:]) or "(empty log)"


class Worker(abc.ABC):
    """A model program kept running with its model loaded (`ops/serve`): it reads its wav list
    from a named pipe (contract: a wav list that is a pipe is streamed) and appends to
    `out/hyp.tsv` as each utterance arrives. The watchdog takes it down with its job."""

    fifo: Path  # the wav list, a named pipe, as the host sees it
    out_dir: Path
    log_path: Path

    @abc.abstractmethod
    def path_for(self, host_path: Path) -> str:
        """How the program sees a file of the worker's data folder."""

    @abc.abstractmethod
    def alive(self) -> bool:
        """Whether the program still runs."""

    @abc.abstractmethod
    def stop(self) -> None:
        """End the program (and its container), whatever state it is in."""


def prepare_worker_dir(work_dir: Path) -> tuple[Path, Path, Path]:
    """(work_dir, out_dir, fifo): a fresh folder with the named pipe the worker reads."""
    work_dir = Path(work_dir).resolve()
    out_dir = work_dir / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    fifo = work_dir / "wav.fifo"
    if not fifo.exists():
        os.mkfifo(fifo, 0o666)
    os.chmod(fifo, 0o666)  # the container's non-root user reads it
    return work_dir, out_dir, fifo


class Runner(abc.ABC):
    """Runs a model's program on utterances of a dataset, per the contract in models/README.md."""

    name: str = "runner"

    @abc.abstractmethod
    def prepare(self, model: Model) -> str:
        """Build whatever the model needs (image, virtualenv); return its identity."""

    @abc.abstractmethod
    def run(
        self,
        model: Model,
        dataset: Dataset,
        work_dir: Path,
        utterances: Sequence[Utterance] | None = None,
        options: RunOptions | None = None,
    ) -> RunResult:
        """Run on `utterances` (default: all); outputs land in `work_dir/out/`.

        Raises RunnerError with the log tail when the program exits non-zero, crashes or times
        out; whatever `hyp.tsv` it wrote so far stays in place.
        """

    def identity(self, model: Model) -> str:
        """The identity `prepare` returns, for shards that run on other machines. By default it
        is learnt by preparing here (an image is built here either way; the nodes fetch it); a
        runner that builds on each node (local: its virtualenv) derives it without building."""
        return self.prepare(model)

    def image_tag(self, model: Model) -> str | None:
        """The image the model runs in, recorded in run.json; None for a runner without one."""
        return None

    def start_worker(
        self, model: Model, data_dir: Path, work_dir: Path, options: RunOptions | None = None
    ) -> Worker:
        """Start the model's program on a streamed wav list (see `Worker`); audio files are
        placed in `data_dir` (read-only for the program)."""
        raise RunnerError(f"the {self.name} runner cannot keep a model running")
