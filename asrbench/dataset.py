"""Dataset format: `datasets/<ID>/metadata.tsv` + `dataset.yaml` + audio, validated where it enters.

`metadata.tsv` is tab-separated UTF-8 with the header `ID AUDIO DURATION TEXT` plus optional
columns (SPEAKER, GENDER, ACCENT, LANGUAGE or any group label). AUDIO is relative to the dataset
folder and may never leave it. A dataset's identity is the SHA-256 of its metadata and audio bytes.

A long-form dataset (`kind: longform` in dataset.yaml) has one row per recording and a segments
file beside metadata.tsv (asrbench.longform.segments), which its identity covers too.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, TypedDict, Unpack

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from asrbench import audio
from asrbench.errors import InputError
from asrbench.fsio import atomic_write_text
from asrbench.identity import seed_digest
from asrbench.ids import check_id as check_dataset_id  # the one ID check
from asrbench.ids import contained
from asrbench.longform import segments as longform
from scoring.segments import Segment

REQUIRED_COLUMNS = ("ID", "AUDIO", "DURATION", "TEXT")
MAX_DURATION_S = 60.0  # longer utterances are reported (warning), never dropped silently
DURATION_TOLERANCE_S = 0.02
MIN_DURATION_S = 0.1  # shorter audio is reported (warning): most models return nothing for it
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
# C0 controls other than the tab (the separator), DEL and C1 controls: never part of a
# transcript, label or path; an ESC or NUL in TEXT is a copy-paste or encoding accident.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def dataset_id(root: Path, meta: dict) -> str:
    """The dataset's ID: dataset.yaml's `id`, else the folder's name (not yet checked)."""
    declared = meta.get("id")
    if declared is not None and declared != "":
        return str(declared)
    return Path(os.path.abspath(root)).name


def _check_id(root: Path, meta: dict, problems: list[Problem]) -> None:
    """The ID names folders (results, caches): it must pass the one ID check."""
    declared = meta.get("id") not in (None, "")
    try:
        check_dataset_id(
            dataset_id(root, meta),
            what="dataset.yaml id" if declared else "dataset ID (the folder name)",
            fix=("fix `id:` in dataset.yaml" if declared else "add `id: NAME` to dataset.yaml"),
        )
    except InputError as exc:
        problems.append(Problem(str(root / "dataset.yaml"), 0, "bad-dataset-id", str(exc)))


def is_blank_reference(text: str) -> bool:
    """True for a reference with no word in it: empty, or only punctuation and symbols."""
    return all(unicodedata.category(c)[0] in "PSZ" or c.isspace() for c in text)


class _Entry(BaseModel):
    """One item of `sources:`; unknown keys are refused (they are usually an unquoted comma)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    licence: str | None = None
    utterances: str | None = None
    url: str | None = None
    citation: str | None = None


class _DerivedFrom(BaseModel):
    """Provenance written by asrbench/perturb/derive.py."""

    model_config = ConfigDict(extra="allow")
    dataset: str
    hash: str
    spec: str
    seed: int


class _Archive(BaseModel):
    """An archive a recipe downloaded: where from and what it hashed to."""

    model_config = ConfigDict(extra="forbid")
    url: str
    sha256: str
    verified: str | None = None


class _Nlp(BaseModel):
    """`nlp:`: the dataset's references as fstalign's NLP files with their sidecars (a file or
    a folder each, relative to the dataset folder): a cell is scored against them and stores
    entity, number and formatting metrics (asrbench.entity_scoring, docs/DATASETS.md)."""

    model_config = ConfigDict(extra="forbid")
    references: str
    norm: str | None = None
    wer_tags: str | None = None
    # a sidecar entity naming no token, or a token naming none, is a warning in the cell's
    # `entities` instead of an error (Rev's own Earnings-21 sidecars have a few)
    lenient: StrictBool = False


class _Change(BaseModel):
    """One item of `changes:`, the card's history: content that changed under the same ID."""

    model_config = ConfigDict(extra="forbid")
    date: str
    what: str
    why: str
    previous_hash: str | None = None


class DatasetCard(BaseModel):
    """The schema of dataset.yaml. Unknown top-level keys are kept and reported as warnings."""

    model_config = ConfigDict(extra="allow")
    id: str | None = None
    name: str | None = None
    language: str | None = None
    sample_rate: int | None = Field(default=None, gt=0)
    licence: str | None = None
    source: str | None = None
    sources: list[_Entry] | None = None
    url: str | None = None
    citation: str | None = None
    recipe: str | None = None
    archives: list[_Archive] | None = None
    description: str | None = None
    reference_free: StrictBool = False
    derived_from: _DerivedFrom | None = None
    columns: dict[str, str] | None = None
    kind: Literal["utterances", "longform"] | None = None
    segments: str | None = None
    # content changed under the same ID (a corrected reference): when, what, why, and the content
    # hash results computed before it carry
    changes: list[_Change] | None = None
    # non-speech clips (reference-free): every word a model writes is a hallucination, and
    # ops/benchmark writes the hallucination figures into summary.json
    nonspeech: StrictBool = False
    # audio composed on first use from sources in the repository by this built-in recipe
    # (asrbench.importers.composed; composed.json holds the hashes)
    composed: str | None = None
    nlp: _Nlp | None = None
    # long-form: metadata columns whose values group the sessions; every cell's session metrics
    # are also scored per value, with intervals over that group's sessions (docs/LONGFORM.md)
    session_groups: list[str] | None = None


def _check_card(path: Path, data: dict, problems: list[Problem]) -> None:
    """Validate dataset.yaml against DatasetCard; one problem per finding, naming the key."""
    try:
        card = DatasetCard.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"])
            if err["type"] == "extra_forbidden":
                msg = (
                    f"{loc}: unexpected key (a value holding ',' or ':' inside {{...}} or "
                    '[...] must be quoted, e.g. name: "CMU ARCTIC (aew, axb)")'
                )
            else:
                msg = f"{loc}: {err['msg']} (got {err.get('input')!r})"
            problems.append(Problem(str(path), 0, "schema", msg))
        return
    for key in sorted(card.model_extra or {}):
        problems.append(
            Problem(
                str(path),
                0,
                "unknown-key",
                f"unknown key {key!r} (kept; check its spelling)",
                "warning",
            )
        )


@dataclass(frozen=True)
class Problem:
    """One finding of the validator, located by file and line (1-based; 0 = whole file)."""

    path: str
    line: int
    code: str
    message: str
    severity: str = "error"  # "error" makes the dataset unusable, "warning" is reported only

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: [{self.code}] {self.message}"


class DatasetError(InputError):
    """Raised when a dataset has errors; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"]
        lines = "\n".join(f"  {p}" for p in errors[:50])
        more = f"\n  ... and {len(errors) - 50} more" if len(errors) > 50 else ""
        super().__init__(f"{len(errors)} problem(s) in dataset:\n{lines}{more}")


class _UtteranceChanges(TypedDict, total=False):
    """The fields `Utterance.replaced` may change, each with its own type."""

    id: str
    audio: str
    duration: float
    text: str
    extra: dict[str, str]
    line: int


@dataclass(frozen=True)
class Utterance:
    """One row of metadata.tsv."""

    id: str
    audio: str
    duration: float
    text: str
    extra: dict[str, str] = field(default_factory=dict)
    line: int = 0

    def replaced(self, **changes: Unpack[_UtteranceChanges]) -> Utterance:
        """A copy with some fields changed (e.g. audio and duration of a derived utterance)."""
        return replace(self, **changes)

    def cells(self, columns: list[str]) -> list[str]:
        """This utterance as the cells of a metadata.tsv row (the inverse of reading one)."""
        fixed = {
            "ID": self.id,
            "AUDIO": self.audio,
            "DURATION": format_duration(self.duration),
            "TEXT": self.text,
        }
        return [fixed[c] if c in fixed else self.extra.get(c, "") for c in columns]


def format_duration(seconds: float) -> str:
    """DURATION as written in metadata.tsv: seconds with millisecond precision."""
    return f"{seconds:.3f}"


@dataclass
class Dataset:
    """A validated dataset folder."""

    root: Path
    id: str
    meta: dict
    columns: list[str]
    utterances: list[Utterance]
    problems: list[Problem] = field(default_factory=list)  # warnings that did not stop loading
    segments: list[Segment] = field(default_factory=list)  # long-form: segment references

    @property
    def longform(self) -> bool:
        """Declared in dataset.yaml (`kind: longform`): rows are recordings with segments."""
        return longform.is_longform(self.meta)

    @property
    def sample_rate(self) -> int:
        return int(self.meta.get("sample_rate", 16000))

    @property
    def language(self) -> str:
        return str(self.meta.get("language", "en"))

    @property
    def reference_free(self) -> bool:
        """Declared in dataset.yaml (`reference_free: true`): TEXT is empty, no error rate."""
        return self.meta.get("reference_free") is True

    @property
    def nonspeech(self) -> bool:
        """Declared in dataset.yaml (`nonspeech: true`): clips without speech (hallucination)."""
        return self.meta.get("nonspeech") is True

    @property
    def nlp(self) -> tuple[Path, Path | None, Path | None] | None:
        """Declared in dataset.yaml (`nlp:`): (references, norm, wer_tags) paths, or None."""
        return nlp_paths(self.root, self.meta)

    @property
    def nlp_lenient(self) -> bool:
        """`nlp: {lenient: true}`: sidecar mismatches are warnings, not errors."""
        block = self.meta.get("nlp")
        return isinstance(block, dict) and block.get("lenient") is True

    def audio_path(self, utt: Utterance) -> Path:
        return self.root / utt.audio

    def __iter__(self) -> Iterator[Utterance]:
        return iter(self.utterances)

    def __len__(self) -> int:
        return len(self.utterances)

    @property
    def total_duration(self) -> float:
        return sum(u.duration for u in self.utterances)

    def references(self) -> dict[str, str]:
        return {u.id: u.text for u in self.utterances}

    def content_hash(self) -> str:
        """SHA-256 over metadata.tsv and every audio file's bytes, in metadata order (and the
        segments file of a long-form dataset)."""
        extra = [longform.segments_file(self.root, self.meta)] if self.longform else []
        return content_hash(self.root, self.utterances, extra + nlp_files(self.nlp))


def nlp_paths(root: Path, meta: dict) -> tuple[Path, Path | None, Path | None] | None:
    """The `nlp:` block's (references, norm, wer_tags) under `root`, or None without one."""
    block = meta.get("nlp")
    if not isinstance(block, dict) or not block.get("references"):
        return None
    norm, tags = block.get("norm"), block.get("wer_tags")
    return (
        root / block["references"],
        root / norm if norm else None,
        root / tags if tags else None,
    )


def nlp_files(paths: tuple[Path, Path | None, Path | None] | None) -> list[Path]:
    """Every file of the NLP references and sidecars, sorted: part of the dataset identity."""
    out: list[Path] = []
    for p in paths or ():
        if p is None:
            continue
        out += sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    return out


def content_hash(root: Path, utterances: list[Utterance], extra: list[Path] | None = None) -> str:
    """The dataset identity: metadata.tsv and every utterance's audio, by content, in order.

    `extra` files (a long-form dataset's segments file) join the list as `file:NAME` entries,
    a name no utterance ID can take (IDs hold no ':'), so existing datasets' hashes never move."""
    from asrbench.identity import dataset_digest, files_sha256

    files = [root / u.audio for u in utterances] + list(extra or [])
    shas = files_sha256(files)
    names = [u.id for u in utterances] + [f"file:{p.name}" for p in extra or []]
    return dataset_digest(
        root / "metadata.tsv", [(n, sha) for n, sha in zip(names, shas, strict=True)]
    )


def _longest(meta: dict) -> float:
    """Rows longer than this get a warning: recordings of a long-form dataset are long by design."""
    return float("inf") if longform.is_longform(meta) else MAX_DURATION_S


def _inside(root: Path, rel: str) -> tuple[bool, str]:
    """Check that `rel` names a file inside `root`, following symlinks."""
    if not rel:
        return False, "AUDIO is empty"
    if os.path.isabs(rel) or rel.startswith("~"):
        return False, f"AUDIO path {rel!r} is absolute; make it relative to the dataset folder"
    if ".." in Path(rel).parts:
        return False, f"AUDIO path {rel!r} contains '..' and would leave the dataset folder"
    if not contained(root, root / rel):
        real = (root / rel).resolve()
        if real == root.resolve():
            return False, f"AUDIO path {rel!r} names the dataset folder itself, not a file in it"
        return False, f"AUDIO path {rel!r} is a symlink that leaves the dataset folder ({real})"
    return True, ""


def load_dataset(root: str | Path, check_audio: bool = True) -> Dataset:
    """Load and validate a dataset folder; raise DatasetError listing every error found."""
    root = Path(root)
    problems, meta, columns, rows = _check(root, check_audio)
    segments = _longform_segments(root, meta, rows, problems)
    _check_nlp(root, meta, problems)
    if any(p.severity == "error" for p in problems):
        raise DatasetError(problems)
    return Dataset(
        root=root,
        id=dataset_id(root, meta),
        meta=meta,
        columns=columns,
        utterances=rows,
        problems=problems,
        segments=segments,
    )


def _check_nlp(root: Path, meta: dict, problems: list[Problem]) -> None:
    """Each `nlp:` path names a file or folder inside the dataset folder."""
    for p in nlp_paths(root, meta) or ():
        if p is None:
            continue
        rel = p.relative_to(root).as_posix()
        ok, why = _inside(root, rel)
        if not ok or not p.exists():
            why = why.replace("AUDIO path", "path") if not ok else "no such file or folder"
            problems.append(
                Problem(
                    str(root / "dataset.yaml"),
                    0,
                    "nlp",
                    f"nlp: {rel!r}: {why}; give a path inside the dataset folder",
                )
            )


def _longform_segments(
    root: Path, meta: dict, rows: list[Utterance], problems: list[Problem]
) -> list[Segment]:
    """A long-form dataset's segments, checked (asrbench.longform.segments); [] otherwise."""
    if not longform.is_longform(meta) or any(p.severity == "error" for p in problems):
        return []
    findings: list[longform.Finding] = []
    segments = longform.load_segments(root, meta, rows, findings, DURATION_TOLERANCE_S)
    problems.extend(Problem(f.path, f.line, f.code, f.message) for f in findings)
    return segments


def _read_yaml(path: Path, problems: list[Problem]) -> dict:
    if not path.is_file():
        problems.append(
            Problem(str(path), 0, "missing-file", "dataset.yaml not found; create it (see docs)")
        )
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        problems.append(Problem(str(path), 0, "bad-yaml", f"cannot parse: {exc}"))
        return {}
    if not isinstance(data, dict):
        problems.append(Problem(str(path), 0, "bad-yaml", "top level must be a mapping"))
        return {}
    _check_card(path, data, problems)
    return data


def _read_rows(path: Path, problems: list[Problem]) -> tuple[list[str], list[Utterance]]:
    """Parse metadata.tsv, appending format problems; returns the rows that parsed."""
    p = str(path)
    if not path.is_file():
        problems.append(Problem(p, 0, "missing-file", "metadata.tsv not found"))
        return [], []
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        problems.append(Problem(p, 0, "empty", "metadata.tsv is empty; it needs a header row"))
        return [], []
    try:
        header = lines[0].decode("utf-8").removeprefix("\ufeff").rstrip("\r").split("\t")
    except UnicodeDecodeError:
        problems.append(Problem(p, 1, "encoding", "header is not valid UTF-8"))
        return [], []
    if header[: len(REQUIRED_COLUMNS)] != list(REQUIRED_COLUMNS):
        problems.append(
            Problem(
                p,
                1,
                "header",
                f"header must start with {' '.join(REQUIRED_COLUMNS)} (tab-separated), "
                f"got {' '.join(header)}",
            )
        )
        return header, []
    first: dict[str, int] = {}
    for col, name in enumerate(header, start=1):
        if name in first:
            problems.append(
                Problem(
                    p,
                    1,
                    "header",
                    f"column {name!r} appears twice (columns {first[name]} and "
                    f"{col}); rename or drop one",
                )
            )
            return header, []
        first[name] = col
    extras = header[len(REQUIRED_COLUMNS) :]
    rows: list[Utterance] = []
    for lineno, blob in enumerate(lines[1:], start=2):
        try:
            line = blob.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            problems.append(
                Problem(
                    p,
                    lineno,
                    "encoding",
                    f"not valid UTF-8 at byte {exc.start}; re-encode the file as UTF-8",
                )
            )
            continue
        if not line.strip():
            problems.append(Problem(p, lineno, "blank-line", "blank line; remove it"))
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            problems.append(
                Problem(
                    p,
                    lineno,
                    "columns",
                    f"{len(cells)} column(s), header has {len(header)}; "
                    "check for tabs inside TEXT or missing fields",
                )
            )
            continue
        bad = next(
            (
                (name, m)
                for name, cell in zip(header, cells, strict=True)
                if (m := _CONTROL_RE.search(cell))
            ),
            None,
        )
        if bad:
            name, m = bad
            problems.append(
                Problem(
                    p,
                    lineno,
                    "control-character",
                    f"column {name} holds the control character U+{ord(m.group()):04X} at "
                    f"character {m.start() + 1}; remove it (it is no part of a transcript)",
                )
            )
            continue
        uid, audio, dur, text = cells[:4]
        try:
            duration = float(dur)
            if not duration >= 0:
                raise ValueError
        except ValueError:
            problems.append(
                Problem(p, lineno, "duration", f"DURATION {dur!r} is not a non-negative number")
            )
            continue
        extra = dict(zip(extras, cells[4:], strict=True))
        rows.append(Utterance(uid, audio, duration, text, extra, lineno))
    return header, rows


def validate(root: str | Path, check_audio: bool = True) -> list[Problem]:
    """Return every problem found in a dataset folder (errors and warnings); writes nothing."""
    problems, meta, _, rows = _check(Path(root), check_audio)
    _longform_segments(Path(root), meta, rows, problems)
    return problems


def _check(root: Path, check_audio: bool) -> tuple[list[Problem], dict, list[str], list[Utterance]]:
    """Parse and check once: (problems, dataset.yaml, columns, rows)."""
    problems: list[Problem] = []
    if not root.is_dir():
        return [Problem(str(root), 0, "missing-dir", "dataset folder not found")], {}, [], []
    meta = _read_yaml(root / "dataset.yaml", problems)
    if (root / "dataset.yaml").is_file():
        _check_id(root, meta, problems)
    rate = meta.get("sample_rate")
    rate = rate if isinstance(rate, int) and rate > 0 else None  # else a schema error above
    meta_path = root / "metadata.tsv"
    columns, rows = _read_rows(meta_path, problems)
    p = str(meta_path)
    seen: dict[str, int] = {}
    reference_free = meta.get("reference_free") is True
    for utt in rows:
        if reference_free and utt.text:
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "reference-free-text",
                    f"{utt.id}: dataset.yaml declares reference_free: true but TEXT is "
                    f"{utt.text[:40]!r}; empty the column or drop reference_free",
                )
            )
        elif not reference_free and is_blank_reference(utt.text):
            what = "empty" if not utt.text.strip() else f"only punctuation ({utt.text!r})"
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "empty-text",
                    f"{utt.id}: reference text is {what}: every word the model outputs will "
                    "count as an insertion; fix the text, drop the row, or declare the "
                    "dataset reference_free: true",
                    "warning",
                )
            )
        if not utt.id:
            problems.append(Problem(p, utt.line, "missing-id", "ID is empty"))
        elif not _ID_RE.match(utt.id):
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "bad-id",
                    f"ID {utt.id!r} must be letters, digits, '_', '.', '-' (no spaces)",
                )
            )
        elif utt.id in seen:
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "duplicate-id",
                    f"ID {utt.id!r} already used on line {seen[utt.id]}",
                )
            )
        else:
            seen[utt.id] = utt.line
        ok, why = _inside(root, utt.audio)
        if not ok:
            problems.append(Problem(p, utt.line, "audio-path", why))
            continue
        path = root / utt.audio
        if not path.is_file():
            problems.append(
                Problem(p, utt.line, "missing-audio", f"audio file {utt.audio!r} not found")
            )
            continue
        if utt.duration > _longest(meta):
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "long-utterance",
                    f"{utt.id}: {utt.duration:.2f} s is over {MAX_DURATION_S:.0f} s; kept, "
                    "but some models truncate long inputs",
                    "warning",
                )
            )
        if not check_audio:
            continue
        try:
            info = audio.info(path)
        except Exception as exc:  # soundfile raises several types for corrupt files
            problems.append(
                Problem(p, utt.line, "unreadable-audio", f"cannot read {utt.audio!r}: {exc}")
            )
            continue
        if info.format not in ("WAV", "WAVEX") or not info.subtype.startswith("PCM_"):
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "not-wav-pcm",
                    f"{utt.id}: {utt.audio!r} is {info.format_info} ({info.subtype_info}), "
                    "not WAV PCM; models read WAV PCM only: convert it with `ops/import "
                    "folder` (it converts any audio to 16-bit WAV)",
                )
            )
            continue
        if info.frames == 0:
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "empty-audio",
                    f"{utt.id}: {utt.audio!r} has no audio (0 frames); drop the row or "
                    "replace the file",
                )
            )
            continue
        actual = info.frames / info.samplerate
        if actual < MIN_DURATION_S:
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "short-audio",
                    f"{utt.id}: {actual * 1000:.0f} ms of audio (under "
                    f"{MIN_DURATION_S * 1000:.0f} ms); kept, but most models return nothing",
                    "warning",
                )
            )
        if abs(actual - utt.duration) > DURATION_TOLERANCE_S:
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "duration-mismatch",
                    f"{utt.id}: DURATION {utt.duration} s but {utt.audio!r} lasts "
                    f"{actual:.3f} s; fix the column",
                )
            )
        if rate and info.samplerate != int(rate):
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "sample-rate",
                    f"{utt.id}: {info.samplerate} Hz but dataset.yaml says {rate} Hz",
                )
            )
        if info.channels != 1:
            problems.append(
                Problem(
                    p,
                    utt.line,
                    "channels",
                    f"{utt.id}: {info.channels} channels; datasets hold mono audio",
                )
            )
    _check_whole(root, meta, columns, rows, problems)
    return problems, meta, columns, rows


def _check_whole(
    root: Path, meta: dict, columns: list[str], rows: list[Utterance], problems: list[Problem]
) -> None:
    """What only the whole table can show: no rows at all; `session_groups:` naming metadata
    columns of a long-form dataset (the schema check has refused anything but a list of
    names)."""
    if not rows and not any(pr.severity == "error" for pr in problems):
        problems.append(Problem(str(root / "metadata.tsv"), 0, "empty", "no utterances"))
    path = root / "dataset.yaml"
    groups = meta.get("session_groups")
    if not isinstance(groups, list) or not groups:
        return
    if not longform.is_longform(meta):
        problems.append(
            Problem(
                str(path),
                0,
                "session-groups",
                "session_groups: groups the sessions of a long-form dataset (kind: longform); "
                "for utterances use ops/fairness --by COLUMN",
            )
        )
    for col in groups:
        if col not in columns or col in REQUIRED_COLUMNS:
            problems.append(
                Problem(
                    str(path),
                    0,
                    "session-groups",
                    f"session_groups: {col!r} is not a metadata.tsv column of its own "
                    f"(columns: {', '.join(c for c in columns if c not in REQUIRED_COLUMNS)}); fix "
                    "the name or add the column",
                )
            )


def metadata_text(columns: list[str], utterances: list[Utterance]) -> str:
    """metadata.tsv's text; a tab or newline inside a cell is refused (it would shift columns)."""
    lines = ["\t".join(columns)]
    for u in utterances:
        cells = u.cells(columns)
        for c, v in zip(columns, cells, strict=True):
            if "\t" in v or "\n" in v or "\r" in v:
                raise DatasetError(
                    [
                        Problem(
                            "metadata.tsv",
                            0,
                            "bad-cell",
                            f"utterance {u.id}: column {c} contains a tab or "
                            "newline; replace it with a space",
                        )
                    ]
                )
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"


def write_dataset(root: Path, meta: dict, columns: list[str], utterances: list[Utterance]) -> None:
    """Write metadata.tsv and dataset.yaml (each atomically); audio is the caller's job (an
    import of new audio is `asrbench.importers.common.build_dataset`, which ends here).

    The one writer of the dataset format: `load_dataset(root)` reads back the same utterances.
    """
    root = Path(root)
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing or list(columns[: len(REQUIRED_COLUMNS)]) != list(REQUIRED_COLUMNS):
        raise ValueError(f"columns must start with {REQUIRED_COLUMNS}, got {columns}")
    atomic_write_text(root / "metadata.tsv", metadata_text(list(columns), list(utterances)))
    atomic_write_text(
        root / "dataset.yaml", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    )


def sample_utterances(utts: Sequence[Utterance], n: int | None, seed: int = 0) -> list[Utterance]:
    """A seeded sample of `n` utterances, kept in dataset order; all of them when n is None.

    The one sampler: `ops/benchmark`, `ops/stream` (and its capacity probe) and the campaigns
    (`ops/robustness`, `ops/fairness`) all select `--max-utts N --seed S` here, so one request
    names the same utterances everywhere (tests/test_architecture.py keeps it the only one).
    Each utterance is ranked by SHA-256(seed, ID) rather than by a PRNG stream, so the sample does
    not depend on Python's random module, and growing n only adds utterances (nested samples).
    """
    if n is not None and n < 1:
        raise InputError(f"--max-utts {n}: give at least 1 utterance (or leave it out for all)")
    if n is None or n >= len(utts):
        return list(utts)

    def rank(u: Utterance) -> bytes:
        return seed_digest(seed, u.id)

    chosen = {u.id for u in sorted(utts, key=rank)[:n]}
    return [u for u in utts if u.id in chosen]
