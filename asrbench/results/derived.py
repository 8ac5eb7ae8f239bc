"""What a cell derives from its scored records when it is written, for the report to render.

The report shows stored records only (docs/REPORT.md). Two of its views need the scorer or the
dataset: the scorer ablation re-scores the raw texts with the normalisation steps switched on
one at a time, and a long-form cell's timeline places its alignment on the recording's time
axis through the dataset's reference segments. Both are computed here when the benchmark
writes the cell (`derive`, from `benchmark.run._finish`) and stored beside it:

    ablation.json   AblationRecord   a scored cell of a dataset that is not derived
    timeline.json   TimelineRecord   a scored cell of a long-form dataset (`kind: longform`)
    speakers.json   SpeakersRecord   such a cell whose reference and hypothesis name speakers
                                     (asrbench/results/speaker_view.py)

`backfill` writes them into cells stored before they existed (`ops/report --backfill`), from
the same inputs: the cell's `utterances.jsonl`, `summary.json`, run.json's scorer options and
dataset folder. The numbers are those the report used to recompute, byte for byte.

Ablation (SpeechColab's Table VII): the stored raw reference and raw hypothesis of every
utterance re-scored by the platform's scorer (`get_scorer`) in the order raw, +CASE, +PUNC,
+ITJ, +UK-US, +NSW, +DAE (any other step the scorer can switch, such as NONSPEECH or OPTIONAL,
goes before +DAE). Steps the cell's own scorer did not use are skipped, so the last row is the
cell's configuration, checked against the stored counts.

Timeline: each reference word gets the pseudo-time of MeetEval's `character_based` split of
its segment (`scoring.hallucination.ref_words`), an insertion the time of the reference word
before it; dropped stretches and loops are `scoring.hallucination`'s own rules, so the timeline
and `benchmarks/hallucination.py` agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from asrbench.results.records import (
    ABLATION_FILE,
    SPEAKERS_FILE,
    TIMELINE_FILE,
    AblationRecord,
    RecordError,
    SpeakersRecord,
    TimelineRecord,
    read_record,
    write_record,
)
from asrbench.results.store import CellReadError, read_utterances, scan
from asrbench.results.summary import Summary
from asrbench.results.timed import TIMED_FILE, as_transcript, read_hyp_timed
from scoring.metrics import Metrics, pooled

BIN_S_MIN = 5.0  # error bars per bin of at least 5 s (about 60 bins over the recording)
# a timeline.json recording's keys (report.longform.Timeline's fields, less the drawing)
TIMELINE_KEYS = (
    "id",
    "duration",
    "bin_s",
    "bins",
    "speech",
    "dropped",
    "loops",
    "output",
    "pause_words",
)


def is_longform(meta: Mapping[str, Any]) -> bool:
    """A long-form dataset (`kind: longform` in dataset.yaml): its cells score sessions."""
    return meta.get("kind") == "longform"


def ladder() -> list[tuple[str, str, str]]:
    """(label, ScorerConfig switch, step name in summary.scorer.steps) for each step of the
    normaliser's registry, in its ablation order (`scoring.normalize.steps.LADDER`), so that
    "raw" has every step off."""
    from scoring.normalize.steps import BY_NAME, LADDER

    return [(f"+{name}", str(BY_NAME[name].option), name) for name in LADDER]


def _has(steps: set[str], name: str) -> bool:
    """A step is on under its name or a variant of it (NSW-num2words counts as NSW)."""
    return name in steps or any(s.startswith(f"{name}-") for s in steps)


def _lang(summary: Summary) -> str:
    return str((summary.scorer or {}).get("lang") or "en")


def _scorer_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The cell's scorer options (run.json `options.scorer`) without the bootstrap: no
    intervals are drawn for what is derived here."""
    return {k: v for k, v in options.items() if k != "bootstrap"}


def ablation(
    utts: list[dict[str, Any]], summary: Summary, options: Mapping[str, Any]
) -> AblationRecord:
    """The ladder of one scored cell from its utterances.jsonl records (raw `ref`, `hyp`)."""
    from asrbench.scorers import get_scorer

    assert summary.metrics is not None
    steps = ladder()
    flags = [f for _, f, _ in steps]
    named = set((summary.scorer or {}).get("steps") or [])
    enabled = {flag for _, flag, name in steps if _has(named, name)}
    base = {k: v for k, v in _scorer_options(options).items() if k not in flags}
    refs = {str(u["id"]): u.get("ref") or "" for u in utts}
    hyps = {str(u["id"]): u["hyp"] for u in utts if u.get("hyp") is not None}
    rows: list[dict[str, Any]] = []
    applied: dict[str, list[str]] = {}
    prev: list[tuple[list[str], list[str]]] = []
    on: set[str] = set()
    last = None
    for label, flag in [("raw", None), *((label, flag) for label, flag, _ in steps)]:
        if flag is not None and flag not in enabled:
            rows.append({"stage": label, "applied": False})
            continue
        if flag is not None:
            on.add(flag)
        opts = {**base, **{f: f in on for f in flags}, "bootstrap": 0}
        scored = get_scorer(_lang(summary), opts).score(refs, hyps).utterances
        if prev:  # the utterances whose tokens this step changed
            for uid, u, (pr, ph) in zip(refs, scored, prev, strict=True):
                if u.ref != pr or u.hyp != ph:
                    applied.setdefault(uid, []).append(label[1:])
        prev = [(u.ref, u.hyp) for u in scored]
        last = m = pooled(scored, summary.metrics.unit)
        rows.append(
            {
                "stage": label,
                "applied": True,
                "ter": m.ter,
                "mter": m.mter,
                "sub": m.sub,
                "ins": m.ins,
                "del": m.dele,
                "n_ref": m.n_ref,
                "n_hyp": m.n_hyp,
            }
        )
    assert last is not None  # "raw" is always scored
    return AblationRecord(
        stages=["raw", *(label for label, _, _ in steps)],
        rows=rows,
        matches_stored=_same(last, summary),
        note=None if _same(last, summary) else _differs(last, summary),
        applied=applied,
    )


def _same(m: Metrics, summary: Summary) -> bool:
    s = summary.metrics
    assert s is not None
    return (m.sub, m.ins, m.dele, m.n_ref) == (s.sub, s.ins, s.dele, s.n_ref)


def _differs(m: Metrics, summary: Summary) -> str:
    s = summary.metrics
    assert s is not None
    return (
        f"the last step gives {m.sub}/{m.ins}/{m.dele} sub/ins/del over "
        f"{m.n_ref} words; the stored result has {s.sub}/{s.ins}/"
        f"{s.dele} over {s.n_ref}: the scorer's code or data changed "
        f"since the cell was written (stored code {summary.scorer.get('code')})"
    )


# -- timelines ---------------------------------------------------------------------------------


def _segments(dataset_folder: Path, meta: Mapping[str, Any]) -> tuple[dict[str, list], str | None]:
    """({recording: its reference segments}, None) or ({}, why there are none)."""
    from asrbench.longform.segments import segments_file
    from scoring.errors import ScoringError
    from scoring.meeting import read_segments

    path = segments_file(Path(dataset_folder), dict(meta))
    try:
        segs = read_segments(path)
    except (OSError, ScoringError, ValueError) as exc:
        return {}, f"{path}: cannot read the reference segments ({exc}); no timeline"
    out: dict[str, list] = {}
    for s in segs:
        out.setdefault(s.session_id, []).append(s)
    return out, None


def _ref_times(
    ops: list, segments: list, normalize: Callable[[str], list[str]]
) -> list[tuple[float, float]]:
    """A (start, end) per reference token of `ops`; by relative position when the per-segment
    normalisation gives another count than the session's (as scoring.hallucination does)."""
    from scoring.hallucination import ref_words

    _, times = ref_words(segments, normalize)
    n = sum(1 for op in ops if op[0] != "I")
    if not times:  # a session whose reference normalises to nothing: all at its start
        return [(segments[0].start_time, segments[0].start_time)] * n
    if len(times) == n:
        return list(times)
    m = len(times)
    return [times[min(m - 1, (i * m) // max(1, n))] for i in range(n)]


def _op_times(ops: list, times: list[tuple[float, float]]) -> list[float]:
    """One time per op: its reference word's midpoint; an insertion, the end of the word before."""
    out, r = [], 0
    for op in ops:
        if op[0] == "I":
            out.append(times[r - 1][1] if r > 0 else (times[0][0] if times else 0.0))
        else:
            a, b = times[r] if r < len(times) else (0.0, 0.0)
            out.append((a + b) / 2)
            r += 1
    return out


def _timed_output(
    timed: dict[str, Any] | None,
    segments: list,
    normalize: Callable[[str], list[str]],
    duration: float | None,
) -> tuple[list[list[float]] | None, int | None]:
    """(spans with output, words in pauses) from one hyp.timed.jsonl record, or (None, None)."""
    from scoring.hallucination import hyp_points, pauses, words_in_pauses

    if not timed:
        return None, None
    hyp_segments, hyp_words = as_transcript(timed, segments[0].session_id)
    spans = [(g.start_time, g.end_time) for g in hyp_segments if g.words]
    items: list = hyp_words or hyp_segments
    found = words_in_pauses(pauses(segments, duration=duration), hyp_points(items, normalize))
    return [list(s) for s in spans], sum(p.words for p in found)


def timeline(
    rec: dict[str, Any],
    segments: list,
    normalize: Callable[[str], list[str]],
    duration: float | None,
    timed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The timeline of one recording (TIMELINE_KEYS) from its stored record and reference
    segments (and its timed hypothesis, where the cell has one)."""
    from scoring.hallucination import dropped_stretches, find_loops, most_in_a_row

    ops = rec["ops"]
    times = _ref_times(ops, segments, normalize)
    when = _op_times(ops, times)
    end = max([duration or 0.0, *(s.end_time for s in segments)])
    bin_s = max(BIN_S_MIN, end / 60)
    n_bins = max(1, int(end // bin_s) + 1)
    bins = [[0, 0, 0] for _ in range(n_bins)]
    for op, t in zip(ops, when, strict=True):
        if op[0] in "SDI":
            bins[min(n_bins - 1, int(t // bin_s))]["SDI".index(op[0])] += 1
    codes = "".join(op[0] for op in ops)
    refs = [op[1] for op in ops if op[0] != "I"]
    dropped = [
        [d.start_time, d.end_time, d.words, d.text] for d in dropped_stretches(codes, times, refs)
    ]
    hyp_idx = [i for i, op in enumerate(ops) if op[0] != "D"]
    loops = [
        [when[hyp_idx[lp.start]], lp.repeats, lp.ngram, most_in_a_row(refs, lp.ngram.split())]
        for lp in find_loops([ops[i][2] for i in hyp_idx])
    ]
    output, pause_words = _timed_output(timed, segments, normalize, duration)
    return {
        "id": str(rec["id"]),
        "duration": end,
        "bin_s": bin_s,
        "bins": bins,
        "speech": [[s.start_time, s.end_time] for s in segments],
        "dropped": dropped,
        "loops": loops,
        "output": output,
        "pause_words": pause_words,
    }


def timelines(
    folder: Path,
    utts: list[dict[str, Any]],
    summary: Summary,
    options: Mapping[str, Any],
    dataset: tuple[Path, Mapping[str, Any]],
) -> TimelineRecord:
    """Every recording of a long-form cell (in ID order) from its utterances.jsonl records,
    the timed hypotheses in `folder` and the reference segments of `dataset` (folder, meta)."""
    from asrbench.scorers import get_scorer

    by_rec, why = _segments(*dataset)
    if why:
        return TimelineRecord(recordings=[], note=why)
    normalize = get_scorer(_lang(summary), _scorer_options(options)).normalize
    # the one reader of hyp.timed.jsonl; {} without one: the timeline is made without it
    timed, _ = read_hyp_timed(Path(folder) / TIMED_FILE)
    out = []
    for rec in sorted(utts, key=lambda u: u["id"]):
        segs = by_rec.get(rec["id"])
        if segs and rec.get("ops") is not None:
            out.append(
                timeline(rec, segs, normalize, rec.get("duration"), timed.get(str(rec["id"])))
            )
    return TimelineRecord(recordings=out, note=None)


def speakers(
    folder: Path,
    utts: list[dict[str, Any]],
    summary: Summary,
    options: Mapping[str, Any],
    dataset: tuple[Path, Mapping[str, Any]],
) -> SpeakersRecord | None:
    """The speaker timelines of a long-form cell (asrbench/results/speaker_view.py), None where
    its reference or hypothesis names no speakers or the segments are unreadable (the
    timeline's note says so)."""
    from asrbench.results.speaker_view import speaker_record
    from asrbench.scorers import get_scorer

    by_rec, why = _segments(*dataset)
    if why:
        return None
    scorer = get_scorer(_lang(summary), {**_scorer_options(options), "bootstrap": 0})
    return speaker_record(folder, utts, scorer, by_rec)


def _cell_ablation(
    utts: list[dict[str, Any]], summary: Summary, options: Mapping[str, Any], meta: Mapping
) -> AblationRecord:
    """The ablation; a dataset with NLP references is scored against their readings, while the
    ladder re-scores TEXT as written, so its last step may differ: the note says why."""
    from dataclasses import replace

    rec = ablation(utts, summary, options)
    if meta.get("nlp") and not rec.matches_stored:
        why = (
            "the ladder re-scores TEXT as written; this cell was scored against the dataset's "
            "NLP references (their sidecar readings as alternations), so its counts differ"
        )
        rec = replace(rec, note=why)
    return rec


# -- writing -----------------------------------------------------------------------------------


def derive(
    folder: Path,
    summary: Summary,
    options: Mapping[str, Any],
    dataset: tuple[Path, Mapping[str, Any]],
    which: tuple[str, ...] = (ABLATION_FILE, TIMELINE_FILE, SPEAKERS_FILE),
    keep_notes: bool = True,
) -> tuple[list[str], list[str]]:
    """Write the derived records a scored cell in `folder` needs (`which` of them): the
    ablation unless its dataset is derived (a perturbed copy; `ops/report --backfill` writes
    those on demand), the timeline for a long-form dataset, and the speaker timelines where
    its reference and hypothesis name speakers. Returns (the files written, why a
    timeline is missing). `keep_notes` False: a timeline that could not be made (the segments
    unreadable) is not stored, so that a later backfill tries again."""
    if summary.metrics is None:  # a reference-free cell: nothing scored, nothing to derive
        return [], []
    folder, meta = Path(folder), dataset[1]
    todo = [
        name
        for name, wanted in (
            (ABLATION_FILE, not meta.get("derived_from")),
            (TIMELINE_FILE, is_longform(meta)),
            (SPEAKERS_FILE, is_longform(meta)),
        )
        if name in which and wanted
    ]
    # a cell scored by sessions only (sessions.jsonl, no per-recording alignment) has nothing
    # to derive these from
    if not todo or not (folder / "utterances.jsonl").is_file():
        return [], []
    utts = read_utterances(folder / "utterances.jsonl")
    written, notes = [], []
    for name in todo:
        if name == ABLATION_FILE:
            rec: Any = _cell_ablation(utts, summary, options, meta)
        else:
            make = timelines if name == TIMELINE_FILE else speakers
            rec = make(folder, utts, summary, options, dataset)
            if rec is None:  # no speakers named: nothing to draw, nothing stored
                continue
            if rec.note:
                notes.append(rec.note)
                if not keep_notes:
                    continue
        write_record(folder / name, rec)
        written.append(name)
    return written, notes


def _unreadable(path: Path, from_dict: Callable[[Any, str], Any]) -> bool:
    try:
        read_record(path, from_dict)
    except RecordError:
        return True
    return False


def backfill(
    root: Path,
    models: list[str] | None = None,
    datasets: list[str] | None = None,
    derived: bool = False,
) -> tuple[list[str], list[str]]:
    """Write the missing or unreadable derived records of every scored cell under `root`
    (`models`/`datasets`: fnmatch filters; `derived`: the ablation of derived datasets too).
    Returns (one line per file written, one line per cell that could not be done)."""
    found = scan(Path(root), models, datasets)
    written: list[str] = []
    problems: list[str] = []
    for cell in found.cells.values():
        run = cell.run
        if cell.summary.metrics is None:
            continue
        if run is None or not run.dataset_folder:
            problems.append(f"{cell.folder}: {cell.run_problem or 'no dataset folder in run.json'}")
            continue
        meta = dict(run.dataset_meta)
        if derived:
            meta.pop("derived_from", None)
        which = tuple(
            name
            for name, from_dict in (
                (ABLATION_FILE, AblationRecord.from_dict),
                (TIMELINE_FILE, TimelineRecord.from_dict),
                (SPEAKERS_FILE, SpeakersRecord.from_dict),
            )
            if _unreadable(cell.folder / name, from_dict)
        )
        try:
            dataset = (Path(run.dataset_folder), meta)
            done, notes = derive(
                cell.folder, cell.summary, run.scorer_options, dataset, which, keep_notes=False
            )
        except CellReadError as exc:
            problems.append(str(exc))
            continue
        written += [str(cell.folder / name) for name in done]
        problems += notes
    return written, problems
