"""The Scorer: built once (pipeline, alternatives, edit transducers), then `score(refs, hyps)`."""

from __future__ import annotations

import gc
import itertools
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from scoring.align import FIRST_WORD, FstAligner, align_batch, check_exact
from scoring.dae import Alternatives, Slot
from scoring.errors import ScoringError
from scoring.metrics import Interval, Metrics, UtteranceResult, pooled
from scoring.normalize import (
    Case,
    FullWidth,
    Itj,
    Nsw,
    Pipeline,
    Punc,
    UkUs,
    char_tokens,
    word_tokens,
)
from scoring.stats import bootstrap_ratios

DATA = Path(__file__).resolve().parent / "data"
LANGS = ("en", "zh")


@dataclass
class ScorerConfig:
    """Everything that can change a number. Each pipeline step can be switched off for ablations.

    Data files default to the curated ones in `scoring/data` for the language; `None` means the
    default, `""` means none. `cache_dir` is the folder where NSW keeps its grammars and
    results; the caller chooses it (NSW needs one, the other steps none). `engine="fst"` sends
    every utterance through the FST (used to show that the fast path gives identical results).
    """

    lang: str = "en"
    unit: str | None = None  # "word" or "char"; default: "char" for zh, else "word"
    case: bool = True
    punc: bool = True
    itj: bool = True
    ukus: bool = True
    nsw: bool = True
    dae: bool = True
    hyphen: str = "space"
    interjections: str | None = None
    uk_us: str | None = None
    alternatives: str | None = None
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

    def data_file(self, kind: str) -> Path | None:
        """Resolved path of a data file ('interjections', 'uk_us', 'alternatives') or None."""
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
            },
            "zh": {"interjections": "fillers_zh.txt"},
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
        for kind in ("interjections", "uk_us", "alternatives"):
            path = cfg.data_file(kind)
            if path is not None:
                if not path.is_file():
                    raise ScoringError(
                        f"{kind} file {path} not found; pass an existing file or '' for none"
                    )
                self.files[kind] = path
        text_steps: list = []
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
            # Rules go through the same steps as the text, except NSW (rules hold no numbers).
            rule_pipe = Pipeline(
                [s for s in text_steps if s is not self.nsw],
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
        missing = [key not in hyps or not (hyps[key] or "").strip() for key in ids]
        # Each distinct text is normalised once, all of them in one batch.
        texts = dict.fromkeys(refs[key] for key in ids)
        texts.update(dict.fromkeys(hyps.get(key) or "" for key in ids))
        memo = dict(zip(texts, self.pipeline.batch(list(texts)), strict=True))
        ref_toks = [memo[refs[key]] for key in ids]
        hyp_toks = [memo[hyps.get(key) or ""] for key in ids]
        if self.nsw is not None:
            self.nsw.flush()
        alts = self.alternatives
        segments = [alts.expand(h) if alts and h else None for h in hyp_toks]
        if self.config.engine == "fst":
            segments = [
                s if s is not None else list(h) for s, h in zip(segments, hyp_toks, strict=True)
            ]
        ref_ids = [self._ids(r) for r in ref_toks]
        pairs: list[tuple[list[int], list[int]]] = []
        chosen_hyp: list[list[str]] = []
        alt_info: list[list[tuple[int, int, str, str]]] = []
        fst_costs: dict[int, int] = {}
        extra: list[tuple[list[int], list[int]]] = []
        extra_meta: list[tuple[list[str], list[tuple[int, int, str, str]]]] = []
        enum_ranges: dict[int, tuple[int, int]] = {}
        cfg = self.config
        inv = self._words
        longest = max(
            (
                max(len(r), len(h) * max(1, alts.max_len if alts else 1))
                for r, h in zip(ref_toks, hyp_toks, strict=True)
            ),
            default=0,
        )
        k = longest + 2
        aligner = None
        for u in range(len(ids)):
            seg = segments[u]
            if seg is None:
                pairs.append((ref_ids[u], self._ids(hyp_toks[u])))
                chosen_hyp.append(hyp_toks[u])
                alt_info.append([])
                continue
            slots = [x for x in seg if isinstance(x, Slot)]
            if cfg.engine == "auto" and math.prod(len(x.forms) for x in slots) <= cfg.max_enum:
                # Few combinations: every linearisation is aligned by the batched DP and the
                # cheapest wins (ties: the earliest, written forms first). Same path set and
                # cost as the FST, so the same counts.
                start = len(extra)
                parts: list = []  # plain runs as (words, ids), and slots
                run: list[str] = []
                for x in seg:
                    if isinstance(x, Slot):
                        if run:
                            parts.append((run, self._ids(run)))
                            run = []
                        parts.append(x)
                    else:
                        run.append(x)
                if run:
                    parts.append((run, self._ids(run)))
                slot_ids = [[self._ids(f) for f in x.forms] for x in slots]
                for combo in itertools.product(*(_branch_order(x) for x in slots)):
                    words: list[str] = []
                    hyp_ids: list[int] = []
                    info: list[tuple[int, int, str, str]] = []
                    si = 0
                    for part in parts:
                        if isinstance(part, Slot):
                            i = combo[si]
                            form = part.forms[i]
                            if i != part.surface:
                                written = " ".join(part.forms[part.surface])
                                info.append(
                                    (len(words), len(words) + len(form), " ".join(form), written)
                                )
                            words.extend(form)
                            hyp_ids.extend(slot_ids[si][i])
                            si += 1
                        else:
                            words.extend(part[0])
                            hyp_ids.extend(part[1])
                    extra.append((ref_ids[u], hyp_ids))
                    extra_meta.append((words, info))
                enum_ranges[u] = (start, len(extra))
                pairs.append(([], []))
                chosen_hyp.append([])
                alt_info.append([])
                continue
            seg_ids = [
                tuple(self._ids(f) for f in s.forms) if isinstance(s, Slot) else self._ids([s])[0]
                for s in seg
            ]
            if aligner is None or aligner.vocab_size < len(self.vocab):
                aligner = self._aligner(k)
            n_h = sum(max(len(f) for f in s.forms) if isinstance(s, Slot) else 1 for s in seg)
            if not check_exact(k, len(ref_ids[u]), n_h):
                raise ScoringError(
                    f"utterance {ids[u]!r} is too long for exact FST weights; split it"
                )
            cost, hyp_path, chosen = aligner.best_path(ref_ids[u], seg_ids)
            forms = [tuple(inv[x - FIRST_WORD] for x in c) for c in chosen]
            words, info = _linearise(seg, forms)
            pairs.append((ref_ids[u], hyp_path))
            chosen_hyp.append(words)
            alt_info.append(info)
            fst_costs[u] = cost
        n_main = len(pairs)
        codes, costs = align_batch(pairs + extra, k)
        for u, (a, b) in enum_ranges.items():
            best = min(
                range(a, b), key=lambda c: (costs[n_main + c], codes[n_main + c].count("I"), c)
            )
            codes[u], costs[u] = codes[n_main + best], costs[n_main + best]
            chosen_hyp[u], alt_info[u] = extra_meta[best]
        codes, costs = codes[:n_main], costs[:n_main]
        for u, cost in fst_costs.items():
            if (
                divmod(costs[u], k) != cost
            ):  # both engines minimise the same cost: a mismatch is a bug
                raise RuntimeError(f"FST and DP disagree on {ids[u]!r}: {cost} != {costs[u]}")
        utts = [
            UtteranceResult(key, ref_toks[u], chosen_hyp[u], codes[u], missing[u], alt_info[u])
            for u, key in enumerate(ids)
        ]
        return ScoreResult(utts, self.summarize(utts), self.config_dict())

    def summarize(self, utts: list[UtteranceResult]) -> Metrics:
        """Pooled metrics plus bootstrap confidence intervals of TER and mTER."""
        cfg = self.config
        met = pooled(utts, cfg.unit or "word")
        errs = [u.sub + u.ins + u.dele for u in utts]
        n_ref = [len(u.ref) for u in utts]
        dens = {
            "ter": n_ref,
            "mter": [max(r, len(u.hyp)) for r, u in zip(n_ref, utts, strict=True)],
        }
        ci = bootstrap_ratios(errs, dens, cfg.bootstrap, cfg.confidence, cfg.seed)
        return met.with_ci(*(Interval.from_dict(ci[k]) for k in ("ter", "mter")))
