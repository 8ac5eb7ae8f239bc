"""Pieces of long recordings: the derived dataset a model runs on when it cannot take them whole.

    plan = plan_segmentation(ds, selection, card.max_input_s, SegmentRequest("auto"))
    pieces = build_pieces(ds, ds_hash, plan, card.sample_rate)   # a normal dataset folder
    ... run the model on `pieces` with the normal machinery (cache, shards, resume) ...
    whole = reassemble(pieces, plan, records)                   # recording-level records

`plan_segmentation` decides, per run, which recordings are cut and how (`--segment`):

- `none`: nothing is cut (None);
- `auto` (the default): in any dataset, long-form or of utterances, the recordings (utterances)
  longer than the card's `max_input_s` are cut by voice activity detection with
  `max_segment_s = max_input_s`, and only those; a card without a limit (Whisper: its own
  long-form decoding), or a selection that all fits, is given whole (None: the cell and its
  key are the run's without segmentation);
- `vad` / `windows`: every recording of the selection is cut that way.

`build_pieces` writes one dataset (`reference_free`, rows `<recording>__<k:04d>` with PARENT,
START and END columns: seconds of the recording) under `<cache>/segment/datasets/`, named by
the parent's content hash, the segmentation and the recordings cut; recordings not cut are one
piece each (the whole file at the card's rate). Audio is written by
`asrbench.segmentation.cut_spans` streaming the file; the folder is staged and moved in whole,
so a crash leaves none half made.

`reassemble` joins each recording's pieces in time order (VAD: the texts joined with spaces;
windows: `asrbench.segmentation.merge_texts`); a recording counts as done only when every piece
has a hypothesis: a failed or missing piece fails the recording, the reason naming the piece.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from asrbench.benchmark.output import Records
from asrbench.benchmark.request import SEGMENT_MODES as MODES
from asrbench.dataset import Dataset, Utterance, load_dataset, write_dataset
from asrbench.fsio import replace_dir, stage_dir
from asrbench.identity import digest, short
from asrbench.results.timed import shifted
from asrbench.segmentation import (
    Segmentation,
    SegmentationError,
    Span,
    VadParams,
    WindowParams,
    cut_spans,
    frames,
    merge_texts,
    parse_options,
    segment_vad,
    window_spans,
)
from asrbench.settings import settings

FORMAT = "asrbench-run-segmentation/1"
COLUMNS = ["ID", "AUDIO", "DURATION", "TEXT", "PARENT", "START", "END"]
DEFAULT_WINDOW_S = 30.0  # windows without a card limit: Whisper's own window
DEFAULT_OVERLAP_S = 5.0


@dataclass(frozen=True)
class SegmentRequest:
    """What the run asked for: `--segment MODE` and `--segment-opt KEY=VALUE` overrides."""

    mode: str = "auto"
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SegmentationError(f"--segment {self.mode!r}: give one of {', '.join(MODES)}")
        if self.mode == "none" and self.options:
            raise SegmentationError("--segment-opt: given with --segment none, which cuts nothing")
        object.__setattr__(self, "options", MappingProxyType(dict(sorted(self.options.items()))))


@dataclass(frozen=True)
class Plan:
    """Which recordings are cut (the rest go whole, as one piece each) and how."""

    request: SegmentRequest
    segmentation: Segmentation
    cut: tuple[str, ...]
    whole: tuple[str, ...]

    @property
    def method(self) -> str:
        return "windows" if isinstance(self.segmentation.params, WindowParams) else "vad"

    @property
    def merge(self) -> str:
        return "merge_texts" if self.method == "windows" else "concat"

    def identity(self) -> dict[str, Any]:
        """What the pieces' audio depends on (besides the parent's content and the rate)."""
        return {
            "segmentation": self.segmentation.to_dict(),
            "cut": list(self.cut),
            "whole": list(self.whole),
        }


def _params(method: str, max_input_s: float | None, options: Mapping[str, Any]) -> Any:
    """The VAD or window parameters: the card's limit as the default, the user's overrides."""
    kind: type[VadParams] | type[WindowParams]
    base: dict[str, Any]
    if method == "vad":
        kind, base = VadParams, {"max_segment_s": max_input_s}
    else:
        window = max_input_s or DEFAULT_WINDOW_S
        kind, base = (
            WindowParams,
            {"window_s": window, "overlap_s": min(DEFAULT_OVERLAP_S, window / 4)},
        )
    # every name, type and range by the segmenter's own table, before anything runs
    return parse_options(kind, base, options, "--segment-opt")


def _segmentation(params: Any) -> Segmentation:
    """The provenance record, known before any audio is read (the weights by SHA-256)."""
    if isinstance(params, WindowParams):
        return Segmentation(params, model="", rate=0)
    model = frames.silero_model_id() if params.method == "silero" else frames.webrtc_model_id()
    return Segmentation(params, model=model, rate=frames.RATE)


def plan_segmentation(
    ds: Dataset,
    selection: Sequence[Utterance],
    max_input_s: float | None,
    request: SegmentRequest,
) -> Plan | None:
    """The module's rule; None when no recording of `selection` is cut. The options are
    checked whatever the outcome, so a misspelt one never passes unnoticed."""
    if request.mode == "none":
        return None
    method = "vad" if request.mode == "auto" else request.mode
    params = _params(method, max_input_s, request.options)
    if request.mode != "auto":
        cut = [u.id for u in selection]
    elif max_input_s is not None:  # any dataset: a model never gets more than it takes
        cut = [u.id for u in selection if u.duration > max_input_s]
    else:
        cut = []
    if not cut:
        return None
    whole = [u.id for u in selection if u.id not in set(cut)]
    return Plan(request, _segmentation(params), tuple(cut), tuple(whole))


def pieces_folder(ds: Dataset, ds_hash: str, plan: Plan, rate: int) -> Path:
    """`<cache>/segment/datasets/<parent>__<key>`: one folder per parent x segmentation."""
    key = short(digest("segment-pieces", dataset=ds_hash, rate=rate, **plan.identity()))
    return settings().cache / "segment" / "datasets" / f"{ds.id}__{key}"


def _spans(ds: Dataset, utt: Utterance, plan: Plan) -> list[Span]:
    path = ds.audio_path(utt)
    if utt.id not in plan.cut:
        return [Span(0.0, utt.duration)]
    params = plan.segmentation.params
    if isinstance(params, WindowParams):
        return window_spans(utt.duration, params)
    return list(segment_vad(path, params).spans)


def build_pieces(ds: Dataset, ds_hash: str, plan: Plan, rate: int) -> Dataset:
    """The pieces dataset of `plan` (built once, then reused from the cache)."""
    folder = pieces_folder(ds, ds_hash, plan, rate)
    if (folder / "metadata.tsv").is_file():
        return load_dataset(folder, check_audio=False)
    stage = stage_dir(folder)
    rows: list[Utterance] = []
    by_id = {u.id: u for u in ds.utterances}
    for rid in (*plan.cut, *plan.whole):
        utt = by_id[rid]
        spans = _spans(ds, utt, plan)
        files = cut_spans(ds.audio_path(utt), spans, stage / "audio", rate, stem=rid)
        for k, f in enumerate(files):
            extra = {"PARENT": rid, "START": f"{f.span.start:.3f}", "END": f"{f.span.end:.3f}"}
            rows.append(
                Utterance(f"{rid}__{k:04d}", f"audio/{f.path.name}", f.samples / rate, "", extra)
            )
    meta = {
        "id": folder.name,
        "language": ds.language,
        "sample_rate": rate,
        "reference_free": True,
        "derived_from": {
            "dataset": ds.id,
            "hash": ds_hash,
            "spec": f"segment:{plan.method}",
            "seed": 0,
            **plan.identity(),
        },
    }
    write_dataset(stage, meta, COLUMNS, rows)
    replace_dir(stage, folder)
    return load_dataset(folder, check_audio=False)


@dataclass(frozen=True)
class PieceRow:
    """One piece as the pieces dataset lists it."""

    id: str
    parent: str
    span: Span


def piece_rows(pieces: Dataset) -> dict[str, list[PieceRow]]:
    """Each recording's pieces, in time order."""
    out: dict[str, list[PieceRow]] = {}
    for u in pieces.utterances:
        span = Span(float(u.extra["START"]), float(u.extra["END"]))
        out.setdefault(u.extra["PARENT"], []).append(PieceRow(u.id, u.extra["PARENT"], span))
    return out


@dataclass(frozen=True)
class Reassembled:
    """Recording-level records and each done recording's timed hypothesis."""

    records: Records
    timed: dict[str, dict[str, Any]]


def _failed_piece(rows: list[PieceRow], rec: Records) -> str | None:
    bad = [r for r in rows if r.id not in rec.hyp]
    if not bad:
        return None
    first = bad[0]
    why = rec.failed.get(first.id) or "no result"
    more = f" (and {len(bad) - 1} more piece(s))" if len(bad) > 1 else ""
    return f"piece {first.id} ({first.span.start:.2f}-{first.span.end:.2f} s) failed: {why}{more}"


def _sum(values: list[str | None]) -> float | None:
    total = 0.0
    for v in values:
        try:
            x = float((v or "").split("\t")[0])
        except ValueError:
            return None
        if not math.isfinite(x) or x < 0:
            return None
        total += x
    return total


def _join(plan: Plan, rows: list[PieceRow], texts: list[str]) -> str:
    if plan.method == "windows" and len(rows) > 1:
        return merge_texts([r.span for r in rows], texts)
    return " ".join(t.strip() for t in texts if t.strip())


def _timed(
    rid: str, rows: list[PieceRow], texts: list[str], rec: Records, plan: Plan
) -> dict[str, Any]:
    """The recording's timed hypothesis: the program's own times shifted by each piece's
    start when it gave them for every piece (VAD pieces do not overlap), else one segment per
    piece with its text."""
    if plan.method == "vad" and rows and all(r.id in rec.timed for r in rows):
        segments, words = [], []
        for r in rows:
            segments += shifted(rec.timed[r.id]["segments"], r.span.start)
            words += shifted(rec.timed[r.id]["words"], r.span.start)
        return {"id": rid, "source": "model", "segments": segments, "words": words}
    return {
        "id": rid,
        "source": "pieces",
        "segments": [
            {"start": r.span.start, "end": r.span.end, "text": t.strip()}
            for r, t in zip(rows, texts, strict=True)
            if t.strip()
        ],
        "words": [],
    }


def reassemble(
    pieces: Dataset, plan: Plan, recordings: Sequence[Utterance], rec: Records
) -> Reassembled:
    """The module's rule: each recording transcribed (all its pieces) or failed (naming one)."""
    rows = piece_rows(pieces)
    out = Records()
    timed: dict[str, dict[str, Any]] = {}
    for utt in recordings:
        mine = rows.get(utt.id, [])  # none: VAD found no speech, the hypothesis is empty
        why = _failed_piece(mine, rec)
        if why:
            out.failed[utt.id] = why
            continue
        texts = [rec.hyp[r.id] for r in mine]
        out.hyp[utt.id] = _join(plan, mine, texts)
        proc = _sum([rec.timing.get(r.id) for r in mine])
        if proc is not None:
            out.timing[utt.id] = f"{proc:.4f}\t{utt.duration:.3f}"
        cost = (
            _sum([rec.cost.get(r.id) for r in mine])
            if any(r.id in rec.cost for r in mine)
            else None
        )
        if cost is not None:
            out.cost[utt.id] = f"{cost:.6f}"
        timed[utt.id] = _timed(utt.id, mine, texts, rec, plan)
    return Reassembled(out, timed)


def provenance(plan: Plan, pieces: Dataset, pieces_hash: str, pieces_key: str) -> dict[str, Any]:
    """run.json's `options.segmentation` (docs/RESULTS.md)."""
    counts: dict[str, int] = {rid: 0 for rid in plan.cut}
    for u in pieces.utterances:
        if u.extra["PARENT"] in counts:
            counts[u.extra["PARENT"]] += 1
    return {
        "format": FORMAT,
        "mode": plan.request.mode,
        "method": plan.method,
        "options": dict(plan.request.options),
        "record": plan.segmentation.to_dict(),
        "merge": plan.merge,
        "cut": counts,
        "whole": list(plan.whole),
        "pieces_dataset": {"hash": pieces_hash, "folder": str(pieces.root)},
        "pieces_cache_key": pieces_key,
    }
