"""PocketSphinx's incremental decoder through Docker: `ops/stream` on 2 mini_en utterances at
4x real time, the cell it stores, and a card without a streaming program refused."""

from __future__ import annotations

import json

from asrbench.images import engine_available
from asrbench.results.summary import read_summary
from asrbench.streaming.record import read_stream
from tests.conftest import require


def test_pocketsphinx_streams_two_utterances_through_docker(cli, tmp_path):
    require("docker", engine_available(), "no Docker Engine answers")
    code, out, err = cli(
        "stream", "-m", "pocketsphinx_en", "-d", "mini_en", "--max-utts", "2", "--speed", "4",
        "--results", tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert "final WER" in out and "overhead per event" in out
    (cell,) = (tmp_path / "streaming" / "pocketsphinx_en").iterdir()
    assert cell.name.startswith("mini_en~100ms-x4-sample-2-")
    summary, record = read_summary(cell / "summary.json"), read_stream(cell / "stream.json")
    assert summary.producer == "stream" and summary.runner == "docker"
    assert summary.selection.n_utts == 2 and summary.n_failed == 0
    assert record.result_key == summary.result_key and record.speed == 4.0
    assert summary.metrics is not None and summary.metrics.n_hyp > 0  # the finals were scored
    for line in (cell / "events.jsonl").read_text().splitlines():
        utt = json.loads(line)
        events = utt["events"]
        assert events[-1]["type"] == "final" and events[-1]["text"]
        assert events[-1]["audio_s"] == utt["audio_s"]  # every sample was consumed
        clock = [e["audio_s"] for e in events]
        assert clock == sorted(clock)
        assert [e["mono_recv"] for e in events] == sorted(e["mono_recv"] for e in events)
        assert all(e["t_program"] is not None for e in events)
    assert record.pooled["first_partial_s"]["n"] == 2
    assert record.pacing["lateness_s"]["n"] == sum(
        len(json.loads(x)["sends"]) for x in (cell / "events.jsonl").read_text().splitlines()
    )


def test_a_model_without_a_streaming_program_is_refused(cli, tmp_path):
    code, _, err = cli("stream", "-m", "revai_en", "-d", "mini_en", "--results", tmp_path)
    assert code != 0 and "no `streaming:` program" in err
    assert not (tmp_path / "streaming").exists()
