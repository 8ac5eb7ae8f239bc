"""Errors that matter: per entity class, number values, and a keyword list (B-WER / U-WER).

Everything is read off the scorer's alignment of each recording (`UtteranceResult.codes`), so
the counts agree with its WER: a reference word scored C, S, D (or O, an optional word left
out, counted correct) and an inserted word I.

* **Entity classes** (`wer_tags`): a class's error rate is the S and D of the reference words
  tagged with it, plus each word inserted between two words of one of its entities, over its
  reference words (the words of the chosen reading where a normalisation sidecar gave several).
  fstalign (`--preset fstalign`) charges an insertion to an entity only inside one
  normalised span (a `tags` entity of the normalisation sidecar, which its graph holds as one
  unit): "last <fall> quarter" is no DATE error for it.
  An entity is *recognised whole* when every word of it is correct and nothing is inserted
  inside it.
* **Numbers**: a number span is a maximal run of number words in the reference as scored
  (`scoring.numbers`), with the inserted words beside it. A span with an error is a *value
  error* when the hypothesis words aligned to it read as another number, a *format
  difference* when they read as the same one ("two thousand twenty" for "twenty twenty"), and
  *missed* when they hold no number.
* **Keywords** (`--keywords`, one word or phrase a line, normalised as the texts): a reference
  word is *biased* when it lies in an occurrence of a keyword. B-WER = (S + D on biased
  reference words + insertions of a word of some keyword) / biased reference words; U-WER the
  same for the other words and insertions (Le et al. 2021, "Contextualized streaming end-to-end
  speech recognition with trie-based deep biasing and shallow fusion", Interspeech 2021).
  B-WER + U-WER weighted by their denominators is the WER.

Confidence intervals resample recordings (utterances) with `scoring.stats`' bootstrap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scoring.errors import ScoringError
from scoring.metrics import UtteranceResult
from scoring.nlp import NlpToken, Piece
from scoring.numbers import is_joiner, is_number_word, value
from scoring.stats import bootstrap_ratios

FORMAT = "asrbench-entities-v1"


@dataclass(frozen=True, slots=True)
class Tagged:
    """A recording's reference as scored, each word with the entity IDs it belongs to."""

    utt: UtteranceResult
    entities: list[tuple[str, ...]]  # per scored reference word
    classes: dict[str, str]  # entity ID -> class
    # per scored reference word: whether a word inserted before it may be charged to the
    # entities it shares with the word before (None: always; fstalign's rule: only inside
    # one normalised span)
    joined: list[bool] | None = None


def tag_words(
    utt: UtteranceResult,
    tokens: Sequence[NlpToken],
    pieces: Sequence[Piece],
    owner: Sequence[int],
    classes: dict[str, str] | None,
    normalised_only: bool = False,
) -> Tagged:
    """Each scored reference word's entities: the `wer_tags` of the NLP tokens of its piece
    (`owner` from `scoring.nlp.map_pieces`); with no wer_tags sidecar (`classes` None), the
    classes written in the `tags` column. `normalised_only`: an insertion is an entity's error
    only between two words of one piece read from the normalisation sidecar (fstalign's rule)."""
    if classes is None:
        classes = {}
        for t in tokens:
            classes.update(zip(t.tags, t.tag_classes, strict=True))
        column = "tags"
    else:
        column = "wer_tags"
    per_piece = []
    for p in pieces:
        ids: dict[str, None] = {}
        for t in tokens[p.start : p.stop]:
            ids.update(dict.fromkeys(x for x in getattr(t, column) if x in classes))
        per_piece.append(tuple(ids))
    joined = None
    if normalised_only:  # a piece of several words with `tags` is a normalised entity's
        joined = [
            r > 0 and owner[r - 1] == owner[r] and bool(tokens[pieces[owner[r]].start].tags)
            for r in range(len(owner))
        ]
    return Tagged(utt, [per_piece[k] for k in owner], classes, joined)


def _columns(codes: str) -> list[tuple[str, int, int]]:
    """(code, reference index, hypothesis index) per alignment column; an index is that of
    the next word on a side the column does not consume."""
    out, r, h = [], 0, 0
    for c in codes:
        out.append((c, r, h))
        r += c in "CSDO"
        h += c in "CSIo"  # o: an optional hypothesis word left out (the exact sclite mode)
    return out


def inserted_into(tag: Tagged, r: int) -> set[str]:
    """The entities a word inserted before scored reference word `r` is an error of: those
    both neighbours belong to (with `joined`, fstalign's rule, only inside one normalised
    span)."""
    ents = tag.entities
    if not 0 < r < len(ents) or (tag.joined is not None and not tag.joined[r]):
        return set()
    return set(ents[r - 1]) & set(ents[r])


@dataclass
class _Count:
    errors: list[int] = field(default_factory=list)
    n_ref: list[int] = field(default_factory=list)
    whole: list[int] = field(default_factory=list)
    n_entities: list[int] = field(default_factory=list)

    def grow(self, n: int) -> None:
        for col in (self.errors, self.n_ref, self.whole, self.n_entities):
            col.extend([0] * (n - len(col)))


def _class_counts(tagged: Sequence[Tagged]) -> dict[str, _Count]:
    counts: dict[str, _Count] = {}
    for g, rec in enumerate(tagged):
        broken: dict[str, bool] = {}
        ents = rec.entities
        for code, r, _ in _columns(rec.utt.codes):
            if code == "o":
                continue
            if code == "I":
                for e in inserted_into(rec, r):
                    broken[e] = True
                    _at(counts, rec.classes[e], g, len(tagged)).errors[g] += 1
                continue
            for e in ents[r]:
                c = _at(counts, rec.classes[e], g, len(tagged))
                c.n_ref[g] += 1
                bad = code in "SD"
                c.errors[g] += bad
                broken[e] = broken.get(e, False) or bad
        for e, bad in broken.items():
            c = counts[rec.classes[e]]
            c.n_entities[g] += 1
            c.whole[g] += not bad
    return counts


def _at(counts: dict[str, _Count], cls: str, g: int, n: int) -> _Count:
    c = counts.setdefault(cls, _Count())
    c.grow(n)
    return c


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _ci(num: Sequence[int], den: Sequence[int], boot: tuple[int, float, int]) -> dict:
    reps, level, seed = boot
    return bootstrap_ratios(list(num), {"x": list(den)}, reps, level, seed)["x"]


def entity_classes(tagged: Sequence[Tagged], boot: tuple[int, float, int]) -> dict[str, dict]:
    """Per class: reference words, errors, their rate and the share of entities recognised
    whole, each with a bootstrap interval over recordings (`boot`: reps, level, seed)."""
    out = {}
    for cls, c in sorted(_class_counts(tagged).items()):
        n_ref, errors, n_ent, whole = sum(c.n_ref), sum(c.errors), sum(c.n_entities), sum(c.whole)
        out[cls] = {
            "n_ref": n_ref,
            "errors": errors,
            "er": _rate(errors, n_ref),
            "er_ci": _ci(c.errors, c.n_ref, boot),
            "n_entities": n_ent,
            "whole": whole,
            "whole_rate": _rate(whole, n_ent),
            "whole_ci": _ci(c.whole, c.n_entities, boot),
        }
    return out


def number_spans(ref: Sequence[str]) -> list[tuple[int, int]]:
    """Maximal runs of number words in a reference; a joiner ("and", "point", "oh") only
    between two number words."""
    spans, i = [], 0
    while i < len(ref):
        if not is_number_word(ref[i]):
            i += 1
            continue
        j = i + 1
        while j < len(ref) and (
            is_number_word(ref[j])
            or (is_joiner(ref[j]) and j + 1 < len(ref) and is_number_word(ref[j + 1]))
        ):
            j += 1
        spans.append((i, j))
        i = j
    return spans


def _span_outcome(utt: UtteranceResult, cols: list, span: tuple[int, int], at: list[int]) -> str:
    """correct, value, format or missed, for one reference number span; `at[r]`: the column
    of reference word r (one a word, in order: a span's columns without a scan of all)."""
    lo, hi = span
    a, b = at[lo], at[hi - 1] + 1
    while a > 0 and cols[a - 1][0] == "I" and is_number_word(utt.hyp[cols[a - 1][2]]):
        a -= 1  # inserted number words just before or after belong to the span
    while b < len(cols) and cols[b][0] == "I" and is_number_word(utt.hyp[cols[b][2]]):
        b += 1
    if all(cols[k][0] in "CO" for k in range(a, b)):
        return "correct"
    hyp = [utt.hyp[h] for c, _, h in cols[a:b] if c in "CSI"]
    words = [w for w in hyp if is_number_word(w) or is_joiner(w)]
    got = value(_trim(words))
    if got is None:
        return "missed"
    return "format" if got == value(list(utt.ref[lo:hi])) else "value"


def _trim(words: list[str]) -> list[str]:
    while words and is_joiner(words[0]):
        words = words[1:]
    while words and is_joiner(words[-1]):
        words = words[:-1]
    return words


def numbers(utts: Sequence[UtteranceResult], boot: tuple[int, float, int]) -> dict:
    """Number spans and their outcomes; the value-error rate (value errors over spans) with
    a bootstrap interval over recordings."""
    kinds = ("correct", "value", "format", "missed")
    per = {k: [0] * len(utts) for k in kinds}
    for g, utt in enumerate(utts):
        cols = _columns(utt.codes)
        at = [k for k, col in enumerate(cols) if col[0] in "CSDO"]
        for span in number_spans(utt.ref):
            per[_span_outcome(utt, cols, span, at)][g] += 1
    spans = [sum(per[k][g] for k in kinds) for g in range(len(utts))]
    n = sum(spans)
    return {
        "n_spans": n,
        "correct": sum(per["correct"]),
        "value_errors": sum(per["value"]),
        "format_differences": sum(per["format"]),
        "missed": sum(per["missed"]),
        "value_error_rate": _rate(sum(per["value"]), n),
        "value_error_ci": _ci(per["value"], spans, boot),
    }


def read_keywords(path: Path, normalize: Callable[[str], list[str]]) -> list[tuple[str, ...]]:
    """A keyword file: one word or phrase a line (`#` starts a comment line), each normalised
    as the texts are; a line that normalises to nothing is an error naming it."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ScoringError(f"{path}: cannot read the keyword list ({exc})") from None
    out: dict[tuple[str, ...], None] = {}
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        words = tuple(normalize(line))
        if not words:
            raise ScoringError(
                f"{path}:{no}: {line.strip()!r} is nothing once normalised; remove the line"
            )
        out[words] = None
    if not out:
        raise ScoringError(f"{path}: no keyword; give one word or phrase a line")
    return list(out)


def _biased(ref: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> tuple[list[bool], list]:
    """Which reference words lie in an occurrence of a keyword, and the occurrences."""
    flags = [False] * len(ref)
    found = []
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for p in phrases:
        by_first.setdefault(p[0], []).append(p)
    for i, w in enumerate(ref):
        for p in by_first.get(w, ()):
            if tuple(ref[i : i + len(p)]) == p:
                flags[i : i + len(p)] = [True] * len(p)
                found.append((i, i + len(p)))
    return flags, found


def keywords(
    utts: Sequence[UtteranceResult],
    phrases: Sequence[tuple[str, ...]],
    boot: tuple[int, float, int],
) -> dict:
    """B-WER and U-WER (module docstring), with intervals, and the share of keyword
    occurrences recognised whole (every word correct, nothing inserted inside)."""
    vocab = {w for p in phrases for w in p}
    cols_n = {k: [0] * len(utts) for k in ("b_err", "b_ref", "u_err", "u_ref", "occ", "whole")}
    for g, utt in enumerate(utts):
        flags, found = _biased(utt.ref, phrases)
        cols = _columns(utt.codes)
        for code, r, h in cols:
            if code == "o":
                continue
            if code == "I":
                cols_n["b_err" if utt.hyp[h] in vocab else "u_err"][g] += 1
                continue
            side = "b" if flags[r] else "u"
            cols_n[side + "_ref"][g] += 1
            cols_n[side + "_err"][g] += code in "SD"
        for lo, hi in found:
            cols_n["occ"][g] += 1
            span = [c for c, r, _ in cols if lo <= r < hi or (c == "I" and lo < r < hi)]
            cols_n["whole"][g] += all(c in "CO" for c in span)
    t = {k: sum(v) for k, v in cols_n.items()}
    return {
        "n_keywords": len(phrases),
        "n_biased_ref": t["b_ref"],
        "n_unbiased_ref": t["u_ref"],
        "b_wer": _rate(t["b_err"], t["b_ref"]),
        "b_wer_ci": _ci(cols_n["b_err"], cols_n["b_ref"], boot),
        "u_wer": _rate(t["u_err"], t["u_ref"]),
        "u_wer_ci": _ci(cols_n["u_err"], cols_n["u_ref"], boot),
        "occurrences": t["occ"],
        "whole": t["whole"],
        "whole_rate": _rate(t["whole"], t["occ"]),
    }


def describe(
    utts: Sequence[UtteranceResult],
    boot: tuple[int, float, int],
    tagged: Sequence[Tagged] | None = None,
    phrases: Sequence[tuple[str, ...]] | None = None,
    warnings: Sequence[str] = (),
) -> dict:
    """summary.json's `entities` block (docs/RESULTS.md): classes when tagged, numbers
    always, keywords when a list was given."""
    out: dict = {"format": FORMAT, "numbers": numbers(utts, boot)}
    if tagged is not None:
        out["classes"] = entity_classes(tagged, boot)
    if phrases is not None:
        out["keywords"] = keywords(utts, phrases, boot)
    if warnings:
        out["warnings"] = list(warnings)
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _ci_text(ci: dict) -> str:
    if ci.get("low") is None:
        return "-"
    return f"[{100 * ci['low']:.1f}, {100 * ci['high']:.1f}]"


def entities_table(block: dict) -> str:
    """The console table of an `entities` block."""
    lines = []
    classes = block.get("classes") or {}
    if classes:
        lines.append(f"{'class':<16}{'ref words':>10}{'ER %':>8}  {'CI':<14}{'whole %':>9}")
        order = sorted(classes.items(), key=lambda kv: -(kv[1]["er"] or 0))
        for cls, c in order:
            lines.append(
                f"{cls:<16}{c['n_ref']:>10}{_pct(c['er']):>8}  {_ci_text(c['er_ci']):<14}"
                f"{_pct(c['whole_rate']):>9}"
            )
    n = block["numbers"]
    lines.append(
        f"numbers: {n['n_spans']} spans, {n['correct']} correct, {n['value_errors']} value "
        f"errors ({_pct(n['value_error_rate'])} %), {n['format_differences']} format "
        f"differences, {n['missed']} missed"
    )
    k = block.get("keywords")
    if k is not None:
        lines.append(
            f"keywords: B-WER {_pct(k['b_wer'])} % {_ci_text(k['b_wer_ci'])} over "
            f"{k['n_biased_ref']} words, U-WER {_pct(k['u_wer'])} % {_ci_text(k['u_wer_ci'])} "
            f"over {k['n_unbiased_ref']}; {k['whole']} of {k['occurrences']} occurrences whole"
        )
    return "\n".join(lines) + "\n"
