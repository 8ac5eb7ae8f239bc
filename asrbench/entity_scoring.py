"""Entity, number and formatting metrics of a scored set: one home for what `ops/score` reports
with NLP references (or a keyword list, or `--formatting`) and what `ops/benchmark` stores for
a cell of a dataset that declares NLP references (dataset.yaml `nlp:`), so both write the same
summary.json keys (`entities`, `formatting`) by the same code (`scoring.entities`,
`scoring.formatting`; docs/SCORING.md).

Besides the pooled figures, a benchmark cell stores its misrecognised entity instances, worst
first (`worst_entities`): which entity of which recording, its class, the reference words (of
the reading the hypothesis matched) against the hypothesis words aligned to them, its errors,
and the entity's time in the recording where the NLP tokens are timed, for the report's list
with audio players.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

WORST_MAX = 100  # misrecognised entity instances kept per cell, worst first


def nlp_utterances(
    scorer: Any, refs: dict, hyps: dict, recs: Mapping[str, Any] | None, jobs: int | None = None
) -> list:
    """The scorer's results; an NLP recording too long for one alternation table is scored
    in chunks and joined back (scoring.nlp_chunks). The recordings are cut in `jobs`
    processes (None: decided by size, `pool_size`); the same chunks in the same order. NSW
    reads a batch's new strings in as many (`Nsw._prefetch`)."""
    if scorer.nsw is not None:
        scorer.nsw.jobs = jobs
    if recs is None:
        return scorer.utterances(refs, hyps)
    if scorer.nsw is not None:
        # the entity mapping's pieces (`tagged`): read ahead, beside the alignment, on a cold
        # corpus (`Nsw._prefetch`)
        scorer.nsw.later = scorer.nsw_inputs(first_readings(r.pieces for r in recs.values()))
    from scoring.nlp_chunks import merge

    chunk_refs: dict[str, str] = {}
    chunk_hyps = {k: v for k, v in hyps.items() if k not in recs}  # unknown IDs: the error
    tasks = [(ident, rec.pieces, hyps.get(ident)) for ident, rec in recs.items()]
    for r, h in _chunked(tasks, jobs):
        chunk_refs.update(r)
        chunk_hyps.update(h)
    return merge(scorer.utterances(chunk_refs, chunk_hyps))


POOL_MIN_PIECES = 20_000  # reference pieces (~words) below which a pool costs more than it saves
_TASKS: list = []  # the recordings a forked worker cuts (inherited, not pickled)


def pool_size(jobs: int | None, tasks: Sequence[tuple[str, Sequence[Any], str | None]]) -> int:
    """Worker processes for cutting recordings: `jobs` when given (1: none), else 2 (bound
    by the CPUs) for at least two recordings of `POOL_MIN_PIECES` pieces in all."""
    if jobs is not None:
        return max(1, min(jobs, len(tasks)))
    if len(tasks) < 2 or sum(len(t[1]) for t in tasks) < POOL_MIN_PIECES:
        return 1
    return max(1, min(2, os.cpu_count() or 1)) if may_fork() else 1


def may_fork() -> bool:
    """Whether this process may start workers: not a daemonic worker of a pool itself
    (`ops/benchmark`'s, which multiprocessing forbids to have children)."""
    import multiprocessing

    return not multiprocessing.current_process().daemon


def _cut(k: int) -> tuple[dict[str, str], dict[str, str]]:
    from scoring.nlp_chunks import chunk_texts

    return chunk_texts(*_TASKS[k])


def _chunked(tasks: list, jobs: int | None) -> list[tuple[dict[str, str], dict[str, str]]]:
    """`chunk_texts` of each recording in input order, in a pool of forked processes where
    `pool_size` says (each cut is a pure function of its recording: the same chunks)."""
    workers = pool_size(jobs, tasks)
    if workers < 2:
        from scoring.nlp_chunks import chunk_texts

        return [chunk_texts(*t) for t in tasks]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _TASKS
    _TASKS = tasks  # forked workers read it from their copy of this module: no pickling
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            return list(pool.map(_cut, range(len(tasks))))
    finally:
        _TASKS = []


def scored_recordings(scorer: Any, recs: dict, hyps: Mapping[str, str]) -> tuple[dict, dict]:
    """(recordings, reference texts) as the scorer compares them: with `hyphen=synonym` (the
    fstalign preset) each recording's pieces take fstalign's hyphen synonyms against its
    hypothesis, so that the words scored and the entities tagged come from the same pieces."""
    from scoring.nlp import pieces_text

    if scorer.config.hyphen == "synonym":
        from scoring.nlp_inputs import with_synonyms

        recs = with_synonyms(recs, dict(hyps))
    return recs, {k: pieces_text(r.pieces) for k, r in recs.items()}


def tagged(scorer: Any, utts: Sequence[Any], recs: Mapping[str, Any]) -> list:
    """Each scored recording's reference words with their entity IDs (scoring.entities)."""
    from scoring.entities import tag_words
    from scoring.nlp import map_pieces

    normalize = _batched(scorer, [recs[u.id].pieces for u in utts])
    # fstalign's conventions (its preset, marked by its hyphen synonyms as above): an
    # insertion is an entity's error only inside a normalised span
    fst = scorer.config.hyphen == "synonym"
    out = []
    for u in utts:
        rec = recs[u.id]
        owner = map_pieces(rec.pieces, u.ref, normalize)
        out.append(tag_words(u, rec.tokens, rec.pieces, owner, rec.classes, fst))
    if scorer.nsw is not None:
        # the pieces read on their own above: stored, so the next run finds them (the
        # scorer flushes only what it read itself)
        scorer.nsw.flush()
    return out


def first_readings(pieces: Iterable[Sequence[Any]]) -> list[str]:
    """The distinct first readings of recordings' pieces, in order: what the entity mapping
    normalises up front (`_batched`)."""
    return list(dict.fromkeys(p.branches[0] for ps in pieces for p in ps))


def _batched(scorer: Any, pieces: Iterable[Sequence[Any]]) -> Callable[[str], list[str]]:
    """`scorer.normalize` with every piece's first reading normalised up front in one batch
    (`Pipeline.batch`: the same tokens, and a cold cache's new NSW strings read in two
    processes, `Nsw._prefetch`, instead of one at a time in this one). `map_pieces` reads
    every first reading; its other readings, read only where the exact path reaches them,
    are normalised when asked for."""
    texts = first_readings(pieces)
    if scorer.nsw is not None:
        scorer.nsw.join()  # the strings read ahead (`nlp_utterances`), whatever reads next
    known = dict(zip(texts, scorer.normalize_batch(texts), strict=True))

    def normalize(text: str) -> list[str]:
        got = known.get(text)
        return got if got is not None else scorer.normalize(text)

    return normalize


def entities_block(
    scorer: Any,
    utts: Sequence[Any],
    tags: Sequence[Any] | None,
    warnings: Sequence[str],
    keywords: Path | None,
) -> dict | None:
    """summary.json's `entities`: numbers and entity classes for NLP references (`tags` from
    `tagged`), B-WER/U-WER with a keyword list; None for other inputs without one."""
    if tags is None and keywords is None:
        return None
    # after the early return: plain transcripts without keywords never load scoring.entities
    from scoring.entities import describe, read_keywords

    cfg = scorer.config
    boot = (cfg.bootstrap, cfg.confidence, cfg.seed)
    phrases = read_keywords(keywords, scorer.normalize) if keywords is not None else None
    return describe(utts, boot, tags, phrases, list(warnings))


def formatting_block(refs: dict, hyps: dict, lang: str, options: Mapping[str, Any]) -> dict:
    """summary.json's `formatting` (scoring.formatting): the formatted WER is the `raw`
    preset's, in the same unit as the main scorer."""
    from asrbench.scorers import get_scorer
    from scoring.formatting import formatting_summary

    raw: dict[str, Any] = {"preset": "raw", "bootstrap": 0}
    if options.get("unit") is not None:
        raw["unit"] = options["unit"]
    return formatting_summary(refs, hyps, get_scorer(lang, raw))


def _times(tokens: Sequence[Any]) -> dict[str, tuple[float | None, float | None]]:
    """Entity ID -> (first start, last end) of its timed NLP tokens."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for t in tokens:
        for e in {*t.tags, *t.wer_tags}:
            a, b = out.get(e, (None, None))
            if t.ts is not None:
                a = t.ts if a is None else min(a, t.ts)
            if t.end_ts is not None:
                b = t.end_ts if b is None else max(b, t.end_ts)
            out[e] = (a, b)
    return out


def _instances(tag: Any, tokens: Sequence[Any]) -> list[dict[str, Any]]:
    """Every entity of one recording with its words on both sides and its errors (scoring.
    entities' rules: S and D of its words, and an insertion between two of its words)."""
    from scoring.entities import _columns, inserted_into  # the one walk, the one rule

    u, ents = tag.utt, tag.entities
    found: dict[str, dict[str, Any]] = {}

    def at(e: str) -> dict[str, Any]:
        return found.setdefault(e, {"ref": [], "hyp": [], "errors": 0})

    for code, r, h in _columns(u.codes):
        if code == "o":
            continue
        if code == "I":
            for e in sorted(inserted_into(tag, r)):
                at(e)["hyp"].append(u.hyp[h])
                at(e)["errors"] += 1
            continue
        for e in ents[r]:
            x = at(e)
            x["ref"].append(u.ref[r])
            if code in "CS":
                x["hyp"].append(u.hyp[h])
            x["errors"] += code in "SD"
    times = _times(tokens)
    return [
        {
            "id": u.id,
            "entity": e,
            "class": tag.classes[e],
            "ref": " ".join(x["ref"]),
            "hyp": " ".join(x["hyp"]),
            "errors": x["errors"],
            "n_ref": len(x["ref"]),
            "start": times.get(e, (None, None))[0],
            "end": times.get(e, (None, None))[1],
        }
        for e, x in found.items()
    ]


def worst_entities(
    tags: Sequence[Any], recs: Mapping[str, Any], top: int = WORST_MAX
) -> dict[str, Any]:
    """summary.json's `worst_entities` of a benchmark cell: the misrecognised entity instances
    (`n_misrecognised` of `n_entities`), worst first (most errors, then the larger share of
    its words wrong, then recording and time), the first `top` of them in `instances`."""
    every = [x for t in tags for x in _instances(t, recs[t.utt.id].tokens)]
    bad = [x for x in every if x["errors"]]
    bad.sort(
        key=lambda x: (
            -x["errors"],
            -x["errors"] / max(1, x["n_ref"]),
            x["id"],
            x["start"] if x["start"] is not None else 0.0,
            x["entity"],
        )
    )
    return {"n_entities": len(every), "n_misrecognised": len(bad), "instances": bad[:top]}
