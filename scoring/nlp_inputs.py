"""NLP files as `ops/score`'s inputs: a file or a folder of them, sidecars paired by ID.

A recording's ID is its file name up to the first dot (`4320211.nlp`, `4320211.norm.json`,
`4320211.wer_tag.json`, as Earnings-21 names them). A sidecar option takes a file (with one
reference file) or a folder holding `ID.*.json` for each reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scoring.errors import ScoringError
from scoring.nlp import (
    NlpToken,
    Piece,
    check_sidecar,
    read_nlp,
    read_nlp_text,
    read_norm_sidecar,
    read_wer_tags,
    reference_pieces,
)


@dataclass(frozen=True, slots=True)
class NlpRecording:
    """A reference NLP file read for scoring: its tokens, pieces (alternations from the
    normalisation sidecar) and entity classes (None without a wer_tags sidecar)."""

    id: str
    tokens: list[NlpToken]
    pieces: list[Piece]
    classes: dict[str, str] | None


def recording_id(path: Path) -> str:
    return path.name.split(".", 1)[0]


def nlp_files(path: Path, what: str) -> list[Path]:
    """The NLP files of a file or folder argument."""
    if path.is_dir():
        files = sorted(path.glob("*.nlp"))
        if not files:
            raise ScoringError(f"{path}: no .nlp file in the folder; give NLP files ({what})")
        return files
    if not path.is_file():
        raise ScoringError(f"{path}: no such file; give an NLP file or a folder of them ({what})")
    return [path]


# Rev's names first (a folder may hold both kinds), then any single ID.*json
_SUFFIXES = {"--norm": (".norm.json",), "--wer-tags": (".wer_tag.json", ".wer_tags.json")}


def _sidecar(option: Path | None, nlp: Path, single: bool, flag: str) -> Path | None:
    if option is None:
        return None
    if option.is_file():
        if not single:
            raise ScoringError(
                f"{flag} {option}: a file serves one reference; give a folder of "
                f"ID.*.json sidecars for the folder {nlp.parent}"
            )
        return option
    if not option.is_dir():
        raise ScoringError(f"{flag} {option}: no such file or folder")
    ident = recording_id(nlp)
    named = [option / f"{ident}{suffix}" for suffix in _SUFFIXES[flag]]
    found = [p for p in named if p.is_file()][:1] or sorted(option.glob(ident + ".*json"))
    if len(found) != 1:
        raise ScoringError(
            f"{flag} {option}: {len(found)} sidecars named {recording_id(nlp)}.*json for "
            f"{nlp}; give exactly one a reference"
        )
    return found[0]


def read_references(
    path: Path, norm: Path | None, wer_tags: Path | None, lenient: bool
) -> tuple[dict[str, NlpRecording], list[str]]:
    """Every reference NLP file with its sidecars checked (`check_sidecar`), and the
    warnings `lenient` let through."""
    files = nlp_files(path, "the reference")
    out: dict[str, NlpRecording] = {}
    warnings: list[str] = []
    for f in files:
        tokens = read_nlp(f, warnings if lenient else None)
        norms, classes = None, None
        side = _sidecar(norm, f, len(files) == 1, "--norm")
        if side is not None:
            norms = read_norm_sidecar(side)
            warnings += check_sidecar(f, tokens, side, norms, "tags", lenient)
        side = _sidecar(wer_tags, f, len(files) == 1, "--wer-tags")
        if side is not None:
            classes = read_wer_tags(side)
            warnings += check_sidecar(f, tokens, side, classes, "wer_tags", lenient)
        ident = recording_id(f)
        if ident in out:
            raise ScoringError(f"{f}: a second reference with ID {ident!r}; rename one")
        out[ident] = NlpRecording(ident, tokens, reference_pieces(tokens, norms), classes)
    return out, warnings


def read_hypotheses(
    path: Path, ref_ids: list[str], warnings: list[str] | None = None, punctuation: bool = True
) -> dict[str, str]:
    """System outputs as NLP: {ID: text} (`punctuation`: `hypothesis_text`'s). One file
    against one reference takes its ID."""
    files = nlp_files(path, "the hypothesis")

    def text(f: Path) -> str:
        return read_nlp_text(f, warnings, punctuation)

    if len(files) == 1 and len(ref_ids) == 1 and not path.is_dir():
        return {ref_ids[0]: text(files[0])}
    return {recording_id(f): text(f) for f in files}


def with_synonyms(recs: dict[str, NlpRecording], hyps: dict[str, str]) -> dict[str, NlpRecording]:
    """The recordings' pieces with fstalign's hyphen synonyms against their hypotheses
    (`hyphen=synonym`; scoring.synonyms): scored and tagged from the same pieces. A reading
    needs its words in the hypothesis: looked for in the stretch of it that `nlp_chunks`
    pairs with the piece's stretch of the reference (~100 words), not the whole call, as
    fstalign takes a synonym only where it matches."""
    from dataclasses import replace

    from scoring.nlp import written_reading
    from scoring.nlp_chunks import split
    from scoring.synonyms import synonym_pieces

    def pieces(k: str, r: NlpRecording) -> list[Piece]:
        out: list[Piece] = []
        for chunk, hyp in split(r.pieces, hyps.get(k) or ""):
            written = [written_reading(r.tokens, p) for p in chunk]
            out += synonym_pieces(chunk, hyp.split(), written)
        return out

    return {k: replace(r, pieces=pieces(k, r)) for k, r in recs.items()}
