"""fstalign's hyphen synonyms: `hyphen=synonym` (the `fstalign` preset) reads them as
reference alternations.

fstalign keeps a hyphenated word one token and compares tokens as written, but its synonym
engine (`SynonymEngine::GenerateSynFromSymbolTable`, src/SynonymEngine.cpp, on unless
`--disable-hyphen-ignore` / `--disable-cutoffs`) adds paths to the reference for every token
of the vocabulary (reference and hypothesis) holding a hyphen:
- a cut-off, its first hyphen last (`the-`), may be read as its stem (`the`);
- a hyphenated word (`listen-only`, `-ing`) as its parts (`listen only`, `ing`), split on
  every hyphen, and its parts, where the reference writes them, as the hyphenated word.
A synonym path is taken only where the hypothesis matches every word of it at that spot, in
a row (fstalign's composition; "dose-limiting" against "those limiting" is 2 errors there,
not 1): a synonym's words are marked (`SYN_OPEN` ... `SYN_CLOSE`), and the aligner neither
substitutes nor deletes them nor inserts a word between them (`scoring.sclite_align.Net`);
a reading is offered only where the hypothesis holds its words in that order somewhere in
the stretch, the hyphenated word's parts or the hyphenated word itself (fewer branches).
So "re-imaging" against "reimaging" is one substitution, not two; "listen only" against
"listen-only" none, and |ref| counts the reading the hypothesis matched, as sclite's
alternations do. Rules are looked up lower-cased
(fstalign's symbols are); a synonym path never crosses an entity's label, so parts are
matched across plain tokens only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoring.nlp import Piece, pieces_text
from scoring.normalize.alternation import SYN_CLOSE, SYN_OPEN

# A token holding sclite's markup is left alone: in a branch it would open or part one.
_MARKUP = frozenset("{}/@")


def rule(word: str) -> tuple[str, ...] | None:
    """The words `word` may also be read as (fstalign's order: a hyphen last is a cut-off,
    any other first hyphen splits it), or None."""
    i = word.find("-")
    if i < 0 or _MARKUP.intersection(word):
        return None
    if i == len(word) - 1:
        return (word[:-1],) if len(word) > 1 else None
    parts = tuple(p for p in word.split("-") if p)
    return parts or None


@dataclass(frozen=True)
class _Hyp:
    """What the rules read of one hypothesis: its hyphenated words by their parts, and its
    word sequences (lower-cased) up to the longest a rule needs."""

    joined: dict[tuple[str, ...], str]
    longest: int
    grams: frozenset[tuple[str, ...]]

    @classmethod
    def of(cls, words: Sequence[str], n_max: int) -> _Hyp:
        low = [w.lower() for w in words]
        joined: dict[tuple[str, ...], str] = {}
        for word in low:  # a cut-off has no such rule; the first word with given parts wins
            if 0 <= word.find("-") < len(word) - 1 and (parts := rule(word)):
                joined.setdefault(parts, word)
        grams = {tuple(low[i : i + n]) for n in range(1, n_max + 1) for i in range(len(low))}
        return cls(joined, max(map(len, joined), default=0), frozenset(grams))

    def reading(self, word: str) -> tuple[str, ...] | None:
        """`rule(word)` where the hypothesis holds it exactly: fstalign takes a synonym path
        only where every word of it is matched ("dose-limiting" against "those limiting" is a
        substitution and an insertion, not one substitution)."""
        parts = rule(word)
        return parts if parts and tuple(p.lower() for p in parts) in self.grams else None


def _marked(words: Sequence[str]) -> str:
    """A synonym's words as a branch writes them: all or nothing (`Word.strict`)."""
    return " ".join((SYN_OPEN, *words, SYN_CLOSE))


def _plain_word(piece: Piece) -> str | None:
    """The lower-cased word of a piece that is one plain token, else None."""
    if piece.stop - piece.start != 1 or len(piece.branches) != 1:
        return None
    word = piece.branches[0]
    return None if " " in word or not word else word.lower()


def _joined_run(pieces: Sequence[Piece], i: int, hyp: _Hyp) -> tuple[Piece, int] | None:
    """The longest run of plain pieces from `i` whose words are a hyphenated word's parts:
    one piece read as written or as that word, and the run's length."""
    words: list[str] = []
    for piece in pieces[i : i + hyp.longest]:
        word = _plain_word(piece)
        if word is None:
            break
        words.append(word)
    for n in range(len(words), 0, -1):
        word = hyp.joined.get(tuple(words[:n]))
        if word is not None:
            written = " ".join(p.branches[0] for p in pieces[i : i + n])
            return Piece(pieces[i].start, pieces[i + n - 1].stop, (written, _marked([word]))), n
    return None


def _joined(words: list[str], hyp: _Hyp) -> list[str]:
    """Words with each run of a hyphenated word's parts joined (longest first)."""
    out: list[str] = []
    i = 0
    while i < len(words):
        low = [w.lower() for w in words[i : i + hyp.longest]]
        n = next((n for n in range(len(low), 0, -1) if tuple(low[:n]) in hyp.joined), 0)
        out.append(_marked([hyp.joined[tuple(low[:n])]]) if n else words[i])
        i += max(n, 1)
    return out


def _reading(word: str, hyp: _Hyp) -> str:
    parts = hyp.reading(word)
    return _marked(parts) if parts else word


def _with_rules(piece: Piece, hyp: _Hyp, written: str | None) -> Piece:
    """A piece with, after its readings, each reading's words read by `rule` and its parts
    joined as the hypothesis writes them (fstalign's synonym paths run inside an entity's
    readings too), and an empty reading where the sidecar lists one. The reading `written`
    (the tokens as written) leads (`Piece.lead`): where readings of one length tie, fstalign's
    path mostly takes it, and the aligner takes the first branch of such a tie (of different
    lengths, the longer: `scoring.sclite_align._fst_table`)."""
    lead = piece.branches.index(written) if written in piece.branches else 0
    extra = [""] if piece.null else []
    for branch in piece.branches:
        words = branch.split()
        for read in ([_reading(w, hyp) for w in words], _joined(words, hyp)):
            if read != words:
                extra.append(" ".join(read))
    branches = tuple(dict.fromkeys((*piece.branches, *extra)))
    return Piece(piece.start, piece.stop, branches, piece.null, lead)


def synonym_pieces(
    pieces: Sequence[Piece], hyp_words: Sequence[str], written: Sequence[str] | None = None
) -> list[Piece]:
    """The reference's pieces with fstalign's hyphen synonyms against one hypothesis;
    `written`: each piece's tokens as written (`scoring.nlp.written_reading`), read first."""
    longest_rule = max(
        (len(rule(w) or ()) for p in pieces for b in p.branches for w in b.split() if "-" in w),
        default=0,
    )
    hyp = _Hyp.of(hyp_words, longest_rule)
    out: list[Piece] = []
    i = 0
    while i < len(pieces):
        run = _joined_run(pieces, i, hyp) if hyp.joined else None
        if run is not None:
            out.append(run[0])
            i += run[1]
        else:
            out.append(_with_rules(pieces[i], hyp, written[i] if written else None))
            i += 1
    return out


def synonym_text(ref: str, hyp: str) -> str:
    """A plain reference text with the synonyms as alternations; a text that already holds
    alternations (`{`) is returned as it is (an NLP reference gets them per piece)."""
    if "{" in ref or "-" not in ref + hyp:
        return ref
    words = ref.split()
    pieces = [Piece(i, i + 1, (w,)) for i, w in enumerate(words)]
    return pieces_text(synonym_pieces(pieces, hyp.split()))
