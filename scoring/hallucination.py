"""Hallucination and dropped audio, measured (issue 29, item 4).

Two families of checks, pure functions over texts, times and the `Scorer`:

* **Non-speech output.** On audio with no speech (silence, noise, music; a reference-free
  dataset such as `datasets/nonspeech_clips`) every word a model emits is a hallucination.
  Per clip: the words emitted; over clips: words per minute of non-speech and the share of
  clips with any output, each with a bootstrap interval over clips (`scoring.stats`), overall
  and by content group (silence / noise / music) with the group sizes.
* **Long-form checks** on a session with a timed reference: *dropped stretches* (reference
  words the model left out, >= `min_drop` seconds long: a window of audio it went silent on),
  *loops* (an n-gram repeated `min_repeats` or more times in a row, covering `min_loop_words`
  words or more: Whisper's "thank you thank you thank you ..."), and *words in pauses*
  (hypothesis words timed inside a stretch of >= `min_pause` seconds between reference
  segments), where the hypothesis has times.

What counts as a word: a token of `Scorer.normalize` (the scorer's own normalisation, so the
same text gives the same count as the insertions it would cost in WER) that holds at least one
letter or digit. So markers models print for non-speech are not words: `[Music]`,
`[BLANK_AUDIO]`, `<unk>` (NONSPEECH step), interjections (`uh`, ITJ), punctuation-only output
(`...`) and symbols (`♪`). Parenthesised text (`(upbeat music)`) is counted, as the scorer counts
it in a hypothesis: sclite's optional-word convention applies to references only.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from scoring.errors import ScoringError
from scoring.meeting import character_based
from scoring.normalize.alternation import ALT_MARKS
from scoring.normalize.optional import CLOSE, OPEN
from scoring.segments import Segment, TimedWord
from scoring.stats import bootstrap_ci

FORMAT = "asrbench-hallucination-v1"
CONTENTS = ("silence", "noise", "music")  # the CONTENT groups of datasets/nonspeech_clips
# Long-form defaults (documented in docs/LONGFORM.md).
MIN_DROP_S = 10.0  # a dropped stretch: >= 10 s of reference speech with no hypothesis word
MIN_REPEATS = 3  # a loop: an n-gram repeated >= 3 times in a row ...
MIN_LOOP_WORDS = 6  # ... covering >= 6 words (so "very very very" or "no no no" is no loop)
MAX_LOOP_N = 10  # n-grams of 1 to 10 words
MIN_PAUSE_S = 1.0  # a pause: >= 1 s between reference segments
PAUSE_COLLAR_S = 0.2  # a hypothesis word counts in a pause when its midpoint is this far inside
_MARKS = frozenset((OPEN, CLOSE)) | ALT_MARKS  # the scorer's private-use span marks

Normalize = Callable[[str], list[str]]


def is_word(token: str) -> bool:
    """A normalised token is a word when it holds a letter or a digit (not `♪`, not a mark)."""
    return token not in _MARKS and any(unicodedata.category(c)[0] in "LN" for c in token)


def words_of(text: str | None, normalize: Normalize) -> list[str]:
    """The words of a hypothesis after the scorer's normalisation (see the module doc)."""
    return [t for t in normalize(text or "") if is_word(t)]


# ---------------------------------------------------------------- non-speech clips


@dataclass(frozen=True)
class ClipOutput:
    """What a model wrote on one non-speech clip: `words` counted as the module doc says."""

    id: str
    content: str
    seconds: float
    words: int
    text: str


@dataclass(frozen=True)
class GroupFigures:
    """Hallucination on a group of non-speech clips (all clips, or one CONTENT value).

    `words_per_min` is the pooled rate: all words / all minutes of the group's audio; the
    intervals resample whole clips (percentile bootstrap, `level`); None where undefined
    (no replicates asked for, or one clip only gives a degenerate interval, kept as is).
    """

    group: str
    clips: int
    seconds: float
    words: int
    words_per_min: float
    words_per_min_ci: tuple[float, float] | None
    clips_with_output: int
    share_with_output: float
    share_ci: tuple[float, float] | None
    worst_id: str
    worst_words: int
    worst_text: str

    def to_dict(self) -> dict:
        out = asdict(self)
        for k in ("words_per_min_ci", "share_ci"):
            out[k] = list(out[k]) if out[k] is not None else None
        return out


@dataclass(frozen=True)
class NonSpeechFigures:
    """A model's hallucination figures on a reference-free non-speech dataset (summary.json)."""

    overall: GroupFigures
    groups: tuple[GroupFigures, ...]
    level: float
    replicates: int
    word_rule: str = "Scorer.normalize tokens holding a letter or digit"

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "word_rule": self.word_rule,
            "ci": {"level": self.level, "replicates": self.replicates, "over": "clips"},
            "overall": self.overall.to_dict(),
            "groups": {g.group: g.to_dict() for g in self.groups},
        }


def clip_outputs(
    hyps: Mapping[str, str | None],
    seconds: Mapping[str, float],
    contents: Mapping[str, str],
    normalize: Normalize,
) -> list[ClipOutput]:
    """One `ClipOutput` per clip of `seconds` (a clip with no hypothesis wrote nothing).

    `contents` gives each clip's CONTENT group ("" where unknown); a hypothesis for a clip
    that is not in `seconds` is an error naming it.
    """
    unknown = sorted(set(hyps) - set(seconds))
    if unknown:
        raise ScoringError(
            f"hypotheses for clips the dataset does not hold: {', '.join(unknown[:5])}; "
            "score the hypotheses of this dataset's run"
        )
    out = []
    for cid, secs in seconds.items():
        if not (isinstance(secs, (int, float)) and math.isfinite(secs) and secs > 0):
            raise ScoringError(f"clip {cid!r}: duration must be > 0 seconds, not {secs!r}")
        text = hyps.get(cid) or ""
        words = len(words_of(text, normalize))
        out.append(ClipOutput(cid, contents.get(cid, ""), float(secs), words, text))
    return out


def _ci(rep: dict) -> tuple[float, float] | None:
    low, high = rep.get("low"), rep.get("high")
    return None if low is None or high is None else (float(low), float(high))


def group_figures(
    group: str, clips: Sequence[ClipOutput], reps: int = 1000, level: float = 0.95, seed: int = 0
) -> GroupFigures:
    """Pooled words per minute and share of clips with output, intervals over clips."""
    if not clips:
        raise ScoringError(f"group {group!r} holds no clip: nothing to measure")
    words = [c.words for c in clips]
    minutes = [c.seconds / 60 for c in clips]
    emitted = [int(c.words > 0) for c in clips]
    worst = clips[max(range(len(clips)), key=lambda i: (clips[i].words, -i))]  # first of the most
    return GroupFigures(
        group=group,
        clips=len(clips),
        seconds=sum(c.seconds for c in clips),
        words=sum(words),
        words_per_min=sum(words) / sum(minutes),
        words_per_min_ci=_ci(bootstrap_ci(words, np.asarray(minutes), reps, level, seed)),
        clips_with_output=sum(emitted),
        share_with_output=sum(emitted) / len(clips),
        share_ci=_ci(bootstrap_ci(emitted, [1] * len(clips), reps, level, seed)),
        worst_id=worst.id,
        worst_words=worst.words,
        worst_text=worst.text,
    )


def _group_order(group: str) -> tuple[int, str]:
    return (CONTENTS.index(group), "") if group in CONTENTS else (len(CONTENTS), group)


def nonspeech_figures(
    clips: Sequence[ClipOutput], reps: int = 1000, level: float = 0.95, seed: int = 0
) -> NonSpeechFigures:
    """All clips, then each CONTENT group (silence, noise, music first, then any other)."""
    names = sorted({c.content for c in clips}, key=_group_order)
    groups = tuple(
        group_figures(g or "unlabelled", [c for c in clips if c.content == g], reps, level, seed)
        for g in names
    )
    return NonSpeechFigures(group_figures("all", clips, reps, level, seed), groups, level, reps)


# ---------------------------------------------------------------- long-form sessions


@dataclass(frozen=True)
class DroppedStretch:
    """Reference words in a row with no hypothesis word aligned to them (all deletions),
    from the first one's start to the last one's end (pseudo-word times, see `ref_words`)."""

    start_time: float
    end_time: float
    words: int
    text: str  # the stretch's first reference words, to find it in the transcript

    @property
    def seconds(self) -> float:
        return self.end_time - self.start_time


@dataclass(frozen=True)
class Loop:
    """`ngram` (n words) said `repeats` times in a row from hypothesis word `start` (0-based).
    `ref_repeats`: the most times in a row the reference says it (0: never, or not checked),
    so a loop the speakers said (a read-back, a chant) tells itself apart from one the model
    made up."""

    start: int
    n: int
    repeats: int
    ngram: str
    ref_repeats: int = 0

    @property
    def words(self) -> int:
        return self.n * self.repeats


@dataclass(frozen=True)
class PauseOutput:
    """A pause between reference segments and the hypothesis words timed inside it."""

    start_time: float
    end_time: float
    words: int
    text: str


@dataclass(frozen=True)
class SessionChecks:
    """The long-form checks of one session. `pauses` is None when the hypothesis has no times
    (words in pauses cannot be placed); `pause_seconds` is the pauses' total length."""

    session_id: str
    ref_words: int
    hyp_words: int
    dropped: tuple[DroppedStretch, ...]
    loops: tuple[Loop, ...]
    pauses: tuple[PauseOutput, ...] | None
    pause_seconds: float
    settings: tuple[tuple[str, float], ...] = ()

    @property
    def dropped_seconds(self) -> float:
        return sum(d.seconds for d in self.dropped)

    @property
    def loop_words(self) -> int:
        return sum(lp.words for lp in self.loops)

    @property
    def pause_words(self) -> int | None:
        return None if self.pauses is None else sum(p.words for p in self.pauses)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["settings"] = dict(self.settings)
        out["dropped_seconds"] = self.dropped_seconds
        out["loop_words"] = self.loop_words
        out["pause_words"] = self.pause_words
        return out


def find_loops(
    words: Sequence[str],
    min_repeats: int = MIN_REPEATS,
    min_words: int = MIN_LOOP_WORDS,
    max_n: int = MAX_LOOP_N,
) -> list[Loop]:
    """Repeated n-gram loops, left to right, not overlapping: at each position the n-gram
    (1 <= n <= max_n) whose run in a row covers the most words (the shortest n on a tie), kept
    when it repeats >= `min_repeats` times and covers >= `min_words` words."""
    if min_repeats < 2 or max_n < 1:
        raise ScoringError(
            f"loops need min_repeats >= 2 and max_n >= 1, not {min_repeats}, {max_n}"
        )
    out: list[Loop] = []
    i = 0
    while i < len(words):
        best = _longest_run(words, i, max_n)
        n, reps = best
        if reps >= min_repeats and n * reps >= min_words:
            out.append(Loop(i, n, reps, " ".join(words[i : i + n])))
            i += n * reps
        else:
            i += 1
    return out


def _longest_run(words: Sequence[str], i: int, max_n: int) -> tuple[int, int]:
    """(n, repeats) of the n-gram at `i` repeated in a row over the most words."""
    best = (1, 1)
    for n in range(1, max_n + 1):
        if i + 2 * n > len(words) or words[i + n] != words[i]:
            continue  # cheap test first: a repeat starts with the same word
        gram = list(words[i : i + n])
        reps = 1
        while list(words[i + reps * n : i + (reps + 1) * n]) == gram:
            reps += 1
        if n * reps > best[0] * best[1]:
            best = (n, reps)
    return best


def most_in_a_row(words: Sequence[str], ngram: Sequence[str]) -> int:
    """The most times `ngram` occurs in a row in `words` (0 when it does not occur)."""
    n, best, i = len(ngram), 0, 0
    gram = list(ngram)
    while i + n <= len(words):
        reps = 0
        while list(words[i + reps * n : i + (reps + 1) * n]) == gram:
            reps += 1
        best = max(best, reps)
        i += max(1, reps * n)
    return best


def ref_words(
    segments: Sequence[Segment], normalize: Normalize
) -> tuple[list[str], list[tuple[float, float]]]:
    """A session's reference tokens in time order (segments by start, as session WER joins
    them) with pseudo-word times: each segment split in proportion to its tokens' characters
    (MeetEval's `character_based`)."""
    tokens: list[str] = []
    times: list[tuple[float, float]] = []
    for seg in sorted(segments, key=lambda s: (s.start_time, s.end_time)):
        toks = [t for t in normalize(seg.words) if t not in _MARKS]
        tokens.extend(toks)
        times.extend(character_based(seg.start_time, seg.end_time, toks))
    return tokens, times


def dropped_stretches(
    codes: str,
    times: Sequence[tuple[float, float]],
    tokens: Sequence[str],
    min_seconds: float = MIN_DROP_S,
) -> list[DroppedStretch]:
    """Runs of deleted reference words (code D; an optional word left out, O, neither breaks
    nor starts a run) lasting >= `min_seconds`. `codes` is the scorer's alignment (C S D I O),
    `times` one (start, end) per reference token."""
    out: list[DroppedStretch] = []
    run: list[int] = []
    r = 0
    for code in codes + "C":  # a final C closes the last run
        if code == "I":
            continue
        if code == "D":
            run.append(r)
        elif code != "O" and run:
            out.extend(_stretch(run, times, tokens, min_seconds))
            run = []
        r += 1
    return out


def _stretch(run: list[int], times, tokens, min_seconds: float) -> list[DroppedStretch]:
    start, end = times[run[0]][0], times[run[-1]][1]
    if end - start < min_seconds:
        return []
    return [DroppedStretch(start, end, len(run), " ".join(tokens[i] for i in run[:8]))]


def pauses(
    segments: Sequence[Segment], min_seconds: float = MIN_PAUSE_S, duration: float | None = None
) -> list[tuple[float, float]]:
    """Stretches of >= `min_seconds` covered by no reference segment (any speaker): between
    segments, before the first, and after the last when the audio's `duration` is given."""
    spans = sorted((s.start_time, s.end_time) for s in segments)
    out = []
    covered = 0.0
    for start, end in spans:
        if start - covered >= min_seconds:
            out.append((covered, start))
        covered = max(covered, end)
    if duration is not None and duration - covered >= min_seconds:
        out.append((covered, duration))
    return out


def hyp_points(
    hyp: Sequence[TimedWord] | Sequence[Segment], normalize: Normalize
) -> list[tuple[str, float]]:
    """Each hypothesis word with one time: a timed word's midpoint, or the centre of its share
    of a segment (MeetEval's `character_based_points`) when only segment times exist."""
    out: list[tuple[str, float]] = []
    for item in hyp:
        if isinstance(item, TimedWord):
            out.extend((w, item.midpoint) for w in words_of(item.word, normalize))
        else:
            toks = words_of(item.words, normalize)
            spans = character_based(item.start_time, item.end_time, toks)
            out.extend((w, (a + b) / 2) for w, (a, b) in zip(toks, spans, strict=True))
    return out


def words_in_pauses(
    gaps: Sequence[tuple[float, float]],
    points: Sequence[tuple[str, float]],
    collar: float = PAUSE_COLLAR_S,
) -> list[PauseOutput]:
    """Per pause, the hypothesis words whose time lies inside it, `collar` seconds clear of
    both ends (word times are approximate)."""
    out = []
    for start, end in gaps:
        inside = [w for w, t in points if start + collar < t < end - collar]
        out.append(PauseOutput(start, end, len(inside), " ".join(inside[:12])))
    return out


@dataclass(frozen=True)
class LongformSettings:
    """The thresholds of `session_checks` (recorded with the figures)."""

    min_drop: float = MIN_DROP_S
    min_repeats: int = MIN_REPEATS
    min_loop_words: int = MIN_LOOP_WORDS
    max_loop_n: int = MAX_LOOP_N
    min_pause: float = MIN_PAUSE_S
    pause_collar: float = PAUSE_COLLAR_S


def session_checks(
    scorer,
    refs: Sequence[Segment],
    hyp: str | Sequence[TimedWord] | Sequence[Segment],
    *,
    duration: float | None = None,
    settings: LongformSettings | None = None,
) -> SessionChecks:
    """Dropped stretches, loops and words in pauses for one session.

    `refs` are the session's reference segments; `hyp` its hypothesis: plain text, or timed
    words / segments (in time order). The scorer aligns the whole session as session WER does
    (reference segments joined by start time, one long utterance), so a hypothesis word maps
    to a reference word; reference word times then place what was dropped.
    """
    cfg = settings or LongformSettings()
    if not refs:
        raise ScoringError("session_checks needs the session's reference segments (none given)")
    sid = refs[0].session_id
    timed = not isinstance(hyp, str)
    text = hyp if isinstance(hyp, str) else " ".join(_item_text(h) for h in hyp)
    tokens, times = ref_words(refs, scorer.normalize)
    if not tokens:
        raise ScoringError(f"session {sid!r}: the reference holds no words; nothing to align")
    ref_text = " ".join(s.words for s in sorted(refs, key=lambda s: (s.start_time, s.end_time)))
    utt = scorer.utterances({sid: ref_text}, {sid: text})[0]
    times = _match_times(utt.ref, tokens, times)
    hyp_words = words_of(text, scorer.normalize)
    gaps = pauses(refs, cfg.min_pause, duration)
    found = None
    if timed:
        points = hyp_points(hyp, scorer.normalize)  # type: ignore[arg-type]
        found = tuple(words_in_pauses(gaps, points, cfg.pause_collar))
    return SessionChecks(
        session_id=sid,
        ref_words=len(utt.ref),
        hyp_words=len(hyp_words),
        dropped=tuple(dropped_stretches(utt.codes, times, utt.ref, cfg.min_drop)),
        loops=tuple(
            replace(lp, ref_repeats=most_in_a_row(utt.ref, lp.ngram.split()))
            for lp in find_loops(hyp_words, cfg.min_repeats, cfg.min_loop_words, cfg.max_loop_n)
        ),
        pauses=found,
        pause_seconds=sum(b - a for a, b in gaps),
        settings=tuple(asdict(cfg).items()),
    )


def _item_text(item: TimedWord | Segment) -> str:
    return item.word if isinstance(item, TimedWord) else item.words


def _match_times(
    scored: Sequence[str], tokens: Sequence[str], times: Sequence[tuple[float, float]]
) -> list[tuple[float, float]]:
    """Times for the scorer's reference tokens: those of the per-segment normalisation when
    both agree in number (the usual case), else by relative position (normalising the joined
    text can differ at segment joins, e.g. a number split over two segments)."""
    if len(scored) == len(tokens):
        return list(times)
    m = len(tokens)
    return [times[min(m - 1, (i * m) // max(1, len(scored)))] for i in range(len(scored))]
