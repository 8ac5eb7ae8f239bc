"""COMPOUNDS: a word written joined on one side and split on the other (`touchtone` /
`touch tone`, `Telefonnummer` / `Telefon Nummer`, `quelquefois` / `quelque fois`) is a match.

The Open ASR Leaderboard's `normalize_compound_pairs` aligns the two word lists with difflib
and, where a whole mismatch region holds the same characters once its spaces are removed,
rewrites BOTH sides to the joined form: the reference loses words, so |ref| (the denominator)
depends on the hypothesis, and a region is merged only when all of it matches.

Here the reference is never changed. These are DAE matches found against the reference of each
utterance (scoring.dae applies them, on the hypothesis only): where hypothesis words
`touch tone` join to a reference word, `touchtone` is an alternative of that span; where a
hypothesis word splits into consecutive reference words, those words are an alternative of it.
As with every DAE alternative, its words are strict (the aligner takes them only where each is
correct), so a compound can reconcile two spellings of the same speech but never lowers the
count for a wrong word, and the aligner, not difflib's greedy blocks, decides where it applies.

A part must have at least `MIN_PART` characters (so `a voir` never becomes `avoir`), and a
compound at most `MAX_PARTS` parts.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_PARTS = 3
MIN_PART = 2

# start -> [(end, alternatives)]: hypothesis span tokens[start:end] may be read as any of the
# alternatives (the shape of scoring.dae's matches)
Matches = dict[int, list[tuple[int, tuple[tuple[str, ...], ...]]]]


def _joins(words: Sequence[str], limit: int) -> list[tuple[int, int, str]]:
    """Every run words[i:j] of 2..MAX_PARTS parts (each of MIN_PART characters or more) as
    (i, j, joined), for joined strings of at most `limit` characters."""
    out = []
    n = len(words)
    for i in range(n - 1):
        joined = words[i]
        if len(joined) < MIN_PART:
            continue
        for j in range(i + 2, min(i + MAX_PARTS, n) + 1):
            part = words[j - 1]
            if len(part) < MIN_PART:
                break
            joined += part
            if len(joined) > limit:
                break
            out.append((i, j, joined))
    return out


def compound_matches(tokens: Sequence[str], reference: Sequence[str]) -> Matches:
    """Hypothesis spans that are a reference word split, or reference words joined."""
    ref_words = set(reference)
    hyp_words = set(tokens)
    out: Matches = {}
    # hypothesis words joined: `touch tone` -> `touchtone`, when the reference holds it
    longest_ref = max(map(len, ref_words), default=0)
    for i, j, joined in _joins(tokens, longest_ref):
        if joined in ref_words:
            out.setdefault(i, []).append((j, ((joined,),)))
    # a hypothesis word split: `touchtone` -> `touch tone`, when the reference has those words
    longest_hyp = max(map(len, hyp_words), default=0)
    splits: dict[str, list[tuple[str, ...]]] = {}
    for i, j, joined in _joins(reference, longest_hyp):
        if joined in hyp_words:
            parts = tuple(reference[i:j])
            if parts not in splits.setdefault(joined, []):
                splits[joined].append(parts)
    if splits:
        for i, tok in enumerate(tokens):
            if tok in splits:
                out.setdefault(i, []).append((i + 1, tuple(splits[tok])))
    return out
