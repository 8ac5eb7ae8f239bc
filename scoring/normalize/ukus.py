"""UK-US: map British spellings to American ones from a TSV data file (token level)."""

from __future__ import annotations

from pathlib import Path

from scoring.errors import ScoringError


def load_map(path: Path) -> dict[str, str]:
    """Read `UK<TAB>US` lines; `#` comment lines and blank lines are skipped."""
    out: dict[str, str] = {}
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0] or not cols[1]:
            raise ScoringError(f"{path}:{no}: expected UK<TAB>US")
        if cols[0] in out:
            raise ScoringError(f"{path}:{no}: {cols[0]!r} is mapped twice; keep one line")
        out[cols[0]] = cols[1]
    return out


class UkUs:
    """Replace each token found in the map by its American spelling."""

    name = "UK-US"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.mapping = load_map(path)

    @property
    def keys(self) -> frozenset[str]:
        """Tokens this step can change; every other token passes through unchanged."""
        return frozenset(self.mapping)

    def __call__(self, tokens: list[str]) -> list[str]:
        get = self.mapping.get
        return [get(t, t) for t in tokens]
