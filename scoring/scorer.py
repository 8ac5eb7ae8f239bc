"""The Scorer: built once (pipeline, alternatives, edit transducers), then `score(refs, hyps)`."""

from __future__ import annotations

import gc
import itertools
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scoring.align import FIRST_WORD, INFEASIBLE, align_arrays
from scoring.dae import Alternatives, Slot
from scoring.errors import ScoringError
from scoring.metrics import Interval, Metrics, UtteranceResult, pooled
from scoring.normalize import (
    Case,
    FullWidth,
    Invisible,
    Itj,
    NonSpeech,
    Nsw,
    Optional,
    Pipeline,
    Punc,
    UkUs,
    UnicodeForm,
    char_tokens,
    word_tokens,
)
from scoring.normalize.invisible import FORMS
from scoring.normalize.optional import split_optional, strip_markers
from scoring.stats import MAX_BOOTSTRAP, MAX_BOOTSTRAP_REASON, bootstrap_metrics

if TYPE_CHECKING:
    from scoring.wfst import FstAligner

DATA = Path(__file__).resolve().parent / "data"
LANGS = ("en", "zh")


@dataclass
class ScorerConfig:
    """Everything that can change a number. Each pipeline step can be switched off for ablations.

    Data files default to the curated ones in `scoring/data` for the language; `None` means the
    default, `""` means none. `cache_dir` is the folder where NSW keeps its grammars and
    results; the caller chooses it (NSW needs one, the other steps none). `engine="fst"` sends
    every utterance through the FST (used to show that the fast path gives identical results).
    `nonspeech` removes the markers listed in `nonspeech_markers` (`<beep>`, `[noise]`) from
    both sides; `optional` applies sclite's convention to the reference: a parenthesised word
    may be left out at no cost. `invisible` removes terminal escape sequences, control
    characters and invisible format characters (zero-width space, bidi marks...); `unicode`
    normalises to `unicode_form` ("NFC", or "NFKC" to fold compatibility forms too).
    `bootstrap` is 0 (no intervals) to MAX_BOOTSTRAP replicates.
    """

    lang: str = "en"
    unit: str | None = None  # "word" or "char"; default: "char" for zh, else "word"
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

    def __post_init__(self) -> None:
        if self.lang not in LANGS:
            raise ScoringError(f"unsupported language {self.lang!r}; use one of {', '.join(LANGS)}")
        if self.unit is None:
            self.unit = "char" if self.lang == "zh" else "word"
        if self.unit not in ("word", "char"):
            raise ScoringError(f"unit must be 'word' or 'char', not {self.unit!r}")
        if self.engine not in ("auto", "fst"):
            raise ScoringError(f"engine must be 'auto' or 'fst', not {self.engine!r}")
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

    def data_file(self, kind: str) -> Path | None:
        """Resolved path of a data file ('interjections', 'uk_us', 'alternatives',
        'nonspeech_markers') or None."""
        value = getattr(self, kind)
        if value == "":
            return None
        if value is not None:
            return Path(value)
        defaults = {
            "en": {
                "interjections": "interjections.txt",
                "uk_us": "uk_us.tsv",
                "alternatives": "alternatives_en.txt",
                "nonspeech_markers": "nonspeech.txt",
            },
            "zh": {"interjections": "fillers_zh.txt", "nonspeech_markers": "nonspeech.txt"},
        }[self.lang]
        name = defaults.get(kind)
        return DATA / name if name else None


@dataclass
class ScoreResult:
    """Per-utterance results, the corpus metrics and the configuration that produced them.

    Files are the caller's business: `scoring.report` turns a result into text.
    """

    utterances: list[UtteranceResult]
    metrics: Metrics
    config: dict = field(default_factory=dict)


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


class Scorer:
    """Normalise, expand alternatives on the hypothesis, align and count."""

    def __init__(self, config: ScorerConfig | None = None) -> None:
        self.config = cfg = config or ScorerConfig()
        self.files: dict[str, Path] = {}
        for kind in ("interjections", "uk_us", "alternatives", "nonspeech_markers"):
            path = cfg.data_file(kind)
            if path is not None:
                if not path.is_file():
                    raise ScoringError(
                        f"{kind} file {path} not found; pass an existing file or '' for none"
                    )
                self.files[kind] = path
        text_steps: list = []
        if cfg.invisible:
            text_steps.append(Invisible())
        if cfg.unicode:
            text_steps.append(UnicodeForm(cfg.unicode_form))
        if cfg.nonspeech and "nonspeech_markers" in self.files:
            text_steps.append(NonSpeech(self.files["nonspeech_markers"]))
        self.nsw: Nsw | None = None
        if cfg.nsw and cfg.lang == "en":
            if not cfg.cache_dir:
                raise ScoringError(
                    "NSW needs a cache folder for its grammars and results: pass "
                    "ScorerConfig(cache_dir=...) or switch the step off with nsw=False"
                )
            self.nsw = Nsw(Path(cfg.cache_dir))
            text_steps.append(self.nsw)
        if cfg.lang == "zh":
            text_steps.append(FullWidth())
        self.optional = cfg.optional
        if cfg.optional:
            text_steps.append(Optional())
        if cfg.case:
            text_steps.append(Case())
        if cfg.punc:
            text_steps.append(Punc(cfg.hyphen))
        token_steps: list = []
        if cfg.itj and "interjections" in self.files:
            token_steps.append(Itj(self.files["interjections"]))
        if cfg.ukus and "uk_us" in self.files:
            token_steps.append(UkUs(self.files["uk_us"]))
        tokenize = char_tokens if cfg.unit == "char" else word_tokens
        self.pipeline = Pipeline(text_steps, token_steps, tokenize)
        self.alternatives: Alternatives | None = None
        if cfg.dae and "alternatives" in self.files:
            # Rules go through the same steps as the text, except NSW (rules hold no numbers),
            # NONSPEECH and OPTIONAL (rules hold no markers).
            rule_pipe = Pipeline(
                [s for s in text_steps if not isinstance(s, (Nsw, NonSpeech, Optional))],
                [s for s in token_steps if not isinstance(s, Itj)],
                tokenize,
            )
            self.alternatives = Alternatives(self.files["alternatives"], rule_pipe)
        self._words: list[str] = []  # id - FIRST_WORD -> token
        self.vocab: dict[str, int] = _Vocab(self._words)
        self._fst: FstAligner | None = None

    def config_dict(self) -> dict:
        """The configuration, the active steps and the data files read (by path).

        Identity (data files by content, package versions) is the caller's to record.
        """
        out = asdict(self.config)
        out["steps"] = self.pipeline.names + (["DAE"] if self.alternatives else [])
        out["data_files"] = {k: {"path": str(p)} for k, p in sorted(self.files.items())}
        return out

    def normalize(self, text: str) -> list[str]:
        """Tokens of one transcript after the pipeline (the same for reference and hypothesis)."""
        return self.pipeline(text)

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
        # Scoring allocates millions of small acyclic objects (token lists, tuples): the cyclic
        # garbage collector would rescan every live object of the process many times over.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._score(refs, hyps)
        finally:
            if enabled:
                gc.enable()

    def _score(self, refs: dict[str, str], hyps: dict[str, str]) -> ScoreResult:
        unknown = [key for key in hyps if key not in refs]
        if unknown:
            raise ScoringError(
                f"{len(unknown)} hypothesis ID(s) not in the reference, e.g. {unknown[:5]}; "
                "score against the reference of the same dataset, or drop those lines"
            )
        ids = list(refs)
        hyp_texts = [hyps.get(key) or "" for key in ids]
        missing = [not h.strip() for h in hyp_texts]
        # Each distinct text is normalised once, all of them in one batch.
        texts = dict.fromkeys(refs.values())
        texts.update(dict.fromkeys(hyp_texts))
        memo = dict(zip(texts, self.pipeline.batch(list(texts)), strict=True))
        ref_toks = list(map(memo.__getitem__, refs.values()))
        hyp_toks = list(map(memo.__getitem__, hyp_texts))
        ref_opt: dict[int, list[bool]] = {}  # utterance -> optional flags of its reference
        if self.optional:
            # OPTIONAL marked parenthesised spans: on the reference they are optional words,
            # on the hypothesis plain ones (only texts with a parenthesis can hold marks).
            for u, text in enumerate(refs.values()):
                if "(" in text:
                    ref_toks[u], flags = split_optional(ref_toks[u])
                    if flags is not None:
                        ref_opt[u] = flags
            for u, text in enumerate(hyp_texts):
                if "(" in text:
                    hyp_toks[u] = strip_markers(hyp_toks[u])
        if self.nsw is not None:
            self.nsw.flush()
        alts = self.alternatives
        # Hypotheses with DAE matches, as plain runs around slots. An alternative holding a
        # word the reference lacks could never be all correct: left out here (same result).
        found = (
            [alts.split(h, r) if h else None for h, r in zip(hyp_toks, ref_toks, strict=True)]
            if alts
            else [None] * len(ids)
        )
        fst_only = self.config.engine == "fst"
        # Token ids: the references' first (one flat array), then each hypothesis as it comes;
        # new tokens get the next free id. Pairs to align are (offset, length) into the flat
        # reference ids and the flat hypothesis ids; DAE linearisations share their reference.
        get = self.vocab.__getitem__
        n_ref = list(map(len, ref_toks))
        ref_off = list(itertools.accumulate(n_ref, initial=0))
        ref_flat = np.fromiter(
            map(get, itertools.chain.from_iterable(ref_toks)), dtype=np.int64, count=ref_off[-1]
        )
        hyp_flat: list[int] = []
        pair_ref: list[int] = []  # the utterance whose reference each pair aligns against
        pair_off: list[int] = []
        pair_len: list[int] = []
        # (start, end) in hyp_flat of the words of alternatives the system did not write:
        # strict words, which the aligner may only match (see scoring.align)
        strict_spans: list[tuple[int, int]] = []
        main_pair = [-1] * len(ids)  # utterance -> its pair; -1 when it enumerates forms
        chosen_hyp = list(hyp_toks)  # replaced below where DAE chose other forms
        alt_info: list[list[tuple[int, int, str, str]]] = [[] for _ in ids]
        fst_costs: dict[int, tuple[int, int]] = {}
        enum_ranges: dict[int, tuple[int, int, list[tuple[int, ...]]]] = {}
        cfg = self.config
        inv = self._words
        n_hyp = list(map(len, hyp_toks))
        # K bounds every length of the run: the references, and each hypothesis with every
        # slot at its longest form. (A smaller K keeps the DP tables narrow and the FST on its
        # one-pass three-level weights.)
        longest = max(max(n_ref, default=0), max(n_hyp, default=0))
        for x in found:
            if x is not None:
                longest = max(
                    longest, sum(map(len, x[0])) + sum(max(map(len, slot.forms)) for slot in x[1])
                )
        k = longest + 2
        aligner = None
        extend = hyp_flat.extend
        rule_ids: dict[tuple, list[list[int]]] = {}  # a slot's forms -> their ids
        special = range(len(ids)) if fst_only else [u for u, x in enumerate(found) if x]
        done = 0  # utterances before `done` have their pairs
        for u in itertools.chain(special, [len(ids)]):
            if done < u:
                # A run of plain hypotheses: one pair each, ids assigned in text order.
                first = len(pair_off)
                pair_ref.extend(range(done, u))
                main_pair[done:u] = range(first, first + u - done)
                pair_off.extend(itertools.accumulate(n_hyp[done : u - 1], initial=len(hyp_flat)))
                pair_len.extend(n_hyp[done:u])
                extend(map(get, itertools.chain.from_iterable(hyp_toks[done:u])))
            done = u + 1
            if u == len(ids):
                break
            split = found[u]
            if split is not None and not fst_only:
                runs, slots = split
                if math.prod(len(x.forms) for x in slots) <= cfg.max_enum:
                    # Few combinations: every linearisation is aligned by the batched DP and
                    # the cheapest wins (ties: the earliest, written forms first). Same path
                    # set and cost as the FST, so the same counts. Only the winner's words
                    # are built. The words of a form the system did not write are strict.
                    run_ids = [self._ids(run) for run in runs]
                    slot_ids = [
                        rule_ids[x.forms]
                        if x.forms in rule_ids
                        else rule_ids.setdefault(x.forms, [self._ids(f) for f in x.forms])
                        for x in slots
                    ]
                    combos = list(itertools.product(*(_branch_order(x) for x in slots)))
                    start = len(pair_off)
                    tails = list(zip(slot_ids, run_ids[1:], slots, strict=True))
                    for combo in combos:
                        pair_ref.append(u)
                        begin = len(hyp_flat)
                        pair_off.append(begin)
                        extend(run_ids[0])
                        for (forms, run, slot), i in zip(tails, combo, strict=True):
                            if i != slot.surface:
                                at = len(hyp_flat)
                                strict_spans.extend(
                                    (at + p, at + p + 1) for p, m in enumerate(slot.mask(i)) if m
                                )
                            extend(forms[i])
                            extend(run)
                        pair_len.append(len(hyp_flat) - begin)
                    enum_ranges[u] = (start, len(pair_off), combos)
                    continue
            if split is None:  # engine="fst": a plain hypothesis goes through the FST too
                seg: list = list(hyp_toks[u])
            else:
                seg = list(split[0][0])
                for slot, run in zip(split[1], split[0][1:], strict=True):
                    seg.append(slot)
                    seg.extend(run)
            seg_plain = [
                tuple(self._ids(f) for f in s.forms) if isinstance(s, Slot) else self._ids([s])[0]
                for s in seg
            ]
            if aligner is None or aligner.vocab_size < len(self.vocab):
                aligner = self._aligner(k)
            # The forms the system did not write are strict; optional reference words may
            # be dropped for free.
            strict_id = aligner.strict_id
            seg_ids = [
                tuple(
                    tuple(strict_id(t) if m else t for t, m in zip(f, s.mask(i), strict=True))
                    for i, f in enumerate(x)
                )
                if isinstance(s, Slot)
                else x
                for s, x in zip(seg, seg_plain, strict=True)
            ]
            n_h = sum(max(len(f) for f in s.forms) if isinstance(s, Slot) else 1 for s in seg)
            from scoring.wfst import check_exact

            if not check_exact(k, n_ref[u], n_h):
                raise ScoringError(
                    f"utterance {ids[u]!r} has {n_ref[u]} reference and {n_h} hypothesis words "
                    f"and more than {cfg.max_enum} combinations of alternatives: too long for "
                    "exact FST weights; split it, or pass dae=False (--no-dae) for this corpus"
                )
            ref_ids = ref_flat[ref_off[u] : ref_off[u + 1]].tolist()
            if u in ref_opt:
                ref_ids = [
                    aligner.optional_id(x) if o else x
                    for x, o in zip(ref_ids, ref_opt[u], strict=True)
                ]
            cost, hyp_path, chosen, path_strict = aligner.best_path(ref_ids, seg_ids)
            forms = [tuple(inv[x - FIRST_WORD] for x in c) for c in chosen]
            words, info = _linearise(seg, forms)
            main_pair[u] = len(pair_off)
            pair_ref.append(u)
            begin = len(hyp_flat)
            pair_off.append(begin)
            extend(hyp_path)
            pair_len.append(len(hyp_path))
            strict_spans.extend((begin + p, begin + p + 1) for p in path_strict)
            chosen_hyp[u] = words
            alt_info[u] = info
            fst_costs[u] = cost
        ref_off_a = np.array(ref_off[:-1], dtype=np.int64)
        n_ref_a = np.array(n_ref, dtype=np.int64)
        which = np.array(pair_ref, dtype=np.int64)
        hyp_strict = ref_optional = None
        if strict_spans:
            edges = np.zeros(len(hyp_flat) + 1, dtype=np.int64)
            spans = np.array(strict_spans, dtype=np.int64)
            np.add.at(edges, spans[:, 0], 1)
            np.add.at(edges, spans[:, 1], -1)
            hyp_strict = np.cumsum(edges[:-1]) > 0
        if ref_opt:
            ref_optional = np.zeros(len(ref_flat), dtype=bool)
            for u, flags in ref_opt.items():
                ref_optional[ref_off[u] : ref_off[u + 1]] = flags
        pair_codes, pair_costs = align_arrays(
            ref_flat,
            ref_off_a[which],
            n_ref_a[which],
            np.array(hyp_flat, dtype=np.int64),
            np.array(pair_off, dtype=np.int64),
            np.array(pair_len, dtype=np.int64),
            k,
            hyp_strict=hyp_strict,
            ref_optional=ref_optional,
        )
        costs = pair_costs.tolist()
        codes = [pair_codes[p] if p >= 0 else "" for p in main_pair]
        for u, (a, b, combos) in enum_ranges.items():
            # the written forms (the first combination) are always feasible
            best = min(range(a, b), key=lambda c: (costs[c], pair_codes[c].count("I"), c))
            codes[u] = pair_codes[best]
            chosen_hyp[u], alt_info[u] = _choose(*found[u], combos[best - a])
        for u, cost in fst_costs.items():
            # Both engines minimise the same cost: a mismatch is a bug.
            if costs[main_pair[u]] == INFEASIBLE or divmod(costs[main_pair[u]], k) != cost:
                raise RuntimeError(
                    f"FST and DP disagree on {ids[u]!r}: {cost} != {costs[main_pair[u]]}"
                )
        utts = [
            UtteranceResult(key, ref_toks[u], chosen_hyp[u], codes[u], missing[u], alt_info[u])
            for u, key in enumerate(ids)
        ]
        return ScoreResult(utts, self.summarize(utts), self.config_dict())

    def summarize(self, utts: list[UtteranceResult]) -> Metrics:
        """Pooled metrics plus bootstrap confidence intervals of TER, mTER and mTER_utt."""
        cfg = self.config
        met = pooled(utts, cfg.unit or "word")
        errs = [u.sub + u.ins + u.dele for u in utts]
        n_ref = [len(u.ref) for u in utts]
        n_hyp = [len(u.hyp) for u in utts]
        ci = bootstrap_metrics(errs, n_ref, n_hyp, cfg.bootstrap, cfg.confidence, cfg.seed)
        return met.with_ci(
            Interval.from_dict(ci["ter"]),
            Interval.from_dict(ci["mter"]),
            mter_utt=Interval.from_dict(ci["mter_utt"]),
        )
