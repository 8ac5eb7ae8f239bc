"""Timed formats (scoring.timed): round trips of STM, CTM, SegLST and RTTM, and every bad input
of issue 29's Must-show rejected with the file and line named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.longform.segments import write_timed
from scoring.errors import ScoringError
from scoring.segments import Segment, TimedWord
from scoring.timed import (
    read_ctm,
    read_rttm,
    read_seglst,
    read_stm,
    read_timed,
    validate_segments,
)

SEGMENTS = [
    Segment("meet1", "A", 0.0, 2.5, "hello there"),
    Segment("meet1", "B", 2.25, 4.125, "hi how are you"),
    Segment("meet1", "A", 4.125, 7.0, "fine thanks é naïve"),
    Segment("meet2", "C", 0.5, 1.5, "", label="<o,f0,male>"),
    Segment("meet2", "C", 1.5, 3.0, "(uh) {yes / yeah} okay", channel="2"),
]
WORDS = [
    TimedWord("meet1", 0.1, 0.4, "hello", confidence=0.9),
    TimedWord("meet1", 0.6, 0.5, "there"),
    TimedWord("meet1", 2.3, 0.25, "hi", confidence=1.0),
    TimedWord("meet2", 0.5, 0.0, "yes", channel="2"),
]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_stm_round_trip_keeps_labels_channels_and_words(tmp_path: Path) -> None:
    path = tmp_path / "ref.stm"
    write_timed(path, SEGMENTS, "stm")
    back = read_stm(path)
    assert back == SEGMENTS
    assert [s.line for s in back] == [1, 2, 3, 4, 5]
    assert path.read_text().splitlines()[3] == "meet2 1 C 0.5 1.5 <o,f0,male>"


def test_stm_reader_skips_comments_and_keeps_words_verbatim(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "x.stm",
        ';; CATEGORY "0" "" ""\n\nrec 1 spk 1.00 2.0 <o> IGNORE_TIME_SEGMENT_IN_SCORING\n'
        "rec A spk2 3 4.5 {a / an} apple\n",
    )
    first, second = read_stm(path)
    assert (first.label, first.words, first.line) == ("<o>", "IGNORE_TIME_SEGMENT_IN_SCORING", 3)
    assert (second.channel, second.label, second.words) == ("A", "", "{a / an} apple")


def test_ctm_round_trip_keeps_confidence_where_given(tmp_path: Path) -> None:
    path = tmp_path / "hyp.ctm"
    write_timed(path, WORDS, "ctm")
    back = read_ctm(path)
    assert back == WORDS
    assert [w.line for w in back] == [1, 2, 3, 4]
    assert path.read_text().splitlines()[1] == "meet1 1 0.6 0.5 there"


def test_ctm_na_confidence_reads_as_none(tmp_path: Path) -> None:
    path = _write(tmp_path, "h.ctm", ";; comment\nrec 1 0.5 0.2 word NA\n")
    assert read_ctm(path) == [TimedWord("rec", 0.5, 0.2, "word")]


def test_seglst_round_trip_and_meeteval_layout(tmp_path: Path) -> None:
    path = tmp_path / "ref.seglst.json"
    write_timed(path, SEGMENTS, "seglst")
    back = read_seglst(path)
    assert [
        (s.session_id, s.speaker, s.start_time, s.end_time, s.words, s.channel) for s in back
    ] == [(s.session_id, s.speaker, s.start_time, s.end_time, s.words, s.channel) for s in SEGMENTS]
    data = json.loads(path.read_text())
    assert set(data[0]) == {"session_id", "speaker", "start_time", "end_time", "words"}
    assert [s.line for s in back] == [2, 3, 4, 5, 6]  # one object per line after `[`


def test_seglst_reads_chime_style_strings_and_pretty_printed_lines(tmp_path: Path) -> None:
    entries = [
        {
            "session_id": "S02",
            "speaker": "P05",
            "start_time": "1.25",
            "end_time": "2.5",
            "words": "a b",
        },
        {"session_id": "S02", "start_time": 3, "end_time": 4, "words": "c", "ref_device": "U01"},
    ]
    path = _write(tmp_path, "c.json", json.dumps(entries, indent=2))
    first, second = read_seglst(path)
    assert (first.start_time, first.end_time, first.line) == (1.25, 2.5, 2)
    assert (second.speaker, second.line) == ("", 9)


def test_rttm_round_trip_without_words(tmp_path: Path) -> None:
    turns = [
        Segment(s.session_id, s.speaker, s.start_time, s.end_time, "", s.channel) for s in SEGMENTS
    ]
    path = tmp_path / "spk.rttm"
    write_timed(path, turns, "rttm")
    assert read_rttm(path) == turns
    assert path.read_text().splitlines()[0] == "SPEAKER meet1 1 0 2.5 <NA> <NA> A <NA> <NA>"


def test_rttm_skips_other_line_types_and_sums_times_cleanly(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "d.rttm",
        "SPKR-INFO rec 1 <NA> <NA> <NA> unknown A <NA>\n"
        "SPEAKER rec 1 1.1 1.2 <NA> <NA> A <NA> <NA>\n",
    )
    (turn,) = read_rttm(path)
    assert (turn.start_time, turn.end_time, turn.line) == (1.1, 2.3, 2)


def test_read_and_write_timed_by_extension(tmp_path: Path) -> None:
    for name, items in (("a.stm", SEGMENTS), ("a.ctm", WORDS), ("a.seglst.json", SEGMENTS)):
        write_timed(tmp_path / name, items)
        assert read_timed(tmp_path / name) == items
    write_timed(tmp_path / "t.txt", SEGMENTS, fmt="stm")
    assert read_timed(tmp_path / "t.txt", fmt="stm") == SEGMENTS
    with pytest.raises(ScoringError, match=r"t\.txt: cannot tell the timed format"):
        read_timed(tmp_path / "t.txt")


def test_writers_are_atomic_and_refuse_fields_the_format_cannot_carry(tmp_path: Path) -> None:
    path = tmp_path / "r.stm"
    write_timed(path, SEGMENTS[:1], "stm")
    with pytest.raises(ScoringError, match=r"speaker 'Ann Lee'.*whitespace"):
        write_timed(path, [Segment("m", "Ann Lee", 0, 1, "x")], "stm")
    assert read_stm(path) == SEGMENTS[:1]  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["r.stm"]  # no temp file left behind


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("name", "text", "pattern"),
    [
        ("neg.stm", "rec 1 A 2.0 1.0 words\n", r"neg\.stm:1: segment ends at 1 s before it starts"),
        ("neg2.stm", ";; c\nrec 1 A -1 1.0 words\n", r"neg2\.stm:2: negative start time"),
        ("short.stm", "rec 1 A 2.0\n", r"short\.stm:1: an STM line needs"),
        ("nan.stm", "rec 1 A x 2 w\n", r"nan\.stm:1: start time 'x' is not a number"),
        ("neg.ctm", "rec 1 0.5 -0.2 w\n", r"neg\.ctm:1: negative duration -0\.2"),
        ("few.ctm", "rec 1 0.5 w\n", r"few\.ctm:1: a CTM line needs"),
        ("conf.ctm", "rec 1 0.5 0.1 w high\n", r"conf\.ctm:1: confidence 'high'"),
        (
            "unsorted.ctm",
            "rec 1 0.5 0.1 a\nrec 1 1.5 0.1 b\nrec 1 1.0 0.1 c\n",
            r"unsorted\.ctm:3: CTM times out of order: 'c' starts at 1 s, before 'b' at 1\.5 s "
            r"\(line 2\).*sort",
        ),
        (
            "neg.rttm",
            "SPEAKER rec 1 0.5 -1 <NA> <NA> A <NA> <NA>\n",
            r"neg\.rttm:1: negative duration",
        ),
        ("few.rttm", "SPEAKER rec 1 0.5 1\n", r"few\.rttm:1: an RTTM SPEAKER line needs"),
        ("bad.json", '[\n{"session_id": "a",\n "words": }\n]', r"bad\.json:3: not valid JSON"),
        ("obj.json", '{"session_id": "a"}', r"obj\.json:1: SegLST is a JSON list"),
        (
            "miss.json",
            '[\n{"session_id": "a", "start_time": 0, "end_time": 1, "words": "x"},\n'
            '{"session_id": "a"}\n]',
            r"miss\.json:3: SegLST entry lacks start_time, end_time, words",
        ),
        (
            "negdur.json",
            '[{"session_id": "a", "start_time": 3, "end_time": 1, "words": "x"}]',
            r"negdur\.json:1: segment ends at 1 s before it starts at 3 s \(negative duration\)",
        ),
        ("utf.stm", None, r"utf\.stm:2: not valid UTF-8"),
    ],
)
def test_readers_name_file_and_line(
    tmp_path: Path, name: str, text: str | None, pattern: str
) -> None:
    path = tmp_path / name
    if text is None:
        path.write_bytes(b"rec 1 A 0 1 ok\nrec 1 A 1 2 caf\xe9\n")
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ScoringError, match=pattern):
        read_timed(path)


def _stm(tmp_path: Path, text: str) -> list[Segment]:
    return read_stm(_write(tmp_path, "ref.stm", text))


def test_validate_accepts_cross_speaker_overlap_and_touching_turns(tmp_path: Path) -> None:
    segs = _stm(tmp_path, "m 1 A 0 2 a\nm 1 B 1 3 b\nm 1 A 2 4 c\n")
    validate_segments(
        segs, durations={"m": 4.0}, source="ref.stm", speakers={"A", "B"}, require_words=True
    )


@pytest.mark.parametrize(
    ("text", "kwargs", "pattern"),
    [
        (
            "m 1 A 0 2 a\nm 1 A 3 9.5 b\n",
            {"durations": {"m": 9.0}},
            r"ref\.stm:2: segment ends at 9\.5 s, past the end of the audio of 'm' \(9 s\)",
        ),
        ("m 1 A 0 2 a\n", {"durations": {"x": 9.0}}, r"ref\.stm:1: session 'm' is not a recording"),
        (
            "m 1 A 0 2 a\nm 1 B 0.5 1 b\nm 1 A 1.5 3 c\n",
            {},
            r"ref\.stm:3: speaker 'A' of session 'm' overlaps itself: starts at 1\.5 s, before "
            r"the previous segment ends at 2 s \(line 1\)",
        ),
        ("m 1 A 5 6 a\nm 1 A 1 2 b\n", {}, r"ref\.stm:2: segments out of order"),
        (
            "m 1 A 0 2 a\nm 1 C 2 3 b\n",
            {"speakers": {"A", "B"}},
            r"ref\.stm:2: unknown speaker 'C' in session 'm' \(known: A, B\)",
        ),
        (
            "m 1 A 0 2 a\nn 1 A 0 2\nn 1 B 2 3 <o>\n",
            {"require_words": True},
            r"ref\.stm:2: session 'n' has no reference words",
        ),
        (
            "m 1 A 0 2 a\n",
            {"require_words": True, "durations": {"m": 2, "silent": 5}},
            r"^ref\.stm: session 'silent' has no reference words",
        ),
    ],
)
def test_validate_names_file_and_line_of_first_bad_segment(
    tmp_path: Path, text: str, kwargs: dict, pattern: str
) -> None:
    segs = _stm(tmp_path, text)
    with pytest.raises(ScoringError, match=pattern):
        validate_segments(segs, source="ref.stm", **kwargs)


def test_validate_without_lines_names_the_position() -> None:
    segs = [Segment("m", "A", 0, 1, "a"), Segment("m", "A", 2, 1, "b")]
    with pytest.raises(ScoringError, match=r"^hyp: segment 2: segment ends at 1 s before"):
        validate_segments(segs, source="hyp")


def test_validate_tolerance_allows_rounding_at_the_end_of_the_audio() -> None:
    segs = [Segment("m", "A", 0, 10.004, "a")]
    validate_segments(segs, durations={"m": 10.0}, tolerance=0.01)
    with pytest.raises(ScoringError, match="past the end"):
        validate_segments(segs, durations={"m": 10.0})
