"""STM reference + CTM hypothesis, scored as `sclite -r REF.stm stm -h HYP.ctm ctm` scores them.

sclite (`stm2ctm.c`, `segment_hyp_for_utt`) walks the segments of each file and channel in
time order and hands each one the hypothesis words that come next in the CTM while their
midpoint (start + duration / 2) is before the segment's end; the last segment of a file and
channel takes every word left. So a word in a gap between two segments joins the *next*
segment, a word before the first segment the first one, a word after the last segment the last
one (checked against the binary: `tests/scoring/test_sclite_timed.py`); a CTM alternation
(`scoring.timed.CtmAlternation`) goes whole to one segment, by its latest word's midpoint, as
sclite hands it. A segment whose text holds `IGNORE_TIME_SEGMENT_IN_SCORING` (in any case:
`scoring.timed.is_ignored`) takes its words the same way and is then dropped, words and all.
File names and channels match without case (`2347 a` in the STM, `2347 A` in the CTM), as
sclite's; sclite reads STM times as single-precision floats (a midpoint equal to the end in
decimal can be before it), and so does this module. Each segment becomes one utterance,
`FILE-CHANNEL-SPEAKER-NNN` (NNN counts the speaker's segments), whose texts the `Scorer` then
scores as any others: with `align="sclite"` the counts are sclite's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scoring.errors import ScoringError
from scoring.io import sclite_text
from scoring.sclite_align import f32
from scoring.segments import Segment, TimedWord
from scoring.timed import is_ignored, read_ctm, read_stm


def _key(session: str, channel: str) -> tuple[str, str]:
    return session.lower(), channel.lower()


def assign_words(
    segments: Sequence[Segment], words: Sequence[TimedWord]
) -> list[tuple[Segment, list[TimedWord]]]:
    """Each segment (sorted by file, channel, then start time, as sclite wants the STM) with
    the CTM words sclite gives it; IGNORE_TIME_SEGMENT_IN_SCORING segments included."""
    by_channel: dict[tuple[str, str], list[TimedWord]] = {}
    for w in words:
        by_channel.setdefault(_key(w.session_id, w.channel), []).append(w)
    groups: dict[tuple[str, str], list[Segment]] = {}
    for seg in segments:
        groups.setdefault(_key(seg.session_id, seg.channel), []).append(seg)
    out: list[tuple[Segment, list[TimedWord]]] = []
    for key in sorted(groups):
        segs = sorted(groups[key], key=lambda s: s.start_time)
        pending = by_channel.get(key, [])
        at = 0
        for i, seg in enumerate(segs):
            end = len(pending)
            if i < len(segs) - 1:
                end, limit = at, f32(seg.end_time)  # sclite reads STM times as C floats
                while end < len(pending) and pending[end].midpoint < limit:
                    end += 1
            out.append((seg, list(pending[at:end])))
            at = end
    return out


def stm_ctm_texts(
    segments: Sequence[Segment], words: Sequence[TimedWord], source: str = "the CTM"
) -> tuple[dict[str, str], dict[str, str]]:
    """(references, hypotheses) by utterance ID, one utterance a scored segment. Hypothesis
    words of a file and channel the STM does not have are an error (sclite scores nothing
    for them either: a wrong file name would otherwise go unnoticed)."""
    known = {_key(s.session_id, s.channel) for s in segments}
    stray = [w for w in words if _key(w.session_id, w.channel) not in known]
    if stray:
        w = stray[0]
        raise ScoringError(
            f"{source}:{w.line}: {len(stray)} hypothesis word(s) of a file and channel the "
            f"reference STM lacks (e.g. file {w.session_id!r} channel {w.channel!r}); "
            "score against the STM of the same recordings"
        )
    refs: dict[str, str] = {}
    hyps: dict[str, str] = {}
    count: dict[str, int] = {}
    for seg, seg_words in assign_words(segments, words):
        if is_ignored(seg):
            continue
        n = count.get(seg.speaker, 0)
        count[seg.speaker] = n + 1
        key = f"{seg.session_id}-{seg.channel}-{seg.speaker}-{n:03d}"
        refs[key] = sclite_text(seg.words)
        hyps[key] = sclite_text(" ".join(w.word for w in seg_words))
    return refs, hyps


def read_stm_ctm(ref: str | Path, hyp: str | Path) -> tuple[dict[str, str], dict[str, str]]:
    """`stm_ctm_texts` of an STM and a CTM file (`scoring.timed`'s readers name bad lines)."""
    from scoring.normalize.alternation import check_text

    segments = read_stm(ref)
    for seg in segments:
        check_text(seg.words, f"{ref}:{seg.line}")
    return stm_ctm_texts(segments, read_ctm(hyp), str(hyp))
