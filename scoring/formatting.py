"""Formatting metrics: punctuation and capitalisation, on the texts as written (issue 42 item 3).

WER after normalisation forgives formatting on purpose; these say how good it is. Both sides are
read before any normalisation step:

* words: each whitespace-separated piece with its leading and trailing punctuation (Unicode
  category P) cut off; punctuation inside a word (`don't`, `long-term`, `3.5`) stays in it and
  counts as no mark. A piece of punctuation only (` - `, `...`) is no word.
* marks: every punctuation character between word i and word i + 1 is attached to word i (the
  preceding word), so `Hello, "world"` attaches `,` and `"` to `Hello`, and `"` to `world`;
  marks before the first word are left out. A word carries each mark once (`?!` is one `?` and
  one `!`; `...` is one `.`).
* the words of both sides are aligned case-insensitively (the platform's aligner, fewest edits);
  for each aligned pair (correct or substituted) a mark on both words is a hit, on the reference
  word only a miss, on the hypothesis word only a false alarm; a deleted reference word's marks
  are misses and an inserted hypothesis word's marks false alarms. Per mark: precision, recall
  and F1 of those counts; `all` pools the marks.
* capitalisation: over the aligned pairs whose words are equal once lower-cased, the share
  written with a different case (`Monday` / `monday`, `IBM` / `Ibm`).

The formatted WER (normalisation off) is the scorer's `raw` preset; `ops/score --formatting`
puts it beside these counts (docs/SCORING.md#formatting).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring.align import C, D, I, S, align_batch

FORMAT = "asrbench-formatting-v1"


def _is_punct(char: str) -> bool:
    return unicodedata.category(char)[0] == "P"


@dataclass(frozen=True)
class Word:
    """One written word: its text without outer punctuation, and the marks after it."""

    text: str
    marks: frozenset[str]


def words_of(text: str) -> list[Word]:
    """The words of `text` with the punctuation that follows each (the module's rule)."""
    words: list[Word] = []
    pending: set[str] = set()  # marks after the last word so far
    cores: list[str] = []
    for piece in unicodedata.normalize("NFC", text).split():
        start, end = 0, len(piece)
        while start < end and _is_punct(piece[start]):
            start += 1
        while end > start and _is_punct(piece[end - 1]):
            end -= 1
        if start == end:  # punctuation only: all of it follows the previous word
            pending.update(piece)
            continue
        if cores:
            pending.update(piece[:start])  # an opening mark belongs to the word before
            words.append(Word(cores[-1], frozenset(pending)))
        pending = set(piece[end:])
        cores.append(piece[start:end])
    if cores:
        words.append(Word(cores[-1], frozenset(pending)))
    return words


@dataclass(frozen=True)
class MarkCounts:
    """Hits, false alarms and misses of one punctuation mark; adds with `+`."""

    hits: int = 0
    false_alarms: int = 0
    misses: int = 0

    def __add__(self, other: MarkCounts) -> MarkCounts:
        return MarkCounts(
            self.hits + other.hits,
            self.false_alarms + other.false_alarms,
            self.misses + other.misses,
        )

    @property
    def precision(self) -> float | None:
        written = self.hits + self.false_alarms
        return self.hits / written if written else None

    @property
    def recall(self) -> float | None:
        wanted = self.hits + self.misses
        return self.hits / wanted if wanted else None

    @property
    def f1(self) -> float | None:
        # the harmonic mean of precision and recall, also where one is undefined (0 hits)
        counted = 2 * self.hits + self.false_alarms + self.misses
        return 2 * self.hits / counted if counted else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "hits": self.hits,
            "false_alarms": self.false_alarms,
            "misses": self.misses,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


@dataclass(frozen=True)
class FormattingCounts:
    """Per-mark counts and capitalisation counts of some utterances; pooled by `+` (`sum`)."""

    marks: Mapping[str, MarkCounts] = field(default_factory=dict)
    case_errors: int = 0
    case_pairs: int = 0  # aligned pairs equal once lower-cased: the capitalisation denominator

    def __add__(self, other: FormattingCounts) -> FormattingCounts:
        marks = dict(self.marks)
        for mark, counts in other.marks.items():
            marks[mark] = marks.get(mark, MarkCounts()) + counts
        return FormattingCounts(
            marks, self.case_errors + other.case_errors, self.case_pairs + other.case_pairs
        )

    def __radd__(self, other: object) -> FormattingCounts:
        if other == 0:  # sum()'s start
            return self
        return NotImplemented

    @property
    def case_error_rate(self) -> float | None:
        return self.case_errors / self.case_pairs if self.case_pairs else None

    def to_dict(self) -> dict[str, Any]:
        """summary.json's `formatting` (docs/RESULTS.md), without the formatted WER."""
        pooled = sum(self.marks.values(), MarkCounts())
        return {
            "format": FORMAT,
            "punctuation": {m: self.marks[m].to_dict() for m in sorted(self.marks)},
            "punctuation_all": pooled.to_dict(),
            "case_errors": self.case_errors,
            "case_pairs": self.case_pairs,
            "case_error_rate": self.case_error_rate,
        }


def _tally(marks: dict[str, list[int]], ref: frozenset[str], hyp: frozenset[str]) -> None:
    for mark in ref | hyp:
        row = marks.setdefault(mark, [0, 0, 0])
        row[0 if mark in ref and mark in hyp else 2 if mark in ref else 1] += 1


def _counts(ref: list[Word], hyp: list[Word], ops: str) -> FormattingCounts:
    """Counts of one utterance from its words and their alignment (`ops`: C, S, D, I)."""
    marks: dict[str, list[int]] = {}  # mark -> [hits, false alarms, misses]
    none: frozenset[str] = frozenset()
    case_errors = case_pairs = 0
    i = j = 0
    for op in map(ord, ops):
        if op == C or op == S:
            r, h = ref[i], hyp[j]
            _tally(marks, r.marks, h.marks)
            if op == C:
                case_pairs += 1
                case_errors += r.text != h.text
            i, j = i + 1, j + 1
        elif op == D:
            _tally(marks, ref[i].marks, none)
            i += 1
        elif op == I:
            _tally(marks, none, hyp[j].marks)
            j += 1
    return FormattingCounts(
        {m: MarkCounts(*row) for m, row in marks.items()}, case_errors, case_pairs
    )


def formatting_counts(refs: Mapping[str, str], hyps: Mapping[str, str]) -> FormattingCounts:
    """The formatting counts of every reference utterance against its hypothesis (a missing
    hypothesis: every reference word deleted, its marks missed), pooled."""
    ids = list(refs)
    ref_words = [words_of(refs[u]) for u in ids]
    hyp_words = [words_of(hyps.get(u) or "") for u in ids]
    vocab: dict[str, int] = {}

    def encode(words: Iterable[Word]) -> list[int]:
        # case-insensitive alignment; ids from 6 up, as the aligner's word ids
        return [vocab.setdefault(w.text.lower(), len(vocab) + 6) for w in words]

    pairs = [(encode(r), encode(h)) for r, h in zip(ref_words, hyp_words, strict=True)]
    if not pairs:
        return FormattingCounts()
    k = max(max(len(r), len(h)) for r, h in pairs) + 1  # above any substitution count
    ops, _ = align_batch(pairs, k)
    return sum(
        (_counts(r, h, o) for r, h, o in zip(ref_words, hyp_words, ops, strict=True)),
        FormattingCounts(),
    )


def formatting_summary(
    refs: Mapping[str, str], hyps: Mapping[str, str], raw: Any
) -> dict[str, Any]:
    """summary.json's `formatting`: the counts above and `formatted_wer`, the WER of `raw` (a
    Scorer with no normalisation step: the `raw` preset) on the same texts."""
    out = formatting_counts(refs, hyps).to_dict()
    m = raw.score(dict(refs), dict(hyps)).metrics
    out["formatted_wer"] = {
        "rate": m.ter,
        "errors": m.errors,
        "n_ref": m.n_ref,
        "sub": m.sub,
        "del": m.dele,
        "ins": m.ins,
    }
    return out


def formatting_text(figures: Mapping[str, Any]) -> str:
    """A few lines for the terminal: formatted WER, capitalisation, F1 per mark."""

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.2f}%"

    wer = figures["formatted_wer"]
    lines = [
        f"formatted WER (no normalisation): {pct(wer['rate'])} ({wer['errors']}/{wer['n_ref']})",
        f"capitalisation errors: {pct(figures['case_error_rate'])} "
        f"({figures['case_errors']}/{figures['case_pairs']} correct words)",
    ]
    for mark, c in [*figures["punctuation"].items(), ("all", figures["punctuation_all"])]:
        lines.append(
            f"punctuation {mark:>3}: P {pct(c['precision'])}  R {pct(c['recall'])}  "
            f"F1 {pct(c['f1'])}  (hits {c['hits']}, false alarms {c['false_alarms']}, "
            f"misses {c['misses']})"
        )
    return "\n".join(lines) + "\n"
