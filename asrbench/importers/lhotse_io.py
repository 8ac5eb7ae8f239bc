"""lhotse manifests in and out, through lhotse itself: recordings + supervisions, or cuts.

In: every supervision (or cut) becomes an utterance cut from its recording; a recording's audio
must be a file inside the manifests' folder (or --audio-root); `command` and `url` sources are
refused. Out: one recording and one supervision per utterance (durations from the WAV headers,
so they are exact), optionally cuts. Long-form (`longform_lhotse`): each recording one whole
session, its supervisions the segments (asrbench.importers.longform).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from asrbench.importers.common import ImportProblem, Item, clean_id, inside, read_audio_file
from asrbench.importers.longform import LongformSource, item_for, with_clean_ids
from asrbench.longform.segments import by_session
from scoring.segments import Segment


def _load_manifest(path: Path):
    from lhotse import load_manifest

    if not Path(path).is_file():
        raise ImportProblem(f"{path}: not found")
    try:
        return load_manifest(path)
    except Exception as exc:  # lhotse raises ValueError/KeyError/JSON errors on bad files
        raise ImportProblem(
            f"{path}: not a lhotse manifest ({type(exc).__name__}: {exc})"
        ) from None


def _loader(rec, channel, root: Path, where: str, hint: str):
    """A loader for one channel (or the mix) of a lhotse Recording with a single file source."""
    sources = rec.sources
    if len(sources) != 1 or sources[0].type != "file":
        kinds = ", ".join(s.type for s in sources)
        raise ImportProblem(
            f"{where}: recording {rec.id} has source(s) of type {kinds}; only one "
            "audio file per recording is imported (no commands, no URLs)"
        )
    path = inside(root, sources[0].source, where, hint)

    def load() -> tuple[np.ndarray, int]:
        samples, rate = read_audio_file(path, where)
        if channel is None or samples.shape[1] == 1:
            return samples, rate
        chans = [channel] if isinstance(channel, int) else list(channel)
        if max(chans) >= samples.shape[1]:
            raise ImportProblem(f"{where}: channel {channel} of a {samples.shape[1]}-channel file")
        return samples[:, chans], rate

    return load, f"{path}#{channel}"


def _extra(sup) -> dict[str, str]:
    out = {}
    if sup.speaker:
        out["SPEAKER"] = str(sup.speaker)
    if sup.gender:
        out["GENDER"] = {"male": "M", "female": "F"}.get(str(sup.gender).lower(), str(sup.gender))
    if sup.language:
        out["LANGUAGE"] = str(sup.language)
    return out


def import_lhotse(
    recordings: Path | None = None,
    supervisions: Path | None = None,
    cuts: Path | None = None,
    audio_root: Path | None = None,
) -> Iterator[Item]:
    """Items of lhotse manifests: (recordings + supervisions) or cuts."""
    if cuts is not None:
        yield from _from_cuts(Path(cuts), audio_root)
        return
    if recordings is None or supervisions is None:
        raise ImportProblem("pass --recordings and --supervisions, or --cuts")
    recs = _load_manifest(Path(recordings))
    sups = _load_manifest(Path(supervisions))
    root = Path(audio_root) if audio_root else Path(recordings).parent
    hint = f" or pass --audio-root (now {root})"
    by_id = {r.id: r for r in recs}
    for n, sup in enumerate(sups, start=1):
        where = f"{supervisions} #{n} ({sup.id})"
        rec = by_id.get(sup.recording_id)
        if rec is None:
            raise ImportProblem(f"{where}: recording {sup.recording_id!r} is not in {recordings}")
        load, key = _loader(rec, sup.channel, root, f"{recordings} ({rec.id})", hint)
        if sup.end > rec.duration + 0.01:
            raise ImportProblem(
                f"{where}: segment {sup.start:.3f}-{sup.end:.3f} s lies outside "
                f"its recording {rec.id} ({rec.duration:.3f} s)"
            )
        yield Item(
            id=sup.id,
            load=load,
            key=key,
            text=sup.text or "",
            start=sup.start,
            end=sup.end,
            extra=_extra(sup),
            where=where,
        )


def _from_cuts(path: Path, audio_root: Path | None) -> Iterator[Item]:
    cuts = _load_manifest(path)
    root = Path(audio_root) if audio_root else path.parent
    hint = f" or pass --audio-root (now {root})"
    for n, cut in enumerate(cuts, start=1):
        where = f"{path} #{n} ({cut.id})"
        if not getattr(cut, "has_recording", False):
            raise ImportProblem(f"{where}: the cut has no recording")
        sups = sorted(cut.supervisions, key=lambda s: s.start)
        load, key = _loader(cut.recording, getattr(cut, "channel", None), root, where, hint)
        text = " ".join(s.text for s in sups if s.text)
        yield Item(
            id=cut.id,
            load=load,
            key=key,
            text=text,
            start=cut.start,
            end=cut.end,
            extra=_extra(sups[0]) if sups else {},
            where=where,
        )


def all_text_missing(supervisions: Path | None = None, cuts: Path | None = None) -> bool:
    """True when no supervision carries text: the set is reference-free."""
    if cuts is not None:
        return all(not s.text for c in _load_manifest(Path(cuts)) for s in c.supervisions)
    return supervisions is not None and all(not s.text for s in _load_manifest(supervisions))


def longform_lhotse(
    recordings: Path, supervisions: Path, audio_root: Path | None = None
) -> LongformSource:
    """lhotse recordings + supervisions as a long-form source: each recording one whole session
    (channels mixed down), each supervision one segment (speaker, start, end, text)."""
    recs = _load_manifest(Path(recordings))
    sups = _load_manifest(Path(supervisions))
    root = Path(audio_root) if audio_root else Path(recordings).parent
    hint = f" or pass --audio-root (now {root})"
    by_id = {r.id: r for r in recs}
    segments = []
    for n, sup in enumerate(sups, start=1):
        if sup.recording_id not in by_id:
            raise ImportProblem(
                f"{supervisions} #{n} ({sup.id}): recording {sup.recording_id!r} is not in "
                f"{recordings}"
            )
        start, end = round(sup.start, 6), round(sup.end, 6)
        segments.append(
            Segment(sup.recording_id, sup.speaker or "", start, end, sup.text or "", line=n)
        )
    order = {rec_id: i for i, rec_id in enumerate(by_id)}  # sessions keep the manifest's order
    segments.sort(key=lambda s: (order[s.session_id], s.start_time, s.end_time))
    items = []
    for rec_id, own in by_session(segments).items():
        rec = by_id[rec_id]
        load, key = _loader(rec, None, root, f"{recordings} ({rec.id})", hint)
        items.append(item_for(clean_id(rec_id), own, load, key, f"{recordings} ({rec.id})"))
    return LongformSource(tuple(items), with_clean_ids(segments), f"{supervisions}")
