"""Reading transcripts: TSV, Kaldi `text`, sclite `trn` and JSONL, auto-detected or named.

Every reader returns `dict[id, text]` in file order. Problems (bad encoding, a malformed line,
a duplicate ID) raise `ScoringError` naming the file and line, so a user can fix the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from scoring.errors import ScoringError
from scoring.normalize.alternation import check_text

FORMATS = ("tsv", "kaldi", "trn", "jsonl")
_TRN = re.compile(r"^(.*?)\s*\(([^()\s]+)\)\s*$")
_TRN_ID = re.compile(r"[\d_.-]")
_TAG = re.compile(r"(?<!\\);\S*")  # a word tag: from an unescaped `;` to the word's end
_HEADER_IDS = {"id", "utt", "utt_id", "uttid", "key"}
_HEADER_TEXTS = {"text", "transcript", "hyp", "ref", "sentence"}


# What `ops/score` checks on every input before reading it, here (a light module) so that plain
# transcripts do not load the NLP and STM/CTM readers only to be told they are neither.
def is_nlp(path: Path) -> bool:
    """An NLP input by its name: a .nlp file, or a folder holding one."""
    if path.is_dir():
        return any(path.glob("*.nlp"))
    return path.suffix.lower() == ".nlp"


def timed_pair(ref: str | Path, hyp: str | Path, ref_format: str, hyp_format: str) -> bool:
    """Whether `ops/score REF HYP` is an STM + CTM pair: named (`stm`, `ctm`) or by extension
    (`.stm`, `.ctm`) where the format is `auto`. One timed side without the other is an error."""
    ref_fmt = ref_format if ref_format != "auto" else Path(ref).suffix.lower().lstrip(".")
    hyp_fmt = hyp_format if hyp_format != "auto" else Path(hyp).suffix.lower().lstrip(".")
    if ref_fmt == "stm" and hyp_fmt == "ctm":
        return True
    if ref_fmt in ("stm", "ctm") or hyp_fmt in ("stm", "ctm"):
        raise ScoringError(
            f"{ref} ({ref_fmt or 'no extension'}) and {hyp} ({hyp_fmt or 'no extension'}): "
            "timed transcripts are scored as an STM reference with a CTM hypothesis "
            "(--ref-format stm --hyp-format ctm); other formats hold no times"
        )
    return False


def _lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):  # a BOM would otherwise glue itself to the first ID
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")  # the whole file at once; lines only to report an error
    except UnicodeDecodeError as err:
        no = raw.count(b"\n", 0, err.start) + 1
        start = raw.rfind(b"\n", 0, err.start) + 1
        raise ScoringError(
            f"{path}:{no}: not valid UTF-8 (byte {err.start - start}); re-encode the file as UTF-8"
        ) from None
    lines = text.split("\n")
    if "\r" in text:
        lines = [line.rstrip("\r") for line in lines]
    return lines


def detect_format(path: str | Path) -> str:
    """Guess the format from the extension, then from the content: JSONL if the first non-empty
    lines are objects, trn if every line is `TEXT (ID)` as `_looks_trn` checks, TSV if the
    lines hold tabs, else Kaldi."""
    path = Path(path)
    return _detect(path, None)


def _detect(path: Path, lines: list[str] | None) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        return "jsonl"
    if suffix == ".trn":
        return "trn"
    if lines is None:
        lines = _lines(path)
    sample = [x for x in lines[:50] if x.strip()]
    if not sample:
        return "tsv"
    if all(x.lstrip().startswith("{") for x in sample):
        return "jsonl"
    if _looks_trn(x for x in lines if x.strip()):
        return "trn"
    if all("\t" in x for x in sample[1:] or sample):
        return "tsv"
    return "kaldi"


def _is_comment(line: str) -> bool:
    """A `;;` line: a comment in sclite's trn (and STM) files."""
    return line.lstrip().startswith(";;")


def _looks_trn(lines: Iterable[str]) -> bool:
    """Every line `TEXT (ID)` but `;;` comments, no tab, the IDs distinct and each like an
    utterance ID (a digit, `-`, `_` or `.` in it). A TSV or Kaldi file whose lines end in an
    annotation such as `(laughs)` is not sclite trn: it has tabs, or repeated or word-like
    "IDs". Lines are read one at a time: most files are told apart by their first line."""
    seen: set[str] = set()
    for line in lines:
        if _is_comment(line):
            continue
        m = _TRN.match(line)
        if m is None or "\t" in line:
            return False
        key = m.group(2)
        if key in seen or not _TRN_ID.search(key):
            return False
        seen.add(key)
    return bool(seen)  # some line that is not a comment


def _add(out: dict[str, str], key: str, text: str, path: Path, no: int) -> None:
    if not key:
        raise ScoringError(f"{path}:{no}: empty utterance ID; every line needs an ID")
    if key in out:
        raise ScoringError(f"{path}:{no}: duplicate utterance ID {key!r}; keep one line per ID")
    out[key] = text


def read_transcripts(path: str | Path, fmt: str = "auto") -> dict[str, str]:
    """Read a transcript file into {id: text}; `fmt` is one of FORMATS or "auto"."""
    path = Path(path)
    if not path.is_file():
        raise ScoringError(f"{path}: no such file; pass an existing transcript file")
    if fmt != "auto" and fmt not in FORMATS:
        raise ScoringError(
            f"unknown transcript format {fmt!r}; use one of {', '.join(FORMATS)} or auto"
        )
    lines = _lines(path)
    if fmt == "auto":
        fmt = _detect(path, lines)
    if fmt == "tsv":
        return _read_tsv(lines, path)
    out: dict[str, str] = {}
    for no, line in enumerate(lines, 1):
        if line.strip():
            entry = _entry(fmt, line, path, no)
            if entry is not None:
                _add(out, *entry, path, no)
    return out


def _entry(fmt: str, line: str, path: Path, no: int) -> tuple[str, str] | None:
    """One non-empty line of a jsonl, trn or Kaldi file: (ID, text), or None for a comment."""
    if fmt == "jsonl":
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise ScoringError(
                f"{path}:{no}: invalid JSON ({err.msg}); one object a line"
            ) from None
        if not isinstance(obj, dict) or "id" not in obj:
            raise ScoringError(f'{path}:{no}: expected an object with "id" and "text"')
        text = obj.get("text", "")
        return str(obj["id"]), "" if text is None else str(text)
    if fmt == "trn":
        if _is_comment(line):
            return None
        m = _TRN.match(line)
        if not m:
            raise ScoringError(f"{path}:{no}: expected 'TEXT (ID)' (sclite trn)")
        text = sclite_text(m.group(1).strip())
        check_text(text, f"{path}:{no}")
        return m.group(2), text
    parts = line.strip().split(maxsplit=1)  # kaldi
    return parts[0], parts[1] if len(parts) > 1 else ""


def sclite_text(text: str) -> str:
    """A transcript of sclite's trn or STM as sclite reads its words: each word's tags
    (`word;tag1;tag2`, sclite passes them through unscored) dropped, an escaped `\\;` a `;`
    of the word."""
    if ";" not in text:
        return text
    return _TAG.sub("", text).replace("\\;", ";")


def _read_tsv(lines: list[str], path: Path) -> dict[str, str]:
    """`ID<TAB>TEXT` lines, optionally under a header naming the text column.

    Without a header the text is everything after the first tab, a further tab read as a space:
    the rule the platform applies to what models write (asrbench.benchmark.output), so a
    hypothesis file scores the same here and in a benchmark. With a header, the named column.
    """
    out: dict[str, str] = {}
    text_col = 0  # decided on the first non-empty line
    header = False
    for no, line in enumerate(lines, 1):
        if not line or line.isspace():
            continue
        if not header and text_col:
            # Headerless, after the first line (the common case): " ".join of the columns
            # after the ID, as below, is the rest of the line with its tabs as spaces.
            key, tab, text = line.partition("\t")
            key = key.strip()
            if not key or key in out:
                _add(out, key, "", path, no)  # raises, naming the problem
            out[key] = (text.replace("\t", " ") if "\t" in text else text).strip()
            continue
        cols = line.split("\t")
        if not text_col:
            text_col = 1
            lower = [c.strip().lower() for c in cols]
            if lower[0] in _HEADER_IDS and any(c in _HEADER_TEXTS for c in lower[1:]):
                text_col = next(i for i, c in enumerate(lower) if c in _HEADER_TEXTS and i > 0)
                header = True
                continue
        if len(cols) <= text_col:
            if len(cols) == 1 and text_col == 1:  # "ID" alone: an empty transcript
                _add(out, cols[0].strip(), "", path, no)
                continue
            raise ScoringError(f"{path}:{no}: expected ID<TAB>TEXT, found {len(cols)} column(s)")
        key = cols[0].strip()
        if not key or key in out:
            _add(out, key, "", path, no)  # raises, naming the problem
        out[key] = (cols[text_col] if header else " ".join(cols[1:])).strip()
    return out


def read_trans_txt(paths: list[Path]) -> dict[str, str]:
    """Read LibriSpeech `*.trans.txt` files (Kaldi-like `ID TEXT`) into one dict."""
    out: dict[str, str] = {}
    for p in paths:
        for key, text in read_transcripts(p, "kaldi").items():
            _add(out, key, text, p, 0)
    return out
