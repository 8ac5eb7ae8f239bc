"""Export any dataset (perturbed ones included) to Kaldi, NeMo and lhotse manifests, and its
segment references to STM, SegLST or RTTM (`scoring.timed`); export a benchmark result cell's
hypothesis as SegLST or CTM (`export_cell`), to score it with `ops/score --metric`.

A long-form dataset exports its segments: lhotse gets one recording per session and one
supervision per segment (cuts: one per session holding its supervisions); STM, SegLST and RTTM
get the segments as they are. An utterance dataset exports each utterance as a segment of its
own session spanning its whole audio (speaker: SPEAKER, else the utterance ID).

Audio is not copied: manifests point at the dataset's own WAVs by absolute path. Durations are
taken from the WAV headers (frames / rate), so they are exact, not the 3-decimal DURATION column.
A reference-free dataset exports empty transcripts (NeMo, Kaldi) or no text (lhotse).
Every file is written atomically into a fresh folder that is moved into place whole.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from asrbench import audio
from asrbench.dataset import Dataset
from asrbench.entries import check_out
from asrbench.errors import InputError
from asrbench.fsio import atomic_write_text, replace_dir, stage_dir
from asrbench.importers.common import ImportProblem
from asrbench.longform.segments import by_session, write_timed
from scoring.errors import ScoringError
from scoring.segments import Segment
from scoring.timed import timed_text

TIMED = {"stm": "stm", "seglst": "seglst.json", "rttm": "rttm"}  # format: file extension
FORMATS = ("kaldi", "nemo", "lhotse", *TIMED)
# a result cell's hypothesis (`export_cell`): SegLST keeps speakers, CTM has none
CELL_FORMATS = {"seglst": "seglst.json", "ctm": "ctm"}
CELL_FILE = "hyp"  # hyp.seglst.json, hyp.ctm
# every manifest the Kaldi, NeMo and lhotse writers below can write (TIMED: `<ID>.<ext>`)
EXPORT_FILES = frozenset(
    {"wav.scp", "text", "utt2spk", "utt2dur", "spk2utt", "spk2gender", "manifest.json"}
    | {"recordings.jsonl.gz", "supervisions.jsonl.gz", "cuts.jsonl.gz"}
)


def _durations(ds: Dataset) -> dict[str, float]:
    out = {}
    for u in ds:
        info = audio.info(ds.audio_path(u))
        out[u.id] = info.frames / info.samplerate
    return out


def _kaldi(ds: Dataset, out: Path) -> list[str]:
    durs = _durations(ds)
    utts = sorted(ds, key=lambda u: u.id)  # Kaldi wants files sorted by key
    spk = {u.id: u.extra.get("SPEAKER") or u.id for u in utts}
    files = {
        "wav.scp": [f"{u.id} {ds.audio_path(u).resolve()}" for u in utts],
        "text": [f"{u.id} {u.text}".rstrip() for u in utts],
        "utt2spk": [f"{u.id} {spk[u.id]}" for u in utts],
        "utt2dur": [f"{u.id} {durs[u.id]!r}" for u in utts],
    }
    by_spk: dict[str, list[str]] = {}
    for u in utts:
        by_spk.setdefault(spk[u.id], []).append(u.id)
    files["spk2utt"] = [f"{s} {' '.join(ids)}" for s, ids in sorted(by_spk.items())]
    genders = {spk[u.id]: u.extra.get("GENDER", "").lower() for u in utts}
    if all(g in ("m", "f") for g in genders.values()):
        files["spk2gender"] = [f"{s} {g}" for s, g in sorted(genders.items())]
    for u in utts:
        for value in (u.id, spk[u.id]):
            if " " in value:
                raise ImportProblem(
                    f"{ds.root}: utterance {u.id}: {value!r} holds a space; Kaldi keys cannot"
                )
    for name, lines in files.items():
        atomic_write_text(out / name, "\n".join(lines) + "\n")
    return sorted(files)


def _nemo(ds: Dataset, out: Path) -> list[str]:
    durs = _durations(ds)
    keys = {"SPEAKER": "speaker", "GENDER": "gender", "LANGUAGE": "lang", "ACCENT": "accent"}
    lines = []
    for u in ds:
        row = {
            "audio_filepath": str(ds.audio_path(u).resolve()),
            "duration": durs[u.id],
            "text": u.text,
            "utt_id": u.id,
        }
        row.update({k: u.extra[c] for c, k in keys.items() if u.extra.get(c)})
        lines.append(json.dumps(row, ensure_ascii=False))
    atomic_write_text(out / "manifest.json", "\n".join(lines) + "\n")
    return ["manifest.json"]


def dataset_segments(ds: Dataset) -> list[Segment]:
    """The dataset's reference segments: a long-form dataset's own, else one per utterance."""
    if ds.longform:
        return list(ds.segments)
    durs = _durations(ds)
    return [
        Segment(u.id, u.extra.get("SPEAKER") or u.id, 0.0, round(durs[u.id], 6), u.text) for u in ds
    ]


def _timed(fmt: str):
    def write(ds: Dataset, out: Path) -> list[str]:
        name = f"{ds.id}.{TIMED[fmt]}"
        try:
            write_timed(out / name, dataset_segments(ds), fmt)
        except ScoringError as exc:
            raise ImportProblem(f"{ds.root}: cannot export as {fmt}: {exc}") from None
        return [name]

    return write


def _supervisions(ds: Dataset, recs: list) -> list[list]:
    """Per recording, its lhotse supervisions: the whole utterance, or a long-form dataset's
    segments of that session (IDs `<session>-<n>`, in the segments file's order)."""
    from lhotse import SupervisionSegment

    groups = by_session(ds.segments)
    out = []
    for u, rec in zip(ds, recs, strict=True):
        gender = {"M": "male", "F": "female"}.get(
            u.extra.get("GENDER", ""), u.extra.get("GENDER") or None
        )
        language = u.extra.get("LANGUAGE") or ds.language
        spans = (
            [(s.speaker, s.start_time, s.duration, s.words) for s in groups.get(u.id, [])]
            if ds.longform
            else [(u.extra.get("SPEAKER") or "", 0.0, rec.duration, u.text)]
        )
        out.append(
            [
                SupervisionSegment(
                    id=u.id if not ds.longform else f"{u.id}-{n:04d}",
                    recording_id=u.id,
                    start=start,
                    duration=round(duration, 6),
                    channel=0,
                    text=None if ds.reference_free else words,
                    speaker=speaker or None,
                    gender=gender,
                    language=language,
                )
                for n, (speaker, start, duration, words) in enumerate(spans)
            ]
        )
    return out


def _lhotse(ds: Dataset, out: Path, cuts: bool = True) -> list[str]:
    from lhotse import CutSet, MonoCut, Recording, RecordingSet, SupervisionSet

    recs = [Recording.from_file(ds.audio_path(u).resolve(), recording_id=u.id) for u in ds]
    per_rec = _supervisions(ds, recs)
    sups = [s for group in per_rec for s in group]
    rset, sset = RecordingSet.from_recordings(recs), SupervisionSet.from_segments(sups)
    rset.to_file(out / "recordings.jsonl.gz")
    sset.to_file(out / "supervisions.jsonl.gz")
    names = ["recordings.jsonl.gz", "supervisions.jsonl.gz"]
    if cuts:
        # One cut per utterance (or recording), named as it (from_manifests would add suffixes).
        CutSet.from_cuts(
            MonoCut(id=r.id, start=0.0, duration=r.duration, channel=0, recording=r, supervisions=g)
            for r, g in zip(recs, per_rec, strict=True)
        ).to_file(out / "cuts.jsonl.gz")
        names.append("cuts.jsonl.gz")
    return names


def is_export(folder: Path) -> bool:
    """Whether `folder` holds only manifests an export writes (an earlier export, which
    `--force` may replace): never a folder of anything else."""
    timed = tuple(f".{ext}" for ext in {*TIMED.values(), *CELL_FORMATS.values()})
    return all(
        p.is_file() and not p.is_symlink() and (p.name in EXPORT_FILES or p.name.endswith(timed))
        for p in Path(folder).iterdir()
    )


def export_dataset(ds: Dataset, fmt: str, out: Path, force: bool = False) -> list[Path]:
    """Write `ds` as `fmt` manifests into the folder `out`; returns the files written."""
    if fmt not in FORMATS:
        raise ImportProblem(f"--to {fmt!r}: choose one of {', '.join(FORMATS)}")
    writers = {"kaldi": _kaldi, "nemo": _nemo, "lhotse": _lhotse}
    writers.update({name: _timed(name) for name in TIMED})
    return _write_out(out, force, lambda staging: writers[fmt](ds, staging))


def _write_out(out: Path, force: bool, write: Callable[[Path], list[str]]) -> list[Path]:
    """Run `write` into a fresh staging folder moved into place as `out` whole."""
    out = Path(out)
    try:
        check_out(out, "export", force, owned=is_export)
    except InputError as exc:
        raise ImportProblem(str(exc)) from None
    staging = stage_dir(out)
    try:
        names = write(staging)
        replace_dir(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / n for n in names]


def is_cell(folder: Path) -> bool:
    """Whether `folder` is a benchmark result cell (a dataset folder has no summary.json)."""
    return (Path(folder) / "summary.json").is_file()


def export_cell(folder: Path, fmt: str, out: Path, force: bool = False) -> list[Path]:
    """Write a result cell's hypothesis as `fmt` (seglst or ctm) into the folder `out`: the
    session segments its session metrics scored (`asrbench.results.timed.hyp_segments`), so
    `ops/score --metric` on them against the dataset's exported reference gives its numbers."""
    from asrbench.results.store import read_cell
    from asrbench.results.timed import TIMED_FILE, hyp_segments, hyp_words, read_hyp_timed

    if fmt not in CELL_FORMATS:
        raise ImportProblem(
            f"--to {fmt!r}: a result cell exports its hypothesis as "
            f"{' or '.join(CELL_FORMATS)}; the other formats are a dataset's (give its ID)"
        )
    cell = read_cell(Path(folder))
    utts = cell.records().values()
    hyps = {u["id"]: u["hyp"] for u in utts if u.get("hyp") is not None and not u.get("failed")}
    durations = {u["id"]: u.get("duration") or 0.0 for u in utts}
    timed, _ = read_hyp_timed(Path(folder) / TIMED_FILE)
    segments = hyp_segments(hyps, timed, durations)
    items = segments if fmt == "seglst" else hyp_words(hyps, timed, segments)
    name = f"{CELL_FILE}.{CELL_FORMATS[fmt]}"

    def write(staging: Path) -> list[str]:
        try:
            atomic_write_text(staging / name, timed_text(items, fmt))
        except ScoringError as exc:
            raise ImportProblem(f"{folder}: cannot export as {fmt}: {exc}") from None
        return [name]

    return _write_out(out, force, write)
