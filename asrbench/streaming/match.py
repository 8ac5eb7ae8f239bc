"""Which reference words each streamed hypothesis got right, by the scorer's own alignment.

Every partial and every final of an utterance is scored with the dataset's scorer (the same
normalisation and alignment as the finals' TER), all in one batch, against the part of the
reference *heard* when it was emitted: the reference tokens up to the last one whose aligned
start lies before the audio the program had consumed when it wrote the hypothesis (its
`audio_s`; the final: the whole reference). Scoring a
short partial against the whole reference would let the alignment match its words to later
occurrences of the same words ("the", "and") that had not been spoken yet.

A reference word is *right* in a hypothesis when its alignment column is `C` (an optional
word left out, `O`, is not). The result, per hypothesis, is the set of indices of the
reference tokens it got right: what the word emission latency and the cursor lag read
(metrics.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asrbench.streaming.feed import FedUtterance

HYP_EVENTS = ("partial", "final")
SEP = "\x1f"  # joins an utterance ID and an event number into one scorer key


def correct_indices(codes: str) -> frozenset[int]:
    """Reference positions whose alignment column is C (correct), from an op string."""
    out, r = set(), 0
    for c in codes:
        if c == "C":
            out.add(r)
        if c != "I":  # every column but an insertion consumes a reference word
            r += 1
    return frozenset(out)


def heard(starts: Sequence[float | None], cursor: float) -> int:
    """How many leading reference tokens had begun by `cursor` seconds of audio: up to the
    last placed word starting before it (unplaced words before that one included)."""
    last = max((i for i, s in enumerate(starts) if s is not None and s < cursor), default=-1)
    return last + 1


def matched(
    scorer: Any,
    tokens: dict[str, list[str]],
    starts: dict[str, list[float | None]],
    feds: Sequence[FedUtterance],
) -> dict[str, list[frozenset[int]]]:
    """Per utterance with tokens: per hypothesis event (the partials and the final, in order)
    the indices of the reference tokens it got right against the reference heard by then.

    `tokens` are the scorer's normalised reference tokens (re-joined, they normalise to
    themselves); a hypothesis whose reference comes back otherwise gets an empty set."""
    refs: dict[str, str] = {}
    hyps: dict[str, str] = {}
    heard_n: dict[str, int] = {}
    out: dict[str, list[frozenset[int]]] = {}
    for f in feds:
        if f.failed or f.uid not in tokens:
            continue
        events = [e for e in f.events if e.type in HYP_EVENTS]
        out[f.uid] = [frozenset()] * len(events)
        toks = tokens[f.uid]
        for j, e in enumerate(events):
            k = len(toks) if e.type == "final" else heard(starts[f.uid], e.audio_s)
            if k and e.text.strip():
                key = f"{f.uid}{SEP}{j}"
                refs[key], hyps[key], heard_n[key] = " ".join(toks[:k]), e.text, k
    if refs:
        for res in scorer.utterances(refs, hyps):
            uid, j = res.id.split(SEP)
            if list(res.ref) == tokens[uid][: heard_n[res.id]]:
                out[uid][int(j)] = correct_indices(res.codes)
    return out
