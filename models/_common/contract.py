"""The model contract v1 (models/README.md), shared by the zoo's programs.

This file lives once in `models/_common/`; each model whose card lists it under `image.shared`
gets a copy beside its program (in the image and for the local runner), and its bytes are part
of that model's source identity, so a change here rebuilds every image that declares it.

**One loop for every local model program** (`run`): the program supplies `load() -> model` and
`transcribe_one(model, wav_path) -> (text, audio_seconds)`; `run` owns the rest: the wav list
(a file, or a named pipe streamed a line at a time for `ops/serve`), resume (`done_ids`),
hyp.tsv / timing.tsv / failed.tsv written one flushed line per utterance, a failure recorded per
utterance, and the per-utterance timeout `ASRBENCH_UTT_TIMEOUT`.

The timeout must cut an utterance that hangs inside native code (CTranslate2, ONNX Runtime,
whisper.cpp, PocketSphinx): neither a Python signal nor a thread can interrupt a C call. So
with a timeout the model runs in a **worker process**: the program forks a worker *before*
`load()`, the worker loads the model and answers one JSON line per utterance over a pipe, and
the parent waits for each answer at most the timeout. On timeout the parent kills the worker
(SIGKILL), records `ID<TAB>timeout after N s` in failed.tsv, and forks a fresh worker (which
loads the model again) for the next utterance; a worker that dies on an utterance (a crash in
native code, an out-of-memory kill) fails that utterance the same way. The fork comes before
the load, not after it, because CTranslate2 and ONNX Runtime start their thread pools when the
model loads and a forked child has no threads but the one that forked: a model loaded before
the fork would wait forever on a pool that is not there. The cost is one load per worker: once
per run, and once more after each timeout. The worker shares the parent's process group, so a
runner that kills the group (the whole-run `--timeout`) kills it too.

Without `ASRBENCH_UTT_TIMEOUT` (and without `recycle_rss_mb`) nothing forks: the model is
loaded and run in the program's own process, exactly as before. `recycle_rss_mb` (Moonshine:
libmoonshine never returns the memory a transcription takes) also runs the model in a worker,
replaced once its resident memory passes that many MB.

Also shared by the programs, so each is written once: `TimedOut` (the optional
`hyp.timed.jsonl`), and for the runtimes whose model is a card (`model.yaml` copied beside the
program): `load_card`, `card_name`, `weights_folder`, `ModelSetupError` and `use_cuda` (the
CUDA image's GPU, or the CPU saying why).

Test-only fault hook: when `ASRBENCH_TEST_HANG_ID` names an utterance, the loop blocks on that
utterance *in native code* before calling the model's `transcribe_one`: it locks a plain
pthread mutex twice through ctypes, a self-deadlock that no signal ends, as a wedged C++ thread
pool would be. It lets tests hang a real model program on one chosen utterance; it is off
unless the variable is set, and nothing else reads it.
"""

from __future__ import annotations

import json
import os
import select
import signal
import stat
import sys
import threading
import time
import wave
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "LookAhead",
    "ModelSetupError",
    "ResultWriter",
    "TimedOut",
    "WavListError",
    "card_name",
    "clean",
    "done_ids",
    "load_card",
    "read_todo",
    "run",
    "use_cuda",
    "utt_timeout",
    "wav_seconds",
    "weights_folder",
]

CARD_PATH = Path(__file__).parent / "model.yaml"  # the card copied beside the program


class WavListError(ValueError):
    """A malformed wav list; the message names the file and line."""


def clean(text: str) -> str:
    """One line of text: tabs and newlines become spaces, runs of spaces collapse."""
    return " ".join(text.replace("\t", " ").split())


def done_ids(path: Path) -> set[str]:
    """IDs already written; truncates a last line torn by a crash so appends stay clean."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return {line.split(b"\t", 1)[0].decode() for line in data.splitlines() if line}


class _Stream:
    """The utterances of a wav list that is a named pipe (`ops/serve`'s warm model): read one
    line at a time as they arrive, until the writer closes it. `len()` is what is known so far."""

    def __init__(self, path: Path, skip: set[str]):
        self.path, self.skip, self.seen = path, skip, 0

    def __len__(self) -> int:
        return self.seen

    def __iter__(self):
        with open(self.path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                uid, sep, wav = line.rstrip("\n").partition("\t")
                if not sep:
                    print(
                        f"{self.path}:{n}: expected ID<TAB>PATH, got {line[:80]!r}; skipped",
                        file=sys.stderr,
                        flush=True,
                    )
                    continue
                if uid not in self.skip:
                    self.seen += 1
                    yield uid, wav


def read_todo(wav_list: str | Path, result_dir: str | Path) -> tuple[list[tuple[str, str]], int]:
    """(ID, PATH) pairs still to do, and how many were already done (resume).

    A wav list that is a named pipe is streamed (contract: serving): the pairs come as the
    writer sends them, and the program transcribes each as it arrives, model loaded once.
    """
    out = Path(result_dir)
    out.mkdir(parents=True, exist_ok=True)
    skip = done_ids(out / "hyp.tsv") | done_ids(out / "failed.tsv")
    done_ids(out / "timing.tsv")
    done_ids(out / "cost.tsv")
    if stat.S_ISFIFO(os.stat(wav_list).st_mode):
        return _Stream(Path(wav_list), skip), len(skip)  # type: ignore[return-value]
    todo = []
    for n, line in enumerate(Path(wav_list).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        uid, sep, path = line.partition("\t")
        if not sep:
            raise WavListError(f"{wav_list}:{n}: expected ID<TAB>PATH, got {line[:80]!r}")
        if uid not in skip:
            todo.append((uid, path))
    return todo, len(skip)


class LookAhead:
    """The wav list's paths still to do, for a program that batches inside the one loop:
    `contract.run` asks for one utterance at a time, so on a miss the program decodes that one
    with the next `size - 1` of the list (a regular file; a named pipe, as `ops/serve` streams,
    gets batches of one) and keeps their results for the calls that follow."""

    def __init__(self, argv: list[str], size: int):
        self.size = size
        self.paths: list[str] = []
        if size > 1 and len(argv) == 2 and _is_regular_file(argv[0]):
            todo, _ = read_todo(argv[0], argv[1])
            self.paths = [path for _uid, path in todo]

    def batch_for(self, path: str) -> list[str]:
        """`path` and the next paths of the list, at most `size` in all (each once)."""
        if path not in self.paths:
            return [path]
        start = self.paths.index(path)
        batch = self.paths[start : start + self.size]
        del self.paths[: start + len(batch)]
        return list(dict.fromkeys(batch))


def _is_regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def wav_seconds(path: str | Path) -> float:
    """Duration of a WAV file in seconds."""
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / float(w.getframerate())


@dataclass
class ResultWriter:
    """Appends to hyp.tsv / timing.tsv / failed.tsv, one flushed line each, thread-safe."""

    result_dir: Path
    model_id: str

    def __post_init__(self) -> None:
        out = Path(self.result_dir)
        self._hyp = open(out / "hyp.tsv", "a", encoding="utf-8")
        self._timing = open(out / "timing.tsv", "a", encoding="utf-8")
        self._failed = open(out / "failed.tsv", "a", encoding="utf-8")
        self._cost = None  # cost.tsv, opened on the first cost (commercial APIs only)
        self._timed = None  # hyp.timed.jsonl, opened on the first timed line (diarized APIs)
        self._lock = threading.Lock()
        self.n_ok = 0
        self.n_failed = 0

    def ok(self, uid: str, text: str, processing_s: float, audio_s: float) -> None:
        with self._lock:
            self._hyp.write(f"{uid}\t{clean(text)}\n")
            self._hyp.flush()
            self._timing.write(f"{uid}\t{processing_s:.4f}\t{audio_s:.3f}\n")
            self._timing.flush()
            self.n_ok += 1

    def cost(self, uid: str, usd: float) -> None:
        """`cost.tsv`: `ID<TAB>USD`, the estimated price of that utterance's request(s)."""
        with self._lock:
            if self._cost is None:
                self._cost = open(Path(self.result_dir) / "cost.tsv", "a", encoding="utf-8")
            self._cost.write(f"{uid}\t{usd:.6f}\n")
            self._cost.flush()

    def timed(self, uid: str, segments: list[dict], words: list[dict]) -> None:
        """`hyp.timed.jsonl`: one line for `uid` (models/README.md, "Timed output"); a run
        that never calls this writes no such file, so its outputs keep their bytes."""
        line = json.dumps({"id": uid, "segments": segments, "words": words}, ensure_ascii=False)
        with self._lock:
            if self._timed is None:
                self._timed = open(Path(self.result_dir) / "hyp.timed.jsonl", "a", encoding="utf-8")
            self._timed.write(line + "\n")
            self._timed.flush()

    def failed(self, uid: str, reason: str) -> None:
        with self._lock:
            self._failed.write(f"{uid}\t{clean(reason)}\n")
            self._failed.flush()
            self.n_failed += 1
        print(f"{self.model_id}: {uid}: failed: {clean(reason)}", file=sys.stderr)

    def close(self) -> None:
        for f in (self._hyp, self._timing, self._failed, self._cost, self._timed):
            if f is not None:
                f.close()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TimedOut:
    """Optional timed output, `hyp.timed.jsonl` beside hyp.tsv (models/README.md): one line
    per utterance with its segment (and word) times. The loop hands `transcribe_one` only the
    wav path, so the IDs come from the wav list; a list that is not a regular file (the named
    pipe `ops/serve` streams) gets no timed output."""

    def __init__(self, argv: list[str]):
        self.ids: dict[str, list[str]] = {}
        self.path: Path | None = None
        if len(argv) == 2 and os.path.isfile(argv[0]):
            for line in Path(argv[0]).read_text(encoding="utf-8").splitlines():
                uid, _, wav = line.partition("\t")
                self.ids.setdefault(wav, []).append(uid)
            self.path = Path(argv[1]) / "hyp.timed.jsonl"

    def write(self, wav: str, segments: list[dict], words: list[dict] | None = None) -> None:
        """One line for each ID of `wav`; `words` left out: segments only (`"words": []`)."""
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            for uid in self.ids.get(wav, []):
                line = {"id": uid, "segments": segments, "words": words or []}
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------
# The card beside the program: the runtimes whose model is a card, no code.


class ModelSetupError(RuntimeError):
    """A card or weights folder a runtime cannot load; the message says what to fix."""


def load_card() -> dict[str, Any]:
    """The card copied beside the program (`model.yaml`)."""
    import yaml  # only the programs that read their card need PyYAML

    return yaml.safe_load(CARD_PATH.read_text(encoding="utf-8"))


def card_name(card: dict[str, Any]) -> str:
    return f"models/{card['id']}/model.yaml"


def weights_folder(card: dict[str, Any]) -> Path:
    """The image's /opt/weights (`ASRBENCH_WEIGHTS_DIR`), else the host folder the local
    runner passes (`ASRBENCH_WEIGHTS_SRC`); ModelSetupError when neither is a folder."""
    folder = os.environ.get("ASRBENCH_WEIGHTS_DIR") or os.environ.get("ASRBENCH_WEIGHTS_SRC")
    if not folder or not Path(folder).is_dir():
        where = folder or "ASRBENCH_WEIGHTS_DIR, or ASRBENCH_WEIGHTS_SRC with the local runner"
        raise ModelSetupError(
            f"{card_name(card)}: no weights folder ({where}); give the card a weights.dir"
        )
    return Path(folder)


def use_cuda(label: str, gpu_visible: Callable[[], bool]) -> bool:
    """Whether to run on the GPU: in the CUDA image (`ASRBENCH_DEVICE=cuda`, the card's
    image.cuda) when `gpu_visible()`; False otherwise, saying so (under `label`) when a GPU
    was asked for but none is visible."""
    if os.environ.get("ASRBENCH_DEVICE") != "cuda":
        return False
    if gpu_visible():
        return True
    print(
        f"{label}: ASRBENCH_DEVICE=cuda but no GPU is visible: running on the CPU", file=sys.stderr
    )
    return False


def now() -> float:
    """Monotonic clock for per-utterance processing time."""
    return time.perf_counter()


# ---------------------------------------------------------------------------------------------
# The loop (module docstring): load once, transcribe each utterance, record every outcome.

Load = Callable[[], Any]
TranscribeOne = Callable[[Any, str], "tuple[str, float]"]


def utt_timeout() -> float:
    """`ASRBENCH_UTT_TIMEOUT` in seconds; 0 when unset (no limit)."""
    raw = os.environ.get("ASRBENCH_UTT_TIMEOUT") or "0"
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise ValueError(f"ASRBENCH_UTT_TIMEOUT={raw!r}: expected a number of seconds >= 0")
    return value


def _native_hang() -> None:
    """Test-only (ASRBENCH_TEST_HANG_ID): block forever inside C, deaf to signals, as a model
    stuck in native code is: relock a default (non-recursive) pthread mutex in one thread."""
    import ctypes

    libc = ctypes.CDLL(None)
    mutex = ctypes.create_string_buffer(64)  # zeroed = PTHREAD_MUTEX_INITIALIZER (glibc)
    libc.pthread_mutex_lock(mutex)
    libc.pthread_mutex_lock(mutex)  # never returns


def _decode(
    model: Any, transcribe_one: TranscribeOne, uid: str, path: str, hang_id: str | None
) -> tuple[str, float, float]:
    """(text, audio seconds, processing seconds) of one utterance."""
    start = now()
    if hang_id is not None and uid == hang_id:
        _native_hang()
    text, seconds = transcribe_one(model, path)
    return text, float(seconds), now() - start


def _rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


class _LoadFailed(Exception):
    """The model could not be loaded; `rc` is the program's exit status (2: user's input)."""

    def __init__(self, message: str, rc: int, raw: bool = False):
        super().__init__(message)
        self.rc, self.raw = rc, raw  # raw: the program's own SystemExit message, printed as is


class _Worker:
    """The model in a forked worker process, one JSON line each way per utterance."""

    def __init__(
        self,
        load: Load,
        transcribe_one: TranscribeOne,
        fatal: tuple[type, ...],
        hang_id: str | None,
        track_rss: bool,
    ):
        self.load, self.transcribe_one, self.fatal = load, transcribe_one, fatal
        self.hang_id, self.track_rss = hang_id, track_rss
        self.pid: int | None = None
        self._buf = b""

    # -- the worker side ----------------------------------------------------------------------
    def _serve(self, jobs: int, replies: int) -> None:
        out = os.fdopen(replies, "w", encoding="utf-8")

        def send(reply: dict) -> None:
            out.write(json.dumps(reply) + "\n")
            out.flush()

        t0 = now()
        try:
            model = self.load()
        except self.fatal as exc:
            send({"fatal": str(exc), "rc": 2})
            return
        except SystemExit as exc:
            code = exc.code
            send(
                {
                    "fatal": "" if isinstance(code, int) or code is None else str(code),
                    "rc": code if isinstance(code, int) else 1,
                    "raw": True,
                }
            )
            return
        send({"ready": now() - t0})
        for line in os.fdopen(jobs, encoding="utf-8"):
            uid, path = json.loads(line)
            try:
                text, seconds, took = _decode(model, self.transcribe_one, uid, path, self.hang_id)
                reply: dict[str, Any] = {"text": text, "seconds": seconds, "processing_s": took}
            except Exception as exc:  # one bad file must not stop the run: the parent records it
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            if self.track_rss:
                reply["rss_mb"] = _rss_mb()
            send(reply)

    # -- the parent side ----------------------------------------------------------------------
    def start(self) -> float:
        """Fork a worker and wait until its model is loaded; the load's seconds."""
        jobs_r, jobs_w = os.pipe()
        replies_r, replies_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the caller's code
            rc = 0
            try:
                os.close(jobs_w)
                os.close(replies_r)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                self._serve(jobs_r, replies_w)
            except BaseException as exc:
                print(f"model worker: {type(exc).__name__}: {exc}", file=sys.stderr)
                rc = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(rc)
        os.close(jobs_r)
        os.close(replies_w)
        self.pid, self._jobs, self._replies, self._buf = pid, jobs_w, replies_r, b""
        reply = self._read(None)
        if reply is None:
            raise _LoadFailed(f"the model process stopped while loading ({self._reap()})", 1)
        if "fatal" in reply:
            self._reap()
            raise _LoadFailed(reply["fatal"], int(reply["rc"]), bool(reply.get("raw")))
        return float(reply["ready"])

    def _read(self, timeout: float | None) -> dict | None:
        """The worker's next reply; None if it died; TimeoutError past `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._replies], [], [], left)
            if not ready:
                raise TimeoutError
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)

    def transcribe(self, uid: str, path: str, timeout: float | None) -> dict:
        """The reply for one utterance: text or error; `{"died": why}` if the worker died,
        TimeoutError (worker killed) past `timeout`."""
        try:
            os.write(self._jobs, (json.dumps([uid, path]) + "\n").encode("utf-8"))
        except BrokenPipeError:
            return {"died": self._reap()}
        try:
            reply = self._read(timeout)
        except TimeoutError:
            self.kill()
            raise
        if reply is None:
            return {"died": self._reap()}
        return reply

    def _reap(self) -> str:
        """Wait for the worker; how it ended, in words."""
        if self.pid is None:
            return "already gone"
        for fd in (self._jobs, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if os.WIFSIGNALED(status):
            return f"killed by signal {os.WTERMSIG(status)}"
        return f"exit status {os.WEXITSTATUS(status)}"

    def kill(self) -> None:
        if self.pid is not None:
            os.kill(self.pid, signal.SIGKILL)
            self._reap()

    def close(self) -> None:
        """Let the worker finish (end of the list) and wait for it."""
        if self.pid is not None:
            self._reap()  # closing the job pipe ends the worker's loop


def run(
    model_id: str,
    argv: list[str],
    load: Load,
    transcribe_one: TranscribeOne,
    *,
    fatal: tuple[type[BaseException], ...] = (),
    recycle_rss_mb: float | None = None,
) -> int:
    """The whole program for `<program> <wav_list> <result_dir>`; its exit status.

    `load()` returns the model (exceptions of a `fatal` class, e.g. missing weights, end the run
    with status 2 and the message); `transcribe_one(model, wav_path)` returns `(text,
    audio_seconds)` and raises for an utterance it cannot do (recorded in failed.tsv). With
    `ASRBENCH_UTT_TIMEOUT` or `recycle_rss_mb` the model runs in a worker process (module
    docstring); without them, in this process.
    """
    if len(argv) != 2:
        print(f"usage: {Path(sys.argv[0]).name} <wav_list> <result_dir>", file=sys.stderr)
        return 2
    wav_list, result_dir = argv
    try:
        timeout = utt_timeout()
        todo, n_done = read_todo(wav_list, result_dir)
    except (ValueError, OSError) as exc:  # WavListError included: the file and line
        print(f"{model_id}: {exc}", file=sys.stderr)
        return 2
    hang_id = os.environ.get("ASRBENCH_TEST_HANG_ID") or None
    if not timeout and recycle_rss_mb is None:
        return _run_here(model_id, result_dir, todo, n_done, load, transcribe_one, fatal, hang_id)
    worker = _Worker(load, transcribe_one, fatal, hang_id, recycle_rss_mb is not None)
    try:
        return _run_in_worker(model_id, result_dir, todo, n_done, worker, timeout, recycle_rss_mb)
    except _LoadFailed as exc:
        if str(exc) or not exc.raw:
            print(str(exc) if exc.raw else f"{model_id}: {exc}", file=sys.stderr)
        return exc.rc
    finally:
        worker.kill()


def _loaded(model_id: str, seconds: float, todo: Iterable, n_done: int, where: str) -> None:
    print(
        f"{model_id}: model loaded in {seconds:.2f} s{where}; {len(todo)} utterance(s) to do, "  # type: ignore[arg-type]
        f"{n_done} already done",
        file=sys.stderr,
        flush=True,
    )


def _run_here(
    model_id: str,
    result_dir: str,
    todo: Iterable[tuple[str, str]],
    n_done: int,
    load: Load,
    transcribe_one: TranscribeOne,
    fatal: tuple[type[BaseException], ...],
    hang_id: str | None,
) -> int:
    t0 = now()
    try:
        model = load()
    except fatal as exc:
        print(f"{model_id}: {exc}", file=sys.stderr)
        return 2
    _loaded(model_id, now() - t0, todo, n_done, "")
    with ResultWriter(Path(result_dir), model_id) as out:
        for uid, path in todo:
            try:
                text, seconds, took = _decode(model, transcribe_one, uid, path, hang_id)
            except Exception as exc:  # one bad file must not stop the run: record it
                out.failed(uid, f"{type(exc).__name__}: {exc}")
                continue
            out.ok(uid, text, took, seconds)
    return 0


def _run_in_worker(
    model_id: str,
    result_dir: str,
    todo: Iterable[tuple[str, str]],
    n_done: int,
    worker: _Worker,
    timeout: float,
    recycle_rss_mb: float | None,
) -> int:
    where = (
        f" (worker process; per-utterance timeout {timeout:g} s)"
        if timeout
        else " (worker process)"
    )
    _loaded(model_id, worker.start(), todo, n_done, where)
    with ResultWriter(Path(result_dir), model_id) as out:
        for uid, path in todo:
            if worker.pid is None:  # after a timeout, a death or a recycle: a fresh model
                seconds = worker.start()
                print(
                    f"{model_id}: model loaded again in {seconds:.2f} s",
                    file=sys.stderr,
                    flush=True,
                )
            try:
                reply = worker.transcribe(uid, path, timeout or None)
            except TimeoutError:
                out.failed(uid, f"timeout after {timeout:g} s")
                continue
            if "died" in reply:
                out.failed(uid, f"the model process died on this utterance ({reply['died']})")
            elif "error" in reply:
                out.failed(uid, reply["error"])
            else:
                out.ok(uid, reply["text"], reply["processing_s"], reply["seconds"])
            if recycle_rss_mb is not None and reply.get("rss_mb", 0) > recycle_rss_mb:
                worker.close()  # the model keeps memory it took: start afresh
    worker.close()
    return 0
