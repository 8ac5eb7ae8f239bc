"""The Scorer: built once (pipeline, alternatives, edit transducers), then `score(refs, hyps)`."""

from __future__ import annotations

import bisect
import gc
import itertools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scoring.align import (
    FIRST_WORD,
    INFEASIBLE,
    Marks,
    PairTooLong,
    align_arrays,
    check_exact,
)
from scoring.dae import Alternatives, Segment, Slot
from scoring.dae import Store as DaeStore
from scoring.errors import ScoringError
from scoring.languages import Profile, resolve
from scoring.metrics import UNITS, Metrics, UtteranceResult, pooled
from scoring.normalize import (
    Itj,
    NonSpeech,
    Nsw,
    Optional,
    Pipeline,
    char_tokens,
    run_text_steps,
    steps,
    word_tokens,
)
from scoring.normalize.alternation import Alternation, Fragment, check_text, has_marks
from scoring.normalize.invisible import FORMS
from scoring.normalize.nsw import Num2Words
from scoring.normalize.optional import split_optional, strip_markers
from scoring.stats import MAX_BOOTSTRAP, MAX_BOOTSTRAP_REASON

try:  # token ids looked up in C (scoring/_fast.pyx); where it was not built, `map` below
    import scoring._fast as _fast
except ImportError:  # pragma: no cover - an install without a C compiler
    _fast = None

if TYPE_CHECKING:
    from scoring.dae_windows import Branch, Item
    from scoring.wfst import FstAligner

DATA = Path(__file__).resolve().parent / "data"
LANGS = ("en", "zh")  # the languages with their own pipelines; any other BCP-47 tag: languages.py
DIACRITICS = ("keep", "strip")
ALIGNS = ("minimal", "sclite", "fstalign")
# Networks (alternations, `@`, fragments, optional hypothesis words) keep their whole table of
# Python floats (~150 MB); a plain pair in the exact mode has its own bound, sclite_align.MAX_CELLS.
SCLITE_MAX_CELLS = 1 << 22


@dataclass
class ScorerConfig:
    """Everything that can change a number. Each pipeline step can be switched off for ablations.

    Data files default to the curated ones in `scoring/data` for the language; `None` means the
    default, `""` means none. `cache_dir` is the folder where NSW keeps its grammars and
    results (None: `scoring.normalize.nsw.default_cache_dir()`). `engine="fst"` sends
    every utterance through the FST (used to show that the fast path gives identical results).
    `nonspeech` removes the markers listed in `nonspeech_markers` (`<beep>`, `[noise]`) from
    both sides; `optional` applies sclite's convention to the reference: a parenthesised word
    may be left out at no cost. `invisible` removes terminal escape sequences, control
    characters and invisible format characters (zero-width space, bidi marks...); `unicode`
    normalises to `unicode_form` ("NFC", or "NFKC" to fold compatibility forms too).
    `bootstrap` is 0 (no intervals) to MAX_BOOTSTRAP replicates.
    """

    # any BCP-47 tag (scoring.languages); stored in canonical case (`pt-br` -> `pt-BR`)
    lang: str = "en"
    # "word"; "char": every character, spaces between words included (jiwer's cer); "mixed":
    # CJK characters and other runs as words. Default: the language's (scoring.languages):
    # "mixed" for Chinese, "char" for ja, th, lo, km, my, bo, else "word".
    unit: str | None = None
    invisible: bool = True
    unicode: bool = True
    unicode_form: str = "NFC"
    case: bool = True
    punc: bool = True
    itj: bool = True
    ukus: bool = True
    nsw: bool = True
    dae: bool = True
    nonspeech: bool = True
    optional: bool = True
    hyphen: str = "space"
    interjections: str | None = None
    uk_us: str | None = None
    alternatives: str | None = None
    nonspeech_markers: str | None = None
    cache_dir: str | None = None
    bootstrap: int = 1000
    confidence: float = 0.95
    seed: int = 0
    engine: str = "auto"
    max_enum: int = 64  # slot combinations enumerated by the DP before the FST takes over
    # "minimal": fewest edits (scoring.align); "sclite": sclite's weights and tie-breaks, its
    # ASCII-only case folding, no DAE (scoring.sclite_align); "fstalign" (its preset): the
    # fewest edits; of equally cheap paths through alternations, the one fstalign takes (its
    # longer reading, its placement of edits: scoring.sclite_align._fst_table), same errors
    align: str = "minimal"
    # "strip": remove optional diacritics (scoring.normalize.script.Diacritics); "keep"
    diacritics: str = "keep"
    # COMPOUNDS (scoring.normalize.compounds, applied by DAE): a word joined on one side and
    # split on the other matches. None: the language's default (on where words are scored,
    # off for English and Chinese, whose numbers stay those of before)
    compounds: bool | None = None
    # sclite's reference alternations `{ a / b / @ }` and null word `@` (issue 25;
    # scoring.normalize.alternation); word level only
    alternations: bool = True
    # sclite's `-F`: a fragment (`th-`, `-ing`) is correct against a word it begins or ends
    fragments: bool = False
    # pair hypothesis and reference IDs that differ only in case, as sclite does; None: the
    # mode's default (on in the exact sclite mode, which folds them as sclite does; else off)
    ignore_id_case: bool | None = None

    def __post_init__(self) -> None:
        profile = resolve(self.lang)  # ScoringError for a malformed tag
        self.lang = profile.tag
        if self.diacritics not in DIACRITICS:
            raise ScoringError(
                f"diacritics must be one of {', '.join(DIACRITICS)}, not {self.diacritics!r}"
            )
        if self.unit is None:
            self.unit = profile.unit
        if self.unit not in UNITS:
            raise ScoringError(
                f"unit (--unit) must be one of {', '.join(UNITS)}, not {self.unit!r}"
            )
        if self.engine not in ("auto", "fst"):
            raise ScoringError(f"engine must be 'auto' or 'fst', not {self.engine!r}")
        self._check_align()
        if self.unicode_form not in FORMS:
            raise ScoringError(
                f"unicode_form (--unicode-form) must be one of "
                f"{', '.join(FORMS)}, not {self.unicode_form!r}"
            )
        if (
            isinstance(self.bootstrap, bool)
            or not isinstance(self.bootstrap, int)
            or not 0 <= self.bootstrap <= MAX_BOOTSTRAP
        ):
            raise ScoringError(
                f"bootstrap (--bootstrap) must be a whole number from 0 (no confidence "
                f"intervals) to {MAX_BOOTSTRAP:,} replicates, not {self.bootstrap!r}: "
                f"{MAX_BOOTSTRAP_REASON}"
            )
        if not (isinstance(self.confidence, (int, float)) and 0 < self.confidence < 1):
            raise ScoringError(
                f"confidence must be a level between 0 and 1 (e.g. 0.95), not {self.confidence!r}"
            )

    def _check_align(self) -> None:
        if self.align not in ALIGNS:
            raise ScoringError(
                f"align (--align) must be one of {', '.join(ALIGNS)}, not {self.align!r}"
            )
        if self.ignore_id_case is None:
            self.ignore_id_case = self.align == "sclite"
        if self.align == "sclite":
            if self.engine == "fst":
                raise ScoringError("align='sclite' (--align sclite) has no FST engine")
            self.dae = False  # sclite reads no alternatives: the words are scored as written

    def data_file(self, kind: str) -> Path | None:
        """Resolved path of a data file ('interjections', 'uk_us', 'alternatives',
        'nonspeech_markers') or None."""
        value = getattr(self, kind)
        if value == "":
            return None
        if value is not None:
            return Path(value)
        name = self.profile().data.get(kind)  # the language's curated files
        if name is None and kind == "alternatives":  # alternatives_<lang>.txt, where there is one
            name = f"alternatives_{self.profile().language}.txt"
            return DATA / name if (DATA / name).is_file() else None
        return DATA / name if name else None

    def profile(self) -> Profile:
        """The language profile of `lang` (scoring.languages)."""
        return resolve(self.lang)


@dataclass
class ScoreResult:
    """Per-utterance results, the corpus metrics and the configuration that produced them.

    Files are the caller's business: `scoring.report` turns a result into text.
    """

    utterances: list[UtteranceResult]
    metrics: Metrics
    config: dict = field(default_factory=dict)


def _branches(
    rule_ids: dict[tuple[tuple[str, ...], ...], list[list[int]]],
    slot: Slot,
    run: list[int],
    ids: Callable[[tuple[str, ...]], list[int]],
) -> list[tuple[list[int], list[int]]]:
    """A slot's branches as `Scorer._enumerate` appends them: branch i's ids followed by the
    run after the slot, and the positions of its strict words among them (none for the form
    the system wrote). The ids of a rule's forms are looked up once a plan (`rule_ids`)."""
    forms = rule_ids.get(slot.forms)
    if forms is None:
        forms = rule_ids[slot.forms] = [ids(f) for f in slot.forms]
    return [
        (f + run, [] if i == slot.surface else [p for p, m in enumerate(slot.mask(i)) if m])
        for i, f in enumerate(forms)
    ]


def _token_ids(
    lists: list[list[str]], start: int, stop: int, vocab: dict, array: bool = False
) -> list[int] | np.ndarray:
    """The ids of the tokens of lists[start:stop], in order (`vocab` gives a new token the
    next id); an int64 array with `array`. In C where built (`_fast.token_ids`)."""
    if _fast is not None:
        return _fast.token_ids(lists, start, stop, vocab, array)
    ids = map(vocab.__getitem__, itertools.chain.from_iterable(lists[start:stop]))
    return np.fromiter(ids, dtype=np.int64) if array else list(ids)


def _int64s(values: list[int]) -> np.ndarray:
    """`np.array(values, dtype=np.int64)`; in C where built (no type discovery first)."""
    return _fast.int64s(values) if _fast is not None else np.array(values, dtype=np.int64)


def _cheapest(costs: list[int], codes: list[str], a: int, b: int) -> int:
    """The pair of a..b-1 with the least cost; ties: the fewest insertions, then the earliest
    (the written forms, the first combination, are always feasible). The insertions are
    counted only where costs tie."""
    sub = costs[a:b]
    low = min(sub)
    if sub.count(low) == 1:
        return a + sub.index(low)
    return min((c for c in range(a, b) if costs[c] == low), key=lambda c: (codes[c].count("I"), c))


def _branch_order(slot: Slot) -> list[int]:
    """Branch indexes of a slot, the written form first, then the rule's order."""
    return [slot.surface] + [i for i in range(len(slot.forms)) if i != slot.surface]


def _linearise(
    seg: list, forms: list[tuple[str, ...]]
) -> tuple[list[str], list[tuple[int, int, str, str]]]:
    """The hypothesis words for one chosen form per slot, and the slots that changed form."""
    words: list[str] = []
    info: list[tuple[int, int, str, str]] = []
    it = iter(forms)
    for x in seg:
        if isinstance(x, Slot):
            form = next(it)
            if form != x.forms[x.surface]:
                info.append(
                    (
                        len(words),
                        len(words) + len(form),
                        " ".join(form),
                        " ".join(x.forms[x.surface]),
                    )
                )
            words.extend(form)
        else:
            words.append(x)
    return words, info


def _forms_chosen(
    seg: list[Segment], words: list[str], alts: list[tuple[int, int, str, str]]
) -> list[tuple[str, ...]]:
    """Each slot's chosen form, read back from the hypothesis as aligned (`words`) and the
    slots that changed form (`alts`, as `_linearise` writes them, in slot order: a written
    form is never empty, so an entry at a slot's position is that slot's)."""
    changed = iter(alts)
    nxt = next(changed, None)
    forms: list[tuple[str, ...]] = []
    pos = 0
    for x in seg:
        if not isinstance(x, Slot):
            pos += 1
            continue
        end = pos + len(x.forms[x.surface])
        if nxt is not None and nxt[0] == pos:
            end, nxt = nxt[1], next(changed, None)
        forms.append(tuple(words[pos:end]))
        pos = end
    return forms


def _strict_words(plan: _Plan) -> list[int]:
    """Positions of the strict words in a plan's chosen hypotheses joined (DAE windows, once
    chosen): each utterance's winning pair's flags."""
    flags = plan.pairs.strict_flags()
    out: list[int] = []
    at = 0
    for pair, words in zip(plan.main_pair, plan.chosen_hyp, strict=True):
        if flags is not None:
            begin = plan.pairs.off[pair]
            out.extend(at + int(p) for p in np.flatnonzero(flags[begin : begin + len(words)]))
        at += len(words)
    return out


def _choose(
    runs: list[list[str]], slots: list[Slot], combo: tuple[int, ...]
) -> tuple[list[str], list[tuple[int, int, str, str]]]:
    """`_linearise` for a hypothesis split into runs and slots, given each slot's branch."""
    words = list(runs[0])
    info: list[tuple[int, int, str, str]] = []
    for slot, i, run in zip(slots, combo, runs[1:], strict=True):
        form = slot.forms[i]
        if i != slot.surface:
            info.append(
                (
                    len(words),
                    len(words) + len(form),
                    " ".join(form),
                    " ".join(slot.forms[slot.surface]),
                )
            )
        words.extend(form)
        words.extend(run)
    return words, info


class _Vocab(dict):
    """Token -> id; an unseen token gets the next free id (and is appended to `words`)."""

    def __init__(self, words: list[str]) -> None:
        super().__init__()
        self.words = words

    def __missing__(self, tok: str) -> int:
        i = self[tok] = FIRST_WORD + len(self)
        self.words.append(tok)
        return i


# A hypothesis with DAE matches: its plain runs around its slots (Alternatives.split).
_Split = tuple[list[list[str]], list[Slot]]


@dataclass
class _Texts:
    """The corpus after normalisation: one entry per reference ID, in reference order."""

    ids: list[str]
    ref: list[list[str]]
    hyp: list[list[str]]
    missing: list[bool]  # no hypothesis, or an empty one
    ref_opt: dict[int, list[bool]] = field(default_factory=dict)  # OPTIONAL's flags
    # utterances aligned as networks (alternations, `@`, fragments, optional hypothesis words):
    # first the hypothesis's optional flags, then (ref, ref flags, hyp, hyp flags) as marked
    nets: dict = field(default_factory=dict)


def _to_chars(texts: _Texts) -> None:
    """`unit="char"`: each text's words joined by one space and split into characters, as
    jiwer's cer splits a stripped string (a space is a character). An optional reference word
    makes its characters optional, and the spaces beside it (so leaving it out costs nothing)."""
    for u, flags in texts.ref_opt.items():
        texts.ref_opt[u] = _char_flags(texts.ref[u], flags)
    texts.ref = [list(" ".join(t)) for t in texts.ref]
    texts.hyp = [list(" ".join(t)) for t in texts.hyp]


def _char_flags(words: list[str], flags: list[bool]) -> list[bool]:
    """Per-word optional flags as per-character flags of the words joined by spaces."""
    out: list[bool] = []
    for w, opt in enumerate(flags):
        if w:
            out.append(opt or flags[w - 1])  # the space before word w
        out.extend([opt] * len(words[w]))
    return out


@dataclass
class _Pairs:
    """What the DP aligns: pair p is the reference of utterance `ref[p]` against
    `hyp_flat[off[p] : off[p] + length[p]]`; DAE linearisations share their reference."""

    hyp_flat: list[int] = field(default_factory=list)
    ref: list[int] = field(default_factory=list)
    off: list[int] = field(default_factory=list)
    length: list[int] = field(default_factory=list)
    # positions in hyp_flat of the words of alternatives the system did not write: strict
    # words, which the aligner may only match (see scoring.align)
    strict_at: list[int] = field(default_factory=list)

    def add(self, u: int, ids: list[int]) -> int:
        """One pair: utterance u's reference against `ids`; returns its index."""
        self.ref.append(u)
        self.off.append(len(self.hyp_flat))
        self.length.append(len(ids))
        self.hyp_flat.extend(ids)
        return len(self.ref) - 1

    def strict_flags(self) -> np.ndarray | None:
        """A boolean array beside `hyp_flat` marking the strict words (None: there are none)."""
        if not self.strict_at:
            return None
        flags = np.zeros(len(self.hyp_flat), dtype=bool)
        flags[np.array(self.strict_at, dtype=np.int64)] = True
        return flags


@dataclass
class _Plan:
    """The pairs of one `score()` call and what each utterance takes from them."""

    ref_flat: np.ndarray  # every reference's token ids, one after another
    ref_off: list[int]  # utterance u's reference is ref_flat[ref_off[u] : ref_off[u + 1]]
    chosen_hyp: list[list[str]]  # the hypothesis as aligned (DAE's chosen forms)
    alt_info: list[list[tuple[int, int, str, str]]]  # the slots that changed form
    main_pair: list[int]  # utterance -> its pair; -1 while it enumerates forms
    pairs: _Pairs = field(default_factory=_Pairs)
    codes: list[str] = field(default_factory=list)  # utterance -> its ops, once aligned
    # utterance -> its pairs [start, stop) and the slot branches of each (DAE enumeration)
    enum_ranges: dict[int, tuple[int, int, list[tuple[int, ...]]]] = field(default_factory=dict)
    fst_costs: dict[int, tuple[int, int]] = field(default_factory=dict)  # utterance -> (E, S)
    window_codes: dict[int, str] = field(default_factory=dict)  # DAE by windows: joined ops
    rule_ids: dict[tuple[tuple[str, ...], ...], list[list[int]]] = field(default_factory=dict)

    @classmethod
    def start(cls, texts: _Texts, vocab: dict[str, int]) -> _Plan:
        """The references' ids (assigned first, in order) and every hypothesis as written."""
        ref_off = list(itertools.accumulate(map(len, texts.ref), initial=0))
        n = len(texts.ids)
        ref_flat = np.asarray(_token_ids(texts.ref, 0, n, vocab, array=True))  # (no copy)
        return cls(ref_flat, ref_off, list(texts.hyp), [[] for _ in range(n)], [-1] * n)

    def add_plain(self, start: int, stop: int, hyps: list[list[str]], vocab: dict) -> None:
        """Utterances start..stop-1, plain hypotheses: one pair each, ids in text order."""
        pairs = self.pairs
        first = len(pairs.off)
        pairs.ref.extend(range(start, stop))
        self.main_pair[start:stop] = range(first, first + stop - start)
        lengths = list(map(len, hyps[start:stop]))
        pairs.off.extend(itertools.accumulate(lengths[:-1], initial=len(pairs.hyp_flat)))
        pairs.length.extend(lengths)
        pairs.hyp_flat.extend(_token_ids(hyps, start, stop, vocab))


def _results(texts: _Texts, plan: _Plan) -> list[UtteranceResult]:
    """One result per reference ID, in reference order: tokens, chosen path, ops."""
    utts = list(
        map(
            UtteranceResult,
            texts.ids,
            texts.ref,
            plan.chosen_hyp,
            plan.codes,
            texts.missing,
            plan.alt_info,
        )
    )
    for u, flags in texts.ref_opt.items():
        utts[u].optional = flags
    return utts


def _align_sclite(texts: _Texts, plan: _Plan) -> tuple[list[str], list[int]]:
    """Every pair aligned as sclite aligns it, one at a time (the exact mode has no DAE, so
    one pair an utterance and no strict words)."""
    from scoring import sclite_align as exact

    pairs = plan.pairs
    ref_flat, hyp_flat, ref_off = plan.ref_flat.tolist(), pairs.hyp_flat, plan.ref_off
    for u, n in zip(pairs.ref, pairs.length, strict=True):
        if (ref_off[u + 1] - ref_off[u]) * n > exact.MAX_CELLS:
            raise ScoringError(
                f"utterance {texts.ids[u]!r}: too long for the exact sclite mode (2 bits a "
                f"cell are kept, more than {exact.MAX_CELLS:,} cells); split it, or score "
                "with the default aligner"
            )
    out = [
        exact.sclite_align(
            ref_flat[ref_off[u] : ref_off[u + 1]],
            hyp_flat[off : off + n],
            texts.ref_opt.get(u),
        )
        for u, off, n in zip(pairs.ref, pairs.off, pairs.length, strict=True)
    ]
    return [c for c, _ in out], [cost for _, cost in out]


@dataclass
class _Walk:
    """A hypothesis split into runs and slots as the DAE windows read it (`Scorer._walk`):
    its segments in order, the items `scoring.dae_windows` takes (a plain token's id, a
    slot's branches: ids and strict flags), the hypothesis as written (tokens and ids), and
    each slot's segment index and token offset in it."""

    seg: list[Segment]
    items: list[Item]
    written: list[str]
    written_ids: list[int]
    slot_seg: list[int]
    slot_tok: list[int]
    branches: dict[Slot, tuple[Branch, ...]]  # each distinct slot's item

    def offset(self, x: int) -> int:
        """The token offset in `written` of segment x (or of the end, x = len(seg))."""
        s = bisect.bisect_left(self.slot_seg, x) - 1  # the last slot before x
        if s < 0:
            return x
        surface = self.seg[self.slot_seg[s]]
        assert isinstance(surface, Slot)
        return self.slot_tok[s] + len(surface.forms[surface.surface]) + x - self.slot_seg[s] - 1

    def window(self, a: int, b: int) -> tuple[list[list[str]], list[Slot], list[str]]:
        """Segments a..b-1: their runs and slots (`_Split`'s), and their written tokens."""
        first, last = (bisect.bisect_left(self.slot_seg, x) for x in (a, b))
        start, stop = self.offset(a), self.offset(b)
        runs: list[list[str]] = []
        slots: list[Slot] = []
        at = start
        for s in range(first, last):
            slot = self.seg[self.slot_seg[s]]
            assert isinstance(slot, Slot)
            runs.append(self.written[at : self.slot_tok[s]])
            slots.append(slot)
            at = self.slot_tok[s] + len(slot.forms[slot.surface])
        runs.append(self.written[at:stop])
        return runs, slots, self.written[start:stop]


def _windows(
    texts: _Texts, u: int, walk: _Walk, spans: list[tuple[int, int]], rows: list[int]
) -> tuple[_Texts, list[_Split | None]]:
    """Utterance u's windows as utterances of their own: hypothesis segments a..b-1 against
    the reference between consecutive cut rows; their DAE splits beside them."""
    opt = texts.ref_opt.get(u)
    sub = _Texts([], [], [], [])
    found: list[_Split | None] = []
    for w, ((a, b), (r0, r1)) in enumerate(
        zip(spans, zip([0, *rows], [*rows, len(texts.ref[u])], strict=True), strict=True)
    ):
        runs, slots, written = walk.window(a, b)
        sub.ids.append(f"{texts.ids[u]} [DAE window {w}]")
        sub.ref.append(texts.ref[u][r0:r1])
        sub.hyp.append(written)
        sub.missing.append(False)
        if opt is not None and any(opt[r0:r1]):
            sub.ref_opt[w] = opt[r0:r1]
        found.append((runs, slots) if slots else None)
    return sub, found


def _cost_scale(texts: _Texts, found: list[_Split | None]) -> int:
    """K: above every length of the run, the references and each hypothesis with every slot
    at its longest form. (A smaller K keeps the DP tables narrow and the FST on its one-pass
    three-level weights.)"""
    longest = max(max(map(len, texts.ref), default=0), max(map(len, texts.hyp), default=0))
    for x in found:
        if x is not None:
            longest = max(
                longest, sum(map(len, x[0])) + sum(max(map(len, slot.forms)) for slot in x[1])
            )
    return longest + 2


_SCLITE_INPUT_DEFAULTS = {"alternations": True, "fragments": False, "ignore_id_case": False}


def _read_optional(texts: _Texts, ref_texts: list[str], hyp_texts: list[str], exact: bool) -> None:
    """OPTIONAL marked parenthesised spans: on the reference they are optional words, on the
    hypothesis plain ones, except in the exact sclite mode, where they are optional too (sclite
    counts an omitted one correct; `texts.nets` then keeps its flags). Only texts with a
    parenthesis can hold marks."""
    for u in _holding(ref_texts, "("):
        texts.ref[u], flags = split_optional(texts.ref[u])
        if flags is not None:
            texts.ref_opt[u] = flags
    for u in _holding(hyp_texts, "("):
        if exact:
            texts.hyp[u], flags = split_optional(texts.hyp[u])
            if flags is not None:
                texts.nets[u] = flags
        else:
            texts.hyp[u] = strip_markers(texts.hyp[u])


def _holding(side: list[str], chars: str) -> list[int]:
    """The indexes of the texts holding one of `chars`: one scan of them joined first, most
    often finding none (no text is looked at then)."""
    joined = "\n".join(side)
    if not any(c in joined for c in chars):
        return []
    return [u for u, t in enumerate(side) if any(c in t for c in chars)]


def _set_networks(
    texts: _Texts, ref_texts: list[str], hyp_texts: list[str], fragments: bool
) -> None:
    """Set aside the utterances that hold alternations, null words or fragments, or optional
    hypothesis words (the exact mode): they are aligned by `_align_networks`, the plain
    pipeline meanwhile seeing them empty (no DAE for them). Only texts holding `{`, `@` (or,
    with fragments, `-`) can hold marks: the others are not looked at."""
    hyp_flags = texts.nets
    texts.nets = {}
    chars = "{@-" if fragments else "{@"
    maybe = set(hyp_flags)
    for side in (ref_texts, hyp_texts):
        maybe.update(_holding(side, chars))
    for u in sorted(maybe):
        ref, hyp, hflags = texts.ref[u], texts.hyp[u], hyp_flags.get(u)
        if hflags is not None or has_marks(ref) or has_marks(hyp):
            texts.nets[u] = (ref, texts.ref_opt.pop(u, None), hyp, hflags)
            texts.ref[u], texts.hyp[u] = [], []


def _align_networks(texts: _Texts, plan: _Plan, align: str) -> None:
    """The utterances `_set_networks` set aside, aligned by `sclite_align.align_marked` (the
    exact mode's weights with `align` "sclite", fstalign's ties with "fstalign"): the
    reference as scored is the chosen branches'."""
    if not texts.nets:  # (most runs: no module to import)
        return
    from scoring.sclite_align import align_marked

    exact, fst_ties = align == "sclite", align == "fstalign"

    for u, (ref, rflags, hyp, hflags) in texts.nets.items():
        if len(ref) * len(hyp) > SCLITE_MAX_CELLS:
            raise ScoringError(
                f"utterance {texts.ids[u]!r}: too long for alignment with alternations or "
                f"fragments (its whole table is kept, more than {SCLITE_MAX_CELLS:,} cells); "
                "split it"
            )
        texts.ref[u], ropt, plan.chosen_hyp[u], plan.codes[u] = align_marked(
            ref, rflags, hyp, hflags, exact, fst_ties
        )
        plan.alt_info[u] = []
        if ropt is not None:
            texts.ref_opt[u] = ropt


def _non_ascii_capital(text: str) -> str | None:
    """The first word of `text` holding a letter outside ASCII that lower-casing changes."""
    for word in text.split():
        if not word.isascii() and any(not c.isascii() and c.lower() != c for c in word):
            return word
    return None


def _match_id_case(refs: dict[str, str], hyps: dict[str, str]) -> dict[str, str]:
    """`ignore_id_case`: hypothesis IDs renamed to the reference ID they equal but for case."""
    folded: dict[str, str] = {}
    for key in refs:
        other = folded.setdefault(key.lower(), key)
        if other != key:
            raise ScoringError(
                f"reference IDs {other!r} and {key!r} differ only in case: with "
                "ignore_id_case (--ignore-id-case, the exact sclite mode's default) they "
                "cannot be told apart; rename one, or match IDs exactly (--no-ignore-id-case)"
            )
    out: dict[str, str] = {}
    for key, text in hyps.items():
        ref_key = key if key in refs else folded.get(key.lower(), key)
        if ref_key in out:
            raise ScoringError(
                f"hypothesis IDs {key!r} and another both match reference ID {ref_key!r} "
                "once case is ignored (--ignore-id-case); keep one"
            )
        out[ref_key] = text
    return out


def _unknown_ids_message(unknown: list[str], refs: dict[str, str]) -> str:
    """Hypothesis IDs missing from the reference; when they differ from reference IDs only in
    case (sclite pairs such IDs, this scorer does not), say so and name a pair."""
    folded = {key.casefold(): key for key in refs}
    by_case = [(key, folded[key.casefold()]) for key in unknown if key.casefold() in folded]
    if by_case:
        hyp_id, ref_id = by_case[0]
        return (
            f"{len(unknown)} hypothesis ID(s) not in the reference; {len(by_case)} of them "
            f"differ from a reference ID only in case (e.g. {hyp_id!r} vs {ref_id!r}): IDs "
            "are matched exactly (sclite folds their case): pass ignore_id_case=True "
            "(--ignore-id-case), or write the IDs as the reference does"
        )
    return (
        f"{len(unknown)} hypothesis ID(s) not in the reference, e.g. {unknown[:5]}; "
        "score against the reference of the same dataset, or drop those lines"
    )


def _data_files(cfg: ScorerConfig) -> dict[str, Path]:
    """The data files the configuration reads, by kind (the language's defaults or the
    caller's); ScoringError for one that does not exist."""
    files = {}
    for kind in ("interjections", "uk_us", "alternatives", "nonspeech_markers"):
        path = cfg.data_file(kind)
        if path is not None:
            if not path.is_file():
                raise ScoringError(
                    f"{kind} file {path} not found; pass an existing file or '' for none"
                )
            files[kind] = path
    return files


class Scorer:
    """Normalise, expand alternatives on the hypothesis, align and count."""

    def __init__(
        self, config: ScorerConfig | None = None, dae_store: DaeStore | None = None
    ) -> None:
        """`dae_store`: where the compiled DAE rules may be kept between processes
        (scoring.dae.Store; the same rules either way)."""
        self.config = cfg = config or ScorerConfig()
        self.profile = profile = cfg.profile()
        self.files: dict[str, Path] = _data_files(cfg)
        # The pipeline is the registry's steps in its order (scoring.normalize.steps), each
        # built for this configuration or left out.
        ctx = steps.Context(cfg, profile, self.files)
        text_steps = steps.build("text", ctx)
        token_steps = steps.build("token", ctx)
        self.nsw: Nsw | Num2Words | None = next(
            (s for s in text_steps if isinstance(s, (Nsw, Num2Words))), None
        )
        self.optional = cfg.optional
        tokenize = char_tokens if cfg.unit == "mixed" else word_tokens
        self.pipeline = Pipeline(text_steps, token_steps, tokenize)
        self.alternatives: Alternatives | None = None
        if cfg.compounds is None:  # COMPOUNDS (in DAE): on by default where words are scored
            cfg.compounds = not profile.legacy and cfg.unit == "word"
        cfg.compounds = bool(cfg.compounds and cfg.dae and cfg.unit == "word")
        if cfg.dae and ("alternatives" in self.files or cfg.compounds) and cfg.unit != "char":
            # Rules go through the same steps as the text, except NSW (rules hold no numbers),
            # NONSPEECH and OPTIONAL (rules hold no markers).
            rule_pipe = Pipeline(
                [
                    s
                    for s in text_steps
                    if s is not self.nsw
                    and not isinstance(s, (NonSpeech, Optional, Alternation, Fragment))
                ],
                [s for s in token_steps if not isinstance(s, Itj)],
                tokenize,
            )
            self.alternatives = Alternatives(
                self.files.get("alternatives"), rule_pipe, cfg.compounds, dae_store
            )
        self._words: list[str] = []  # id - FIRST_WORD -> token
        self.vocab: dict[str, int] = _Vocab(self._words)
        self._fst: FstAligner | None = None
        # DAE by windows (scoring.dae_windows) for a hypothesis with more than `max_enum`
        # combinations: False, only where the whole pair is too long for exact FST weights;
        # True, always (tests compare both ways). Not a scoring option: the counts are equal.
        self.window_dae = False

    def config_dict(self) -> dict:
        """The configuration, the active steps and the data files read (by path).

        Identity (data files by content, package versions) is the caller's to record.
        """
        out = asdict(self.config)
        if out["align"] == "minimal":
            del out["align"]  # the default: config hashes as before the exact mode existed
        for key, default in _SCLITE_INPUT_DEFAULTS.items():
            if key == "ignore_id_case":
                default = self.config.align == "sclite"  # each mode's own default
            if out[key] == default:
                del out[key]  # likewise for sclite's input conventions (issue 25)
        if out["diacritics"] == "keep":
            del out["diacritics"]  # the default: config hashes as before the option existed
        if not out["compounds"] and self.profile.legacy:
            del out["compounds"]  # English and Chinese: config hashes as before COMPOUNDS
        if not self.profile.legacy:  # English and Chinese: as before the registry existed
            out["language"] = self.profile.to_dict()
        out["steps"] = self.pipeline.names + (["DAE"] if self.alternatives else [])
        out["data_files"] = {k: {"path": str(p)} for k, p in sorted(self.files.items())}
        return out

    def case_warning(self, refs: dict[str, str], hyps: dict[str, str]) -> str | None:
        """In the exact sclite mode with CASE on, a warning when texts hold capitals outside
        ASCII, whose case that mode keeps as sclite does (None: nothing to say)."""
        if self.config.align != "sclite" or not self.config.case:
            return None
        found = [
            (key, word)
            for key, text in itertools.chain(refs.items(), hyps.items())
            if not text.isascii() and (word := _non_ascii_capital(text)) is not None
        ]
        if not found:
            return None
        n = len({key for key, _ in found})
        key, word = found[0]
        return (
            f"the exact sclite mode (--align sclite) folds the case of ASCII letters only, as "
            f"sclite does: {n} utterance(s) hold capitals outside ASCII (e.g. {word!r} in "
            f"{key!r}), and a word that differs from another only in their case counts as an "
            "error; to fold every letter's case, score with --align minimal (the default), or "
            "lower-case both files first"
        )

    def normalize(self, text: str) -> list[str]:
        """Tokens of one transcript after the pipeline (the same for reference and hypothesis)."""
        tokens = self.pipeline(text)
        return list(" ".join(tokens)) if self.config.unit == "char" else tokens

    def normalize_batch(self, texts: list[str]) -> list[list[str]]:
        """`[self.normalize(t) for t in texts]` in one `Pipeline.batch` (NSW's new strings
        read together, in two processes where there are many)."""
        out = self.pipeline.batch(texts)
        return [list(" ".join(t)) for t in out] if self.config.unit == "char" else out

    def nsw_inputs(self, texts: list[str]) -> list[str]:
        """The texts as the NSW step receives them: the text steps before it applied (all of
        them where there is no NSW step)."""
        steps = self.pipeline.text_steps
        before = next((i for i, step in enumerate(steps) if step is self.nsw), len(steps))
        return run_text_steps(steps[:before], texts)

    def _ids(self, tokens: list[str] | tuple[str, ...]) -> list[int]:
        return list(map(self.vocab.__getitem__, tokens))  # new words get the next free ids

    def _aligner(self, k: int) -> FstAligner:
        # Rebuilt only when the vocabulary outgrows it (capacity doubles) or K changes.
        from scoring.wfst import FstAligner

        if self._fst is None or self._fst.k != k or self._fst.vocab_size < len(self.vocab):
            size = max(1024, 2 * len(self.vocab))
            self._fst = FstAligner(size, k)
        return self._fst

    def score(self, refs: dict[str, str], hyps: dict[str, str]) -> ScoreResult:
        """Score hypotheses against references; every reference ID yields one result."""
        utts = self.utterances(refs, hyps)
        return ScoreResult(utts, self.summarize(utts), self.config_dict())

    def utterances(self, refs: dict[str, str], hyps: dict[str, str]) -> list[UtteranceResult]:
        """`score` without the corpus metrics: one result per reference ID. `summarize` gives
        the metrics; its bootstrap is numpy drawing without the GIL, so a caller may run it in
        a thread beside other work on these results (`ops/score` writes utterances.jsonl)."""
        # Scoring allocates millions of small acyclic objects (token lists, tuples): the cyclic
        # garbage collector would rescan every live object of the process many times over.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._score(refs, hyps)
        finally:
            if enabled:
                gc.enable()

    def _score(self, refs: dict[str, str], hyps: dict[str, str]) -> list[UtteranceResult]:
        if self.config.hyphen == "synonym":  # fstalign's hyphen synonyms, as alternations
            from scoring.synonyms import synonym_text

            refs = {k: synonym_text(v, hyps.get(k) or "") for k, v in refs.items()}
        # The phases, in order; each is a method below, named for what it does.
        texts = self._normalised(refs, hyps)  # IDs checked, every distinct text normalised
        found = self._find_alternatives(texts)  # DAE: slots on the hypotheses
        k = _cost_scale(texts, found)  # the cost unit K of the DP and the FST
        plan = self._plan(texts, found, k)  # the pairs to align: plain, enumerated, FST
        codes, costs = self._align(texts, plan, k)  # the batched DP over every pair
        self._choose_forms(texts, found, plan, codes, costs, k)  # DAE winners; FST checked
        _align_networks(texts, plan, self.config.align)  # alternations, fragments
        return _results(texts, plan)  # one UtteranceResult per reference ID

    def _normalised(self, refs: dict[str, str], hyps: dict[str, str]) -> _Texts:
        """Every reference ID's texts as tokens; optional reference words flagged."""
        if self.config.ignore_id_case:
            hyps = _match_id_case(refs, hyps)
        unknown = [key for key in hyps if key not in refs]
        if unknown:
            raise ScoringError(_unknown_ids_message(unknown, refs))
        hyp_texts = [hyps.get(key) or "" for key in refs]
        if self.config.alternations:
            keys = list(refs)
            ref_texts = list(refs.values())
            for u in _holding(ref_texts, "{}"):  # (no brace, nothing to check: no message made)
                check_text(ref_texts[u], f"utterance {keys[u]!r}")
        # Each distinct text is normalised once, all of them in one batch.
        distinct = dict.fromkeys(refs.values())
        distinct.update(dict.fromkeys(hyp_texts))
        memo = dict(zip(distinct, self.pipeline.batch(list(distinct)), strict=True))
        texts = _Texts(
            ids=list(refs),
            ref=list(map(memo.__getitem__, refs.values())),
            hyp=list(map(memo.__getitem__, hyp_texts)),
            missing=[not h.strip() for h in hyp_texts],
        )
        if self.optional:
            exact = self.config.align == "sclite" and self.config.unit != "char"
            _read_optional(texts, list(refs.values()), hyp_texts, exact)
        if self.config.alternations or self.config.fragments or texts.nets:
            _set_networks(texts, list(refs.values()), hyp_texts, self.config.fragments)
        if self.nsw is not None:
            self.nsw.flush()
        if self.config.unit == "char":
            _to_chars(texts)
        return texts

    def _find_alternatives(self, texts: _Texts) -> list[_Split | None]:
        """Each hypothesis with DAE matches as plain runs around slots (None: no match). An
        alternative holding a word the reference lacks could never be all correct: left out
        here (the same result, fewer branches)."""
        alts = self.alternatives
        if alts is None:
            return [None] * len(texts.ids)
        split = alts.split
        if alts.compounds:  # (COMPOUNDS' matches need no rule's word)
            return [split(h, r) if h else None for h, r in zip(texts.hyp, texts.ref, strict=True)]
        # a hypothesis without any form's first word has no match: one set test, not a call
        disjoint = alts.first_words.isdisjoint
        return [
            split(h, r) if h and not disjoint(h) else None
            for h, r in zip(texts.hyp, texts.ref, strict=True)
        ]

    def _plan(
        self,
        texts: _Texts,
        found: list[_Split | None],
        k: int,
        windows: bool = True,
        chosen: dict[int, tuple[int, ...]] | None = None,
    ) -> _Plan:
        """The pairs the DP aligns, one utterance after another in reference order.

        A plain hypothesis is one pair. A hypothesis with few slot combinations (at most
        `max_enum`) is one pair per combination, the cheapest winning later (`_enumerate`);
        one with more (or every one, with `engine="fst"`) is solved by the FST and its chosen
        path is one pair, so that the DP checks the FST's cost (`_via_fst`), unless it is too
        long for the FST's exact weights (`_route`). Token ids: the references' first, then
        the hypotheses' in that order (new tokens get the next ids). `chosen`: utterances
        whose winning combination is already known (`_window_winners`), one pair each.
        """
        plan = _Plan.start(texts, self.vocab)
        n = len(texts.ids)
        fst_only = self.config.engine == "fst"
        special = range(n) if fst_only else [u for u, x in enumerate(found) if x]
        done = 0  # utterances before `done` have their pairs
        for u in itertools.chain(special, [n]):
            if done < u:
                plan.add_plain(done, u, texts.hyp, self.vocab)
            done = u + 1
            if u == n:
                break
            split = found[u]
            route = self._route(plan, texts, u, split, k, windows)
            if route == "plain":
                plan.add_plain(u, u + 1, texts.hyp, self.vocab)
            elif route == "enumerate":
                assert split is not None
                self._enumerate(plan, u, split, (chosen or {}).get(u))
            elif route in ("windows", "whole"):
                assert split is not None
                self._windowed(plan, texts, u, split, whole=route == "whole")
            else:
                self._via_fst(plan, texts, u, split, k)
        return plan

    def _route(
        self, plan: _Plan, texts: _Texts, u: int, split: _Split | None, k: int, windows: bool
    ) -> str:
        """How utterance u is aligned: "enumerate" (few slot combinations); "whole" (more
        combinations: the forms chosen window by window, `_windowed`, then the whole pair
        aligned as the FST's path would be); "fst" (`engine="fst"`, or inside a window); or,
        where the whole pair is too long for the FST's exact float32 weights, "windows" (DAE
        window by window, their ops joined; inside a window, which holds one slot then,
        "enumerate": at most `_MAX_READINGS` + 1 pairs) or "plain" (`engine="fst"` on a plain
        hypothesis: the DP, same counts). So no pair is refused for its length."""
        combos = math.prod(len(x.forms) for x in split[1]) if split is not None else 1
        auto = split is not None and self.config.engine != "fst"
        if auto and combos <= self.config.max_enum:
            return "enumerate"
        if split is not None and windows and self.window_dae:
            return "windows"
        if auto and windows and self._fst_fits(plan, texts, u, split, k):
            # The whole-pair FST composed every reference word with every hypothesis word
            # (~750,000 states, ~1.3 CPU s for an 850-word Earnings-21 chunk): the windows'
            # banded DP finds the same optimum, and the whole pair's DP places its edits.
            return "whole"
        if self._fst_fits(plan, texts, u, split, k):
            return "fst"
        if split is None:
            return "plain"
        return "windows" if windows else "enumerate"

    def _fst_fits(self, plan: _Plan, texts: _Texts, u: int, split: _Split | None, k: int) -> bool:
        """Whether the FST's float32 weights are exact for utterance u's whole pair."""
        n_ref = plan.ref_off[u + 1] - plan.ref_off[u]
        if split is None:
            return check_exact(k, n_ref, len(texts.hyp[u]))
        n_h = sum(map(len, split[0])) + sum(max(map(len, x.forms)) for x in split[1])
        return check_exact(k, n_ref, n_h)

    def _windowed(
        self, plan: _Plan, texts: _Texts, u: int, split: _Split, whole: bool = False
    ) -> None:
        """DAE on a pair with many slot combinations: cut at cells of one optimal path
        (`scoring.dae_windows`), each window scored as an utterance of its own (enumeration,
        or the FST for a window that needs it). The windows' counts sum to the whole pair's
        optimum (checked). Their ops joined (a pair too long for the FST), or, `whole`, their
        chosen forms as one pair that the DP aligns whole, as the FST's path (`_add_path`)."""
        from rapidfuzz.distance import Levenshtein  # (as scoring.align.levenshtein's)

        from scoring.dae_windows import cut_rows, plan_cuts, written_edits

        walk = self._walk(split)
        seg = walk.seg
        readings = [1] * len(seg)
        for p, slot in zip(walk.slot_seg, split[1], strict=True):
            readings[p] = len(slot.forms)
        cuts = plan_cuts(readings, self.config.max_enum)
        ref_ids = plan.ref_flat[plan.ref_off[u] : plan.ref_off[u + 1]]
        opt = texts.ref_opt.get(u)
        best, rows, weights = cut_rows(
            ref_ids,
            None if opt is None else np.array(opt, dtype=bool),
            walk.items,
            cuts,
            written_edits(ref_ids, np.array(walk.written_ids, dtype=np.int64)),
        )
        sub, found = _windows(
            texts, u, walk, list(zip([0, *cuts], [*cuts, len(seg)], strict=True)), rows
        )
        k = _cost_scale(sub, found)
        # each window's written forms' distance: at least its winner's edits, so the bands
        # of its winner's search and of its pairs' tables (`best_combination`'s `band`,
        # `align_arrays`' `edits`) hold every least-cost path at once (both check it)
        written = list(map(Levenshtein.distance, sub.ref, sub.hyp))
        bounds = list(zip([0, *rows], [*rows, len(ref_ids)], strict=True))
        refs = [ref_ids[a:b] for a, b in bounds]
        winners = self._window_winners(sub, found, walk.branches, (refs, written))
        sub_plan = self._plan(sub, found, k, windows=False, chosen=winners)
        codes, costs = self._align(sub, sub_plan, k, [written[w] for w in sub_plan.pairs.ref])
        self._choose_forms(sub, found, sub_plan, codes, costs, k)
        joined = "".join(sub_plan.codes)
        n_sub, n_ins = joined.count("S"), joined.count("I")
        got, want = (n_sub + n_ins + joined.count("D"), n_sub, n_ins), weights.counts(best)
        # (E, S) are every engine's; I too, but where an optional reference word can be
        # omitted (O, free) instead of matched, D and I trade on ties in every engine's DP
        if got[: 3 if opt is None else 2] != want[: 3 if opt is None else 2]:
            raise RuntimeError(f"DAE windows of {texts.ids[u]!r} miss the optimum")  # a bug
        words: list[str] = []
        alts: list[tuple[int, int, str, str]] = []
        for part, info in zip(sub_plan.chosen_hyp, sub_plan.alt_info, strict=True):
            at = len(words)
            alts.extend((a + at, b + at, f, w) for a, b, f, w in info)
            words.extend(part)
        if whole:
            path = (self._ids(words), _strict_words(sub_plan))
            self._add_path(plan, u, seg, _forms_chosen(seg, words, alts), want[:2], path)
            return
        plan.window_codes[u] = joined
        plan.chosen_hyp[u], plan.alt_info[u] = words, alts

    def _walk(self, split: _Split) -> _Walk:
        """A split hypothesis as the DAE windows read it (`_Walk`). The ids are assigned in
        segment order, a slot's forms in turn (one `_token_ids` over them all); a slot's
        branches are made once for each distinct slot."""
        runs, slots = split
        lists = [runs[0]]
        for slot, run in zip(slots, runs[1:], strict=True):
            lists.extend(map(list, slot.forms))
            lists.append(run)
        ids = _token_ids(lists, 0, len(lists), self.vocab)
        assert isinstance(ids, list)
        seg: list[Segment] = list(runs[0])
        written: list[str] = list(runs[0])
        items: list[Item] = []
        items.extend(ids[: len(runs[0])])
        written_ids: list[int] = ids[: len(runs[0])]
        walk = _Walk(seg, items, written, written_ids, [], [], {})
        made = walk.branches
        at = len(runs[0])
        for slot, run in zip(slots, runs[1:], strict=True):
            starts = list(itertools.accumulate(map(len, slot.forms), initial=at))
            item = made.get(slot)
            if item is None:
                item = made[slot] = tuple(
                    (np.array(ids[a:b], dtype=np.int64), np.array(slot.mask(i), dtype=bool))
                    for i, (a, b) in enumerate(itertools.pairwise(starts))
                )
            walk.slot_seg.append(len(seg))
            walk.slot_tok.append(len(written))
            seg.append(slot)
            items.append(item)
            written.extend(slot.forms[slot.surface])
            written_ids.extend(ids[starts[slot.surface] : starts[slot.surface + 1]])
            at = starts[-1]
            seg.extend(run)
            written.extend(run)
            run_ids = ids[at : at + len(run)]
            items.extend(run_ids)
            written_ids.extend(run_ids)
            at += len(run)
        return walk

    def _window_winners(
        self,
        sub: _Texts,
        found: list[_Split | None],
        made: dict[Slot, tuple[Branch, ...]],
        known: tuple[list[np.ndarray], list[int]],
    ) -> dict[int, tuple[int, ...]]:
        """The winning combination of each DAE window `_enumerate` would align every
        combination of (and that has no optional reference word), met in the middle
        (`scoring.dae_windows.best_combination`: the same winner); only it is aligned.
        `made`: slots' branches already made (`_Walk.branches`); `known`: each window's
        reference ids and a guess at its winner's edits (`best_combination`'s `band`)."""
        from scoring.dae_windows import best_combination

        out: dict[int, tuple[int, ...]] = {}
        if self.config.engine == "fst":
            return out
        for w, split in enumerate(found):
            if split is None or w in sub.ref_opt:
                continue
            runs, slots = split
            orders = [_branch_order(x) for x in slots]
            if math.prod(map(len, orders)) > self.config.max_enum:
                continue  # (the FST's, `_route`)
            branches = [[made[x][i] for i in order] for x, order in zip(slots, orders, strict=True)]
            ids = [np.array(self._ids(r), dtype=np.int64) for r in runs]
            c = best_combination(known[0][w], ids, branches, band=known[1][w])
            out[w] = next(itertools.islice(itertools.product(*orders), c, None))
        return out

    def _enumerate(
        self, plan: _Plan, u: int, split: _Split, only: tuple[int, ...] | None = None
    ) -> None:
        """One pair per combination of slot forms (ties: the earliest, written forms first).
        Same path set and cost as the FST, so the same counts; only the winner's words are
        built later. The words of a form the system did not write are strict. `only`: the
        one combination to align (the winner, known already)."""
        runs, slots = split
        run_ids = [self._ids(run) for run in runs]
        combos = [only] if only is not None else list(itertools.product(*map(_branch_order, slots)))
        pairs = plan.pairs
        hyp_flat, strict_at, off, length = pairs.hyp_flat, pairs.strict_at, pairs.off, pairs.length
        start = len(off)
        # each slot's branches with the run after it (`_branches`): one extend a slot
        tails = [
            _branches(plan.rule_ids, x, r, self._ids)
            for x, r in zip(slots, run_ids[1:], strict=True)
        ]
        head = run_ids[0]
        for combo in combos:
            begin = len(hyp_flat)
            off.append(begin)
            hyp_flat.extend(head)
            for branches, i in zip(tails, combo, strict=True):
                ids, strict = branches[i]
                if strict:
                    at = len(hyp_flat)
                    strict_at.extend([at + p for p in strict])
                hyp_flat.extend(ids)
            length.append(len(hyp_flat) - begin)
        pairs.ref.extend([u] * len(combos))
        plan.enum_ranges[u] = (start, len(pairs.off), combos)

    def _via_fst(self, plan: _Plan, texts: _Texts, u: int, split: _Split | None, k: int) -> None:
        """The FST's best path for utterance u (too many slot combinations to enumerate, or
        `engine="fst"`), added as one pair: the DP re-aligns it and checks its cost. Only
        pairs within the FST's exact weights come here (`_route`)."""
        seg: list[Segment]
        if split is None:  # engine="fst": a plain hypothesis goes through the FST too
            seg = list(texts.hyp[u])
        else:
            seg = list(split[0][0])
            for slot, run in zip(split[1], split[0][1:], strict=True):
                seg.append(slot)
                seg.extend(run)
        seg_plain: list[int | list[list[int]]] = [
            [self._ids(f) for f in s.forms] if isinstance(s, Slot) else self.vocab[s] for s in seg
        ]
        aligner = self._aligner(k)
        # The forms the system did not write are strict; optional reference words may be
        # dropped for free.
        strict_id = aligner.strict_id
        seg_ids: list[int | tuple[tuple[int, ...], ...]] = []
        for s, x in zip(seg, seg_plain, strict=True):
            if isinstance(x, int):
                seg_ids.append(x)
            else:  # a slot's forms
                assert isinstance(s, Slot)
                seg_ids.append(
                    tuple(
                        tuple(strict_id(t) if m else t for t, m in zip(f, s.mask(i), strict=True))
                        for i, f in enumerate(x)
                    )
                )
        ref_ids = plan.ref_flat[plan.ref_off[u] : plan.ref_off[u + 1]].tolist()
        if u in texts.ref_opt:
            ref_ids = [
                aligner.optional_id(x) if o else x
                for x, o in zip(ref_ids, texts.ref_opt[u], strict=True)
            ]
        cost, hyp_path, chosen, path_strict = aligner.best_path(ref_ids, seg_ids)
        inv = self._words
        forms = [tuple(inv[x - FIRST_WORD] for x in c) for c in chosen]
        self._add_path(plan, u, seg, forms, cost, (hyp_path, path_strict))

    def _add_path(
        self,
        plan: _Plan,
        u: int,
        seg: list[Segment],
        forms: list[tuple[str, ...]],
        cost: tuple[int, int],
        path: tuple[list[int], list[int]],
    ) -> None:
        """Utterance u's hypothesis with one chosen form per slot, as one pair that the DP
        aligns and whose (E, S) it checks against `cost`. `path`: its ids and the positions
        of its strict words."""
        plan.chosen_hyp[u], plan.alt_info[u] = _linearise(seg, forms)
        begin = len(plan.pairs.hyp_flat)
        plan.main_pair[u] = plan.pairs.add(u, path[0])
        plan.pairs.strict_at.extend(begin + p for p in path[1])
        plan.fst_costs[u] = cost

    def _align(
        self, texts: _Texts, plan: _Plan, k: int, edits: list[int] | None = None
    ) -> tuple[list[str], list[int]]:
        """The op string and cost of every pair, by the batched DP (`edits`: a guess at each
        pair's least edit count, `align_arrays`')."""
        if self.config.align == "sclite":
            return _align_sclite(texts, plan)
        pairs = plan.pairs
        which = np.array(pairs.ref, dtype=np.int64)
        ref_off = np.array(plan.ref_off[:-1], dtype=np.int64)
        n_ref = np.diff(np.array(plan.ref_off, dtype=np.int64))
        ref_optional = None
        if texts.ref_opt:
            ref_optional = np.zeros(len(plan.ref_flat), dtype=bool)
            for u, flags in texts.ref_opt.items():
                ref_optional[plan.ref_off[u] : plan.ref_off[u + 1]] = flags
        try:
            codes, costs = align_arrays(
                plan.ref_flat,
                ref_off[which],
                n_ref[which],
                _int64s(pairs.hyp_flat),
                np.array(pairs.off, dtype=np.int64),
                np.array(pairs.length, dtype=np.int64),
                k,
                Marks(
                    pairs.strict_flags(),
                    ref_optional,
                    None if edits is None else np.array(edits, dtype=np.int64),
                ),
            )
        except PairTooLong as exc:  # named by its utterance, before any pair is aligned
            raise ScoringError(f"utterance {texts.ids[pairs.ref[exc.pair]]!r}: {exc}") from None
        return codes, costs.tolist()

    def _choose_forms(
        self,
        texts: _Texts,
        found: list[_Split | None],
        plan: _Plan,
        codes: list[str],
        costs: list[int],
        k: int,
    ) -> None:
        """Each utterance's ops: its pair's, or, where DAE enumerated forms, the cheapest
        combination's (ties: fewest insertions, then the earliest), whose words are built
        now. Where the FST chose, the DP's cost must equal the FST's."""
        plan.codes = [codes[p] if p >= 0 else "" for p in plan.main_pair]
        for u, joined in plan.window_codes.items():
            plan.codes[u] = joined
        for u, (a, b, combos) in plan.enum_ranges.items():
            best = _cheapest(costs, codes, a, b)
            plan.codes[u] = codes[best]
            plan.main_pair[u] = best  # its pair from now on (`_strict_words`)
            split = found[u]
            assert split is not None  # enumerated utterances have slots
            plan.chosen_hyp[u], plan.alt_info[u] = _choose(split[0], split[1], combos[best - a])
        for u, cost in plan.fst_costs.items():
            # Both engines minimise the same cost: a mismatch is a bug.
            dp = costs[plan.main_pair[u]]
            if dp == INFEASIBLE or divmod(dp, k) != cost:
                raise RuntimeError(f"FST and DP disagree on {texts.ids[u]!r}: {cost} != {dp}")

    def summarize(self, utts: list[UtteranceResult]) -> Metrics:
        """Pooled metrics plus bootstrap confidence intervals of TER, mTER and mTER_utt."""
        cfg = self.config
        errs = [u.sub + u.ins + u.dele for u in utts]
        units = (errs, [len(u.ref) for u in utts], [len(u.hyp) for u in utts])
        return pooled(utts, cfg.unit or "word").bootstrapped(units, cfg)
