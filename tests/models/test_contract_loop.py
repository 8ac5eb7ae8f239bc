"""The shared loop of local model programs (`models/_common/contract.py` `run`), driven by a tiny
real program: resume, failures, the per-utterance timeout cutting a hang in native code, a worker
that dies, memory recycling, load errors and the streamed (named-pipe) wav list."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT

COMMON = REPO_ROOT / "models" / "_common"

# The 'audio' of an utterance is a text file holding what it says, or what to do: `hang` blocks
# in C (a self-deadlocked pthread mutex: no Python signal can end it), `die` kills the process
# it runs in, `bad` raises. Each text carries the PID of the process that loaded the model.
PROGRAM = f"""
import ctypes, os, sys
sys.path.insert(0, {str(COMMON)!r})
from contract import run

def load():
    if os.environ.get("TINY_LOAD_FAIL"):
        raise LookupError("weights missing: put them in /nowhere")
    return os.getpid()

def transcribe_one(pid, path):
    what = open(path).read().strip()
    if what == "hang":
        libc = ctypes.CDLL(None)
        mutex = ctypes.create_string_buffer(64)
        libc.pthread_mutex_lock(mutex)
        libc.pthread_mutex_lock(mutex)
    if what == "die":
        os.kill(os.getpid(), 9)
    if what == "bad":
        raise ValueError("unreadable audio")
    if os.environ.get("TINY_PROGRESS"):
        with open(os.environ["TINY_PROGRESS"], "w") as f:
            f.write(path + "\\n")
    return f"{{what}}\\tpid {{pid}}", 1.5

if __name__ == "__main__":
    recycle = os.environ.get("TINY_RECYCLE_MB")
    sys.exit(run("tiny", sys.argv[1:], load, transcribe_one, fatal=(LookupError,),
                 recycle_rss_mb=float(recycle) if recycle else None))
"""
TIMEOUT = "5"  # seconds; the normal utterances take milliseconds


@pytest.fixture
def tiny(tmp_path: Path):
    """A program and a way to run it on utterances `{ID: what}`: (rc, stderr, results)."""
    program = tmp_path / "tiny.py"
    program.write_text(PROGRAM)
    out = tmp_path / "out"

    def wav_list(utts: dict[str, str]) -> Path:
        lines = []
        for uid, what in utts.items():
            audio = tmp_path / f"{uid}.txt"
            audio.write_text(what)
            lines.append(f"{uid}\t{audio}\n")
        path = tmp_path / "wav.lst"
        path.write_text("".join(lines))
        return path

    def run(utts: dict[str, str], **env: str) -> tuple[int, str, dict[str, dict[str, str]]]:
        proc = subprocess.run(
            [sys.executable, str(program), str(wav_list(utts)), str(out)],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        return proc.returncode, proc.stderr, results(out)

    run.program, run.out, run.wav_list = program, out, wav_list  # type: ignore[attr-defined]
    return run


def results(out: Path) -> dict[str, dict[str, str]]:
    """Each result file as {ID: rest of the line}."""
    got = {}
    for name in ("hyp", "timing", "failed"):
        path = out / f"{name}.tsv"
        lines = path.read_text().splitlines() if path.exists() else []
        got[name] = dict(line.split("\t", 1) for line in lines)
    return got


def pid_of(text: str) -> int:
    return int(text.rsplit(" ", 1)[1])


def test_in_process_without_a_timeout_with_failures_and_the_result_files(tiny):
    rc, err, got = tiny({"a": "alpha", "b": "bad", "c": "gamma"})
    assert rc == 0, err
    # Without ASRBENCH_UTT_TIMEOUT nothing forks: the model is the program's own process,
    # tabs in a hypothesis become spaces.
    assert got["hyp"]["a"].startswith("alpha pid ") and got["hyp"]["c"].startswith("gamma pid ")
    assert pid_of(got["hyp"]["a"]) == pid_of(got["hyp"]["c"])
    assert got["failed"] == {"b": "ValueError: unreadable audio"}
    assert set(got["timing"]) == {"a", "c"}
    assert [float(x) for x in got["timing"]["a"].split("\t")][1] == 1.5


def test_resume_skips_done_ids_and_drops_a_torn_line(tiny):
    tiny.out.mkdir()
    (tiny.out / "hyp.tsv").write_text("a\tkept\nb\tto")  # b torn by a crash
    (tiny.out / "failed.tsv").write_text("c\tearlier failure\n")
    rc, err, got = tiny({"a": "alpha", "b": "beta", "c": "gamma", "d": "delta"})
    assert rc == 0, err
    assert "2 utterance(s) to do, 2 already done" in err
    assert got["hyp"]["a"] == "kept" and got["hyp"]["b"].startswith("beta ")
    assert got["hyp"]["d"].startswith("delta ")
    assert got["failed"] == {"c": "earlier failure"}
    assert (tiny.out / "hyp.tsv").read_text().count("\n") == 3


def test_timeout_cuts_a_hang_in_native_code_and_the_rest_is_transcribed(tiny):
    rc, err, got = tiny(
        {"a": "alpha", "h": "hang", "b": "bad", "c": "gamma"}, ASRBENCH_UTT_TIMEOUT=TIMEOUT
    )
    assert rc == 0, err
    assert got["failed"] == {"h": f"timeout after {TIMEOUT} s", "b": "ValueError: unreadable audio"}
    assert set(got["hyp"]) == {"a", "c"}
    # The model ran in a worker, killed with the hang: a fresh one (loaded again) did `c`.
    assert pid_of(got["hyp"]["a"]) != pid_of(got["hyp"]["c"])
    assert "model loaded again" in err


def test_the_test_hook_hangs_a_chosen_utterance_in_native_code(tiny):
    rc, err, got = tiny(
        {"a": "alpha", "b": "beta"}, ASRBENCH_UTT_TIMEOUT=TIMEOUT, ASRBENCH_TEST_HANG_ID="a"
    )
    assert rc == 0, err
    assert got["failed"] == {"a": f"timeout after {TIMEOUT} s"}
    assert set(got["hyp"]) == {"b"}


def test_a_worker_that_dies_fails_its_utterance_only(tiny):
    rc, err, got = tiny({"a": "alpha", "d": "die", "c": "gamma"}, ASRBENCH_UTT_TIMEOUT="600")
    assert rc == 0, err
    assert got["failed"] == {"d": "the model process died on this utterance (killed by signal 9)"}
    assert set(got["hyp"]) == {"a", "c"}


def test_recycling_replaces_the_worker_after_each_utterance_over_the_memory_limit(tiny):
    rc, err, got = tiny({"a": "alpha", "b": "beta", "c": "gamma"}, TINY_RECYCLE_MB="0")
    assert rc == 0, err
    assert len({pid_of(t) for t in got["hyp"].values()}) == 3


@pytest.mark.parametrize("timeout", ["", TIMEOUT])
def test_a_load_error_is_one_line_with_status_2(tiny, timeout):
    rc, err, got = tiny({"a": "alpha"}, TINY_LOAD_FAIL="1", ASRBENCH_UTT_TIMEOUT=timeout)
    assert rc == 2
    assert err.strip().splitlines()[-1] == "tiny: weights missing: put them in /nowhere"
    assert got["hyp"] == {}


@pytest.mark.parametrize("value", ["soon", "-1", "inf"])
def test_a_bad_timeout_value_is_one_line_with_status_2(tiny, value):
    rc, err, _ = tiny({"a": "alpha"}, ASRBENCH_UTT_TIMEOUT=value)
    assert rc == 2
    assert err.strip() == (
        f"tiny: ASRBENCH_UTT_TIMEOUT={value!r}: expected a number of seconds >= 0"
    )


def test_a_missing_wav_list_is_one_line_with_status_2(tiny, tmp_path):
    proc = subprocess.run(
        [sys.executable, str(tiny.program), str(tmp_path / "nope.lst"), str(tiny.out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "nope.lst" in proc.stderr


@pytest.mark.parametrize("timeout", ["", TIMEOUT], ids=["in-process", "worker"])
def test_streamed_wav_list_is_transcribed_line_by_line(tiny, tmp_path, timeout):
    """A named-pipe wav list (`ops/serve`): each utterance is done as its line arrives, before
    the next is written; with a timeout, a hang on one is cut and the stream goes on."""
    fifo, progress = tmp_path / "wav.fifo", tmp_path / "progress.fifo"
    os.mkfifo(fifo)
    os.mkfifo(progress)
    heard = os.open(progress, os.O_RDWR | os.O_NONBLOCK)  # always a writer: no EOF
    audio = {}
    for uid, what in {"a": "alpha", "h": "hang", "b": "beta"}.items():
        audio[uid] = tmp_path / f"{uid}.txt"
        audio[uid].write_text(what)
    proc = subprocess.Popen(
        [sys.executable, str(tiny.program), str(fifo), str(tiny.out)],
        env={**os.environ, "TINY_PROGRESS": str(progress), "ASRBENCH_UTT_TIMEOUT": timeout},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def next_done() -> str:
            ready, _, _ = select.select([heard], [], [], 120)
            assert ready, "the program did not transcribe the line it was sent"
            return os.read(heard, 4096).decode().strip()

        with open(fifo, "w") as lines:
            lines.write(f"a\t{audio['a']}\n")
            lines.flush()
            assert next_done() == str(audio["a"])  # done while the pipe is still open
            if timeout:
                lines.write(f"h\t{audio['h']}\n")
            lines.write(f"b\t{audio['b']}\n")
            lines.flush()
            assert next_done() == str(audio["b"])
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
        os.close(heard)
    got = results(tiny.out)
    assert set(got["hyp"]) == {"a", "b"}
    assert got["failed"] == ({"h": f"timeout after {timeout} s"} if timeout else {})
