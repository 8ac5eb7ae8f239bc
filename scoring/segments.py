"""Timed transcripts: the one pair of types every timed format reads into and writes from.

STM and CTM (sclite), SegLST (MeetEval, CHiME), RTTM (speakers only) and lhotse supervisions
all describe the same two things: a *segment* (a stretch of a session, one speaker, start and
end in seconds, the words said in it) and a *timed word* (one word with a start and a duration,
as CTM and models' word timestamps give them). Readers (`scoring.timed`, ...) return lists of
these; writers take them. Times are seconds from the start of the session's audio, floats as
the files give them; `end >= start` is checked by the readers, which name the file and line.

Field names follow SegLST (`session_id`, `speaker`, `start_time`, `end_time`, `words`), the
format MeetEval exchanges, so a segment converts to a SegLST entry key for key.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Segment:
    """A reference or hypothesis segment: `words` is the text as written (not normalised).

    `channel` is sclite's channel field ("1" when the format has none); `label` keeps STM's
    optional `<o,f0,male>`-style tag ("" when absent); `line` is the 1-based source line (0 when
    the segment did not come from a file) so a later check can still name where it came from.
    """

    session_id: str
    speaker: str
    start_time: float
    end_time: float
    words: str
    channel: str = "1"
    label: str = ""
    line: int = field(default=0, compare=False)

    @property
    def duration(self) -> float:
        return self.end_time - self.start_time

    def to_seglst(self) -> dict:
        return {
            "session_id": self.session_id,
            "speaker": self.speaker,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "words": self.words,
        }


@dataclass(frozen=True)
class TimedWord:
    """One hypothesis (or reference) word with its time: CTM's unit, and models' word stamps.

    `confidence` is None where the source gives none; `speaker` is "" where unknown (CTM has no
    speaker field).
    """

    session_id: str
    start_time: float
    duration: float
    word: str
    channel: str = "1"
    confidence: float | None = None
    speaker: str = ""
    line: int = field(default=0, compare=False)

    @property
    def end_time(self) -> float:
        return self.start_time + self.duration

    @property
    def midpoint(self) -> float:
        """sclite assigns a CTM word to the STM segment holding its midpoint."""
        return self.start_time + self.duration / 2
