"""The normalisation pipeline: small named steps, each switchable for ablations.

String steps run first, in this order: NSW (verbalise numbers; needs case and punctuation, so
it comes first), FW (full-width to half-width, Chinese), CASE, PUNC. The text is then tokenised
(words, or characters for character-level languages) and the token steps run: ITJ, UK-US.
Reference and hypothesis go through the very same pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from scoring.normalize.case import Case
from scoring.normalize.itj import Itj
from scoring.normalize.nsw import Nsw
from scoring.normalize.punc import Punc
from scoring.normalize.ukus import UkUs
from scoring.normalize.zh import FullWidth, char_tokens

__all__ = ["Case", "FullWidth", "Itj", "Nsw", "Pipeline", "Punc", "UkUs", "char_tokens"]


def word_tokens(text: str) -> list[str]:
    """Whitespace tokenisation."""
    return text.split()


@dataclass
class Pipeline:
    """String steps, a tokeniser, then token steps; `names` lists the active steps."""

    text_steps: list[Callable[[str], str]] = field(default_factory=list)
    token_steps: list[Callable[[list[str]], list[str]]] = field(default_factory=list)
    tokenize: Callable[[str], list[str]] = word_tokens

    @property
    def names(self) -> list[str]:
        return [s.name for s in (*self.text_steps, *self.token_steps)]  # type: ignore[attr-defined]

    def text(self, text: str) -> str:
        """Apply the string steps only."""
        for step in self.text_steps:
            text = step(text)
        return text

    def __call__(self, text: str) -> list[str]:
        """Normalise and tokenise one transcript."""
        for step in self.text_steps:
            text = step(text)
        tokens = self.tokenize(text)
        for tstep in self.token_steps:
            tokens = tstep(tokens)
        return tokens
