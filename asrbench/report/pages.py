"""Each page's content: computed from the results here, rendered by the page's template."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from asrbench.report import charts, entities, longform, streaming
from asrbench.report.ablation import stages, stored_dataset
from asrbench.report.audio import DatasetAudio, data_uri, dataset_audio
from asrbench.report.cellview import breakdown, error_tables, utterance_rows
from asrbench.report.collect import Cell
from asrbench.report.robustness import match_cells
from asrbench.report.robustness import view as robustness_view
from asrbench.report.site import Site, _cell_numbers, _provenance, safe_name
from asrbench.report.speakers import speaker_timelines
from asrbench.results import audit
from asrbench.results.leaderboard import (
    DEFAULT_CHUNK_MS,
    LATENCY_RULE,
    hallucination,
    is_longform,
    segmentation,
)
from asrbench.results.ranking import Ranking, mean_ranks, rank_dataset
from asrbench.results.records import RecordError
from asrbench.results.summary import read_summary, stored_session_parts


def build_all(site: Site) -> None:
    """Compute and render every page of the site."""
    r = site.r
    by_ds: dict[str, list[Cell]] = defaultdict(list)
    for (_, d), c in sorted(r.cells.items()):
        by_ds[d].append(c)
    derived = {d for d, cs in by_ds.items() if any(c.derived_from for c in cs)}
    base = [d for d in r.datasets if d not in derived]
    rest = [d for d in r.datasets if d in derived]
    chosen = set(r.datasets if site.o.datasets else base) if site.o.ablation else set()
    _keep_analyses(site, _analyse(site, by_ds, chosen))
    site.mean = mean_ranks(site.rankings)
    for c in r.cells.values():
        if c.utts_problem and c.utts_problem not in r.problems:
            r.problems.append(c.utts_problem)
    audio = _audio(site, r.cells.values())
    _index(site, base, rest, by_ds)
    for d in r.datasets:
        if by_ds[d]:
            _dataset(site, d, by_ds[d], site.rankings[d])
    for m in r.models:
        _model(site, m)
    for c in r.cells.values():
        _cell(site, c, audio.get(_audio_key(c), DatasetAudio(note="no audio")))
    if site.ablations:
        _ablation(
            site, [d for d in r.datasets if any((c.model, d) in site.ablations for c in by_ds[d])]
        )
    _analyses(site, audio)
    if site.audio_mode == "embed":
        folder = site.stage / "audio"
        if folder.is_dir():
            for p in sorted(folder.rglob("*")):
                if p.is_file():
                    site.audio_store[p.relative_to(site.stage).as_posix()] = data_uri(p)
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def _keep_analyses(site: Site, analysed: list[tuple]) -> None:
    """Each dataset's ranking and stored ablations (and why some are not shown) on the site."""
    for d, (ranking, (ablations, why)) in zip(site.r.datasets, analysed, strict=True):
        site.rankings[d] = ranking
        for m, a in ablations.items():
            site.ablations[(m, d)] = a
        for m, note in why.items():
            site.ablation_notes[(m, d)] = note


def _analyses(site: Site, audio: dict[tuple[str, str], DatasetAudio]) -> None:
    """The pages of the stored analyses: robustness grids, fairness, streaming cells."""
    if site.r.robustness:
        _robustness(site, audio)
    if site.r.fairness:
        _fairness(site)
    if site.r.streaming:
        _streaming(site)


_WORK: tuple[Any, ...] = ()  # what forked workers read (set just before the pool starts)


def _analyse_one(d: str) -> tuple[Ranking, tuple[dict[str, Any], dict[str, str]]]:
    site, by_ds, chosen = _WORK
    ranking = rank_dataset(by_ds[d], site.o.level, site.o.reps)
    return ranking, stored_dataset(by_ds[d]) if d in chosen else ({}, {})


def _analyse(site: Site, by_ds: dict[str, list[Cell]], chosen: set[str]) -> list[tuple]:
    """Ranking and ablation of every dataset, in dataset order; datasets are independent, so
    with `jobs` > 1 they run in forked worker processes (results merged in the same order:
    the output does not depend on the number of workers)."""
    global _WORK
    datasets = site.r.datasets
    for cs in by_ds.values():
        for c in cs:
            c.utterances()  # read once here; forked workers share the pages
    _WORK = (site, by_ds, chosen)
    try:
        jobs = min(site.o.jobs, len(datasets))
        if jobs <= 1:
            return [_analyse_one(d) for d in datasets]
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            return list(pool.map(_analyse_one, datasets))
    finally:
        _WORK = ()


def _audio_key(c: Cell) -> tuple[str, str]:
    folder = (c.run.dataset_folder if c.run else None) or ""
    return (str(folder), str(c.summary.dataset_hash))


def _audio(site: Site, cells: Any) -> dict[tuple[str, str], DatasetAudio]:
    ids: dict[tuple[str, str], set[str]] = defaultdict(set)
    for c in cells:
        for u in c.utterances() or []:
            ids[_audio_key(c)].add(u["id"])
    out = {}
    mode = "copy" if site.audio_mode == "embed" else site.audio_mode
    for key in sorted(ids):
        folder, ds_hash = key
        dest = site.final_dir if mode == "link" else site.stage
        out[key] = dataset_audio(
            folder or None,
            None if ds_hash == "None" else ds_hash,
            sorted(ids[key]),
            dest,
            mode,
            site.o.audio_max_bytes,
        )
        if out[key].note and mode != "none":
            site.notes.append(f"audio of {folder or '(unknown folder)'}: {out[key].note}")
    return out


def _entry(
    site: Site, here: str, c: Cell | None, reason: str | None, ranking: Ranking | None
) -> dict[str, Any]:
    """One matrix cell of the leaderboard."""
    if c is None:
        return {"status": "missing", "reason": reason or "not run"}
    n = _cell_numbers(c)
    e = {
        **n,
        "href": site.url(here, site.cell_page(c.model, c.dataset)),
        "group": None,
        "rank": None,
    }
    if n["reference_free"]:
        e["status"] = "noref"
    else:
        e["status"] = "sample" if c.kind == "sample" else "ok"
        if ranking and c.model in ranking.rank:
            e["group"] = ranking.group.get(c.model)
            e["rank"] = ranking.rank[c.model]
        elif ranking and c.model in ranking.not_ranked:
            e["unranked"] = ranking.not_ranked[c.model]
    return e


def _matrix(site: Site, here: str, datasets: list[str], keep_empty: bool = True) -> dict[str, Any]:
    r = site.r
    rows = []
    for m in r.models:
        entries = {
            d: _entry(site, here, r.cell(m, d), r.missing.get((m, d)), site.rankings.get(d))
            for d in datasets
        }
        if not datasets or (
            not keep_empty and all(e["status"] == "missing" for e in entries.values())
        ):
            continue
        rows.append(
            {
                "model": m,
                "href": site.url(here, site.model_page(m)),
                "type": _model_type(site, m),
                "entries": entries,
                "mean_rank": site.mean.value.get(m),
            }
        )
    rows.sort(key=lambda x: (x["mean_rank"] is None, x["mean_rank"] or 0, x["model"]))
    return {
        "datasets": datasets,
        "rows": rows,
        "mean_rank_datasets": site.mean.datasets,
        "dataset_hrefs": {d: site.url(here, site.dataset_page(d)) for d in datasets},
    }


def _model_type(site: Site, model: str) -> str:
    for (m, _), c in sorted(site.r.cells.items()):
        if m == model and c.card.get("type"):
            return str(c.card["type"])
    return ""


def _ranked_rows(
    site: Site, here: str, cells: list[Cell], ranking: Ranking
) -> list[dict[str, Any]]:
    order = {m: i for i, m in enumerate(ranking.order)}
    rows = []
    for c in sorted(cells, key=lambda c: (order.get(c.model, 10**6), c.model)):
        rows.append(
            {
                **_cell_numbers(c),
                "model": c.model,
                "href": site.url(here, site.cell_page(c.model, c.dataset)),
                "model_href": site.url(here, site.model_page(c.model)),
                "group": ranking.group.get(c.model),
                "rank": ranking.rank.get(c.model),
                "unranked": ranking.not_ranked.get(c.model),
            }
        )
    return rows


def _index(site: Site, base: list[str], rest: list[str], by_ds: dict[str, list[Cell]]) -> None:
    here = "index.html"
    r = site.r
    values = {
        (c.model, c.dataset): (c.summary.metrics.ter, charts.ci_pair(c.summary.metrics.ter_ci))
        for c in r.cells.values()
        if c.summary.metrics and c.kind == "reported"
    }
    shown = [d for d in base if any(c.summary.metrics for c in by_ds[d])]
    fig = charts.ter_by_dataset(
        [m for m in r.models if any((m, d) in values for d in shown)], shown, values
    )
    details = {d: _ranked_rows(site, here, by_ds[d], site.rankings[d]) for d in base if by_ds[d]}
    data = {"charts": {"ter-by-dataset": fig} if shown else {}}
    site.render(
        here,
        "index.html.j2",
        "Leaderboard",
        data,
        main=_matrix(site, here, base),
        derived=_matrix(site, here, rest, keep_empty=False),
        details=details,
        rankings=site.rankings,
        problems=r.problems,
        notes=site.notes,
        n_cells=len(r.cells),
        results_root=str(r.root),
        cells=sorted(r.cells.values(), key=lambda c: c.key),
        level=site.o.level,
        reps=site.o.reps,
        hallucination=_hallucination_rows(site, here),
        latency=_latency(site, here, base),
        entity_boards={d: b for d in base if (b := entities.board(by_ds[d]))},
    )


def _latency(site: Site, here: str, datasets: list[str]) -> dict[str, Any]:
    """The leaderboard's latency columns: per dataset of the main matrix with a streaming cell
    of a model shown, that cell's latencies (`leaderboard.latency`, ops/leaderboard's rule)."""
    lat = site.r.latency
    shown = [d for d in datasets if any(d in lat.get(m, {}) for m in site.r.models)]
    return {
        "datasets": shown,
        "cells": {m: lat.get(m, {}) for m in site.r.models},
        "rule": LATENCY_RULE,
        "default_chunk_ms": DEFAULT_CHUNK_MS,
        "href": site.url(here, "streaming.html") if site.r.streaming else None,
    }


def _hallucination_rows(site: Site, here: str) -> list[dict[str, Any]]:
    """The non-speech figures of every cell that has them, with the model's session TERs."""
    figs = hallucination(site.r.cells.values())
    rows = []
    for m, by_ds in sorted(figs.items()):
        sessions = [
            (c.dataset, c.summary.metrics.ter)
            for c in sorted(site.r.cells.values(), key=lambda c: c.dataset)
            if c.model == m and c.summary.metrics and is_longform(c)
        ]
        for d, f in sorted(by_ds.items()):
            rows.append(
                {
                    **f,
                    "model": m,
                    "dataset": d,
                    "href": site.url(here, site.cell_page(m, d)),
                    "sessions": sessions,
                }
            )
    return rows


def _dataset(site: Site, d: str, cells: list[Cell], ranking: Ranking) -> None:
    here = site.dataset_page(d)
    rows = _ranked_rows(site, here, cells, ranking)
    ranked = [x for x in rows if x["group"] is not None]
    fig = charts.ranked(
        [x["model"] for x in ranked],
        [x["ter"] for x in ranked],
        [charts.ci_pair(x["ter_ci"]) for x in ranked],
        ranked[0]["name"] if ranked else "TER",
    )
    first = cells[0]
    info = {
        "hash": first.summary.dataset_hash,
        "folder": first.run.dataset_folder if first.run else None,
        "meta": {
            k: v for k, v in sorted(first.dataset_meta.items()) if not isinstance(v, dict | list)
        },
        "derived_from": {
            k: v for k, v in (first.derived_from or {}).items() if not isinstance(v, dict | list)
        },
        "hashes": sorted({c.summary.dataset_hash or "-" for c in cells}),
    }
    audit_view = _audit_view(site, d, cells)
    site.render(
        here,
        "dataset.html.j2",
        f"{d}: ranking",
        {"charts": {"ranked": fig} if ranked else {}},
        dataset=d,
        rows=rows,
        ranking=ranking,
        info=info,
        cells=sorted(cells, key=lambda c: c.model),
        audit=audit_view,
    )


def _audit_view(site: Site, d: str, cells: list[Cell]) -> dict[str, Any] | None:
    """The dataset's reference audit as ops/audit stored it (`audit/<dataset>/audit.json`): the
    suspects with their evidence, each model's TER without them (its summary.json block), and
    whether it was run over these cells."""
    try:
        record = audit.read_audit(site.r.root, d)
    except RecordError:
        return None  # the leaderboard names the unreadable file
    if record is None:
        return None
    shown = {c.model: c for c in cells}
    return {
        "suspects": record.suspects,
        "voters": [v["name"] for v in record.voters],
        "thresholds": record.thresholds,
        "left_out": record.left_out,
        "current": audit.is_current(record, shown),
        "without": {
            m: (c.summary.audit or {}).get("without_suspects") or {}
            for m, c in sorted(shown.items())
        },
    }


def _model(site: Site, m: str) -> None:
    here = site.model_page(m)
    cells = sorted((c for c in site.r.cells.values() if c.model == m), key=lambda c: c.dataset)
    rows = [
        {
            **_cell_numbers(c),
            "dataset": c.dataset,
            "href": site.url(here, site.cell_page(m, c.dataset)),
            "dataset_href": site.url(here, site.dataset_page(c.dataset)),
            "group": site.rankings[c.dataset].group.get(m) if c.dataset in site.rankings else None,
            "derived": bool(c.derived_from),
        }
        for c in cells
    ]
    missing = sorted((d, why) for (mm, d), why in site.r.missing.items() if mm == m)
    card = next((c.card for c in cells if c.card), {})
    run = next((c.run for c in cells if c.run), None)
    site.render(
        here,
        "model.html.j2",
        f"{m}",
        {},
        model=m,
        rows=rows,
        missing=missing,
        card={
            k: v
            for k, v in sorted(card.items())
            if not isinstance(v, dict | list) and v not in (None, "")
        },
        card_nested={k: v for k, v in sorted(card.items()) if isinstance(v, dict | list) and v},
        image=run.model.image if run else None,
        identities=sorted({c.summary.model_identity or "-" for c in cells}),
    )


def _cell(site: Site, c: Cell, audio: DatasetAudio) -> None:
    here = site.cell_page(c.model, c.dataset)
    utts = c.utterances()
    abl = site.ablations.get(c.key)
    bd = breakdown(c)
    data: dict[str, Any] = {"charts": {}}
    if bd:
        data["charts"]["breakdown"] = charts.error_breakdown(
            bd["sub"], bd["del"], bd["ins"], bd["n_ref"]
        )
    tables = error_tables(utts) if utts and bd else None
    if utts is not None:
        data["utts"] = utterance_rows(c, utts, audio.href, abl.applied if abl else {})
        data["pageSize"] = site.o.page_size
        data["audioRoot"] = "" if site.single else site.root_prefix(here)
        data["embed"] = site.audio_mode == "embed"
        data["stepsKnown"] = abl is not None
    ranking = site.rankings.get(c.dataset)
    tls, tl_note = longform.timelines(c) if longform.is_longform(c) else ([], None)
    spk, spk_note = speaker_timelines(c) if longform.is_longform(c) else ([], None)
    site.render(
        here,
        "cell.html.j2",
        f"{c.model} on {c.dataset}",
        data,
        cell=c,
        n=_cell_numbers(c),
        bd=bd,
        tables=tables,
        abl=abl,
        abl_note=site.ablation_notes.get(c.key),
        audio=audio,
        prov=_provenance(site, here, c),
        utts_problem=c.utts_problem,
        n_utts=len(utts) if utts is not None else None,
        group=ranking.group.get(c.model) if ranking else None,
        unranked=ranking.not_ranked.get(c.model) if ranking else None,
        dataset_href=site.url(here, site.dataset_page(c.dataset)),
        model_href=site.url(here, site.model_page(c.model)),
        steps=c.summary.scorer.get("steps") or [],
        timelines=tls,
        timeline_note=tl_note,
        speakers=spk,
        speakers_note=spk_note,
        ent=entities.cell_view(c, audio.href),
        segmentation=segmentation(c),
        sessions=stored_session_parts(c.summary.session_metrics or {}),
    )


def _ablation(site: Site, datasets: list[str]) -> None:
    here = "ablation.html"
    shown = stages([site.ablations[k] for k in sorted(site.ablations)])
    sections = []
    figs = {}
    for d in datasets:
        rows = []
        series: dict[str, list] = {}
        for (m, dd), a in sorted(site.ablations.items()):
            if dd != d:
                continue
            by_stage = {x["stage"]: x for x in a.rows}
            rows.append(
                {
                    "model": m,
                    "stages": by_stage,
                    "matches": a.matches_stored,
                    "note": a.note,
                    "href": site.url(here, site.cell_page(m, d)),
                }
            )
            series[m] = [(x["stage"], x["ter"], None) for x in a.rows if x["applied"]]
        key = f"ablation-{safe_name(d)}"
        figs[key] = charts.lines(series, "normalisation steps applied (cumulative)", "TER %")
        figs[key]["layout"]["xaxis"].update(
            {"type": "category", "categoryorder": "array", "categoryarray": shown}
        )
        sections.append(
            {"dataset": d, "rows": rows, "chart": key, "href": site.url(here, site.dataset_page(d))}
        )
    site.render(
        here,
        "ablation.html.j2",
        "Scorer ablation",
        {"charts": figs},
        sections=sections,
        stages=shown,
    )


LISTEN_PER_ATTACK = 3  # utterances with clean and attacked players, per attack condition


def _listen(
    data: Any, cells: dict, audio: dict[tuple[str, str], DatasetAudio]
) -> list[dict[str, Any]]:
    """For each attack condition: a few utterances heard clean and attacked (the audio the
    cells were scored on), with the attacked model's hypotheses on both."""
    linked = match_cells(data, cells)
    out = []
    for a in data.attacks:
        if a["mode"] != "white-box":
            continue
        clean, hit = linked.get((a["model"], "clean")), linked.get((a["model"], a["condition"]))
        if not clean or not hit:
            continue
        ha = audio.get(_audio_key(clean), DatasetAudio()).href
        hb = audio.get(_audio_key(hit), DatasetAudio()).href
        hyp_a = {u["id"]: u.get("hyp") for u in clean.utterances() or []}
        hyp_b = {u["id"]: u.get("hyp") for u in hit.utterances() or []}
        for uid in sorted(set(ha) & set(hb))[:LISTEN_PER_ATTACK]:
            out.append(
                {"condition": a["condition"], "model": a["model"], "id": uid}
                | {"clean": ha[uid], "attacked": hb[uid]}
                | {"hyp_clean": hyp_a.get(uid), "hyp_attacked": hyp_b.get(uid)}
            )
    return out


def _robustness(site: Site, audio: dict[tuple[str, str], DatasetAudio]) -> None:
    views = []
    for path, data in site.r.robustness:
        v = robustness_view(path, data, site.r.cells)
        parts = path.parent.relative_to(site.r.root / "robustness").parts
        v["page"] = "robustness/" + "/".join(safe_name(p) for p in parts) + ".html"
        v["listen"] = _listen(data, site.r.cells, audio)
        views.append(v)
    for v in views:
        here = v["page"]
        figs = {}
        for fam, lines in sorted(v["curves"].items()):
            maxsev = max(p[0] for pts in lines.values() for p in pts)
            figs[f"curve-{safe_name(fam)}"] = charts.lines(
                {m: lines[m] for m in v["models"] if m in lines},
                f"{fam} severity",
                "WER % (95 % CI)",
                tickvals=list(range(0, maxsev + 1)),
                ticktext=["clean"] + [str(i) for i in range(1, maxsev + 1)],
            )
        for row in v["rows"]:
            row["href"] = site.url(here, site.cell_page(*row["cell"])) if row["cell"] else None
        site.render(
            here,
            "robustness.html.j2",
            f"Robustness: {v['dataset']} {v['grid']}",
            {"charts": figs, "embed": site.audio_mode == "embed"}
            | {"audioRoot": "" if site.single else site.root_prefix(here)},
            v=v,
            raw=site.raw_link(here, Path(v["path"])),
            fams=[(fam, f"curve-{safe_name(fam)}") for fam in sorted(v["curves"])],
        )
    site.render(
        "robustness.html",
        "robustness_index.html.j2",
        "Robustness",
        {},
        views=[{**v, "href": site.url("robustness.html", v["page"])} for v in views],
    )


def _streaming(site: Site) -> None:
    """One page: every streaming cell's WER beside its latencies, the Pareto view, and each
    cell's per-utterance event timelines."""
    rows, cells = [], []
    figs: dict[str, Any] = {}
    for path, rec in site.r.streaming:
        try:
            summary = read_summary(path.parent / "summary.json")
        except RecordError as exc:
            site.notes.append(f"{exc}; its WER is left out of the streaming page")
            summary = None
        rows.append(streaming.row(path, rec, summary, site.r.cell(rec.model, rec.dataset)))
        keys = []
        for uid, fig in streaming.timelines(path.parent / "events.jsonl"):
            key = f"timeline-{len(figs)}"
            figs[key] = fig
            keys.append((uid, key))
        cells.append({"row": rows[-1], "timelines": keys})
    figs["pareto"] = streaming.pareto_chart(rows)
    front = streaming.pareto_front(rows)
    for i, r in enumerate(rows):
        r["pareto"] = i in front
    site.render(
        "streaming.html",
        "streaming.html.j2",
        "Streaming",
        {"charts": figs},
        rows=rows,
        cells=cells,
    )


def _fairness(site: Site) -> None:
    here = "fairness.html"
    sections = []
    figs = {}
    for i, (path, rec) in enumerate(site.r.fairness):
        data = rec.to_dict()  # the template reads the sections as stored
        acc = rec.accuracy
        models = [a["model"] for a in acc]
        names = list(dict.fromkeys(g["group"] for a in acc for g in a["groups"]))
        values = {}
        ci_kind = {}
        for a in acc:
            for g in a["groups"]:
                ci = g.get("ci") or {}
                kind = "speakers"
                if ci.get("low") is None and (g.get("ci_utterances") or {}).get("low") is not None:
                    ci, kind = g["ci_utterances"], "utterances"
                values[(a["model"], g["group"])] = (
                    g.get("rate"),
                    [ci["low"], ci["high"]] if ci.get("low") is not None else None,
                )
                ci_kind[(a["model"], g["group"])] = kind
        key = f"fairness-{i}"
        if acc:
            metric = acc[0].get("metric", "ter").upper()
            figs[key] = charts.groups(models, names, values, f"{metric} % per group (95 % CI)")
        sections.append(
            {
                "path": str(path),
                "data": data,
                "chart": key if acc else None,
                "raw": site.raw_link(here, path),
                "ci_kind": ci_kind,
                "title": f"{' + '.join(rec.models)} on {rec.dataset.get('id')} by {rec.by}",
                "anchor": f"f{i}",
            }
        )
    site.render(
        here,
        "fairness.html.j2",
        "Fairness",
        {"charts": figs},
        sections=sections,
        relpath=os.path.relpath,
    )
