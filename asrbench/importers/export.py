"""Export any dataset (perturbed ones included) to Kaldi, NeMo and lhotse manifests.

Audio is not copied: manifests point at the dataset's own WAVs by absolute path. Durations are
taken from the WAV headers (frames / rate), so they are exact, not the 3-decimal DURATION column.
A reference-free dataset exports empty transcripts (NeMo, Kaldi) or no text (lhotse).
Every file is written atomically into a fresh folder that is moved into place whole.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import soundfile as sf

from asrbench.dataset import Dataset
from asrbench.fsio import replace_dir, stage_dir
from asrbench.importers.common import ImportProblem

FORMATS = ("kaldi", "nemo", "lhotse")


def _durations(ds: Dataset) -> dict[str, float]:
    out = {}
    for u in ds:
        info = sf.info(str(ds.audio_path(u)))
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
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
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
    (out / "manifest.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["manifest.json"]


def _lhotse(ds: Dataset, out: Path, cuts: bool = True) -> list[str]:
    from lhotse import CutSet, MonoCut, Recording, RecordingSet, SupervisionSegment, SupervisionSet

    recs, sups = [], []
    for u in ds:
        rec = Recording.from_file(ds.audio_path(u).resolve(), recording_id=u.id)
        recs.append(rec)
        gender = {"M": "male", "F": "female"}.get(
            u.extra.get("GENDER", ""), u.extra.get("GENDER") or None
        )
        sups.append(
            SupervisionSegment(
                id=u.id,
                recording_id=u.id,
                start=0.0,
                duration=rec.duration,
                channel=0,
                text=None if ds.reference_free else u.text,
                speaker=u.extra.get("SPEAKER") or None,
                gender=gender,
                language=u.extra.get("LANGUAGE") or ds.language,
            )
        )
    rset, sset = RecordingSet.from_recordings(recs), SupervisionSet.from_segments(sups)
    rset.to_file(out / "recordings.jsonl.gz")
    sset.to_file(out / "supervisions.jsonl.gz")
    names = ["recordings.jsonl.gz", "supervisions.jsonl.gz"]
    if cuts:
        # One cut per utterance, named as the utterance (from_manifests would add suffixes).
        CutSet.from_cuts(
            MonoCut(
                id=s.id, start=0.0, duration=r.duration, channel=0, recording=r, supervisions=[s]
            )
            for r, s in zip(recs, sups, strict=True)
        ).to_file(out / "cuts.jsonl.gz")
        names.append("cuts.jsonl.gz")
    return names


def export_dataset(ds: Dataset, fmt: str, out: Path, force: bool = False) -> list[Path]:
    """Write `ds` as `fmt` manifests into the folder `out`; returns the files written."""
    if fmt not in FORMATS:
        raise ImportProblem(f"--to {fmt!r}: choose one of {', '.join(FORMATS)}")
    out = Path(out)
    if out.exists() and not force:
        raise ImportProblem(f"{out} already exists; pass --force to replace it")
    staging = stage_dir(out)
    try:
        names = {"kaldi": _kaldi, "nemo": _nemo, "lhotse": _lhotse}[fmt](ds, staging)
        replace_dir(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / n for n in names]
