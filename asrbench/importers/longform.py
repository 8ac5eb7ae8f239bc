"""Long-form imports: whole recordings with segment-level references into a `kind: longform`
dataset (one metadata row per recording, segments in `segments.seglst.json`).

Sources: a timed reference file (STM, SegLST, or RTTM for speaker turns only) beside a folder of
recordings named by session ID (`ops/import longform`), lhotse recordings + supervisions
(`ops/import lhotse --longform`, asrbench.importers.lhotse_io), and the meeting recipes' long-form
option. The segments are checked against their source file first (errors name that file and
line), the audio is converted as every import does (asrbench.importers.common.build_dataset),
then the segments are checked against the converted recordings' durations, and the folder is
validated as a whole before it is moved into place.
"""

from __future__ import annotations

import contextlib
import math
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from asrbench.dataset import DatasetError, load_dataset, write_dataset
from asrbench.fsio import replace_dir, stage_dir
from asrbench.importers.common import (
    CONTROL_CHARACTER,
    SEGMENT_SLACK_S,
    ImportProblem,
    Item,
    build_dataset,
    check_out_folder,
    clean_id,
    clean_text,
    inside,
    read_audio_file,
)
from asrbench.longform.compose import Session
from asrbench.longform.segments import (
    DEFAULT_FILE,
    KIND,
    by_session,
    in_time_order,
    session_text,
    write_timed,
)
from scoring.errors import ScoringError
from scoring.segments import Segment
from scoring.timed import read_timed, validate_segments

AUDIO_EXTENSIONS = (".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a", ".sph", ".aiff")


@dataclass(frozen=True)
class LongformSource:
    """What a long-form import needs: one whole-recording item per session, the segments (session
    IDs already as the dataset will spell them), and where the segments came from."""

    items: tuple[Item, ...]
    segments: tuple[Segment, ...]
    origin: str

    @property
    def reference_free(self) -> bool:
        """No segment carries a word (speaker turns only, as RTTM gives them)."""
        return not any(s.words.strip() for s in self.segments)


def with_clean_ids(segments: Sequence[Segment]) -> tuple[Segment, ...]:
    """Segments whose session IDs are spelled as dataset IDs (`clean_id`), as the rows will be."""
    return tuple(replace(s, session_id=clean_id(s.session_id)) for s in segments)


def item_for(
    session: str,
    segments: Sequence[Segment],
    load,
    key: str,
    where: str,
    path: Path | None = None,
) -> Item:
    """The whole-recording item of one session: TEXT is its words in time order. `path`: the
    one file `load` decodes, converted in blocks instead where libsndfile reads it."""
    speakers = sorted({s.speaker for s in segments if s.speaker})
    extra = {"SPEAKERS": ",".join(speakers)} if speakers else {}
    return Item(session, load, key, session_text(segments), extra=extra, where=where, path=path)


def from_timed(path: Path, audio_dir: Path, fmt: str | None = None) -> LongformSource:
    """Segments from an STM, SegLST or RTTM file; each session's audio is the one file in
    `audio_dir` named `<session_id>.<ext>` (wav, flac, mp3, ...)."""
    path, audio_dir = Path(path), Path(audio_dir)
    if not path.is_file():
        raise ImportProblem(
            f"--segments {path}: no such file; give the STM, SegLST or RTTM file of the recordings"
        )
    try:
        segments = read_timed(path, fmt)
        if segments and not isinstance(segments[0], Segment):
            raise ImportProblem(
                f"{path}: a CTM holds hypothesis words, not reference segments; import STM, "
                "SegLST or RTTM"
            )
        validate_segments(segments, source=str(path))  # type: ignore[arg-type]
    except ScoringError as exc:
        raise ImportProblem(str(exc)) from None
    if not segments:
        raise ImportProblem(f"{path}: no segments")
    segs = [s for s in segments if isinstance(s, Segment)]
    _check_characters(segs, path)
    items = []
    for session, own in by_session(segs).items():
        where = f"{path}:{own[0].line}"
        audio = _audio_file(audio_dir, session, where)
        items.append(
            item_for(
                clean_id(session),
                own,
                lambda a=audio, w=where: read_audio_file(a, w),
                str(audio),
                where,
                audio,
            )
        )
    return LongformSource(tuple(items), with_clean_ids(segs), str(path))


def _check_characters(segments: Sequence[Segment], path: Path) -> None:
    """A control character (ESC, NUL...) in a segment is an error naming its line in `path`,
    not the dataset folder the import would have written it to."""
    for seg in segments:
        for name, value in (
            ("session", seg.session_id),
            ("speaker", seg.speaker),
            ("words", seg.words),
        ):
            m = CONTROL_CHARACTER.search(value)
            if m:
                raise ImportProblem(
                    f"{path}:{seg.line}: the {name} holds the control character "
                    f"U+{ord(m.group()):04X} at character {m.start() + 1}; remove it (it is no "
                    "part of a transcript)"
                )


def _audio_file(audio_dir: Path, session: str, where: str) -> Path:
    """The one recording `<session>.<ext>` in `audio_dir`; a session ID that leads out of it
    (`../x`, an absolute path, a symlink out) is refused, as the folder importer refuses such
    table entries."""
    keep = f"{audio_dir} (a session ID names its recording there)"
    inside(audio_dir, f"{session}.wav", f"{where}: session {session!r}", keep=keep)
    names = [f"{session}{ext}" for ext in AUDIO_EXTENSIONS]
    found = [inside(audio_dir, n, where, keep=keep) for n in names if (audio_dir / n).is_file()]
    if len(found) != 1:
        what = "no audio file" if not found else f"{len(found)} audio files"
        raise ImportProblem(
            f"{where}: session {session!r}: {what} named {session}.<ext> in {audio_dir} "
            f"({', '.join(AUDIO_EXTENSIONS)}); put exactly one there or pass --audio-dir"
        )
    return found[0]


def build_longform(
    out: Path,
    source: LongformSource,
    *,
    dataset_id: str,
    rate: int = 16000,
    force: bool = False,
    meta: dict | None = None,
) -> Path:
    """Build a long-form dataset at `out`: recordings converted, segments checked against them,
    the whole folder validated, then moved into place (nothing is left behind on an error).

    `meta` is dataset.yaml's other keys (`language` default en, `licence`, `description`...)."""
    out = Path(out)
    card = dict(meta or {})
    language = str(card.pop("language", "en"))
    licence = str(card.pop("licence", "unknown"))
    description = str(card.pop("description", ""))
    check_out_folder(out, force)  # the staged build below never sees `out` itself
    with _scratch_beside(out) as tmp:
        staged = build_dataset(
            tmp / out.name,
            source.items,
            dataset_id=dataset_id,
            rate=rate,
            language=language,
            licence=licence,
            source=source.origin,
            description=description or f"long-form recordings imported from {source.origin}",
            reference_free=source.reference_free,
            meta=card,
        )
        _add_segments(staged, source)
        return replace_dir(staged, out)


@contextlib.contextmanager
def _scratch_beside(out: Path) -> Iterator[Path]:
    """A folder beside `out` to build the dataset in before it gets its segments: a staging
    folder of `out` (`fsio.stage_dir`), so a full disk is the one-line error naming `out` and
    the leftovers of a killed import are removed by the next one; removed when done."""
    stage = stage_dir(out)
    try:
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _add_segments(root: Path, source: LongformSource) -> None:
    """Write the segments into a freshly imported folder and declare it long-form."""
    plain = load_dataset(root)
    durations = {u.id: u.duration for u in plain}
    segments = tuple(_whole(s, durations) for s in source.segments)
    try:
        validate_segments(
            segments,
            durations=durations,
            source=source.origin,
            require_words=not source.reference_free,
            tolerance=SEGMENT_SLACK_S + 0.005,  # DURATION is rounded to the millisecond
        )
    except ScoringError as exc:
        raise ImportProblem(str(exc)) from None
    write_timed(root / DEFAULT_FILE, segments, "seglst")
    card = {**plain.meta, "kind": KIND, "segments": DEFAULT_FILE}
    write_dataset(root, card, plain.columns, plain.utterances)
    try:
        load_dataset(root)
    except DatasetError as exc:
        raise ImportProblem(f"the imported long-form dataset does not validate:\n{exc}") from exc


def _whole(seg: Segment, durations: dict[str, float]) -> Segment:
    """A segment with no end (a recording with no times: `end_time` inf) ends with its audio."""
    if math.isinf(seg.end_time) and seg.session_id in durations:
        return replace(seg, end_time=durations[seg.session_id])
    return seg


# ----------------------------------------------------------------------------- recipes


def session_of(item: Item) -> str:
    """The session a recipe's cut item belongs to: its MEETING, else its audio file's name."""
    return item.extra.get("MEETING") or Path(item.key).stem


def sessions_from_items(items: Iterable[Item], collect: list[Segment]) -> Iterator[Item]:
    """A recipe's cut items (one per segment: start, end, SPEAKER) regrouped into one item per
    whole session; the segments are appended to `collect`. The audio of a session with several
    files (AMI's headsets) is their sum, as AMI's Mix-Headset is. An item without times (an
    untimed Earnings call) is one segment spanning its whole recording. A speaker's segments
    that overlap each other are merged (the contract allows overlap across speakers only)."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(session_of(item), []).append(item)
    for session, members in groups.items():
        sid = clean_id(session)
        segs = merge_own_overlaps([_segment(sid, m) for m in members])
        collect.extend(segs)
        loads = {m.key: m.load for m in members}
        yield item_for(sid, segs, _mixer(list(loads.values())), "+".join(loads), members[0].where)


def _segment(session: str, item: Item) -> Segment:
    timed = item.start is not None and item.end is not None
    start = float(item.start) if timed else 0.0  # type: ignore[arg-type]
    end = float(item.end) if timed else math.inf  # type: ignore[arg-type]
    speaker = (item.extra.get("SPEAKER") or "unknown").replace(" ", "_")
    return Segment(session, speaker, start, end, clean_text(item.text))


def merge_own_overlaps(segments: Sequence[Segment]) -> list[Segment]:
    """Segments in time order, where one speaker's overlapping segments become one."""
    out: list[Segment] = []
    last: dict[str, int] = {}
    for seg in in_time_order(segments):
        i = last.get(seg.speaker)
        if i is not None and seg.start_time < out[i].end_time:
            prev = out[i]
            words = f"{prev.words} {seg.words}".strip()
            out[i] = replace(prev, end_time=max(prev.end_time, seg.end_time), words=words)
            continue
        last[seg.speaker] = len(out)
        out.append(seg)
    return out


def _mixer(loads: list[Callable[[], tuple[np.ndarray, int]]]):
    """A loader summing several recordings of one session (each mixed to mono; the first's rate;
    scaled down as a whole if the sum would clip)."""
    if len(loads) == 1:
        return loads[0]

    def load() -> tuple[np.ndarray, int]:
        from asrbench.importers.common import convert

        first, rate = loads[0]()
        mix = first.mean(axis=1)
        for more in loads[1:]:
            samples, r = more()
            mono = convert(samples, r, rate)
            if len(mono) > len(mix):
                mix = np.pad(mix, (0, len(mono) - len(mix)))
            mix[: len(mono)] += mono
        peak = float(np.max(np.abs(mix))) if len(mix) else 0.0
        return (mix / peak if peak > 1 else mix)[:, None].astype(np.float32), rate

    return load


def run_longform_recipe(recipe, out: Path, *, force: bool = False, **run_args) -> Path:
    """Run a meeting recipe (asrbench.importers.recipes.run_recipe, same `run_args`) for its
    long-form version: whole sessions with their segments instead of cut utterances."""
    from asrbench.importers.recipes import run_recipe

    out = Path(out)
    check_out_folder(out, force)
    collected: list[Segment] = []
    variant = replace(
        recipe, items=lambda root, o: sessions_from_items(recipe.items(root, o), collected)
    )
    with _scratch_beside(out) as tmp:
        staged = run_recipe(variant, tmp / out.name, **run_args)
        _add_segments(staged, LongformSource((), tuple(collected), f"{recipe.name} segments"))
        return replace_dir(staged, out)


# ----------------------------------------------------------------------------- composed sets


def write_longform_dataset(root: Path, meta: dict, sessions: Sequence[Session]) -> None:
    """Write a long-form dataset folder: audio/<ID>.wav, segments.seglst.json, metadata.tsv
    (TEXT = the session's words in time order) and dataset.yaml (`kind: longform` added)."""
    from asrbench.dataset import Utterance, format_duration
    from asrbench.longform.compose import RATE, write_wav

    rows = []
    for s in sessions:
        rel = f"audio/{s.id}.wav"
        write_wav(root / rel, s.samples)
        duration = float(format_duration(len(s.samples) / RATE))
        rows.append(Utterance(s.id, rel, duration, session_text(s.segments), dict(s.extra)))
    write_timed(root / DEFAULT_FILE, [seg for s in sessions for seg in s.segments], "seglst")
    extras = list(dict.fromkeys(k for s in sessions for k, _ in s.extra))
    card = {**meta, "kind": KIND, "segments": DEFAULT_FILE}
    write_dataset(root, card, ["ID", "AUDIO", "DURATION", "TEXT", *extras], rows)
