"""ALTERNATION and FRAGMENT: sclite's reference alternations, null word and word fragments.

sclite reads `{ a / b c / @ }` in a reference (or a hypothesis) as "one of these": the branch
that aligns best is scored, `@` being the null word (an empty branch, or alone: `a @ b` is
`a b`). With `-F` a fragment, a word that ends or begins with a hyphen (`th-`, `-ing`), is
correct against any word it begins or ends.

Like OPTIONAL, these steps only mark what PUNC would otherwise remove: the braces, the
separators inside them and a lone `@` become private-use characters standing alone (tokens of
their own), a fragment's hyphen a private-use character inside the word. ALTERNATION runs
before NSW (which would read `/` as "slash" and `@` as "at"; NSW reads the stretches between
the marks one by one); a `@` beside a brace or a separator (`{d / @}`, `{ fi /@ }`) is the
null word, as sclite reads it. `parse` turns a text's tokens into a small tree (`Word`, `Alt`)
that `scoring.sclite_align.Net` aligns. `check` finds malformed alternations in the raw text, so
that the reader (naming the line) and the scorer (naming the utterance) can say what is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scoring.errors import ScoringError

ALT_OPEN, ALT_SEP, ALT_CLOSE, NULL = "\ue012", "\ue013", "\ue014", "\ue015"
# A fragment's hyphen; a leading hyphen of an optional word, `(-c)`, kept but not making a
# fragment (sclite: an optional word is a fragment only when it ends in a hyphen).
FRAG, FRAG_WEAK = "\ue016", "\ue017"
# A synonym's words inside a branch (`scoring.synonyms`, the fstalign preset): all or nothing,
# as fstalign takes a synonym path only where every word of it matches, in a row. No raw text
# spells them: the preset writes them into the alternations it makes.
SYN_OPEN, SYN_CLOSE = "\ue018", "\ue019"
ALT_MARKS = frozenset((ALT_OPEN, ALT_SEP, ALT_CLOSE, NULL, SYN_OPEN, SYN_CLOSE))
_NULL = re.compile(r"(?<!\S)@(?!\S)")
_BRACES = re.compile(r"[{}]")
_FRAG_END = re.compile(r"(?<=[^\s(-])-(?=[\s)]|$)")
_FRAG_START = re.compile(r"(?<![^\s(])-(?=[^\s)-])")
_HYPHENS = (FRAG, FRAG_WEAK)
_MARK = str.maketrans({"{": f" {ALT_OPEN} ", "}": f" {ALT_CLOSE} ", "/": f" {ALT_SEP} "})


class Alternation:
    """Mark sclite's alternations `{ a / b }` and null words `@` (one line at a time)."""

    name = "ALTERNATION"
    batchable = True  # no mark crosses a newline

    def batch(self, texts: list[str]) -> list[str]:
        """`[self(t) for t in texts]`; one scan of all texts when none holds `{` or `@`."""
        joined = "\n".join(texts)
        if "{" not in joined and "@" not in joined:
            return list(texts)
        return [self(t) for t in texts]

    def __call__(self, text: str) -> str:
        # Braces and separators first: sclite reads `{d / @}` and `{ fi /@ }` (as SCTK's own
        # test files write them) with `@` the null word, though no space parts it from a mark.
        if "{" in text:
            text = "\n".join(map(_mark_line, text.split("\n")))
        if "@" in text:
            text = _NULL.sub(f" {NULL} ", text)
        return text


def _mark_line(line: str) -> str:
    """Braces and the `/` inside them as marks; a `/` outside braces stays punctuation."""
    if "{" not in line:
        return line
    out: list[str] = []
    depth = 0
    last = 0
    for m in re.finditer(r"[{}/]", line):
        ch = m.group()
        if ch == "/" and not depth:
            continue
        out.append(line[last : m.start()])
        out.append(ch.translate(_MARK))
        depth += {"{": 1, "}": -1}.get(ch, 0)
        last = m.end()
    out.append(line[last:])
    return "".join(out)


class Fragment:
    """Mark fragments (`th-`, `-ing`) so that PUNC keeps their hyphen (sclite `-F`)."""

    name = "FRAGMENT"
    batchable = True

    def __call__(self, text: str) -> str:
        if "-" not in text:
            return text
        text = _FRAG_END.sub(FRAG, text)
        return _FRAG_START.sub(
            lambda m: FRAG_WEAK if text[m.start() - 1 : m.start()] == "(" else FRAG, text
        )


def check(text: str) -> str | None:
    """What is wrong with the alternations of `text` (None: nothing): unbalanced braces or an
    alternation with no word in a branch."""
    depth = 0
    branch_words = [0]
    for tok in _BRACES.sub(lambda m: f" {m.group()} ", text).split():
        if tok == "{":
            depth += 1
            branch_words.append(0)
        elif tok == "}":
            if not depth:
                return "a '}' closes no '{'"
            if not branch_words.pop():
                return "an alternation with an empty branch (write '@' for the null word)"
            depth -= 1
            branch_words[-1] += 1
        elif tok == "/" and depth:
            if not branch_words[-1]:
                return "an alternation with an empty branch (write '@' for the null word)"
            branch_words[-1] = 0
        else:
            branch_words[-1] += 1
    return f"{depth} '{{' not closed" if depth else None


def check_text(text: str, where: str) -> None:
    """Raise `ScoringError` naming `where` when `text` holds a malformed alternation."""
    if "{" in text or "}" in text:
        problem = check(text)
        if problem is not None:
            raise ScoringError(
                f"{where}: malformed alternation ({problem}); sclite's form is "
                "'{ a / b c / @ }', braces balanced, every branch a word or '@'"
            )


@dataclass(frozen=True, slots=True)
class Word:
    """A reference or hypothesis word; `text` None is the null word `@`. `strict`: a word of
    a synonym (`SYN_OPEN` ... `SYN_CLOSE`), matched or not taken: 1 its last word, 2 a word
    with no insertion after it (`scoring.sclite_align.Net`)."""

    text: str | None
    optional: bool = False
    strict: int = 0


@dataclass(frozen=True, slots=True)
class Alt:
    """An alternation: its branches, each a sequence of items (an empty one: `@`)."""

    branches: tuple[tuple[Word | Alt, ...], ...]


Item = Word | Alt


def has_marks(tokens: list[str]) -> bool:
    """Whether the tokens hold an alternation, a null word or a fragment."""
    return any(t in ALT_MARKS or FRAG in t or FRAG_WEAK in t for t in tokens)


def _synonyms(tokens: list[str], flags: list[bool]) -> tuple[list[str], list[bool], list[int]]:
    """The tokens without a synonym's marks, their optional flags and `Word.strict`'s."""
    if SYN_OPEN not in tokens:
        return tokens, flags, [0] * len(tokens)
    out: list[str] = []
    opt: list[bool] = []
    strict: list[int] = []
    inside = False
    for tok, flag in zip(tokens, flags, strict=True):
        if tok in (SYN_OPEN, SYN_CLOSE):
            inside = tok == SYN_OPEN
            if not inside and strict and strict[-1] == 2:
                strict[-1] = 1  # its last word: an insertion after it is outside it
            continue
        out.append(tok)
        opt.append(flag)
        strict.append(2 if inside else 0)
    return out, opt, strict


def parse(tokens: list[str], optional: list[bool] | None = None) -> list[Item]:
    """The items of marked tokens (OPTIONAL's flags beside them). Lenient: `check` has
    refused malformed raw text; a branch that normalisation emptied is the null word."""
    tokens, flags, strict = _synonyms(tokens, optional or [False] * len(tokens))
    pos = 0

    def seq(stop: frozenset[str]) -> list[Item]:
        nonlocal pos
        out: list[Item] = []
        while pos < len(tokens) and tokens[pos] not in stop:
            tok = tokens[pos]
            pos += 1
            if tok == ALT_OPEN:
                out.append(alt())
            elif tok == NULL:
                out.append(Word(None))
            elif tok not in (ALT_SEP, ALT_CLOSE):
                out.append(Word(tok, flags[pos - 1], strict[pos - 1]))
        return out

    def alt() -> Alt:
        nonlocal pos
        branches: list[tuple[Item, ...]] = []
        while True:
            branch = seq(frozenset((ALT_SEP, ALT_CLOSE)))
            branches.append(tuple(branch) or (Word(None),))
            if pos >= len(tokens) or tokens[pos] == ALT_CLOSE:
                pos += 1
                return Alt(tuple(branches))
            pos += 1  # a separator

    items: list[Item] = []
    while pos < len(tokens):
        items.extend(seq(frozenset((ALT_CLOSE, ALT_SEP))))
        pos += 1  # a stray mark (normalisation cannot make one; `check` refuses them)
    return items


def shown(tok: str) -> str:
    """A token as reports show it: a fragment's mark as its hyphen again."""
    return (
        tok.replace(FRAG, "-").replace(FRAG_WEAK, "-")
        if tok[-1:] in _HYPHENS or tok[:1] in _HYPHENS
        else tok
    )
