"""asrbench/results/timed.py: a hyp.timed.jsonl record read as the one data model of timed
transcripts (scoring.segments), as the report's timeline and any export read it."""

from __future__ import annotations

import json
from pathlib import Path

from asrbench.results.timed import TIMED_FILE, as_transcript, read_hyp_timed, write_hyp_timed
from scoring.segments import Segment, TimedWord


def test_a_record_reads_as_segments_and_timed_words(tmp_path: Path) -> None:
    line = {
        "id": "rec1",
        "segments": [
            {"start": 0, "end": 2.5, "text": "hello there"},
            {"start": 3, "end": 3, "text": ""},
        ],
        "words": [{"start": 0.25, "end": 0.75, "word": "hello"}],
    }
    (tmp_path / TIMED_FILE).write_text(json.dumps(line) + "\n")
    timed, problems = read_hyp_timed(tmp_path / TIMED_FILE)
    segments, words = as_transcript(timed["rec1"], "rec1")
    assert problems == [] and segments == [
        Segment("rec1", "", 0.0, 2.5, "hello there"),
        Segment("rec1", "", 3.0, 3.0, ""),
    ]
    assert words == [TimedWord("rec1", 0.25, 0.5, "hello")] and words[0].end_time == 0.75
    write_hyp_timed(tmp_path / "again.jsonl", timed)  # the record itself is written unchanged
    assert read_hyp_timed(tmp_path / "again.jsonl")[0] == timed
