"""Timed transcript formats: STM, CTM, SegLST and RTTM, read into and written from
`scoring.segments` (`Segment`, `TimedWord`), plus `validate_segments`.

- STM (sclite reference): `file channel speaker start end [<label>] words`; `;;` comments.
  Words are kept verbatim (alternations are the scorer's); `is_ignored` is the one rule for
  `IGNORE_TIME_SEGMENT_IN_SCORING` segments, for the scorer and the TED-LIUM importer alike.
- CTM (sclite hypothesis): `file channel start duration word [confidence]`; `;;` comments. Within
  a (file, channel) the start times must not decrease, as sclite requires. sclite's alternation
  lines (`file channel * * <ALT_BEGIN>`, `<ALT>`, `<ALT_END>` around the branches' words) read
  as one `CtmAlternation`, whose word is the alternation's text `{ a b / c }`.
- SegLST (MeetEval, CHiME): a JSON list of `{session_id, speaker, start_time, end_time, words}`.
- RTTM (speaker turns): `SPEAKER file channel start duration <NA> <NA> speaker <NA> <NA>`; the
  other line types of the specification are skipped, an unknown one refused; the segments
  carry no words.

Every reader checks each entry where it stands (fields present, times numbers, `start >= 0`,
`end >= start`) and raises `ScoringError` as `FILE:LINE: what is wrong; what to do`. The
dataset-level checks (inside the audio, sorted, overlaps only across speakers, known speakers,
sessions with words) are `validate_segments`, which names the same file and line. The `*_text`
functions give a file's text; the scorer writes no files (`asrbench.longform.segments.write_timed`
writes them atomically).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.errors import ScoringError
from scoring.io import _lines
from scoring.segments import Segment, TimedWord

TIMED_FORMATS = ("stm", "ctm", "seglst", "rttm")
_EPS = 1e-9  # float noise allowed where two times must not cross (a touching turn is fine)
_NA = ("<NA>", "NA", "-")


# ----------------------------------------------------------------------------- helpers


def _where(source: str | Path, line: int) -> str:
    name = str(source) or "segments"
    return f"{name}:{line}" if line else name


def _time(value: str, what: str, where: str) -> float:
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise ScoringError(f"{where}: {what} {value!r} is not a number of seconds") from None
    if not math.isfinite(t):
        raise ScoringError(f"{where}: {what} {value!r} is not a finite number of seconds")
    if t < 0:
        raise ScoringError(f"{where}: negative {what} {value}; times and durations are 0 or more")
    return t


def _span(start: float, end: float, where: str) -> None:
    if end < start:
        raise ScoringError(
            f"{where}: segment ends at {end:g} s before it starts at {start:g} s "
            f"(negative duration); fix the times"
        )


def fmt_time(t: float) -> str:
    """Seconds as written by every writer: up to 6 decimals, no trailing zeros (`12.5`, `3`)."""
    text = f"{t:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _token(value: str, what: str, where: str) -> str:
    if not value or any(c.isspace() for c in value):
        raise ScoringError(
            f"{where}: {what} {value!r} is empty or holds whitespace, which the format cannot "
            f"carry; rename it"
        )
    return value


def _content(path: Path) -> Iterable[tuple[int, str]]:
    """(1-based line number, stripped line) for each line that is not blank or a `;;` comment."""
    for no, raw in enumerate(_lines(path), 1):
        line = raw.strip()
        if line and not line.startswith(";;"):
            yield no, line


# ----------------------------------------------------------------------------- STM


def read_stm(path: str | Path) -> list[Segment]:
    """sclite STM segments in file order."""
    path = Path(path)
    return [_stm_line(line, f"{path}:{no}", no) for no, line in _content(path)]


def _stm_line(line: str, where: str, no: int) -> Segment:
    parts = line.split(None, 5)
    if len(parts) < 5:
        raise ScoringError(
            f"{where}: an STM line needs `file channel speaker start end [<label>] words`, "
            f"got {len(parts)} field(s)"
        )
    session, channel, speaker = parts[:3]
    start = _time(parts[3], "start time", where)
    end = _time(parts[4], "end time", where)
    _span(start, end, where)
    rest = parts[5] if len(parts) == 6 else ""
    label = ""
    if rest.startswith("<"):
        head, _, tail = rest.partition(" ")
        if head.endswith(">"):
            label, rest = head, tail.strip()
    return Segment(session, speaker, start, end, rest, channel=channel, label=label, line=no)


# sclite's rule (checked against the binary: tests/test_one_home.py): a segment whose text holds
# either spelling anywhere, in any case (`ignore_time_segment_in_scoring`, as TED-LIUM writes it,
# `fooIGNORE_TIME_SEGMENT_IN_SCORINGbar`), is left out of scoring, and so is its time region.
STM_IGNORE = ("IGNORE_TIME_SEGMENT_IN_SCORING", "IGNORETIMESEGMENTINSCORING")


def is_ignored(seg: Segment) -> bool:
    """Whether sclite leaves this STM segment, and the hypothesis words in its time region, out
    of scoring: its text holds `IGNORE_TIME_SEGMENT_IN_SCORING` (sclite's rule, `STM_IGNORE`)."""
    text = seg.words.upper()
    return any(tag in text for tag in STM_IGNORE)


def stm_text(segments: Iterable[Segment]) -> str:
    """Write segments as STM, one per line, in the order given (sort them first if needed)."""
    lines = []
    for i, seg in enumerate(segments, 1):
        where = f"segment {i} (session {seg.session_id!r})"
        fields = [
            _token(seg.session_id, "session_id", where),
            _token(seg.channel, "channel", where),
            _token(seg.speaker, "speaker", where),
            fmt_time(seg.start_time),
            fmt_time(seg.end_time),
        ]
        if seg.label:
            fields.append(seg.label)
        words = " ".join(seg.words.split())
        lines.append(" ".join(fields + ([words] if words else [])))
    return "".join(line + "\n" for line in lines)


# ----------------------------------------------------------------------------- CTM


# sclite's alternation lines (`file channel * * <ALT_BEGIN>`, `<ALT>`, `<ALT_END>`), matched
# without case as sclite matches them.
_ALT_BEGIN, _ALT, _ALT_END = "<ALT_BEGIN>", "<ALT>", "<ALT_END>"
_ALT_MARKERS = (_ALT_BEGIN, _ALT, _ALT_END)


@dataclass(frozen=True)
class CtmAlternation(TimedWord):
    """A CTM alternation (`<ALT_BEGIN> a b <ALT> c <ALT_END>`) as one timed word: `word` is its
    sclite text (`{ a b / c }`, an empty branch `@`), which the scorer reads as an alternation
    (hypothesis alternatives in a CTM hypothesis, a reference alternation in a CTM reference);
    its span covers its words. `midpoint` is the latest of its words' midpoints (0 without
    words): sclite hands an alternation whole to the segment that holds it (`stm2ctm.c`)."""

    branches: tuple[tuple[TimedWord, ...], ...] = ()

    @property
    def midpoint(self) -> float:
        return max((w.midpoint for b in self.branches for w in b), default=0.0)

    @property
    def timed(self) -> bool:
        """Whether any branch holds a word (an alternation of null words has no time)."""
        return any(self.branches)


def read_ctm(path: str | Path) -> list[TimedWord]:
    """sclite CTM words in file order, each alternation one `CtmAlternation`; start times must
    not decrease within a (file, channel)."""
    path = Path(path)
    words = _ctm_words(path)
    _check_ctm_order(words, path)
    return words


def _ctm_words(path: Path) -> list[TimedWord]:
    out: list[TimedWord] = []
    opened: tuple[int, list[str], list[list[TimedWord]]] | None = None  # line, fields, branches
    for no, line in _content(path):
        where = f"{path}:{no}"
        parts = line.split()
        marker = parts[4].upper() if len(parts) in (5, 6) else ""
        if not marker.startswith("<ALT"):
            word = _ctm_line(line, where, no)
            if opened is not None:
                _same_channel(opened[1], parts, where)
                opened[2][-1].append(word)
            else:
                out.append(word)
            continue
        if marker not in _ALT_MARKERS:
            raise ScoringError(
                f"{where}: {parts[4]!r} is not a CTM alternation line; sclite's are "
                f"{', '.join(_ALT_MARKERS)}"
            )
        if marker == _ALT_BEGIN:
            if opened is not None:
                raise ScoringError(
                    f"{where}: <ALT_BEGIN> inside the alternation opened at line {opened[0]}; "
                    "close it with <ALT_END> first (alternations do not nest in a CTM)"
                )
            opened = (no, parts, [[]])
            continue
        if opened is None:
            raise ScoringError(
                f"{where}: {marker} outside an alternation; open one with "
                "`FILE CHANNEL * * <ALT_BEGIN>` before it"
            )
        _same_channel(opened[1], parts, where)
        if marker == _ALT:
            opened[2].append([])
        else:
            out.append(_alternation(opened[1], opened[2], opened[0]))
            opened = None
    if opened is not None:
        raise ScoringError(
            f"{path}:{opened[0]}: <ALT_BEGIN> never closed; end the alternation with "
            "`FILE CHANNEL * * <ALT_END>`"
        )
    return out


def _same_channel(begin: list[str], parts: list[str], where: str) -> None:
    if (parts[0], parts[1]) != (begin[0], begin[1]):
        raise ScoringError(
            f"{where}: file {parts[0]!r} channel {parts[1]!r} inside an alternation of file "
            f"{begin[0]!r} channel {begin[1]!r}; close it with <ALT_END> first"
        )


def _alternation(begin: list[str], branches: list[list[TimedWord]], no: int) -> CtmAlternation:
    words = [w for b in branches for w in b]
    start = min((w.start_time for w in words), default=0.0)
    end = max((w.end_time for w in words), default=start)
    text = " / ".join(" ".join(w.word for w in b) or "@" for b in branches)
    return CtmAlternation(
        begin[0],
        start,
        end - start,
        "{ " + text + " }",
        begin[1],
        line=no,
        branches=tuple(map(tuple, branches)),
    )


def _ctm_line(line: str, where: str, no: int) -> TimedWord:
    parts = line.split()
    if len(parts) not in (5, 6):
        raise ScoringError(
            f"{where}: a CTM line needs `file channel start duration word [confidence]`, "
            f"got {len(parts)} field(s)"
        )
    start = _time(parts[2], "start time", where)
    duration = _time(parts[3], "duration", where)
    confidence = None
    if len(parts) == 6 and parts[5] not in _NA:
        try:
            confidence = float(parts[5])
        except ValueError:
            raise ScoringError(
                f"{where}: confidence {parts[5]!r} is not a number (or NA); fix or drop it"
            ) from None
    return TimedWord(parts[0], start, duration, parts[4], parts[1], confidence, line=no)


def _check_ctm_order(words: Sequence[TimedWord], path: Path) -> None:
    last: dict[tuple[str, str], TimedWord] = {}
    for word in words:
        if isinstance(word, CtmAlternation) and not word.timed:
            continue  # null words only: no time to check
        key = (word.session_id, word.channel)
        prev = last.get(key)
        if prev is not None and word.start_time < prev.start_time:
            raise ScoringError(
                f"{path}:{word.line}: CTM times out of order: {word.word!r} starts at "
                f"{word.start_time:g} s, before {prev.word!r} at {prev.start_time:g} s "
                f"(line {prev.line}) in file {word.session_id!r} channel {word.channel}; sort "
                f"the CTM by file, channel and start time (sort -k1,1 -k2,2 -k3,3n)"
            )
        last[key] = word


def ctm_text(words: Iterable[TimedWord]) -> str:
    """Write words as CTM in the order given; a confidence column only where one is known; an
    alternation as sclite's `<ALT_BEGIN>`, `<ALT>`, `<ALT_END>` lines around its words."""
    lines = []
    for i, w in enumerate(words, 1):
        where = f"word {i} (session {w.session_id!r})"
        if not isinstance(w, CtmAlternation):
            lines.append(_ctm_word_line(w, where))
            continue
        head = f"{_token(w.session_id, 'session_id', where)} {_token(w.channel, 'channel', where)}"
        for b, branch in enumerate(w.branches):
            lines.append(f"{head} * * {_ALT if b else _ALT_BEGIN}\n")
            lines.extend(_ctm_word_line(x, where) for x in branch)
        lines.append(f"{head} * * {_ALT_END}\n")
    return "".join(lines)


def _ctm_word_line(w: TimedWord, where: str) -> str:
    fields = [
        _token(w.session_id, "session_id", where),
        _token(w.channel, "channel", where),
        fmt_time(w.start_time),
        fmt_time(w.duration),
        _token(w.word, "word", where),
    ]
    if w.confidence is not None:
        fields.append(f"{w.confidence:g}")
    return " ".join(fields) + "\n"


# ----------------------------------------------------------------------------- SegLST


def read_seglst(path: str | Path) -> list[Segment]:
    """MeetEval SegLST: a JSON list of segment objects; `line` is where each object starts.

    `speaker` may be absent (""); times may be numbers or numeric strings (CHiME writes strings);
    `channel` and `label` (STM's tag) are kept when present; other keys are ignored."""
    path = Path(path)
    text = "\n".join(_lines(path))
    return [_seglst_entry(obj, path, no) for no, obj in _json_entries(text, path)]


def _json_entries(text: str, path: Path) -> list[tuple[int, object]]:
    """Each element of a top-level JSON array with the line it starts on."""
    try:
        data = json.loads(text)  # the whole file's syntax first: the error names line and column
    except json.JSONDecodeError as err:
        raise ScoringError(
            f"{path}:{err.lineno}: not valid JSON ({err.msg}, column {err.colno})"
        ) from None
    if not isinstance(data, list):
        first = text.lstrip()[:1]
        raise ScoringError(f"{path}:1: SegLST is a JSON list of segment objects, not a {first!r}")
    lines = text.split("\n")
    if _one_per_line(lines, len(data)):  # the layout seglst_text writes: no second parse
        return [(i + 2, obj) for i, obj in enumerate(data)]
    return _entry_lines(text, data)


def _one_per_line(lines: list[str], n: int) -> bool:
    """`[`, then n lines each starting with `{`, then `]`: entry i is on line i + 2."""
    body = lines[1 : n + 1]
    return (
        len(lines) >= n + 2
        and lines[0].strip() == "["
        and lines[n + 1].strip() == "]"
        and all(line.startswith("{") for line in body)
    )


def _entry_lines(text: str, data: list) -> list[tuple[int, object]]:
    """The line each element starts on, found by decoding the elements one by one."""
    decoder = json.JSONDecoder()
    out: list[tuple[int, object]] = []
    pos, line, counted = _skip(text, _skip(text, 0) + 1), 1, 0
    for obj in data:
        line += text.count("\n", counted, pos)
        counted = pos
        _, pos = decoder.raw_decode(text, pos)
        out.append((line, obj))
        pos = _skip(text, pos)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
    return out


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


_NUMBER = (int, float)


def _seglst_entry(obj: object, path: Path, no: int) -> Segment:
    """One SegLST object as a Segment; the common case (numbers in order, words a string) takes
    the short path, anything else the checks that name what is wrong."""
    if type(obj) is dict and _plain(obj):
        return Segment(
            str(obj["session_id"]),
            str(obj.get("speaker", "")),
            float(obj["start_time"]),
            float(obj["end_time"]),
            obj["words"],
            channel=str(obj.get("channel", "1")),
            label=str(obj.get("label", "")),
            line=no,
        )
    return _checked_entry(obj, f"{path}:{no}", no)


def _plain(obj: dict) -> bool:
    start, end = obj.get("start_time"), obj.get("end_time")
    return (
        "session_id" in obj
        and type(obj.get("words")) is str
        and type(start) in _NUMBER
        and type(end) in _NUMBER
        and 0 <= start <= end < math.inf  # type: ignore[operator]
    )


def _checked_entry(obj: object, where: str, no: int) -> Segment:
    if not isinstance(obj, dict):
        raise ScoringError(f"{where}: a SegLST entry is an object, got {type(obj).__name__}")
    missing = [k for k in ("session_id", "start_time", "end_time", "words") if k not in obj]
    if missing:
        raise ScoringError(f"{where}: SegLST entry lacks {', '.join(missing)}; add the key(s)")
    words = obj["words"]
    if not isinstance(words, str):
        raise ScoringError(f"{where}: `words` must be a string, got {type(words).__name__}")
    if isinstance(obj["start_time"], bool) or isinstance(obj["end_time"], bool):
        raise ScoringError(f"{where}: start_time and end_time must be numbers of seconds")
    start = _time(obj["start_time"], "start_time", where)
    end = _time(obj["end_time"], "end_time", where)
    _span(start, end, where)
    return Segment(
        str(obj["session_id"]),
        str(obj.get("speaker", "")),
        start,
        end,
        words,
        channel=str(obj.get("channel", "1")),
        label=str(obj.get("label", "")),
        line=no,
    )


def seglst_text(segments: Iterable[Segment]) -> str:
    """Write SegLST, one object per line (so line numbers in errors point at a segment); `channel`
    and `label` are added only where not the default (MeetEval ignores keys it does not use)."""
    entries = []
    for seg in segments:
        entry = seg.to_seglst()
        if seg.channel != "1":
            entry["channel"] = seg.channel
        if seg.label:
            entry["label"] = seg.label
        entries.append(json.dumps(entry, ensure_ascii=False))
    body = ",\n".join(entries)
    return f"[\n{body}\n]\n" if entries else "[]\n"


# ----------------------------------------------------------------------------- RTTM


# The line types of the RTTM specification (NIST RT-09 evaluation plan, appendix A): any other
# first field is a typo (`SPEAKR`) or not an RTTM file, and would silently drop a turn.
RTTM_TYPES = frozenset(
    "SEGMENT NOSCORE NO_RT_METADATA LEXEME NON-LEX NON-SPEECH FILLER EDIT IP END-OF-SF SU CB "
    "A/P SPEAKER SPKR-INFO".split()
)


def read_rttm(path: str | Path) -> list[Segment]:
    """RTTM SPEAKER lines as word-less segments; other line types (SPKR-INFO, ...) skipped,
    an unknown one refused."""
    path = Path(path)
    out = []
    for no, line in _content(path):
        parts = line.split()
        where = f"{path}:{no}"
        if parts[0].upper() not in RTTM_TYPES:
            raise ScoringError(
                f"{where}: {parts[0][:20]!r} is not an RTTM line type (SPEAKER, SPKR-INFO, "
                "SEGMENT, ...); fix the line or give the file's format (--ref-format/--hyp-format)"
            )
        if parts[0] != "SPEAKER":
            continue
        if len(parts) < 8:
            raise ScoringError(
                f"{where}: an RTTM SPEAKER line needs `SPEAKER file channel start duration <NA> "
                f"<NA> speaker <NA> <NA>`, got {len(parts)} field(s)"
            )
        start = _time(parts[3], "start time", where)
        duration = _time(parts[4], "duration", where)
        end = round(start + duration, 9)  # 1.1 + 1.2 is 2.3000000000000003 in floats
        out.append(Segment(parts[1], parts[7], start, end, "", channel=parts[2], line=no))
    return out


def rttm_text(segments: Iterable[Segment]) -> str:
    """Write speaker turns as RTTM SPEAKER lines (words are not part of RTTM)."""
    lines = []
    for i, seg in enumerate(segments, 1):
        where = f"segment {i} (session {seg.session_id!r})"
        fields = [
            "SPEAKER",
            _token(seg.session_id, "session_id", where),
            _token(seg.channel, "channel", where),
            fmt_time(seg.start_time),
            fmt_time(round(seg.end_time - seg.start_time, 9)),
            "<NA>",
            "<NA>",
            _token(seg.speaker, "speaker", where),
            "<NA>",
            "<NA>",
        ]
        lines.append(" ".join(fields) + "\n")
    return "".join(lines)


# ----------------------------------------------------------------------------- by name


_BY_EXTENSION = {
    ".stm": "stm",
    ".ctm": "ctm",
    ".json": "seglst",
    ".seglst": "seglst",
    ".rttm": "rttm",
}


def timed_format(path: str | Path) -> str:
    """The timed format a file name says (`.stm .ctm .json/.seglst.json .rttm`)."""
    suffix = Path(path).suffix.lower()
    if suffix not in _BY_EXTENSION:
        raise ScoringError(
            f"{path}: cannot tell the timed format from the extension {suffix!r}; name it "
            f".stm, .ctm, .seglst.json or .rttm, or give the format ({', '.join(TIMED_FORMATS)})"
        )
    return _BY_EXTENSION[suffix]


def read_timed(path: str | Path, fmt: str | None = None) -> list[Segment] | list[TimedWord]:
    """Read a timed file by its extension, or by `fmt` (one of `TIMED_FORMATS`)."""
    fmt = fmt or timed_format(path)
    if fmt == "ctm":
        return read_ctm(path)
    readers = {"stm": read_stm, "seglst": read_seglst, "rttm": read_rttm}
    if fmt not in readers:
        raise ScoringError(f"unknown timed format {fmt!r}; use one of {', '.join(TIMED_FORMATS)}")
    return readers[fmt](path)


def timed_text(items: Sequence[Segment] | Sequence[TimedWord], fmt: str) -> str:
    """Segments (STM, SegLST, RTTM) or words (CTM) as the text of a `fmt` file; the caller
    writes it (the scorer writes no files: asrbench.longform.segments.write_timed does it
    atomically)."""
    if fmt == "ctm":
        return ctm_text([w for w in items if isinstance(w, TimedWord)])
    formatters = {"stm": stm_text, "seglst": seglst_text, "rttm": rttm_text}
    if fmt not in formatters:
        raise ScoringError(f"unknown timed format {fmt!r}; use one of {', '.join(TIMED_FORMATS)}")
    return formatters[fmt]([s for s in items if isinstance(s, Segment)])


# ----------------------------------------------------------------------------- validation


def validate_segments(
    segments: Sequence[Segment],
    *,
    durations: Mapping[str, float] | None = None,
    source: str | Path = "",
    speakers: Collection[str] | None = None,
    require_words: bool = False,
    tolerance: float = 0.0,
) -> None:
    """Check segments as a whole; raise `ScoringError` naming `source` and the line of the first
    bad one (its position in the list where it has no line).

    Always: `0 <= start <= end`; within a (session, speaker) starts in order and no overlap
    (speakers may overlap each other). With `durations` ({session_id: seconds}): every session is
    known and every segment ends by the end of its audio (+ `tolerance` s). With `speakers`:
    every speaker is one of them. With `require_words`: every session (and every one in
    `durations`) has at least one reference word."""
    last: dict[tuple[str, str], Segment] = {}
    for i, seg in enumerate(segments):
        where = _where(source, seg.line) if seg.line else f"{_where(source, 0)}: segment {i + 1}"
        _check_one(seg, where, durations, speakers, tolerance)
        key = (seg.session_id, seg.speaker)
        prev = last.get(key)
        if prev is not None:
            _check_pair(prev, seg, where)
        last[key] = seg
    if require_words:
        _check_words(segments, durations, source)


def _check_one(
    seg: Segment,
    where: str,
    durations: Mapping[str, float] | None,
    speakers: Collection[str] | None,
    tolerance: float,
) -> None:
    if seg.start_time < 0:
        raise ScoringError(f"{where}: negative start time {seg.start_time:g} s")
    _span(seg.start_time, seg.end_time, where)
    if speakers is not None and seg.speaker not in speakers:
        known = ", ".join(sorted(speakers)[:10]) or "none"
        raise ScoringError(
            f"{where}: unknown speaker {seg.speaker!r} in session {seg.session_id!r} (known: "
            f"{known}); use a declared speaker or declare it"
        )
    if durations is None:
        return
    if seg.session_id not in durations:
        raise ScoringError(
            f"{where}: session {seg.session_id!r} is not a recording of the dataset; "
            f"fix the session ID or add the recording"
        )
    length = durations[seg.session_id]
    if seg.end_time > length + tolerance + _EPS:
        raise ScoringError(
            f"{where}: segment ends at {seg.end_time:g} s, past the end of the audio of "
            f"{seg.session_id!r} ({length:g} s); fix the times or the audio"
        )


def _check_pair(prev: Segment, seg: Segment, where: str) -> None:
    who = f"speaker {seg.speaker!r} of session {seg.session_id!r}"
    at = f" (line {prev.line})" if prev.line else ""
    if seg.start_time < prev.start_time:
        raise ScoringError(
            f"{where}: segments out of order: {who} starts at {seg.start_time:g} s, before the "
            f"previous one at {prev.start_time:g} s{at}; sort by start time"
        )
    if seg.start_time < prev.end_time - _EPS:
        raise ScoringError(
            f"{where}: {who} overlaps itself: starts at {seg.start_time:g} s, before the "
            f"previous segment ends at {prev.end_time:g} s{at}; only different speakers may "
            f"overlap, merge or split the segments"
        )


def _check_words(
    segments: Sequence[Segment], durations: Mapping[str, float] | None, source: str | Path
) -> None:
    first: dict[str, Segment] = {}
    worded: set[str] = set()
    for seg in segments:
        first.setdefault(seg.session_id, seg)
        if seg.words.split():
            worded.add(seg.session_id)
    sessions = list(first) + [s for s in (durations or {}) if s not in first]
    for session in sessions:
        if session not in worded:
            seg_at = first.get(session)
            where = _where(source, seg_at.line if seg_at else 0)
            raise ScoringError(
                f"{where}: session {session!r} has no reference words; give it a reference "
                f"or leave the recording out"
            )
