"""DAE (Dynamic Alternative Expansion): equivalent forms expanded on the hypothesis only.

An alternatives file holds one rule a line, forms separated by `|` (`gonna|going to`). Each form
is normalised with the scorer's own pipeline (without NSW) and tokenised, so rules and text
always agree. Expansion scans the hypothesis left to right and, at each position, takes the
longest form that matches (ties: the form listed first); the matched span becomes a *slot* whose
branches are all the forms of the rule. The aligner then picks one whole branch per slot, so a
span matches as a whole or not at all. The reference is never changed, so |ref| never moves
when the list grows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scoring.errors import ScoringError


@dataclass(frozen=True, slots=True)
class Slot:
    """A hypothesis span with its equivalent forms; `surface` is the index of the form written."""

    rule: int
    forms: tuple[tuple[str, ...], ...]
    surface: int


Segment = str | Slot


@dataclass
class Rule:
    """One line of the alternatives file."""

    line: int
    forms: tuple[tuple[str, ...], ...]


def parse_rules(path: Path) -> list[tuple[int, list[str]]]:
    """Raw rules as (line number, forms); checks syntax only."""
    out = []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        forms = [f.strip() for f in line.split("|")]
        if len(forms) < 2 or any(not f for f in forms):
            raise ScoringError(f"{path}:{no}: a rule needs at least two non-empty forms 'a|b'")
        out.append((no, forms))
    return out


class Alternatives:
    """The compiled alternatives list: an index from first token to (form, rule) candidates."""

    def __init__(self, path: Path, tokenize: Callable[[str], list[str]]) -> None:
        self.path = path
        self.rules: list[Rule] = []
        owner: dict[tuple[str, ...], int] = {}
        for no, raw in parse_rules(path):
            forms: list[tuple[str, ...]] = []
            for f in raw:
                toks = tuple(tokenize(f))
                if toks and toks not in forms:
                    forms.append(toks)
            if len(forms) < 2:
                continue  # forms that normalise to the same text add nothing (e.g. story-teller)
            for toks in forms:
                if toks in owner and owner[toks] != len(self.rules):
                    first = self.rules[owner[toks]].line
                    raise ScoringError(
                        f"{path}:{no}: form {' '.join(toks)!r} already belongs to the rule on "
                        f"line {first}; merge the two rules into one"
                    )
                owner[toks] = len(self.rules)
            self.rules.append(Rule(no, tuple(forms)))
        self._index: dict[str, list[tuple[tuple[str, ...], int, int]]] = {}
        for r, rule in enumerate(self.rules):
            for i, toks in enumerate(rule.forms):
                self._index.setdefault(toks[0], []).append((toks, r, i))
        for cands in self._index.values():
            cands.sort(key=lambda c: -len(c[0]))  # longest first; stable keeps file order on ties
        self.max_len = max((len(f) for r in self.rules for f in r.forms), default=0)

    def __len__(self) -> int:
        return len(self.rules)

    def vocabulary(self) -> set[str]:
        """Every token that appears in some form."""
        return {t for r in self.rules for f in r.forms for t in f}

    def split(self, tokens: list[str]) -> tuple[list[list[str]], list[Slot]] | None:
        """The hypothesis as plain runs around slots: `runs[0], slots[0], runs[1], ...`
        (len(runs) == len(slots) + 1, runs may be empty), or None when no rule matches."""
        index = self._index
        if index.keys().isdisjoint(tokens):
            return None
        runs: list[list[str]] = []
        slots: list[Slot] = []
        cursor = 0
        # Only positions whose token starts some form can start a match; scanning those left
        # to right, skipping the inside of each match, is the same longest-match scan.
        for i in [i for i, tok in enumerate(tokens) if tok in index]:
            if i < cursor:
                continue
            for toks, r, k in index[tokens[i]]:
                m = len(toks)
                if tuple(tokens[i : i + m]) == toks:
                    runs.append(tokens[cursor:i])
                    slots.append(Slot(r, self.rules[r].forms, k))
                    cursor = i + m
                    break
        if not slots:
            return None
        runs.append(tokens[cursor:])
        return runs, slots

    def expand(self, tokens: list[str]) -> list[Segment] | None:
        """Segments of the hypothesis (tokens and slots), or None when no rule matches."""
        found = self.split(tokens)
        if found is None:
            return None
        runs, slots = found
        out: list[Segment] = list(runs[0])
        for slot, run in zip(slots, runs[1:], strict=True):
            out.append(slot)
            out.extend(run)
        return out
