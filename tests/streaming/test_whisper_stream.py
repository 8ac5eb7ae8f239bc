"""Whisper tiny.en streamed through Docker by the LocalAgreement-2 policy
(models/_common/whisper_stream.py): `ops/stream` on 2 mini_en utterances, the events the
program wrote, the finals scored, and the cell's stream.json."""

from __future__ import annotations

import json

from asrbench.images import engine_available
from asrbench.results.summary import read_summary
from asrbench.streaming.record import read_stream
from tests.conftest import require


def test_whisper_tiny_en_streams_two_utterances_through_docker(cli, tmp_path):
    require("docker", engine_available(), "no Docker Engine answers")
    code, out, err = cli(
        "stream", "-m", "whisper_tiny_en", "-d", "mini_en", "--max-utts", "2", "--speed", "2",
        "--results", tmp_path,
    )  # fmt: skip
    assert code == 0, err
    (cell,) = (tmp_path / "streaming" / "whisper_tiny_en").iterdir()
    summary, record = read_summary(cell / "summary.json"), read_stream(cell / "stream.json")
    assert summary.producer == "stream" and summary.n_failed == 0
    assert record.model == "whisper_tiny_en" and record.result_key == summary.result_key
    # The finals were scored: Whisper tiny.en gets most words of these two right.
    assert summary.metrics is not None and summary.metrics.n_hyp > 0
    assert summary.metrics.ter is not None and summary.metrics.ter < 0.5
    utts = [json.loads(line) for line in (cell / "events.jsonl").read_text().splitlines()]
    assert len(utts) == 2
    for utt in utts:
        events = utt["events"]
        partials, final = events[:-1], events[-1]
        assert final["type"] == "final" and final["text"]
        assert all(e["type"] == "partial" and e["text"] for e in partials)
        assert final["audio_s"] == utt["audio_s"]  # every sample was consumed
        assert [e["audio_s"] for e in events] == sorted(e["audio_s"] for e in events)
        if utt["audio_s"] >= 2.0:  # a decode every second of audio: a partial before the end
            assert partials and partials[0]["audio_s"] >= 1.0
    assert "LocalAgreement-2" in (cell / "stream.log").read_text()
