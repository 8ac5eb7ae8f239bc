"""NONSPEECH: remove non-speech markers (`<beep>`, `[noise]`, `<unk>`, ...) from both sides.

Real references carry tags and annotations that nobody says: `<beep>`, `<unk>`, `<sil>`,
GigaSpeech's `<COMMA>`, `[noise]`, `[laughter]`, `[this is a simple beep tone]`. Without this
step PUNC strips the brackets and the words inside become reference words a model is charged
for. The markers are regular expressions in a data file (one a line), so a corpus with other
conventions is a file away; each match becomes a space. Runs first: NSW would verbalise digits
inside a marker, PUNC would strip its brackets.
"""

from __future__ import annotations

from pathlib import Path

import regex

from scoring.errors import ScoringError

# Texts around a newline that a marker pattern must not match across (it would join lines,
# which PUNC and the batched pipeline keep apart).
_PROBES = [f"{a}x\ny{b}" for a in "<[({'\"*#%" for b in ">])}'\"*#%"] + ["a\nb", "\n"]


def load_patterns(path: Path) -> list[str]:
    """One regular expression a line; `#` comment lines and blank lines are skipped."""
    out = []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            regex.compile(line)
        except regex.error as exc:
            raise ScoringError(f"{path}:{no}: not a valid regular expression ({exc})") from None
        out.append(line)
    return out


class NonSpeech:
    """Replace every match of the marker patterns with a space."""

    name = "NONSPEECH"
    batchable = True  # the patterns never match across a newline (checked on load, by probes)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.patterns = load_patterns(path)
        if any(
            "\n" in m.group()
            for p in self.patterns
            for probe in _PROBES
            for m in regex.finditer(p, probe)
        ):
            raise ScoringError(
                f"{path}: a marker pattern matches across a newline; "
                "exclude \\n from its character classes"
            )
        joined = "|".join(f"(?:{p})" for p in self.patterns)
        self._re = regex.compile(joined) if joined else None
        # When every pattern starts with a literal character, a text holding none of those
        # characters is left alone without running the patterns (the common case).
        firsts = [_literal_start(p) for p in self.patterns]
        known = [c for c in firsts if c is not None]
        self._firsts = "".join(known) if len(known) == len(firsts) else None

    def batch(self, texts: list[str]) -> list[str]:
        """`[self(t) for t in texts]`; one scan of all texts when none holds a marker."""
        if self._re is None:
            return list(texts)
        if self._firsts is not None:
            joined = "\n".join(texts)
            if not any(c in joined for c in self._firsts):
                return list(texts)
        return [self(t) for t in texts]

    def __call__(self, text: str) -> str:
        if self._re is None:
            return text
        if self._firsts is not None and not any(c in text for c in self._firsts):
            return text
        return self._re.sub(" ", text)


def _literal_start(pattern: str) -> str | None:
    """The literal character every match of `pattern` starts with, or None if unknown."""
    if pattern[:1] == "\\" and len(pattern) > 1 and not pattern[1].isalnum():
        return pattern[1]
    if (
        pattern[:1]
        and pattern[0] not in ".^$*+?{}[]\\|()"
        and (len(pattern) == 1 or pattern[1] not in "*?{")
    ):
        return pattern[0]
    return None
