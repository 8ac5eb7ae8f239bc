"""Transcripts as integer token arrays, and word-level edit distances between two of them.

Hypotheses are normalised with the scorer's own pipeline (CASE, PUNC, ITJ, UK-US, NSW: the
same words the scorer would count), then each word gets an integer id. A `TokenTable` holds
one transcript per utterance as one flat id array with lengths, so counts and distances are
array operations. Edit distances come from the scorer's batched dynamic programme
(`scoring.align.align_arrays`), the same Levenshtein distance that counts WER errors.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoring.align import align_arrays


@dataclass(frozen=True)
class TokenTable:
    """Token ids of N transcripts: transcript i is ids[offsets[i]:offsets[i] + lengths[i]]."""

    ids: np.ndarray  # (total,) int64
    lengths: np.ndarray  # (N,) int64
    present: np.ndarray  # (N,) bool: False where the system gave no transcript (failed)

    @property
    def offsets(self) -> np.ndarray:
        out = np.zeros(len(self.lengths), dtype=np.int64)
        np.cumsum(self.lengths[:-1], out=out[1:])
        return out

    def __len__(self) -> int:
        return len(self.lengths)

    def take(self, rows: np.ndarray) -> TokenTable:
        """The transcripts of some rows (indices or a boolean mask), in that order."""
        rows = np.flatnonzero(rows) if np.asarray(rows).dtype == bool else np.asarray(rows)
        off, ln = self.offsets[rows], self.lengths[rows]
        idx = (
            np.repeat(off - np.cumsum(np.r_[0, ln[:-1]]), ln) + np.arange(ln.sum())
            if len(rows)
            else np.zeros(0, dtype=np.int64)
        )
        return TokenTable(self.ids[idx], ln, self.present[rows])

    def row_of_token(self) -> np.ndarray:
        """(total,) which transcript each token belongs to."""
        return np.repeat(np.arange(len(self.lengths)), self.lengths)


class Vocab:
    """Word <-> integer id, shared by every table compared with another."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.words: list[str] = []

    def id(self, word: str) -> int:
        i = self.index.get(word)
        if i is None:
            i = self.index[word] = len(self.words)
            self.words.append(word)
        return i

    def table(self, transcripts: Sequence[Sequence[str] | None]) -> TokenTable:
        """Token lists (None = no transcript: counted as empty and marked absent)."""
        lengths = np.fromiter(
            (len(t) if t is not None else 0 for t in transcripts),
            dtype=np.int64,
            count=len(transcripts),
        )
        ids = np.fromiter(
            (self.id(w) for t in transcripts if t is not None for w in t),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        present = np.fromiter(
            (t is not None for t in transcripts), dtype=bool, count=len(transcripts)
        )
        return TokenTable(ids, lengths, present)


def edit_distance(a: TokenTable, b: TokenTable) -> np.ndarray:
    """Word-level Levenshtein distance between a[i] and b[i] for every i (unit costs)."""
    if len(a) != len(b):
        raise ValueError("both tables need the same transcripts, in the same order")
    out = np.zeros(len(a), dtype=np.int64)
    if not len(a):
        return out
    # Identical transcripts (common: a recogniser often says the same on mildly transformed
    # speech) and empty ones need no dynamic programme.
    same_len = np.flatnonzero(a.lengths == b.lengths)
    ln = a.lengths[same_len]
    pos = np.arange(int(ln.sum())) - np.repeat(np.cumsum(ln) - ln, ln)
    diff = (
        a.ids[np.repeat(a.offsets[same_len], ln) + pos]
        != b.ids[np.repeat(b.offsets[same_len], ln) + pos]
    )
    n_diff = np.bincount(
        np.repeat(np.arange(len(same_len)), ln), weights=diff, minlength=len(same_len)
    )
    todo = np.ones(len(a), dtype=bool)
    todo[same_len[n_diff == 0]] = False
    empty = todo & ((a.lengths == 0) | (b.lengths == 0))
    out[empty] = np.maximum(a.lengths, b.lengths)[empty]
    todo &= ~empty
    rows = np.flatnonzero(todo)
    if len(rows):
        ta, tb = a.take(rows), b.take(rows)
        # align_arrays minimises K*edits + substitutions: with K above any substitution
        # count, the edit count (the Levenshtein distance) is cost // K.
        k = int(max(ta.lengths.max(), tb.lengths.max())) + 2
        _, costs = align_arrays(ta.ids, ta.offsets, ta.lengths, tb.ids, tb.offsets, tb.lengths, k)
        out[rows] = np.asarray(costs, dtype=np.int64) // k
    return out


def normalise(texts: Sequence[str | None], lang: str = "en") -> list[list[str] | None]:
    """Hypotheses through the scorer's normalisation (None stays None)."""
    from asrbench.scorers import get_scorer

    scorer = get_scorer(lang)
    present = [t for t in texts if t is not None]
    done = iter(scorer.pipeline.batch(list(present)) if present else [])
    return [next(done) if t is not None else None for t in texts]


def flatten(lists: Sequence[Sequence[int]]) -> np.ndarray:
    return np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64)
