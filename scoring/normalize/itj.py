"""ITJ: drop interjections and hesitation fillers listed in a data file."""

from __future__ import annotations

from pathlib import Path


def load_wordlist(path: Path) -> frozenset[str]:
    """One entry a line; `#` starts a comment line; blank lines ignored."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.add(line)
    return frozenset(out)


class Itj:
    """Remove tokens found in the interjection list (token level, after tokenisation)."""

    name = "ITJ"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.words = load_wordlist(path)

    @property
    def keys(self) -> frozenset[str]:
        """Tokens this step can change; every other token passes through unchanged."""
        return frozenset(self.words)

    def __call__(self, tokens: list[str]) -> list[str]:
        words = self.words
        return [t for t in tokens if t not in words]
