"""An utterance the program dies on, mid-stream: what it received so far is stored.

A tiny streaming program (written here, under tmp_path, as a model folder with `streaming:`)
runs through the real local runner and `stream_cell`, as `ops/stream --runner local` runs it.
It answers the first utterance fully, then exits after two partials of the second: the
partials of the second stay in events.jsonl, marked failed with the reason, and the third is
marked not fed; nothing is scored from the failed ones.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.results.records import read_stream
from asrbench.results.summary import read_summary
from asrbench.streaming.run import StreamSpec, stream_cell
from tests.streaming.fake_program import HEAD, stand_in

DIES_AFTER = 2  # partials of the second utterance before the program exits

PROGRAM = HEAD + textwrap.dedent(f"""\
    n_utt = 0
    while line := inp.readline():
        head = json.loads(line)
        uid, rate, n_utt = head["id"], head["sample_rate"], n_utt + 1
        samples, words = 0, []
        while (n := struct.unpack("<I", inp.read(4))[0]) != 0:
            samples += len(inp.read(n)) // 2
            words.append(f"w{{len(words) + 1}}")
            emit(id=uid, type="partial", text=" ".join(words), audio_s=samples / rate)
            if n_utt == 2 and len(words) == {DIES_AFTER}:
                print("dying mid-utterance", file=sys.stderr)
                sys.exit(5)
        emit(id=uid, type="final", text=" ".join(words), audio_s=samples / rate)
    """)


def test_partials_of_an_utterance_the_program_died_on_are_kept(tmp_path: Path) -> None:
    spec = StreamSpec("local", 100, 20.0, 3, 0, tmp_path / "results", 50)
    res = stream_cell(
        resolve_model(stand_in(tmp_path, "dies_midway", PROGRAM)), resolve_dataset("mini_en"), spec
    )
    lines = [json.loads(x) for x in (res.folder / "events.jsonl").read_text().splitlines()]
    first, died, rest = lines
    assert first["failed"] is None and first["events"][-1]["type"] == "final"
    assert died["failed"].startswith("stream broke on this utterance: ")
    # whichever the feed met first: the program's end of output, or its stdin closed
    assert "ended its output" in died["failed"] or "stdin closed" in died["failed"]
    # what it sent before dying is kept: its partials, in order, with its ID and clocks
    assert [e["type"] for e in died["events"]] == ["partial"] * DIES_AFTER
    assert [e["text"] for e in died["events"]] == ["w1", "w1 w2"]
    assert {e["id"] for e in died["events"]} == {died["id"]}
    assert len(died["sends"]) >= DIES_AFTER and died["t0"] > 0
    assert all(e["mono_recv"] >= died["t0"] for e in died["events"])
    assert rest["failed"].startswith("not fed") and rest["events"] == []
    summary, record = (
        read_summary(res.folder / "summary.json"),
        read_stream(res.folder / "stream.json"),
    )
    assert sorted(f["id"] for f in summary.failed) == sorted([died["id"], rest["id"]])
    assert record.n_failed == 2 and record.pooled["eos_final_s"]["n"] == 1
    row = next(r for r in record.utterances if r["id"] == died["id"])
    assert row["failed"] == died["failed"] and row["n_partials"] == DIES_AFTER
    assert "dying mid-utterance" in (res.folder / "stream.log").read_text()
