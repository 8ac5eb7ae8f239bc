"""DAE (Dynamic Alternative Expansion): equivalent forms expanded on the hypothesis only.

An alternatives file holds one rule a line, forms separated by `|` (`gonna|going to`). Each form
is normalised with the scorer's own pipeline (without NSW) and tokenised, so rules and text
always agree. The alternatives of a written form are the other forms of every rule that lists
it: a form may appear in several rules (`he'd|he would` and `he'd|he had` give `he'd` two
readings without making `he would` and `he had` equivalent).

Expansion finds every match of every form in the hypothesis; a match becomes a *slot* whose
branches are the written span and its alternatives, and matches that overlap (`a hundred and`
with `a hundred|one hundred` and `hundred and|hundred`) share one slot whose branches are every
reading of the joint span. The aligner then picks one whole branch per slot, and takes an
alternative's words only where each of them is correct (scoring.align's strict words), so an
alternative can reconcile a spelling but never lower the count for wrong words. The reference
is never changed, so |ref| never moves when the list grows.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.errors import ScoringError
from scoring.normalize.compounds import compound_matches

_MAX_READINGS = 256  # readings of one slot (a chain of overlapping matches) at most


@dataclass(frozen=True, slots=True)
class Slot:
    """A hypothesis span and its readings (branches); `surface` is the index of what the
    system wrote. `strict[i][t]` is True where token t of branch i comes from an alternative
    (a word the system did not write): the aligner may only match it."""

    forms: tuple[tuple[str, ...], ...]
    surface: int
    strict: tuple[tuple[bool, ...], ...] = ()

    def mask(self, i: int) -> tuple[bool, ...]:
        """The strict flags of branch i (all True for an alternative, by default)."""
        if self.strict:
            return self.strict[i]
        return (i != self.surface,) * len(self.forms[i])


Segment = str | Slot


@dataclass
class Rule:
    """One line of the alternatives file."""

    line: int
    forms: tuple[tuple[str, ...], ...]
    directed: bool = False  # `a > b`: a written `a` may be read `b`, not the reverse


def parse_rules(path: Path) -> list[tuple[int, list[str]]]:
    """Raw rules as (line number, forms); `read_rules` tells the directed ones apart."""
    return [(no, forms) for no, forms, _ in read_rules(path)]


def read_rules(path: Path) -> list[tuple[int, list[str], bool]]:
    """Raw rules as (line number, forms, directed); checks syntax only. `#` starts a comment
    line, and whitespace then `#` a comment after a rule. `a > b` is a directed rule: a
    hypothesis that wrote `a` may be read `b`, never the reverse (a form NSW cannot choose,
    such as the gender of a digit: `una > un` where NSW writes every 1 as `un`)."""
    out = []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if " #" in line or "\t#" in line:  # a trailing comment (a source note)
            line = line[: min(i for i in (line.find(" #"), line.find("\t#")) if i >= 0)].strip()
        directed = ">" in line and "|" not in line
        forms = [f.strip() for f in line.split(">" if directed else "|")]
        if len(forms) < 2 or any(not f for f in forms) or (directed and len(forms) != 2):
            raise ScoringError(
                f"{path}:{no}: a rule needs at least two non-empty forms 'a|b', or exactly two "
                "for a directed one 'a > b'"
            )
        out.append((no, forms, directed))
    return out


# The compiled form of a rules file (`compile_rules`): tuples, lists, dicts and frozensets of
# strings only, so a caller can keep it between processes (`marshal`) and hand it back.
Compiled = tuple[Any, ...]
# A caller's store of compiled rules: called with the function that compiles them, it returns
# that function's result, or what it kept from an earlier call with the same inputs. The
# library hashes nothing: the caller keys what it keeps (asrbench.scorers: the configuration,
# the data files and the code by content, the Unicode tables' versions).
Store = Callable[[Callable[[], Compiled]], Compiled]
_COMPILED = "dae-compiled-1"  # the layout's tag: a store's older entry is compiled again


def compile_rules(path: Path | None, tokenize: Callable[[str], list[str]]) -> Compiled:
    """The rules of `path` with every form normalised by `tokenize`, and the index `split`
    reads: what `Alternatives` holds, as plain data (`Compiled`)."""
    parsed = read_rules(path) if path is not None else []
    # every form normalised in one batch when the tokeniser is a Pipeline (same tokens)
    flat = [f for _, raw, _ in parsed for f in raw]
    batch = getattr(tokenize, "batch", None)
    normal = dict(zip(flat, batch(flat) if batch else map(tokenize, flat), strict=True))
    rules: list[tuple[int, tuple[tuple[str, ...], ...], bool]] = []
    for no, raw, directed in parsed:
        forms: list[tuple[str, ...]] = []
        for f in raw:
            toks = tuple(normal[f])
            if toks and toks not in forms:
                forms.append(toks)
        if len(forms) < 2:
            continue  # forms that normalise to the same text add nothing (e.g. story-teller)
        rules.append((no, tuple(forms), directed))
    # Each written form: itself first, then the other forms of every rule listing it (of a
    # directed rule, only its first form).
    branches: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for _, rule_forms, directed in rules:
        for toks in rule_forms[:1] if directed else rule_forms:
            own = branches.setdefault(toks, [toks])
            own.extend(f for f in rule_forms if f not in own)
    classes: list[tuple[tuple[str, ...], ...]] = [tuple(v) for v in branches.values()]
    # first token -> (written form, its alternatives, the first words of those): the last one
    # lets `split` drop a match at once when no alternative can be all correct
    index: dict[str, list[tuple[tuple[str, ...], tuple[tuple[str, ...], ...], frozenset[str]]]]
    index = {}
    for branch in classes:
        index.setdefault(branch[0][0], []).append(
            (branch[0], branch[1:], frozenset(f[0] for f in branch[1:]))
        )
    for cands in index.values():
        cands.sort(key=lambda c: -len(c[0]))  # longest first; stable keeps file order on ties
    # first token -> the first words of every alternative of a form starting with it
    firsts = {t: frozenset().union(*(c[2] for c in cands)) for t, cands in index.items()}
    max_len = max((len(f) for _, forms, _ in rules for f in forms), default=0)
    return (_COMPILED, rules, classes, index, firsts, max_len)


class Alternatives:
    """The compiled alternatives list: an index from first token to (form, alternatives)."""

    def __init__(
        self,
        path: Path | None,
        tokenize: Callable[[str], list[str]],
        compounds: bool = False,
        store: Store | None = None,
    ) -> None:
        self.path = path
        self.compounds = compounds  # COMPOUNDS matches too (scoring.normalize.compounds)

        def build() -> Compiled:
            return compile_rules(path, tokenize)

        state = build() if store is None else store(build)
        if not (isinstance(state, tuple) and len(state) == 6 and state[0] == _COMPILED):
            state = build()  # a kept entry of another layout
        _, rules, classes, index, firsts, max_len = state
        self.rules: list[Rule] = [Rule(no, forms, directed) for no, forms, directed in rules]
        self.classes: list[tuple[tuple[str, ...], ...]] = classes
        self._index: dict[
            str, list[tuple[tuple[str, ...], tuple[tuple[str, ...], ...], frozenset[str]]]
        ] = index
        # first token -> the first words of every alternative of a form starting with it
        self._firsts: dict[str, frozenset[str]] = firsts
        self.max_len: int = max_len
        self._keys = frozenset(self._index)
        # every form's first token: a text holding none of them has no rule match
        self.first_words = self._keys

    def __len__(self) -> int:
        return len(self.rules)

    def __bool__(self) -> bool:
        return True  # a list of no rules still applies COMPOUNDS (`if scorer.alternatives`)

    def alternatives_of(self, form: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
        """The branches of a slot that wrote `form`: the form itself, then its alternatives."""
        for toks, alts, _ in self._index.get(form[0], ()) if form else ():
            if toks == form:
                return (toks, *alts)
        return (form,)

    def vocabulary(self) -> set[str]:
        """Every token that appears in some form."""
        return {t for r in self.rules for f in r.forms for t in f}

    def split(
        self, tokens: list[str], reference: Collection[str] | None = None
    ) -> tuple[list[list[str]], list[Slot]] | None:
        """The hypothesis as plain runs around slots: `runs[0], slots[0], runs[1], ...`
        (len(runs) == len(slots) + 1, runs may be empty), or None when no rule matches.

        Every match of every form is expanded, overlapping ones too: matches that overlap make
        one slot over their joint span, whose branches are every reading of it (each part
        either as written or as one of its alternatives; the words of an alternative strict).
        With `reference` (the reference's tokens), an alternative holding a word absent from
        it is left out (it could never be all correct): the same result, fewer branches. With
        `compounds` (and a reference), COMPOUNDS' matches join them.
        """
        matches = self._rule_matches(tokens, reference)
        if self.compounds and reference is not None:
            for start, found in compound_matches(tokens, list(reference)).items():
                matches.setdefault(start, []).extend(found)
        if not matches:
            return None
        return self._clusters(tokens, matches)

    def _rule_matches(
        self, tokens: list[str], reference: Collection[str] | None
    ) -> dict[int, list[tuple[int, tuple[tuple[str, ...], ...]]]]:
        """Every match of a rule's form: start -> [(end, alternatives)], file order, longest
        first; with `reference`, alternatives holding a word absent from it left out."""
        index = self._index
        present: frozenset[str] | set[str] = self._keys.intersection(tokens)  # walks the tokens
        if not present:
            return {}
        words = None
        if reference is not None:
            # Most matches have no alternative whose first word is even in the reference:
            # found here with set operations, before any scan of positions.
            words = set(reference)
            present = {t for t in present if not words.isdisjoint(self._firsts[t])}
            if not present:
                return {}
        starts = [i for i, tok in enumerate(tokens) if tok in present]
        n = len(tokens)
        # every match: start -> [(end, alternatives)], file order, longest first
        matches: dict[int, list[tuple[int, tuple[tuple[str, ...], ...]]]] = {}
        for i in starts:
            for toks, alts, firsts in index[tokens[i]]:
                if words is not None and words.isdisjoint(firsts):
                    continue  # no alternative can be all correct
                m = len(toks)
                if m > 1 and (
                    i + m > n or tokens[i + 1] != toks[1] or tuple(tokens[i : i + m]) != toks
                ):
                    continue
                if words is not None:
                    alts = tuple(f for f in alts if words.issuperset(f))
                    if not alts:
                        continue
                matches.setdefault(i, []).append((i + m, alts))
        return matches

    def _clusters(
        self, tokens: list[str], matches: dict[int, list[tuple[int, tuple[tuple[str, ...], ...]]]]
    ) -> tuple[list[list[str]], list[Slot]]:
        """The hypothesis as plain runs around one slot per cluster of overlapping matches."""
        runs: list[list[str]] = []
        slots: list[Slot] = []
        cursor = 0
        starts = sorted(matches)
        k = 0
        while k < len(starts):
            # a cluster: matches chained by overlap, from starts[k] to `end`
            begin = starts[k]
            end = max(e for e, _ in matches[begin])
            k += 1
            while k < len(starts) and starts[k] < end:
                end = max(end, *(e for e, _ in matches[starts[k]]))
                k += 1
            runs.append(tokens[cursor:begin])
            slots.append(self._slot(tokens, begin, end, matches))
            cursor = end
        runs.append(tokens[cursor:])
        return runs, slots

    def _slot(
        self,
        tokens: list[str],
        begin: int,
        end: int,
        matches: dict[int, list[tuple[int, tuple[tuple[str, ...], ...]]]],
    ) -> Slot:
        """The slot over tokens[begin:end]: the written reading first, then every other."""
        spans = matches[begin]
        if (
            len(spans) == 1
            and spans[0][0] == end
            and all(p not in matches for p in range(begin + 1, end))
        ):
            # one match, nothing inside it (the common case): written form, then alternatives
            alts = spans[0][1]
            return Slot(
                (tuple(tokens[begin:end]), *alts),
                0,
                ((False,) * (end - begin), *((True,) * len(a) for a in alts)),
            )
        readings: dict[tuple[tuple[str, ...], tuple[bool, ...]], None] = {}

        def walk(p: int, toks: tuple[str, ...], mask: tuple[bool, ...]) -> None:
            if len(readings) > _MAX_READINGS:
                return
            if p == end:
                readings[(toks, mask)] = None
                return
            walk(p + 1, toks + (tokens[p],), mask + (False,))
            for stop, alts in matches.get(p, ()):
                if stop <= end:
                    for alt in alts:
                        walk(stop, toks + alt, mask + (True,) * len(alt))

        walk(begin, (), ())
        if len(readings) > _MAX_READINGS:
            # a long chain of overlapping matches: the leftmost longest match alone, plain text
            # around it (documented; never seen in practice once alternatives are pruned)
            stop, alts = matches[begin][0]
            readings = {(tuple(tokens[begin:stop]), (False,) * (stop - begin)): None}
            for alt in alts:
                readings[(alt, (True,) * len(alt))] = None
            tail = tuple(tokens[stop:end])
            readings = {(t + tail, m + (False,) * len(tail)): None for t, m in readings}
        forms = tuple(t for t, _ in readings)
        strict = tuple(m for _, m in readings)
        return Slot(forms, 0, strict)

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
