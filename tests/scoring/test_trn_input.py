"""sclite's input language, the parts read so far (issue 25 items 2 and 4): `;;` comment lines of
trn files, and IDs that differ from the reference's only in case named as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring import Scorer, ScorerConfig
from scoring.errors import ScoringError
from scoring.io import detect_format, read_transcripts


def test_trn_comments_are_skipped_and_do_not_defeat_detection(tmp_path: Path) -> None:
    path = tmp_path / "ref.txt"  # no .trn suffix: detected from the content
    path.write_text(
        ";; made by hand\n;; second comment\nhello world (spk1-001)\n  ;; indented\n"
        "good bye (spk1-002)\n",
        encoding="utf-8",
    )
    assert detect_format(path) == "trn"
    assert read_transcripts(path) == {"spk1-001": "hello world", "spk1-002": "good bye"}
    assert read_transcripts(path, "trn") == read_transcripts(path)


def test_ids_that_match_only_without_case_are_named(tmp_path: Path) -> None:
    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    with pytest.raises(ScoringError) as err:
        scorer.score({"Utt-1": "a b", "utt-2": "c"}, {"utt-1": "a b", "utt-2": "c"})
    msg = str(err.value)
    assert "only in case" in msg and "'utt-1' vs 'Utt-1'" in msg and "\n" not in msg
    with pytest.raises(ScoringError, match="drop those lines"):
        scorer.score({"a": "x"}, {"b": "x"})
