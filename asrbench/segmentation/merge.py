"""Join the hypotheses of overlapping windows into one transcript of the recording.

Overlapping windows hear the same audio twice; each stretch must be kept once. Two rules:

- **With word times** (`merge_words`): the boundary between window i and window i+1 is the
  middle of their overlap, (start of i+1 + end of i) / 2. A word belongs to the window whose
  share holds its midpoint: window i keeps its words with midpoints in [previous boundary,
  next boundary). Each word is decided by the window that heard it furthest from its edges.
  (Hugging Face's chunked CTC pipeline drops each chunk's left and right strides; with equal
  strides that is this rule.)
- **Text only** (`merge_texts`): the tail of the earlier window's text is aligned with the
  head of the later one's (case and punctuation ignored; an overlap alignment: match +2,
  mismatch or gap -1, so a word garbled at a window's edge costs little). Only as many words
  as the overlap can hold take part: each window's words per second times the overlap's
  length, plus a quarter and one word (`overlap_words`); without that bound, repetitive
  speech aligns with an earlier repetition. The text is cut at the middle matched pair: the
  words before it from the earlier window, the rest from the later one. Fewer than two
  matches: the later text is appended whole, so words heard twice show up as insertions
  rather than being silently lost. (Hugging Face's chunked seq2seq pipeline instead slides
  the head over the tail and keeps the best rate of equal tokens,
  `_find_longest_common_sequence`, which one word garbled at an edge shifts.)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from asrbench.segmentation.records import SegmentationError, Span

_PUNCT = re.compile(r"[^\w']+")
MIN_MATCHES = 2  # an overlap of one chance match ("the") is no evidence
SLACK = 1.25  # speech rate varies inside a window: the overlap may hold a quarter more words


class WordLike(Protocol):
    """A timed word as models and CTM give it (`scoring.segments.TimedWord` is one)."""

    @property
    def start_time(self) -> float: ...
    @property
    def end_time(self) -> float: ...
    @property
    def word(self) -> str: ...


@dataclass(frozen=True)
class Word:
    """A word of the merged transcript, in seconds of the whole recording."""

    start_time: float
    end_time: float
    word: str


def boundaries(windows: Sequence[Span]) -> list[float]:
    """The cut between each pair of neighbours: the middle of their overlap (or gap)."""
    return [(b.start + a.end) / 2 for a, b in zip(windows, windows[1:], strict=False)]


def merge_words(windows: Sequence[Span], words: Sequence[Sequence[WordLike]]) -> list[Word]:
    """One transcript from each window's timed words (times relative to the window's start)."""
    if len(windows) != len(words):
        raise SegmentationError(f"{len(windows)} windows but {len(words)} hypotheses to merge")
    cuts = [-math.inf, *boundaries(windows), math.inf]
    out: list[Word] = []
    for k, (span, hyp) in enumerate(zip(windows, words, strict=True)):
        for w in hyp:
            start, end = span.start + w.start_time, span.start + w.end_time
            if cuts[k] <= (start + end) / 2 < cuts[k + 1]:
                out.append(Word(start, end, w.word))
    return out


def _key(word: str) -> str:
    return _PUNCT.sub("", word.casefold())


def overlap_pairs(left: Sequence[str], right: Sequence[str]) -> list[tuple[int, int]]:
    """The matched word pairs (i in left, j in right) of the best overlap alignment.

    Semi-global: `left` may start anywhere (its head is before the overlap), must be aligned
    to its end; `right` is aligned from its start and may end anywhere. Match +2, mismatch
    and gap -1, so fragments of a word cut by a window's edge cost little. Fewer than
    `MIN_MATCHES` matches: no overlap ([]).
    """
    a, b = [_key(w) for w in left], [_key(w) for w in right]
    score = [[-j for j in range(len(b) + 1)]]
    back: list[bytearray] = [bytearray([_LEFT]) * (len(b) + 1)]
    for i in range(1, len(a) + 1):
        row, ptr = [0], bytearray([_FREE])
        for j in range(1, len(b) + 1):
            best = max(
                (score[i - 1][j - 1] + (2 if a[i - 1] == b[j - 1] else -1), _DIAG),
                (score[i - 1][j] - 1, _UP),
                (row[j - 1] - 1, _LEFT),
            )
            row.append(best[0])
            ptr.append(best[1])
        score.append(row)
        back.append(ptr)
    top = max(score[-1])
    # among equal scores, the alignment with the most matches (then the shortest head of right)
    ends = [j for j in range(len(b) + 1) if score[-1][j] == top]
    pairs = max((_trace(back, a, b, len(a), j) for j in ends), key=len)
    return pairs if len(pairs) >= MIN_MATCHES else []


_FREE, _DIAG, _UP, _LEFT = 0, 1, 2, 3


def _trace(
    back: list[bytearray], a: list[str], b: list[str], i: int, j: int
) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    while i > 0 and j > 0 and back[i][j] != _FREE:
        step = back[i][j]
        if step == _DIAG:
            i, j = i - 1, j - 1
            if a[i] == b[j]:
                pairs.append((i, j))
        elif step == _UP:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def overlap_words(n_words: int, window: Span, overlap_s: float) -> int:
    """At most how many of a window's `n_words` can fall in `overlap_s` of it: the window's
    word rate times the overlap, with a quarter more and one word of slack."""
    return min(n_words, math.ceil(n_words * overlap_s / window.duration * SLACK) + 1)


def merge_texts(windows: Sequence[Span], texts: Sequence[str]) -> str:
    """One transcript from the texts of consecutive overlapping windows (module rule)."""
    if len(windows) != len(texts):
        raise SegmentationError(f"{len(windows)} windows but {len(texts)} hypotheses to merge")
    merged: list[str] = []
    previous: list[str] = []  # the last window's kept words: only they can overlap the next
    for k, text in enumerate(texts):
        words = text.split()
        keep = 0
        if k:
            shared = max(0.0, windows[k - 1].end - windows[k].start)
            tail = overlap_words(len(previous), windows[k - 1], shared)
            head = overlap_words(len(words), windows[k], shared)
            pairs = overlap_pairs(previous[len(previous) - tail :], words[:head])
            if pairs:
                i, keep = pairs[len(pairs) // 2]
                del merged[len(merged) - tail + i :]
        merged.extend(words[keep:])
        previous = words[keep:]
    return " ".join(merged)
