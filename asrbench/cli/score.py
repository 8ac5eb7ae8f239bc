"""`asrbench score` (ops/score): score hypothesis transcripts against references.

Writes into OUT: summary.json (the schema every command shares), utterances.jsonl, and the
readable reports named by `--reports`: by default the light ones (hyp.sys, table.txt); the
per-utterance alignment.txt and hyp.pra (about 400 bytes an utterance each) when asked for.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand

from asrbench.cli.coercion import lean

app = typer.Typer(add_completion=False, help=__doc__)


class _LeanCommand(TyperCommand):
    """typer's command, its options coerced by `asrbench.cli.coercion` (same values, no
    pydantic)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            lean(param)

    def get_help_option(self, ctx: Any) -> Any:
        return lean(super().get_help_option(ctx))


def _exit_now_if_process_entry() -> None:
    """End the process at once when it runs only this command (`ops/score`, `python -m
    asrbench.cli`): every output is written, fsync'd and renamed by then, and the interpreter's
    teardown (~0.1 s: freeing every object the scorer made) serves nothing. Not when the CLI
    runs inside another program (tests call `asrbench.cli.main` in-process)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is None or spec.name != "asrbench.cli.__main__":
        return
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# Options declared here, out of `score`'s signature, keep the command short to read.
_REF_FORMAT = typer.Option(
    "auto", help="tsv | kaldi | trn | jsonl | stm | nlp (a file or folder) | auto"
)
_HYP_FORMAT = typer.Option(
    "auto", help="tsv | kaldi | trn | jsonl | ctm | nlp (a file or folder) | auto"
)
_LANG = typer.Option(
    "en",
    help="the language, any BCP-47 tag (en, fr-CA, zh, ja...): its own steps where "
    "scoring/languages.py lists it, else the language-neutral ones (docs/SCORING.md)",
)
_UNIT = typer.Option(
    None,
    help="word, char (every character, spaces included, as jiwer's cer) or mixed "
    "(CJK characters + words); default: mixed for zh, else word",
)
_ALIGN = typer.Option(
    None,
    help="minimal (fewest edits; the default), sclite (sclite's weights, tie-breaks "
    "and ASCII-only case folding, no DAE: its counts exactly) or fstalign (fewest edits, "
    "equal ones placed as fstalign places them; --preset fstalign sets it)",
)
_PRESET = typer.Option(
    None,
    help="a named step list: default, no-dae, sclite (with --align sclite), raw (no "
    "step) or fstalign (Rev's fstalign conventions); the step flags given beside it win "
    "(docs/SCORING.md)",
)
_METRIC = typer.Option(
    None,
    help="session mode (timed REF, HYP): wer, cpwer, tcpwer, orcwer, tcorcwer (MeetEval's; "
    "tcorcwer: ORC-WER with tcpWER's time constraint, for long sessions of many streams), der "
    "or jer (diarization, pyannote's); writes sessions.jsonl and sessions.txt (docs/SCORING.md)",
)
_COLLAR = typer.Option(
    None,
    help="tcpWER, tcORC-WER: seconds a word may move (5); DER/JER: md-eval's -c, each side (0)",
)
_SKIP_OVERLAP = typer.Option(
    False, "--skip-overlap/--score-overlap", help="DER/JER: leave reference overlap out"
)
_NORM = typer.Option(
    None, help="NLP reference: normalisation sidecar (file, or folder of ID.norm.json)"
)
_WER_TAGS = typer.Option(
    None, help="NLP reference: wer_tags sidecar (file, or folder of ID.wer_tag.json)"
)
_LENIENT = typer.Option(
    False,
    "--lenient",
    help="NLP inputs: warn, not fail, on sidecar IDs that name no token and times that are "
    "not numbers (Rev's Earnings-21 files have both)",
)
_KEYWORDS = typer.Option(None, help="a keyword list (one word or phrase a line): B-WER and U-WER")
_FORMATTING = typer.Option(
    False,
    "--formatting",
    help="also punctuation P/R/F1 per mark, capitalisation errors and the formatted WER (no "
    "normalisation), on the texts as written: summary.json's `formatting` (docs/SCORING.md)",
)

_UNICODE = typer.Option(
    None, "--unicode/--no-unicode", help="Unicode normalisation step (--unicode-form)"
)
_JOBS = typer.Option(
    None,
    "-j",
    "--jobs",
    help="processes cutting NLP recordings into chunks and reading new NSW strings (1: none; "
    "default 2 for many long recordings or strings, bound by the CPUs); the same results",
)


@app.command(cls=_LeanCommand)
def score(
    ref: Path = typer.Argument(..., help="reference transcripts (tsv, kaldi, trn, jsonl)"),
    hyp: Path = typer.Argument(..., help="hypothesis transcripts"),
    out: Path = typer.Option(Path("score_out"), "--out", "-o", help="output folder"),
    ref_format: str = _REF_FORMAT,
    hyp_format: str = _HYP_FORMAT,
    lang: str = _LANG,
    unit: str = _UNIT,
    align: str = _ALIGN,
    preset: str = _PRESET,
    score_opt: list[str] = typer.Option(
        None, "--score-opt", help="any scorer option KEY=VALUE (repeatable; wins over a flag)"
    ),
    case: bool = typer.Option(None, "--case/--no-case", help="CASE step"),
    punc: bool = typer.Option(None, "--punc/--no-punc", help="PUNC step"),
    itj: bool = typer.Option(None, "--itj/--no-itj", help="ITJ step"),
    ukus: bool = typer.Option(None, "--ukus/--no-ukus", help="UK-US step"),
    nsw: bool = typer.Option(None, "--nsw/--no-nsw", help="NSW step (nemo-text-processing)"),
    dae: bool = typer.Option(None, "--dae/--no-dae", help="DAE alternatives on the hypothesis"),
    compounds: bool = typer.Option(
        None,
        "--compounds/--no-compounds",
        help="COMPOUNDS: a word joined on one side matches its parts on the other (default: "
        "on where words are scored, except en and zh)",
    ),
    diacritics: str = typer.Option(
        "keep", help="keep, or strip optional diacritics (accents, harakat, niqqud) on both sides"
    ),
    nonspeech: bool = typer.Option(
        None, "--nonspeech/--no-nonspeech", help="NONSPEECH step: drop <beep>, [noise], ..."
    ),
    optional: bool = typer.Option(
        None,
        "--optional/--no-optional",
        help="sclite's (word): optionally deletable reference words",
    ),
    invisible: bool = typer.Option(
        None,
        "--invisible/--no-invisible",
        help="INVISIBLE step: drop terminal escapes, control and invisible format "
        "characters (zero-width space, bidi marks)",
    ),
    unicode: bool = _UNICODE,
    unicode_form: str = typer.Option(
        "NFC",
        help="NFC, or NFKC to fold compatibility forms (ligatures, full-width, superscripts) too",
    ),
    alternatives: str = typer.Option(None, help="alternatives file (default: curated list)"),
    nonspeech_markers: str = typer.Option(
        None, help="non-speech marker patterns file (default: curated list)"
    ),
    bootstrap: int = typer.Option(1000, help="bootstrap replicates for confidence intervals"),
    reports: str = typer.Option(
        "sys,table",
        "--reports",
        help="readable reports besides summary.json and utterances.jsonl: any of "
        "alignment,pra,sys,table, all, or none",
    ),
    against: Path = typer.Option(None, help="a second hypothesis file: paired bootstrap test"),
    alternations: bool = typer.Option(
        None,
        "--alternations/--no-alternations",
        help="sclite's reference alternations { a / b / @ } and null word @",
    ),
    fragments: bool = typer.Option(
        None,
        "--fragments/--no-fragments",
        help="sclite's -F: a fragment (th-, -ing) matches a word it begins or ends",
    ),
    ignore_id_case: bool = typer.Option(
        None,
        "--ignore-id-case/--no-ignore-id-case",
        help="pair IDs that differ only in case, as sclite does (default: on with --align "
        "sclite, else off)",
    ),
    metric: str = _METRIC,
    collar: float = _COLLAR,
    skip_overlap: bool = _SKIP_OVERLAP,
    norm: Path = _NORM,
    wer_tags: Path = _WER_TAGS,
    lenient: bool = _LENIENT,
    keywords: Path = _KEYWORDS,
    formatting: bool = _FORMATTING,
    jobs: int = _JOBS,
) -> None:
    """Score HYP against REF; write summary.json, utterances.jsonl and the reports to OUT."""
    given = dict(locals())  # the parameters, named as options (`score_flag_options`)
    with _collector_off():
        from asrbench.cli.options import score_flag_options

        options = score_flag_options(given, preset, score_opt)
        if metric is not None:  # session mode (issue 29)
            _utterances_only(against, formatting)
            _no_entity_options(norm, wer_tags, keywords)
            files, formats = (ref, hyp), (ref_format, hyp_format)
            _score_sessions(files, out, formats, lang, options, (metric, collar, skip_overlap))
        else:
            extra = EntityInputs(norm, wer_tags, lenient, keywords, formatting, jobs)
            _score(ref, hyp, out, (ref_format, hyp_format), lang, options, reports, against, extra)
        # (before the collector is back: its first pass would scan every object made since)
        _exit_now_if_process_entry()


@contextmanager
def _collector_off() -> Iterator[None]:
    """The cyclic garbage collector off, restored after (tests run in-process). Scoring only
    adds acyclic objects (texts, token lists, results), and so do the imports the options'
    check starts (the scorer's modules, numpy): the collector would rescan them many times
    over for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class EntityInputs:
    """The options of entity, number and keyword metrics (scoring.entities)."""

    norm: Path | None = None
    wer_tags: Path | None = None
    lenient: bool = False
    keywords: Path | None = None
    formatting: bool = False  # scoring.formatting beside the counts
    jobs: int | None = None  # processes cutting NLP recordings (None: by size)


def _no_entity_options(*given: Path | None) -> None:
    if any(x is not None for x in given):
        from asrbench.errors import InputError

        raise InputError(
            "--norm, --wer-tags and --keywords apply to word scoring, not --metric: "
            "leave them out or score without --metric"
        )


def _read_inputs(ref: Path, hyp: Path, formats: tuple[str, str], extra: EntityInputs):
    """(refs, hyps, NLP recordings or None, sidecar warnings, a reader of another hypothesis
    file): NLP inputs (a .nlp file or folder, or the nlp format) or any other transcripts."""
    from asrbench.errors import InputError
    from scoring.io import is_nlp, read_transcripts, timed_pair

    ref_nlp = formats[0] == "nlp" or (formats[0] == "auto" and is_nlp(ref))
    if not ref_nlp and (extra.norm is not None or extra.wer_tags is not None):
        raise InputError(
            f"--norm and --wer-tags are sidecars of an NLP reference; {ref} is not one "
            "(give a .nlp file or folder, or --ref-format nlp)"
        )
    recs = None
    warnings: list[str] = []
    if ref_nlp:
        from scoring.nlp import pieces_text
        from scoring.nlp_inputs import read_references

        recs, warnings = read_references(ref, extra.norm, extra.wer_tags, extra.lenient)
        refs = {k: pieces_text(r.pieces) for k, r in recs.items()}
    elif timed_pair(ref, hyp, *formats):  # STM + CTM: sclite's segments
        from scoring.sclite_timed import read_stm_ctm

        refs, hyps = read_stm_ctm(ref, hyp)
        return refs, hyps, None, [], lambda p: read_stm_ctm(ref, p)[1]
    else:
        refs = read_transcripts(ref, formats[0])

    def read_hyp(path: Path, punctuation: bool = True) -> dict[str, str]:
        if formats[1] == "nlp" or (formats[1] == "auto" and is_nlp(path)):
            from scoring.nlp_inputs import read_hypotheses

            lenient = warnings if extra.lenient else None
            return read_hypotheses(path, list(refs), lenient, punctuation)
        return read_transcripts(path, formats[1])

    return refs, read_hyp(hyp) if refs else {}, recs, warnings, read_hyp


def _sha256(path: Path) -> str:
    """A file's SHA-256; a folder of NLP files: that of its files' paths and digests."""
    from asrbench.identity import bytes_sha256, canonical, file_sha256, tree_files, tree_paths

    if path.is_dir():
        return bytes_sha256(canonical(tree_files(path, tree_paths(path, hidden=False))))
    return file_sha256(path)


def _sources(ref: Path, hyp: Path, extra: EntityInputs) -> dict:
    """summary.json's `sources`: the files scored, sidecars and keyword list when given."""
    files = {"ref": ref, "hyp": hyp, "norm": extra.norm, "wer_tags": extra.wer_tags}
    files["keywords"] = extra.keywords
    return {k: {"path": str(p), "sha256": _sha256(p)} for k, p in files.items() if p is not None}


def _data_digest(sources: dict) -> str:
    """The reference's digest, or with sidecars or keywords (what a result also rests on)
    that of all of them: a plain reference keeps its result key."""
    from asrbench.identity import bytes_sha256, canonical

    extra = {k: v["sha256"] for k, v in sources.items() if k not in ("ref", "hyp")}
    if not extra:
        return sources["ref"]["sha256"]
    return bytes_sha256(canonical({"ref": sources["ref"]["sha256"], **extra}))


def _entities(scorer, utts, recs, warnings: list[str], keywords: Path | None) -> dict | None:
    """summary.json's `entities` block (asrbench.entity_scoring, as a benchmark cell's)."""
    from asrbench.entity_scoring import entities_block, tagged

    tags = tagged(scorer, utts, recs) if recs is not None else None
    return entities_block(scorer, utts, tags, warnings, keywords)


def _utterances_only(against: Path | None, formatting: bool) -> None:
    """Refuse the options of utterance scoring in session mode (--metric)."""
    from asrbench.errors import InputError

    if against is not None:
        raise InputError(
            "--against (the paired test over utterances) does not apply with --metric: "
            "score each system in session mode and compare the summaries"
        )
    if formatting:
        raise InputError(
            "--formatting scores utterance transcripts: leave out --metric (session mode)"
        )


def _check_run(scorer: Any, refs: dict, hyps: dict, extra: EntityInputs) -> None:
    """The case warning, and `--jobs` checked before any work starts."""
    from asrbench.errors import InputError

    note = scorer.case_warning(refs, hyps)
    if note is not None:
        print(f"warning: {note}", file=sys.stderr)
    if extra.jobs is not None and extra.jobs < 1:
        raise InputError(f"--jobs {extra.jobs}: give 1 (no pool) or more processes")


def _score(
    ref: Path,
    hyp: Path,
    out: Path,
    formats: tuple[str, str],
    lang: str,
    options: dict,
    reports: str,
    against: Path | None,
    extra: EntityInputs,
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from asrbench.entity_scoring import formatting_block, nlp_utterances
    from asrbench.errors import InputError
    from asrbench.results.reports import (
        parse_reports,
        utterance_lines,
        write_reports,
        write_utterances,
    )
    from asrbench.results.summary import Selection, new_summary, write_summary
    from asrbench.scorers import get_scorer, scorer_identity
    from scoring.report import table_text
    from scoring.scorer import ScoreResult

    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file; give a folder (it is created if missing)")
    if against is not None and options.get("bootstrap") == 0:
        raise InputError(
            "--against is a paired bootstrap test: give --bootstrap 1 or more (default 1000), not 0"
        )
    which = parse_reports(reports)
    scorer = get_scorer(lang, options)
    refs, hyps, recs, warnings, read_hyp = _read_inputs(ref, hyp, formats, extra)
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    if not refs:
        # Nothing to score: a table of zeros would read as a perfect system.
        raise InputError(
            f"{ref}: the reference holds no utterance (empty or blank file); "
            "give the reference transcripts, one line per utterance"
        )
    _check_run(scorer, refs, hyps, extra)
    scored = hyps
    if recs is not None:
        refs, recs, scored = _as_scored(scorer, recs, hyps, lambda: read_hyp(hyp, False))
    utts = nlp_utterances(scorer, refs, scored, recs, extra.jobs)
    # The corpus metrics' bootstrap is mostly numpy drawing with the GIL released: it runs in
    # a thread while this one writes utterances.jsonl (the same numbers, less time waited).
    # A short switch interval hands the GIL back to it soon after each numpy call (with the
    # default 5 ms, its short Python steps between them wait behind this thread's loop).
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    try:
        with ThreadPoolExecutor(1) as pool:
            metrics = pool.submit(scorer.summarize, utts)
            write_utterances(out / "utterances.jsonl", utterance_lines(utts, refs, hyps))
            sid = scorer_identity(scorer, options)
            sources = _sources(ref, hyp, extra)
            result = ScoreResult(utts, metrics.result(), scorer.config_dict())
    finally:
        sys.setswitchinterval(interval)
    summary = new_summary(
        "score",
        result.metrics,
        Selection.of(list(refs), len(refs)),
        sid.to_dict(),
        hyps=sources["hyp"]["sha256"],
        data=_data_digest(sources),
        sources=sources,
        reports=write_reports(out, result, which),
        entities=_entities(scorer, utts, recs, warnings, extra.keywords),
        formatting=formatting_block(refs, hyps, lang, options) if extra.formatting else None,
    )
    write_summary(out / "summary.json", summary)
    sys.stdout.write(table_text(result.metrics))
    if summary.entities is not None:
        from scoring.entities import entities_table

        sys.stdout.write(entities_table(summary.entities))
    if summary.formatting is not None:
        from scoring.formatting import formatting_text

        sys.stdout.write(formatting_text(summary.formatting))
    if against is not None:
        _paired_test(out, scorer, refs, result, read_hyp(against))


def _as_scored(scorer, recs: dict, hyps: dict, unpunctuated: Callable[[], dict]) -> tuple:
    """(refs, recordings, hypotheses) of NLP inputs as the scorer compares them: with PUNC
    off the hypotheses' punctuation columns stay out of their tokens, as fstalign leaves
    them (read again: `hyps` keeps them for the formatting metrics and the reports)."""
    from asrbench.entity_scoring import scored_recordings

    scored = hyps if scorer.config.punc else unpunctuated()
    recs, refs = scored_recordings(scorer, recs, scored)
    return refs, recs, scored


def _paired_test(out: Path, scorer, refs: dict, result, second: dict) -> None:
    """--against: the paired bootstrap test of the two hypotheses, into paired_test.json."""
    from asrbench.fsio import atomic_write_json
    from scoring.stats import paired_bootstrap

    other = scorer.score(refs, second)
    test = paired_bootstrap(
        [u.errors for u in result.utterances],
        [u.errors for u in other.utterances],
        [u.n_ref for u in result.utterances],
        reps=scorer.config.bootstrap,
        seed=scorer.config.seed,
    )
    atomic_write_json(out / "paired_test.json", test)
    print(
        f"paired bootstrap: delta TER {100 * test['delta_ter']:+.2f} points, "
        f"p = {test['p_value']:.4f}"
    )


def _score_sessions(
    files: tuple[Path, Path],
    out: Path,
    formats: tuple[str, str],
    lang: str,
    options: dict,
    session: tuple[str, float | None, bool],
) -> None:
    """Session mode: score timed files per session (scoring.meeting, or scoring.diarization
    for DER/JER); summary.json (its metrics pooled over sessions, `session` naming the metric
    and collar), sessions.jsonl (one line a session) and sessions.txt."""
    from asrbench.errors import InputError
    from asrbench.fsio import atomic_write_text
    from asrbench.scorers import get_scorer, scorer_identity
    from scoring.diarization import DIARIZATION_METRICS
    from scoring.meeting import (
        DEFAULT_COLLAR,
        MAX_COLLAR,
        SESSION_METRICS,
        read_segments,
        score_sessions,
        sessions_table,
        speaker_rates,
    )
    from scoring.report import table_text

    (ref, hyp), (metric, collar, skip_overlap) = files, session
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file; give a folder (it is created if missing)")
    if metric not in SESSION_METRICS and metric not in DIARIZATION_METRICS:
        names = ", ".join([*SESSION_METRICS, *DIARIZATION_METRICS])
        raise InputError(f"--metric must be one of {names}, not {metric!r}")
    if skip_overlap and metric not in DIARIZATION_METRICS:
        raise InputError(f"--skip-overlap applies to --metric der or jer, not {metric}")
    for path in files:
        if not path.is_file():
            raise InputError(f"{path}: no such file; give the timed reference and hypothesis")
    fmt = [None if f == "auto" else f for f in formats]
    scorer = get_scorer(lang, options)
    refs, hyps = read_segments(ref, fmt[0]), read_segments(hyp, fmt[1])
    if metric in DIARIZATION_METRICS:
        _score_diarization(files, out, (refs, hyps), scorer, options, session)
        return
    collar = DEFAULT_COLLAR if collar is None else collar
    if not 0 <= collar <= MAX_COLLAR:  # (nan and inf are refused as the option is parsed)
        raise InputError(f"--collar {collar:g}: give seconds from 0 to {MAX_COLLAR:g} (a day)")
    result = score_sessions(scorer, refs, hyps, metric, collar=collar, sources=(ref, hyp))
    sid = scorer_identity(scorer, options).to_dict()
    sid["session"] = {"metric": metric, "collar": result.collar}  # part of the result's identity
    described = result.describe()
    if SESSION_METRICS[metric].speakers:  # cpWER, tcpWER: the pairs give each speaker's WER
        described["per_speaker"] = speaker_rates(result.sessions, scorer.config)
    _write_sessions(files, out, sid, result.sessions, result.metrics, described)
    atomic_write_text(out / "sessions.txt", sessions_table(result))
    sys.stdout.write(sessions_table(result) + "\n" + table_text(result.metrics))


def _write_sessions(files, out: Path, sid: dict, sessions, metrics, described: dict) -> None:
    """sessions.jsonl and summary.json of session mode (`metrics` None for diarization: its
    rates are seconds, not word counts, and live in `session`)."""
    import json

    from asrbench.fsio import atomic_write_text
    from asrbench.identity import file_sha256
    from asrbench.results.summary import Selection, new_summary, write_summary

    ref, hyp = files
    sources = {
        "ref": {"path": str(ref), "sha256": file_sha256(ref)},
        "hyp": {"path": str(hyp), "sha256": file_sha256(hyp)},
    }
    names = [s.session_id for s in sessions]
    out.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(s.to_dict(), sort_keys=True) + "\n" for s in sessions)
    atomic_write_text(out / "sessions.jsonl", lines)
    summary = new_summary(
        "score",
        metrics,
        Selection.of(names, len(names)),
        sid,
        hyps=sources["hyp"]["sha256"],
        data=sources["ref"]["sha256"],
        sources=sources,
        reports=["sessions.jsonl", "sessions.txt"],
        session=described,
    )
    write_summary(out / "summary.json", summary)


def _score_diarization(files, out: Path, segments, scorer, options: dict, session) -> None:
    """DER and JER (scoring.diarization): the same files as the word metrics write, the rates
    in summary.json's `session` (docs/RESULTS.md)."""
    from asrbench.errors import InputError
    from asrbench.fsio import atomic_write_text
    from asrbench.scorers import scorer_identity
    from scoring.diarization import DEFAULT_COLLAR, MAX_COLLAR, score_diarization, sessions_table

    metric, collar, skip_overlap = session
    collar = DEFAULT_COLLAR if collar is None else collar
    if not 0 <= collar <= MAX_COLLAR:
        raise InputError(
            f"--collar {collar:g}: give seconds from 0 to {MAX_COLLAR:g} on each side of a "
            "reference boundary (md-eval's -c; 0.25 for NIST RT)"
        )
    cfg = scorer.config
    result = score_diarization(
        *segments,
        collar=collar,
        skip_overlap=skip_overlap,
        sources=files,
        bootstrap=(cfg.bootstrap, cfg.confidence, cfg.seed),
    )
    sid = scorer_identity(scorer, options).to_dict()
    sid["session"] = {"metric": metric, "collar": collar, "skip_overlap": skip_overlap}
    _write_sessions(files, out, sid, result.sessions, None, result.describe(metric))
    atomic_write_text(out / "sessions.txt", sessions_table(result))
    sys.stdout.write(sessions_table(result))
