"""The records of segmentation: a stretch of a recording, and how the stretches were chosen.

A `Span` is seconds of the original file (start inclusive, end exclusive), whatever rate the
segmenter worked at. A `Segmentation` is the choice and its parameters, frozen and plain, so a
run records it in its provenance (`to_dict`) and a rerun rebuilds it (`from_dict`) exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from asrbench.errors import InputError

FORMAT = "asrbench-segmentation/1"
Method = Literal["silero", "webrtc", "windows"]


class SegmentationError(InputError):
    """Bad segmentation input or parameters; the message names the file or the parameter."""


@dataclass(frozen=True, order=True)
class Span:
    """One segment of a recording: `start` and `end` in seconds of the original file."""

    start: float
    end: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start) and math.isfinite(self.end)):
            raise SegmentationError(f"segment {self.start}-{self.end}: times must be finite")
        if self.start < 0 or self.end <= self.start:
            raise SegmentationError(
                f"segment {self.start:.3f}-{self.end:.3f} s: needs 0 <= start < end"
            )

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class VadParams:
    """Voice activity detection (`method` silero or webrtc); every time is in seconds.

    - `threshold`: a frame is speech when its speech probability is >= this (silero: the
      model's probability; webrtc: its 0/1 decision, so any threshold in (0, 1] is the same);
      a span, once open, ends only below `threshold - 0.15` (hysteresis, as silero's own).
    - `min_speech_s`: spans shorter than this (before padding) are dropped as clicks.
    - `min_silence_s`: a pause must last this long to end a span; shorter ones stay inside.
    - `pad_s`: each span is widened by this on both sides (clipped to the file and to the
      neighbours: padded spans that would overlap are joined).
    - `max_segment_s`: the longest span handed on (a card's `max_input_s`); a longer one is
      cut at its quietest frame (lowest speech probability, then lowest energy) between half the
      limit and the limit after its start, repeatedly, so every piece fits. None: no limit.
    - `aggressiveness`: webrtc only, its mode 0 (least) to 3 (most eager to call a frame
      non-speech); 3 by default: at 2, a pause of quiet room tone (-60 dBFS) counted as speech
      and bridged utterances in tests/segment/test_segmentation.py's recording.
    """

    method: Literal["silero", "webrtc"] = "silero"
    threshold: float = 0.5
    min_speech_s: float = 0.25
    min_silence_s: float = 0.3
    pad_s: float = 0.1
    max_segment_s: float | None = None
    aggressiveness: int = 3

    def __post_init__(self) -> None:
        check_params(VadParams, asdict(self))


@dataclass(frozen=True)
class WindowParams:
    """Fixed windows: window k starts at k * (window_s - overlap_s) and lasts `window_s`.

    Windows are laid until one reaches the end of the file; that last one is clipped there (so
    it may be shorter). Every pair of neighbours therefore overlaps by exactly `overlap_s`, the
    first window starts at 0 and the last ends at the end of the file. A file shorter than
    `window_s` is one window.
    """

    window_s: float = 30.0
    overlap_s: float = 5.0
    method: Literal["windows"] = "windows"

    def __post_init__(self) -> None:
        check_params(WindowParams, asdict(self))

    @property
    def hop_s(self) -> float:
        return self.window_s - self.overlap_s


Params = VadParams | WindowParams


@dataclass(frozen=True)
class Option:
    """One segmenter parameter: its type (float takes whole numbers too, never true/false), the
    values it takes (`ok`) and those values in words (`want`), for the one-line error."""

    kind: type
    ok: Callable[[Any], bool]
    want: str
    none: bool = False  # None (no value) is allowed

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.none
        if isinstance(value, bool):
            return False
        kinds = (int, float) if self.kind is float else (self.kind,)
        return isinstance(value, kinds) and self.ok(value)


def _seconds(low: float, strict: bool = False) -> Option:
    """Finite seconds >= low (> low with `strict`): inf and nan are refused here, by name,
    not later as a span that cannot be laid (0 * inf is nan)."""
    return Option(
        float,
        lambda v: math.isfinite(v) and (v > low if strict else v >= low),
        f"finite seconds {'>' if strict else '>='} {low:g}",
    )


# The declared table of every segmenter parameter: its type and range, checked by name in one
# place (`check_options`) wherever parameters enter: `--segment-opt`, a request file, a record
# read back from run.json, a direct construction. A method not listed is refused, never taken
# for another detector (and recorded under its misspelt name).
VAD_OPTIONS: dict[str, Option] = {
    "method": Option(str, lambda v: v in ("silero", "webrtc"), "silero or webrtc"),
    "threshold": Option(float, lambda v: 0 < v <= 1, "a number in (0, 1]"),
    "min_speech_s": _seconds(0),
    "min_silence_s": _seconds(0),
    "pad_s": _seconds(0),
    "max_segment_s": Option(
        float, lambda v: math.isfinite(v) and v >= 1, "finite seconds >= 1", none=True
    ),
    "aggressiveness": Option(int, lambda v: 0 <= v <= 3, "a whole number 0 to 3"),
}
WINDOW_OPTIONS: dict[str, Option] = {
    "window_s": _seconds(0, strict=True),
    "overlap_s": _seconds(0),  # and less than window_s (WindowParams)
    "method": Option(str, lambda v: v == "windows", "windows"),
}


def check_options(
    table: Mapping[str, Option], values: Mapping[str, Any], label: str = "segmentation parameter"
) -> None:
    """Every value of `values` by `table`: a known name, its type, its range (SegmentationError
    naming the first bad one, as `label NAME=VALUE`)."""
    for name, value in values.items():
        if name not in table:
            raise SegmentationError(f"{label} {name}: unknown; known: {', '.join(sorted(table))}")
        _check(table[name].accepts(value), name, value, table[name].want, label)


def check_params(
    kind: type[VadParams] | type[WindowParams],
    values: Mapping[str, Any],
    label: str = "segmentation parameter",
) -> None:
    """A whole parameter set: each value by the table, then the one rule between two values
    (a window longer than its overlap)."""
    check_options(VAD_OPTIONS if kind is VadParams else WINDOW_OPTIONS, values, label)
    if kind is WindowParams:
        window, overlap = values["window_s"], values["overlap_s"]
        _check(overlap < window, "overlap_s", overlap, f"less than window_s ({window:g})", label)


def parse_options(
    kind: type[VadParams] | type[WindowParams],
    defaults: Mapping[str, Any],
    options: Mapping[str, Any],
    label: str,
) -> Params:
    """The parameters a user's `options` (NAME -> value) make over `defaults`, each checked by
    the table and named under `label` (e.g. `--segment-opt`), before anything runs."""
    table = VAD_OPTIONS if kind is VadParams else WINDOW_OPTIONS
    known = set(table) - ({"method"} if kind is WindowParams else set())
    unknown = sorted(set(options) - known)
    if unknown:
        method = "windows" if kind is WindowParams else "vad"
        raise SegmentationError(
            f"{label} {', '.join(unknown)}: not a parameter of --segment {method}; "
            f"known: {', '.join(sorted(known))}"
        )
    check_options(table, options, label)
    # 20 and 20.0 are one parameter: numbers as floats, so the record (and the key) is one
    given = {
        k: float(v) if table[k].kind is float and v is not None else v for k, v in options.items()
    }
    values = {**defaults, **given}
    check_params(kind, values, label)
    return kind(**values)


@dataclass(frozen=True)
class Segmentation:
    """The provenance record of a segmentation: its method, parameters and the VAD's weights.

    `model` names what decided speech (the silero ONNX file and its SHA-256, the webrtcvad
    package) or "" for windows; `rate` is the rate the segmenter analysed at.
    """

    params: Params
    model: str = ""
    rate: int = 16000

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "model": self.model, "rate": self.rate, **asdict(self.params)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Segmentation:
        if data.get("format") != FORMAT:
            raise SegmentationError(f"segmentation record: format must be {FORMAT!r}")
        kind = WindowParams if data.get("method") == "windows" else VadParams
        names = {f.name for f in fields(kind)}
        params = kind(**{k: v for k, v in data.items() if k in names})
        return cls(params=params, model=str(data.get("model", "")), rate=int(data["rate"]))


@dataclass(frozen=True)
class RecordingSpans:
    """A recording cut into spans: where they came from and how they were chosen.

    Three things were called "segments": these spans of a VAD or window segmentation, a speaker
    turn of a timed transcript (`scoring.segments.Segment`) and a long-form dataset's file of
    turns (`asrbench.longform.segments`); this type was `Segments`, and this package
    `asrbench.segment`, until issue 40. A segment is now a timed stretch of transcript only."""

    source: str  # the audio file, as given
    duration: float  # seconds, from the file's header
    spans: tuple[Span, ...]
    segmentation: Segmentation

    @property
    def speech_s(self) -> float:
        """Seconds covered by at least one span (overlapping windows counted once)."""
        total, reach = 0.0, 0.0
        for span in sorted(self.spans):
            total += max(0.0, span.end - max(span.start, reach))
            reach = max(reach, span.end)
        return total


def _check(
    ok: bool, name: str, value: object, want: str, label: str = "segmentation parameter"
) -> None:
    if not ok:
        raise SegmentationError(f"{label} {name}={value!r}: must be {want}")
