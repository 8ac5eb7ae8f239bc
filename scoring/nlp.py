"""Rev's NLP files and their sidecars (fstalign's inputs; Earnings-21/22 publish them).

An NLP file is pipe-separated, a header line then one token a line:
`token|speaker|ts|endTs|punctuation|case|tags|wer_tags` (references; system outputs often stop
at `tags`: 7 columns). `tags` holds `['ID:CLASS', ...]`, the normalisable entities the token
belongs to; `wer_tags` holds `['ID', ...]`, the entities whose class the wer_tags sidecar
(`{"ID": {"entity_type": "CLASS"}}`) gives. A normalisation sidecar
(`{"ID": {"class": ..., "candidates": [{"verbalization": [words], ...}]}}`) lists each
entity's accepted readings.

`reference_text` turns a reference and its normalisation sidecar into text with sclite's
alternations (`{ twenty twenty / two thousand twenty }`), which the scorer's ALTERNATION step
already reads: the aligner takes the branch the hypothesis matches and |ref| counts that
branch. `Piece`s remember which NLP tokens each stretch came from, so `scoring.entities` can
give every scored reference word its entity classes back.

This module is the reader API other metrics (punctuation, casing) build on: `read_nlp` gives
`NlpToken`s with their `punctuation` and `case` columns as written.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.errors import ScoringError
from scoring.normalize.alternation import SYN_CLOSE, SYN_OPEN

COLUMNS = ("token", "speaker", "ts", "endTs", "punctuation", "case", "tags", "wer_tags")
_SIMPLE_LIST = re.compile(r"\['[^'\\]*'(?:, '[^'\\]*')*\]")
_QUOTED = re.compile(r"'([^'\\]*)'")
_MIN_COLUMNS = 7  # written without `wer_tags`


@dataclass(frozen=True, slots=True)
class NlpToken:
    """One line of an NLP file; `line` is its line number (1-based, the header is line 1)."""

    token: str
    speaker: str = ""
    ts: float | None = None
    end_ts: float | None = None
    punctuation: str = ""
    case: str = ""
    tags: tuple[str, ...] = ()  # normalisation entity ids (the `ID` of `ID:CLASS`)
    tag_classes: tuple[str, ...] = ()  # their classes, as written after the colon
    wer_tags: tuple[str, ...] = ()
    line: int = 0
    prepunctuation: str = ""  # Earnings-22's: punctuation before the token


@dataclass(frozen=True, slots=True)
class Norm:
    """One entity of a normalisation sidecar: its class and accepted readings."""

    cls: str
    candidates: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Piece:
    """A stretch of the reference: NLP tokens `start:stop` and the texts it may be read as
    (one for a plain token; the entity's candidates for a normalised one)."""

    start: int
    stop: int
    branches: tuple[str, ...]
    # the sidecar lists a reading of no words (Rev's `*` of "press * 1"): fstalign lets the
    # entity be left out at no cost; only `scoring.synonyms` (the fstalign preset) uses it
    null: bool = False
    # the branch written first in the reference text, which the aligner takes where readings
    # tie (`scoring.synonyms`: the tokens as written, as fstalign mostly does); the others
    # keep their order, the first being what `scoring.nlp_chunks` anchors on
    lead: int = 0


def _list_column(text: str, path: Path, no: int, name: str) -> list[str]:
    text = text.strip()
    if not text or text == "[]":
        return []
    if _SIMPLE_LIST.fullmatch(text):  # Rev's usual form: ast only for the rest (10x slower)
        return _QUOTED.findall(text)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScoringError(
            f"{path}:{no}: the {name} column must be a list of strings such as ['0:YEAR'], "
            f"not {text!r}"
        )
    return value


def _time(text: str, path: Path, no: int, name: str, warnings: list[str] | None) -> float | None:
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        problem = f"{path}:{no}: {name} {text!r} is not a number of seconds"
        if warnings is None:
            raise ScoringError(problem + "; --lenient reads it as no time") from None
        warnings.append(problem + " (read as no time)")
        return None


def read_nlp(path: str | Path, warnings: list[str] | None = None) -> list[NlpToken]:
    """The tokens of an NLP file, columns found by the header's names (Earnings-21 writes
    the 8 of `COLUMNS`, system outputs 7, Earnings-22 adds `prepunctuation` and leaves out
    `wer_tags`); a line whose column count differs from the header's, or a malformed list
    or time, is an error naming the file and line. Given a `warnings` list, a time that is
    not a number is read as none and reported there instead (Rev's Earnings-21 4346923 has
    one: a `.` in endTs)."""
    return [NlpToken(*values) for values in _rows(path, warnings)]


def read_nlp_text(
    path: str | Path, warnings: list[str] | None = None, punctuation: bool = True
) -> str:
    """`hypothesis_text(read_nlp(path, warnings), punctuation)` without making the tokens
    (a system output is scored as text): the same checks, messages and warnings."""
    rows = _rows(path, warnings)
    if not punctuation:
        return " ".join(v[0] for v in rows)
    return " ".join(v[0] + v[4] for v in rows)


def _rows(path: str | Path, warnings: list[str] | None) -> list[tuple]:
    """`read_nlp`'s lines as `NlpToken`'s fields in order."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ScoringError(f"{path}: cannot read the NLP file ({exc})") from None
    head = [h.strip() for h in lines[0].split("|")] if lines else []
    if not head or head[0] != "token" or len(set(head)) != len(head):
        raise ScoringError(
            f"{path}:1: an NLP file starts with a header naming its columns, such as "
            f"{'|'.join(COLUMNS)!r}"
        )
    out = []
    width = len(head)
    read = _Columns(head, path, warnings).values
    for no, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        cols = line.split("|")
        if len(cols) != width:
            raise ScoringError(
                f"{path}:{no}: {len(cols)} columns where the header has {width}; a token "
                "holding '|' cannot be written in an NLP file: fix or remove the line"
            )
        out.append(read(cols, no))
    return out


class _Columns:
    """An NLP line's fields by column index (not through a dict of its columns), the usual
    ones (an empty list, a plain number) read inline, anything else by `_list_column` and
    `_time` with their messages: about half the time of a dict per line."""

    def __init__(self, head: list[str], path: Path, warnings: list[str] | None) -> None:
        pos = {name: i for i, name in enumerate(head)}
        names = ("speaker", "ts", "endTs", "punctuation", "case", "tags", "wer_tags")
        self.at = [pos.get(n, -1) for n in (*names, "prepunctuation")]
        self.path, self.warnings = path, warnings

    def _list(self, text: str, no: int, name: str) -> list[str]:
        return [] if not text or text == "[]" else _list_column(text, self.path, no, name)

    def _time(self, text: str, no: int, name: str) -> float | None:
        if text:
            try:
                return float(text)
            except ValueError:
                pass
        return _time(text, self.path, no, name, self.warnings)

    def values(self, cols: list[str], no: int) -> tuple:
        i_spk, i_ts, i_end, i_punc, i_case, i_tags, i_wer, i_pre = self.at
        tags = self._list(cols[i_tags], no, "tags") if i_tags >= 0 else []
        ids, classes = [], []
        for tag in tags:
            ident, _, cls = tag.partition(":")
            ids.append(ident.strip())
            classes.append(cls.strip())
        return (
            cols[0],
            cols[i_spk] if i_spk >= 0 else "",
            self._time(cols[i_ts], no, "ts") if i_ts >= 0 else None,
            self._time(cols[i_end], no, "endTs") if i_end >= 0 else None,
            cols[i_punc] if i_punc >= 0 else "",
            cols[i_case] if i_case >= 0 else "",
            tuple(ids),
            tuple(classes),
            tuple(self._list(cols[i_wer], no, "wer_tags")) if i_wer >= 0 else (),
            no,
            cols[i_pre] if i_pre >= 0 else "",
        )


def _list_text(values: Sequence[str]) -> str:
    return "[" + ", ".join(repr(v) for v in values) + "]"


def format_nlp(tokens: Sequence[NlpToken], wer_tags: bool = True) -> str:
    """Tokens as an NLP file's text (8 columns, or 7 without `wer_tags`), as Rev writes them;
    the caller writes it (the scorer writes no files)."""
    cols = COLUMNS if wer_tags else COLUMNS[:_MIN_COLUMNS]
    lines = ["|".join(cols)]
    for t in tokens:
        if "|" in t.token or "\n" in t.token:
            raise ScoringError(f"token {t.token!r}: '|' and newlines cannot be written to NLP")
        tags = [f"{i}:{c}" for i, c in zip(t.tags, t.tag_classes, strict=True)]
        row = [
            t.token,
            t.speaker,
            "" if t.ts is None else f"{t.ts:g}",
            "" if t.end_ts is None else f"{t.end_ts:g}",
            t.punctuation,
            t.case,
            _list_text(tags),
        ]
        if wer_tags:
            row.append(_list_text(t.wer_tags))
        lines.append("|".join(row))
    return "\n".join(lines) + "\n"


def _json_object(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScoringError(f"{path}: not a readable JSON sidecar ({exc})") from None
    if not isinstance(data, dict):
        raise ScoringError(f"{path}: a sidecar is a JSON object keyed by entity ID")
    return data


def read_norm_sidecar(path: str | Path) -> dict[str, Norm]:
    """A normalisation sidecar: entity ID -> its class and candidate readings."""
    path = Path(path)
    out = {}
    for ident, entry in _json_object(path).items():
        cands = entry.get("candidates") if isinstance(entry, dict) else None
        readings: list[tuple[str, ...]] = []
        for cand in cands or []:
            words = cand.get("verbalization") if isinstance(cand, dict) else None
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                readings = []
                break
            readings.append(tuple(words))
        if not readings:
            raise ScoringError(
                f"{path}: entity {ident!r} needs 'candidates', each with a 'verbalization' "
                "list of words"
            )
        out[str(ident)] = Norm(str(entry.get("class", "")), tuple(readings))
    return out


def read_wer_tags(path: str | Path) -> dict[str, str]:
    """A wer_tags sidecar: entity ID -> its class (`entity_type`)."""
    path = Path(path)
    out = {}
    for ident, entry in _json_object(path).items():
        cls = entry.get("entity_type") if isinstance(entry, dict) else None
        if not isinstance(cls, str) or not cls:
            raise ScoringError(f"{path}: entity {ident!r} needs an 'entity_type' string")
        out[str(ident)] = cls
    return out


def check_sidecar(
    nlp: Path,
    tokens: Sequence[NlpToken],
    sidecar: Path,
    known: Collection,
    column: str,
    lenient: bool = False,
) -> list[str]:
    """Check that every ID in `column` (tags or wer_tags) of the tokens is in the sidecar and
    that every sidecar entity names a token. Raises on the first problem; `lenient` returns
    the problems as warnings instead (Rev's own Earnings-21 sidecars have a few)."""
    problems = []
    used: set[str] = set()
    for t in tokens:
        for ident in getattr(t, column):
            used.add(ident)
            if ident not in known:
                problems.append(
                    f"{nlp}:{t.line}: entity ID {ident!r} ({column}) is not in {sidecar}; "
                    "give the sidecar written with this file"
                )
    unused = [ident for ident in known if ident not in used]
    lines = _key_lines(sidecar, unused) if unused else {}
    for ident in unused:
        problems.append(
            f"{sidecar}:{lines.get(ident, 1)}: entity {ident!r} names no token of {nlp} "
            f"({column}); give the sidecar written with this file"
        )
    if problems and not lenient:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ScoringError(problems[0] + more + "; --lenient warns instead")
    return problems


def _key_lines(path: Path, idents: Sequence[str]) -> dict[str, int]:
    """The line of a JSON sidecar where each entity ID is first written as a key (line 1 when
    it is not found: a sidecar on one line)."""
    text = Path(path).read_text(encoding="utf-8")
    out = {}
    for ident in idents:
        found = re.search(re.escape(json.dumps(ident)) + r"\s*:", text)
        out[ident] = text.count("\n", 0, found.start()) + 1 if found else 1
    return out


def reference_pieces(tokens: Sequence[NlpToken], norms: dict[str, Norm] | None) -> list[Piece]:
    """The reference as pieces: a run of tokens sharing a normalisation ID becomes one piece
    whose branches are the entity's candidates and its tokens as written (last); every other
    token a piece of its own."""
    pieces: list[Piece] = []
    i = 0
    while i < len(tokens):
        ident = next((x for x in tokens[i].tags if norms and x in norms), None)
        j = i + 1
        if ident is not None:
            while j < len(tokens) and ident in tokens[j].tags:
                j += 1
            assert norms is not None  # ident was found in norms
            # the candidates, then the tokens as written: fstalign adds that reading to every
            # entity (NlpFstLoader, src/Nlp.cpp), so "2020" in the hypothesis matches "2020"
            # without NSW (the fstalign preset has none)
            written = " ".join(t.token for t in tokens[i:j])
            readings = [_escape(" ".join(c)).strip() for c in (*norms[ident].candidates, [written])]
            kept = tuple(dict.fromkeys(r for r in readings if r))  # an empty branch: none
            pieces.append(Piece(i, j, kept or ("",), null=not all(readings)))
        else:
            pieces.append(Piece(i, j, (_escape(tokens[i].token),)))
        i = j
    return pieces


def written_reading(tokens: Sequence[NlpToken], piece: Piece) -> str:
    """A piece's tokens as written, as its branch reads them."""
    return _escape(" ".join(t.token for t in tokens[piece.start : piece.stop])).strip()


def _escape(text: str) -> str:
    """A reading without sclite's alternation marks (`and/or`, an e-mail's `@`), which would
    otherwise open a branch or stand for the null word."""
    return text.replace("{", " ").replace("}", " ").replace("/", " ").replace("@", " at ")


def pieces_text(pieces: Sequence[Piece]) -> str:
    """The reference text of pieces: a piece with several readings as `{ a / b }`."""
    out = []
    for p in pieces:
        if len(p.branches) == 1:
            out.append(p.branches[0])
        else:
            order = [p.branches[p.lead], *(b for k, b in enumerate(p.branches) if k != p.lead)]
            out.append("{ " + " / ".join(b or "@" for b in order) + " }")  # "": none
    return " ".join(out)


def hypothesis_text(tokens: Sequence[NlpToken], punctuation: bool = True) -> str:
    """A system's NLP output as text: its tokens with their punctuation; without
    `punctuation`, the tokens as written alone (scored with PUNC off, as fstalign does: the
    punctuation column is not part of the word, "1" with "%" after it is "1")."""
    if not punctuation:
        return " ".join(t.token for t in tokens)
    return " ".join(t.token + t.punctuation for t in tokens)


def map_pieces(
    pieces: Sequence[Piece], scored: Sequence[str], normalize: Callable[[str], list[str]]
) -> list[int]:
    """For each word of the reference as scored (the chosen branches, normalised), the index
    of the piece it came from. Each piece's readings are normalised on their own (cached);
    where that differs from the text normalised whole (NSW reads context), the words are
    matched by a diff and an unmatched word takes the piece of the word before it."""
    cache: dict[str, tuple[str, ...]] = {}

    def norm(text: str) -> tuple[str, ...]:
        if text not in cache:  # a synonym's marks (scoring.synonyms) are not words
            cache[text] = tuple(w for w in normalize(text) if w not in (SYN_OPEN, SYN_CLOSE))
        return cache[text]

    found = _exact_path(pieces, scored, norm)
    if found is not None:
        return found
    return _diff_path(pieces, scored, norm)


def _exact_path(pieces, scored, norm) -> list[int] | None:
    """A choice of one reading per piece whose words are `scored` exactly: the positions each
    prefix of pieces can reach, walked forward, then back along the recorded steps."""
    n = len(scored)
    reach: list[dict[int, int]] = [{0: -1}]  # position -> position it came from
    for p in pieces:
        nxt: dict[int, int] = {}
        for pos in reach[-1]:
            for branch in p.branches:
                words = norm(branch)
                end = pos + len(words)
                if end <= n and end not in nxt and tuple(scored[pos:end]) == words:
                    nxt[end] = pos
        if not nxt:
            return None
        reach.append(nxt)
    if n not in reach[-1]:
        return None
    out = [0] * n
    pos = n
    for k in range(len(pieces), 0, -1):
        before = reach[k][pos]
        out[before:pos] = [k - 1] * (pos - before)
        pos = before
    return out


def _diff_path(pieces, scored, norm) -> list[int]:
    from scoring.matching import matching_blocks  # difflib's blocks, faster

    words, owner = [], []
    for k, p in enumerate(pieces):
        for w in norm(p.branches[0]):
            words.append(w)
            owner.append(k)
    out = [-1] * len(scored)
    for a, b, size in matching_blocks(list(scored), words):
        for i in range(size):
            out[a + i] = owner[b + i]
    last = 0
    for i, k in enumerate(out):
        if k < 0:
            out[i] = last
        last = out[i]
    return out
