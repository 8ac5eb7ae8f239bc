"""The normalisation pipeline: small named steps, each switchable for ablations.

The steps and their order are one registry, `STEPS` in `steps.py` (the scorer walks it; its
presets and the ablation's order are there too). String steps run first, in this order:
INVISIBLE (terminal escapes, control and invisible format characters removed), UNICODE (NFC or
NFKC normalisation), NONSPEECH (markers such as `<beep>`, `[noise]`; before anything reads
inside them), ALTERNATION (sclite's `{ a / b }` and null word `@`, marked before NSW could read
`/` and `@` as words), NSW (verbalise numbers; needs case and punctuation), FW (full-width to
half-width: Chinese, Cantonese, Japanese), OPTIONAL (marks sclite's parenthesised optional words
before PUNC strips the parentheses), CASE, then the script's own steps (DIACRITICS when asked,
ELISION for French, Italian and Catalan clitics, GERESH for Hebrew and Yiddish; `script.py`),
PUNC. The text is then tokenised (words, or characters for character-level languages) and the
token steps run: ITJ, UK-US. Reference and hypothesis go through the very same pipeline
(OPTIONAL's marks are read on the reference only).

Which steps a language gets is its profile's business (`scoring/languages.py`): English and
Chinese keep their pipelines of before (CASE is `lower()`); every other language folds case with
`script.Fold` (full case folding, Turkish dotted i). No step removes a combining mark or splits a
word at one unless asked (DIACRITICS strips only the optional marks of the scripts that have
them); PUNC removes Unicode punctuation only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scoring.normalize.case import AsciiCase, Case
from scoring.normalize.invisible import Invisible, UnicodeForm
from scoring.normalize.itj import Itj
from scoring.normalize.nonspeech import NonSpeech
from scoring.normalize.nsw import Nsw
from scoring.normalize.optional import Optional
from scoring.normalize.punc import Punc
from scoring.normalize.script import Diacritics, Elision, Fold, Geresh
from scoring.normalize.ukus import UkUs
from scoring.normalize.zh import FullWidth, char_tokens

try:  # a batch's ASCII tokens split in C (scoring/_fast.pyx); where not built, str.split
    import scoring._fast as _fast
except ImportError:  # pragma: no cover - an install without a C compiler
    _fast = None

# PUNC's private-use placeholders; a text holding one is normalised on its own.
_PLACEHOLDERS = re.compile("[\ue000-\ue002]")

__all__ = [
    "AsciiCase",
    "Case",
    "Diacritics",
    "Elision",
    "Fold",
    "FullWidth",
    "Geresh",
    "Invisible",
    "Itj",
    "NonSpeech",
    "Nsw",
    "Optional",
    "Pipeline",
    "Punc",
    "UkUs",
    "UnicodeForm",
    "char_tokens",
    "run_text_steps",
]


def word_tokens(text: str) -> list[str]:
    """Whitespace tokenisation."""
    return text.split()


def run_text_steps(steps: Sequence[Callable[[str], str]], texts: list[str]) -> list[str]:
    """String steps over many texts: a step's `batch` where it has one (one pass over all of
    them), else one text at a time."""
    for step in steps:
        batch = getattr(step, "batch", None)
        texts = batch(texts) if batch is not None else [step(t) for t in texts]
    return texts


@dataclass
class Pipeline:
    """String steps, a tokeniser, then token steps; `names` lists the active steps."""

    text_steps: list[Callable[[str], str]] = field(default_factory=list)
    token_steps: list[Callable[[list[str]], list[str]]] = field(default_factory=list)
    tokenize: Callable[[str], list[str]] = word_tokens

    def __post_init__(self) -> None:
        # Fused token steps: every token step maps one token to one token or drops it (ITJ,
        # UK-US), so the whole chain is a per-token function, memoised per distinct token, and
        # tokens outside every step's key set pass through untouched (one set test per text).
        self._touched: frozenset[str] | None = None
        self._fused: dict[str, str | None] = {}
        self._same: dict[str, str] = {}  # token -> its one string object (see batch)
        keys = [k for k in (getattr(s, "keys", None) for s in self.token_steps) if k is not None]
        if self.token_steps and len(keys) == len(self.token_steps):
            self._touched = frozenset[str]().union(*keys)
        # PUNC ends by collapsing whitespace; a whitespace tokeniser does that anyway: the last
        # step then splits the text itself (None: tokenise as usual).
        last = self.text_steps[-1] if self.text_steps else None
        self._split_last: Punc | None = (
            last if self.tokenize is word_tokens and isinstance(last, Punc) else None
        )

    @property
    def names(self) -> list[str]:
        return [s.name for s in (*self.text_steps, *self.token_steps)]  # type: ignore[attr-defined]

    def batch(self, texts: list[str]) -> list[list[str]]:
        """`[self(t) for t in texts]`, faster: the trailing CASE and PUNC steps run once over
        all texts joined by newlines (neither looks across a newline: `str.lower()` and
        PUNC's patterns give the same lines), then each line is split and the token steps run.
        Falls back to one text at a time when a text holds a newline or a PUNC placeholder.
        """
        steps = self.text_steps
        tail = len(steps)
        while tail and getattr(steps[tail - 1], "batchable", False):
            tail -= 1
        punc = self._split_last
        if tail == len(steps) or punc is None:
            return [self(t) for t in texts]
        texts = run_text_steps(steps[:tail], texts)
        joined = "\n".join(texts)
        if joined.count("\n") != len(texts) - 1 or (
            not joined.isascii() and _PLACEHOLDERS.search(joined)
        ):
            lines = []
            for t in texts:
                for step in steps[tail:-1]:
                    t = step(t)
                lines.append(punc.strip(t))
            return self._finish(self._tokens(lines))
        for step in steps[tail:-1]:
            joined = step(joined)
        joined = punc.strip(joined)
        # ASCII texts split in C (scoring/_fast.pyx), the same lists of the same objects
        out_tokens = _fast.split_lines(joined, self._same) if _fast is not None else None
        if out_tokens is None:
            out_tokens = self._tokens(joined.split("\n"))
        return self._finish(out_tokens)

    def _tokens(self, lines: list[str]) -> list[list[str]]:
        """Each line's tokens. One string object per distinct token (most tokens repeat): far
        less memory to allocate, and every later set and dict lookup finds its hash cached."""
        same = self._same.setdefault
        return [list(map(same, toks, toks)) for toks in map(str.split, lines)]

    def _finish(self, out_tokens: list[list[str]]) -> list[list[str]]:
        """The token steps over a batch's texts (their tokens `self._same`'s objects)."""
        touched = self._touched
        if touched is not None:
            # Every token is one of `self._same`'s keys: the step keys among them (usually
            # none: one set test for the whole batch) are all a text can hold. Then one set
            # test a text; only texts holding one go through the (memoised) per-token function.
            hit = touched.intersection(self._same)
            if not hit:
                return out_tokens
            fn = self._token
            disjoint = hit.isdisjoint
            for i, tokens in enumerate(out_tokens):
                if not disjoint(tokens):
                    out_tokens[i] = [x for x in map(fn, tokens) if x is not None]
            return out_tokens
        finish = self._token_steps
        return [finish(tokens) for tokens in out_tokens]

    def _token_steps(self, tokens: list[str]) -> list[str]:
        touched = self._touched
        if touched is None:
            for tstep in self.token_steps:
                tokens = tstep(tokens)
            return tokens
        if touched.isdisjoint(tokens):
            return tokens
        return [x for x in map(self._token, tokens) if x is not None]

    def text(self, text: str) -> str:
        """Apply the string steps only."""
        for step in self.text_steps:
            text = step(text)
        return text

    def _token(self, tok: str) -> str | None:
        out = self._fused.get(tok, "")
        if out == "":
            toks = [tok]
            for tstep in self.token_steps:
                toks = tstep(toks)
            out = self._fused[tok] = toks[0] if toks else None
        return out

    def __call__(self, text: str) -> list[str]:
        """Normalise and tokenise one transcript."""
        punc = self._split_last
        if punc is not None:
            for step in self.text_steps[:-1]:
                text = step(text)
            tokens = punc.split(text)
        else:
            for step in self.text_steps:
                text = step(text)
            tokens = self.tokenize(text)
        return self._token_steps(tokens)
