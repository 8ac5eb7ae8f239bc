"""ops/stream's exit status and its refusals (issue 38, item 5 and the `--capacity` bound).

A streaming program that dies mid-stream, never sends a final or breaks the contract fails
utterances; ops/stream then exits 1 unless they fit the failure budget (`--max-failed`, the
rule of ops/benchmark). A card whose declared secret is not set, and a `--capacity` above its
bound, are refused before any program starts (exit 2, one line naming the variable or flag).
Each stand-in program is written here, under tmp_path, as a model folder with `streaming:`,
and run through the real CLI with the local runner, as a user types `ops/stream`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from asrbench.resolve import resolve_model
from asrbench.runners import RunOptions
from asrbench.streaming import program
from asrbench.streaming.capacity import MAX_STREAMS
from tests.streaming.fake_program import HEAD, stand_in

# Answers utterance 1 fully; on utterance 2 does what BREAK says; answers the rest if alive.
LOOP = """\
BREAK = {how!r}
n_utt = 0
while line := inp.readline():
    uid, n_utt = json.loads(line)["id"], n_utt + 1
    words = []
    while (n := struct.unpack("<I", inp.read(4))[0]) != 0:
        inp.read(n)
        words.append(f"w{{len(words) + 1}}")
        emit(id=uid, type="partial", text=" ".join(words), audio_s=0.1 * len(words))
        if n_utt == 2 and BREAK == "dies" and len(words) == 2:
            sys.exit(5)
    if n_utt == 2 and BREAK == "no_final":
        sys.exit(0)  # output ends with no final for this utterance
    if n_utt == 2 and BREAK == "garbage":
        sys.stdout.buffer.write(b"this is not an event\\n")
        sys.stdout.buffer.flush()
        continue
    emit(id=uid, type="final", text=" ".join(words), audio_s=0.1 * len(words))
"""

# Records that it was started, then stops: what a refusal "before anything runs" must not reach.
STARTS = """\
import pathlib, sys
pathlib.Path({mark!r}).write_text("started")
sys.exit(3)
"""


def _stream(cli, folder: Path, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return cli(
        "stream", "-m", folder, "-d", "mini_en", "--runner", "local", "--speed", "20",
        "--max-utts", "3", "--results", tmp_path / "results", *extra,
    )  # fmt: skip


@pytest.mark.parametrize("how", ["dies", "no_final", "garbage"])
def test_failed_utterances_make_ops_stream_exit_1(cli, tmp_path: Path, how: str) -> None:
    folder = stand_in(tmp_path, f"breaks_{how}", HEAD + LOOP.format(how=how))
    code, out, err = _stream(cli, folder, tmp_path)
    assert code == 1, (out, err)
    assert "2 failed" in out  # the figures are printed and the cell stored all the same
    assert "2 of 3 utterance(s) failed" in err and "--max-failed" in err
    assert "Traceback" not in err
    cells = list((tmp_path / "results" / "streaming" / f"breaks_{how}").iterdir())
    assert len(cells) == 1 and (cells[0] / "summary.json").is_file()


def test_failures_within_the_budget_exit_0_and_above_it_exit_1(cli, tmp_path: Path) -> None:
    folder = stand_in(tmp_path, "breaks_dies", HEAD + LOOP.format(how="dies"))
    # a cache each: a rerun would resume from the first utterance kept (streaming/cache.py),
    # and the stand-in breaks on the second utterance it is fed
    budgets = {"2": 0, "70%": 0, "50%": 1}
    for k, (budget, code) in enumerate(budgets.items()):
        cache = tmp_path / f"cache-{k}"
        assert _stream(cli, folder, tmp_path, "--max-failed", budget, "--cache", cache)[0] == code


def test_a_bad_failure_budget_is_refused_before_anything_runs(cli, tmp_path: Path) -> None:
    mark = tmp_path / "started"
    folder = stand_in(tmp_path, "starts", STARTS.format(mark=str(mark)))
    code, _, err = _stream(cli, folder, tmp_path, "--max-failed", "some")
    assert code == 2 and "--max-failed 'some'" in err
    assert not mark.exists()


def test_a_card_whose_declared_secret_is_unset_is_refused_before_it_starts(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASRBENCH_R38_TOKEN", raising=False)
    mark = tmp_path / "started"
    folder = stand_in(tmp_path, "needs_key", STARTS.format(mark=str(mark)), "ASRBENCH_R38_TOKEN")
    code, out, err = _stream(cli, folder, tmp_path)
    assert code == 2, (out, err)
    assert "ASRBENCH_R38_TOKEN is not set" in err and len(err.strip().splitlines()) == 1
    assert not mark.exists()  # never started, so it never tried to connect
    assert not (tmp_path / "results").exists()


def test_capacity_above_its_bound_is_refused_before_any_stream_starts(cli, tmp_path: Path) -> None:
    mark = tmp_path / "started"
    folder = stand_in(tmp_path, "starts", STARTS.format(mark=str(mark)))
    code, _, err = _stream(cli, folder, tmp_path, "--capacity", str(MAX_STREAMS + 1))
    assert code == 2, err
    assert f"--capacity {MAX_STREAMS + 1}" in err and f"1 to {MAX_STREAMS}" in err
    assert not mark.exists()


def test_the_docker_stream_passes_the_declared_secret_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--runner docker`: the container gets the card's secret (as the batch runner passes it),
    named on the command line, its value taken by `docker run` from its environment."""
    value = "dg-r38-0123456789abcdef"
    monkeypatch.setenv("DEEPGRAM_API_KEY", value)
    model = resolve_model("deepgram_en")
    options = RunOptions(env={"DEEPGRAM_BASE_URL": "http://127.0.0.1:8000"})
    cmd = program.docker_command(model, "asrbench/deepgram_en:tag", "name", options)
    assert cmd[cmd.index("DEEPGRAM_API_KEY") - 1] == "-e"
    assert cmd[cmd.index("DEEPGRAM_BASE_URL=http://127.0.0.1:8000") - 1] == "-e"
    assert not any(value in arg for arg in cmd)
    monkeypatch.delenv("DEEPGRAM_API_KEY")
    assert "DEEPGRAM_API_KEY" not in program.docker_command(model, "t", "name", RunOptions())
