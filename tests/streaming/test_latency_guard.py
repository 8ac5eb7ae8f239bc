"""The latency guard (issue 39, item 6): a cell whose decoder or feed fell behind real time, or
whose host was busy, says its latencies are not the model's, and why.

Stand-in streaming programs (tests/streaming/fake_program.py) decode nothing: one sleeps after
each chunk for three times the feed's interval between chunks, so it falls behind by
construction (its backlog grows about 2 audio seconds per audio second, twenty times the
rule's 0.1, whatever the machine's load); the other answers at once. The rules are run on the
real feed's records of both; ops/stream is run end to end through the real CLI (local runner).
Only states with large margins are asserted, never a fine timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from asrbench.streaming import feed, guard
from tests.streaming.fake_program import HEAD, stand_in

RATE = 16000
# Reads each chunk, sleeps DELAY seconds per second of its audio, then writes a partial of
# the audio consumed; the final after the end frame.
LOOP = """\
DELAY = {delay!r}
while line := inp.readline():
    uid, consumed, words = json.loads(line)["id"], 0.0, []
    while (n := struct.unpack("<I", inp.read(4))[0]) != 0:
        inp.read(n)
        time.sleep(DELAY * n / 2 / 16000)
        consumed += n / 2 / 16000
        words.append("w")
        emit(id=uid, type="partial", text=" ".join(words), audio_s=consumed)
    emit(id=uid, type="final", text=" ".join(words), audio_s=consumed)
"""
SPEED = 4.0
SLOW = 3.0 / SPEED  # three times the feed's own interval between chunks
QUIET = {
    "load_avg_1m_start": 0.0,
    "load_avg_1m_end": 0.0,
    "cpus": 2,
    "program_sched_cpu_s": 1.0,
    "program_sched_wait_s": 0.0,
    "program_wait_share": 0.0,
}


def _feed(tmp_path: Path, delay: float, seconds: float = 1.5) -> list[feed.FedUtterance]:
    """Two utterances of `seconds` of silence fed at SPEED to the stand-in, 100-ms chunks."""
    prog = tmp_path / "stream.py"
    prog.write_text(HEAD + LOOP.format(delay=delay))
    proc = subprocess.Popen(
        [sys.executable, str(prog)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    reader = feed.Reader(proc.stdout).start()  # type: ignore[arg-type]
    feed.wait_ready(reader, timeout=60)
    pcm = b"\x00\x00" * int(RATE * seconds)
    fed = feed.feed_all(proc.stdin, reader, [("a", pcm), ("b", pcm)], feed.Pace(RATE, 100, SPEED))
    proc.stdin.close()  # type: ignore[union-attr]
    assert proc.wait(timeout=60) == 0
    return fed


def _judge(fed: list[feed.FedUtterance], host: dict) -> dict:
    rows = [{"failed": f.failed, **guard.per_utterance(f, SPEED)} for f in fed]
    return guard.judge(fed, rows, host)


def _rules(g: dict) -> set[str]:
    return {r["rule"] for r in g["reasons"]}


def test_a_decoder_slower_than_the_feed_is_not_the_models_latency(tmp_path: Path) -> None:
    g = _judge(_feed(tmp_path, SLOW), QUIET)
    assert g["attributable"] is False and "decoder_behind" in _rules(g)
    assert g["measured"]["backlog_growth_p50"] > 10 * guard.GROWTH  # ~2 by construction
    assert g["measured"]["utterances_behind"] == g["measured"]["utterances_judged"] == 2
    why = next(r for r in g["reasons"] if r["rule"] == "decoder_behind")
    assert "fell behind" in why["why"] and "--speed" in why["do"]
    assert "decoder_behind" in guard.warning(g)


def test_a_decoder_that_keeps_up_is_judged_attributable_on_a_quiet_host(tmp_path: Path) -> None:
    fed = _feed(tmp_path, 0.0)
    g = _judge(fed, QUIET)
    # the feed's own lateness is host-dependent: assert only the rule with a huge margin,
    # and that the verdict is exactly "no reason fired"
    assert "decoder_behind" not in _rules(g)
    assert g["attributable"] is (not g["reasons"])
    assert g["measured"]["backlog_growth_p50"] < guard.GROWTH
    assert g["thresholds"]["backlog_growth"] == guard.GROWTH and g["unjudged"] == []
    # the same real records, with the feed made late and the host loaded: each rule fires
    late = [replace(f, lateness=[0.2] * len(f.lateness)) for f in fed]
    assert "feed_late" in _rules(_judge(late, QUIET))
    busy = _judge(fed, {**QUIET, "load_avg_1m_end": 40.0})
    assert "host_busy" in _rules(busy) and not busy["attributable"]
    assert busy["measured"]["load_avg_1m_max"] == 40.0
    waited = {**QUIET, "program_sched_wait_s": 3.0, "program_wait_share": 0.75}
    starved = _judge(fed, waited)
    assert _rules(starved) >= {"cpu_starved"} and "3.00 s against 1.00 s" in guard.warning(starved)
    tiny = {**waited, "program_sched_cpu_s": 0.01, "program_sched_wait_s": 0.03}
    assert "cpu_starved" not in _rules(_judge(fed, tiny))  # a near-idle program's share


def test_a_program_without_partials_is_not_judged_by_the_decoder_rule(tmp_path: Path) -> None:
    fed = [
        replace(f, events=[e for e in f.events if e.type == "final"]) for f in _feed(tmp_path, 0.0)
    ]
    g = _judge(fed, QUIET)
    assert "decoder_behind" not in _rules(g)
    assert g["measured"]["utterances_judged"] == 0 and g["unjudged"]


def _stream(cli, tmp_path: Path, name: str, delay: float) -> tuple[int, str, str, dict]:
    folder = stand_in(tmp_path, name, HEAD + LOOP.format(delay=delay))
    results = tmp_path / "results"
    code, out, err = cli(
        "stream", "-m", folder, "-d", "mini_en", "--runner", "local", "--speed", str(SPEED),
        "--max-utts", "1", "--results", results,
    )  # fmt: skip
    (path,) = results.glob(f"streaming/{name}/*/stream.json")
    return code, out, err, json.loads(path.read_text())


def test_ops_stream_warns_when_the_decoder_falls_behind(cli, tmp_path: Path) -> None:
    code, out, err, rec = _stream(cli, tmp_path, "slow_decoder", SLOW)
    assert code == 0, err
    assert rec["format"] == "asrbench-stream-v4"
    g = rec["latency_guard"]
    assert g["attributable"] is False and "decoder_behind" in _rules(g)
    assert g["measured"]["program_cpu_s"] is not None  # the local runner's child is seen
    assert g["measured"]["program_wait_share"] is not None  # its scheduler counts were read
    warned = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "not attributable to the model" in warned[0]
    assert "decoder_behind" in warned[0] and "--speed" in warned[0]
    assert "latency guard: NOT the model's latencies" in out
    (row,) = rec["utterances"]
    assert row["backlog_growth"] > 10 * guard.GROWTH and row["feed_lateness_p90_s"] is not None


def test_ops_stream_says_nothing_against_a_decoder_that_keeps_up(cli, tmp_path: Path) -> None:
    code, out, err, rec = _stream(cli, tmp_path, "fast_decoder", 0.0)
    assert code == 0, err
    g = rec["latency_guard"]
    assert "decoder_behind" not in _rules(g)
    # a loaded test machine may still fire host_busy or feed_late: then it must warn
    assert g["attributable"] is (not g["reasons"])
    assert ("warning:" in err) is (not g["attributable"])
    if g["attributable"]:
        assert "latency guard: latencies attributable to the model" in out


@pytest.mark.parametrize("older", ["asrbench-stream-v1", "asrbench-stream-v2"])
def test_older_stream_records_read_as_not_judged(older: str) -> None:
    from asrbench.results.records import StreamRecord

    new = ("latency_guard", "runs")
    fields = {k: None for k in StreamRecord.__dataclass_fields__ if k not in new}
    rec = StreamRecord.from_dict({"format": older, **fields})
    assert rec.latency_guard is None and guard.warning(rec.latency_guard) is None


def test_v3_stream_records_read_without_runs() -> None:
    """v4 adds the runs that fed a cell (a resumed cell has several: streaming/cache.py)."""
    from asrbench.results.records import StreamRecord

    fields = {k: None for k in StreamRecord.__dataclass_fields__ if k != "runs"}
    rec = StreamRecord.from_dict({**fields, "format": "asrbench-stream-v3"})
    assert rec.runs is None


def _host(load: float, *, ended: bool = True) -> dict:
    """A run's host measures (guard.Host.to_dict); `ended` False: a run killed mid-cell,
    which kept only what its start saw."""
    host = guard.Host("local", cpus=2, load_start=load)
    if ended:
        host.load_end, host.sched = load, (1.0, 0.0)
    return host.to_dict()


def test_a_resumed_cell_is_judged_run_by_run() -> None:
    """A cell fed by two runs (streaming/cache.py): the busy run alone is the reason, named;
    the killed run's unread scheduler counts are unjudged for that run only."""
    one = guard.judge_runs([("a", [], [], _host(0.1))])
    assert one == guard.judge([], [], _host(0.1))  # one run: the guard as it always was
    g = guard.judge_runs([("a", [], [], _host(0.1, ended=False)), ("b", [], [], _host(9.0))])
    assert g["attributable"] is False
    assert [(r["rule"], r["run"]) for r in g["reasons"]] == [("host_busy", "b")]
    assert g["reasons"][0]["why"].startswith("run b: the host was busy")
    assert set(g["measured"]) == {"a", "b"}
    assert "run a: cpu_starved: the program's scheduler counts could not be read" in g["unjudged"]
    assert not any(u.startswith("run b: cpu_starved") for u in g["unjudged"])
    calm = guard.judge_runs([("a", [], [], _host(0.1)), ("b", [], [], _host(0.2))])
    assert calm["attributable"] is True and calm["reasons"] == []
