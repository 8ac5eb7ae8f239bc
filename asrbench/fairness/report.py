"""fairness.json (`asrbench-fairness-v1`, documented in docs/FAIRNESS.md; the record is
`asrbench.results.records.FairnessRecord`), its Markdown view and the fault localiser's per-word
TSV files, written as one folder moved into place whole (`campaign.base.write_outputs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from asrbench.campaign.base import write_outputs
from asrbench.results.records import FairnessRecord, Provenance
from asrbench.table import markdown
from scoring.metrics import rate_label

TOP_WORDS = 10  # non-robust words per group and transformation kept in fairness.json
TSV_COLUMNS = [
    "transformation",
    "group",
    "rank",
    "word",
    "wc",
    "severities",
    "counts",
    "min_wc",
    "min_at",
    "drop",
    "rel_drop",
    "non_robust",
    "ranked",
]


def assemble(
    models: Sequence[str],
    p: Any,
    opts: Any,
    results: dict,
    inputs: list[dict],
    provenance: Provenance,
) -> FairnessRecord:
    """The fairness.json record: every number, interval, p-value, group size, provenance."""
    from asrbench.identity import digest
    from asrbench.scorers import get_scorer, scorer_identity

    ds = p.dataset
    g = p.grouping
    lang = ds.language
    localiser = []
    for entry in results["localiser"]:
        rows = entry["rows"]
        groups = list(dict.fromkeys(r["group"] for r in rows))
        top = [
            r
            for grp in groups
            for r in sorted(
                (r for r in rows if r["group"] == grp and r["non_robust"] and r["ranked"]),
                key=lambda r: r["rank"],
            )[:TOP_WORDS]
        ]
        localiser.append(
            {k: v for k, v in entry.items() if k != "rows"}
            | {
                "file": f"localiser/{entry['model']}.tsv",
                "n_words": {grp: sum(1 for r in rows if r["group"] == grp) for grp in groups},
                "n_non_robust": {
                    grp: sum(1 for r in rows if r["group"] == grp and r["non_robust"])
                    for grp in groups
                },
                "top": top,
            }
        )
    return FairnessRecord(
        dataset={
            "id": ds.id,
            "hash": ds.content_hash(),
            "reference_free": ds.reference_free,
            "sample_rate": ds.sample_rate,
            "language": ds.language,
            "n_utts": len(ds.utterances),
            "folder": str(Path(ds.root).resolve()),
        },
        selection={
            "n_utts": len(p.ids),
            "n_dataset_utts": len(ds.utterances),
            "ids_sha256": digest("selection", utterances=p.ids),
            "utts": opts.utts
            if isinstance(opts.utts, int)
            else (len(opts.utts) if opts.utts else None),
            "per_speaker": opts.per_speaker,
            "sample": len(p.ids) < len(ds.utterances),
        },
        by=g.column,
        cluster={
            "column": opts.cluster if g.unit_kind == "speaker" else None,
            "unit": g.unit_kind,
            "permutation_unit": g.perm.kind,
        },
        models=list(models),
        analyses=p.analyses,
        options=opts.to_dict()
        | {
            "metric": p.metric if not ds.reference_free else None,
            "base": g.names[p.base] if p.base is not None else None,
            "compare": [g.names[k] for k in p.compares],
        },
        groups=g.info,
        unlabelled={"n": len(g.unlabelled), "ids": g.unlabelled},
        conditions=[
            {"condition": c.spec, "perturbation": c.perturbation, "severity": c.severity}
            for c in p.conditions
        ],
        transformations={t: [s for s, _ in pts] for t, pts in p.transformations.items()},
        accuracy=results["accuracy"],
        lwerr=results["lwerr"],
        robustness=results["robustness"],
        metamorphic=results["metamorphic"],
        differential=results["differential"],
        localiser=localiser,
        notes=p.notes,
        warnings=results["warnings"],
        inputs=inputs,
        normaliser=scorer_identity(get_scorer(lang)).to_dict(),
        provenance=provenance,
    )


def localiser_rows(entries: list[dict]) -> dict[str, list[dict]]:
    """Every word row of the localiser, per model (the TSV files)."""
    out: dict[str, list[dict]] = {}
    for e in entries:
        out.setdefault(e["model"], []).extend(
            {"transformation": e["transformation"], **r} for r in e["rows"]
        )
    return out


def _ci(value: float | None, ci: dict | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    text = f"{value:.{digits}f}"
    if ci and ci.get("low") is not None:
        text += f" [{ci['low']:.{digits}f}, {ci['high']:.{digits}f}]"
    return text


def _p(p: float | None) -> str:
    if p is None:
        return "-"
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


def to_markdown(record: FairnessRecord) -> str:
    """The human-readable view of fairness.json (every number in it comes from the record)."""
    report = record.to_dict()
    ds = report["dataset"]
    sel = report["selection"]
    opts = report["options"]
    lines = [
        f"# Fairness: {', '.join(report['models'])} on {ds['id']} by {report['by']}",
        "",
        f"Dataset {ds['id']} ({ds['hash'][:19]}...), {sel['n_utts']} of "
        f"{sel['n_dataset_utts']} utterances"
        + (" (a subset)" if sel["sample"] else "")
        + f"; units: {report['cluster']['unit']}s; "
        f"{opts['reps']} bootstrap replicates, up to {opts['perms']} permutations "
        f"(exact when fewer relabellings exist), {int(100 * opts['level'])} % intervals, "
        f"seed {opts['seed']}.",
        "",
    ]
    lines += [
        "Groups (small = under the minimum size; reported and flagged, never dropped):",
        "",
        markdown(
            [
                {
                    "group": i["group"],
                    "speakers": i["n_speakers"],
                    "utterances": i["n_utts"],
                    "small": "; ".join(i["small_reasons"]) or "no",
                }
                for i in report["groups"]
            ],
            ["group", "speakers", "utterances", "small"],
        ),
    ]
    lines += _accuracy_sections(report)
    lines += _lwerr_sections(report)
    lines += _robustness_sections(report)
    lines += _testing_sections(report)
    lines += _localiser_sections(report)
    lines += _notes(report)
    return "\n".join(lines)


def _accuracy_sections(report: dict[str, Any]) -> list[str]:
    """Per-group accuracy, one section per model and metric."""
    lines: list[str] = []
    for sec in report["accuracy"]:
        m = sec["metric"]
        label = rate_label(m, sec["unit"])
        rows = []
        for r in sec["groups"]:
            t = r.get("test_vs_best") or {}
            rows.append(
                {
                    "model": sec["model"],
                    "group": r["group"],
                    "speakers": r["n_speakers"],
                    "utts": r["n_utts"],
                    "words": r["metrics"]["n_ref"],
                    label: _ci(r["rate"], r["ci"]),
                    "diff to best": _ci((r["diff_to_best"] or {}).get("value"), r["diff_to_best"]),
                    "ratio to best": _ci(
                        (r["ratio_to_best"] or {}).get("value"), r["ratio_to_best"], 2
                    ),
                    "p vs best (Holm)": _p(t.get("p_holm")) if t else "-",
                    "flag": "small" if r["small"] else "",
                }
            )
        t = sec["test"]
        lines += [
            f"## Per-group {label}: {sec['model']}",
            "",
            markdown(
                rows,
                [
                    "model",
                    "group",
                    "speakers",
                    "utts",
                    "words",
                    label,
                    "diff to best",
                    "ratio to best",
                    "p vs best (Holm)",
                    "flag",
                ],
            ),
            f"Best group: {sec['best_group']} (chosen from {sec['best_chosen_from']}). "
            f"Test of no difference between the {t['groups']} groups: p = "
            f"{_p(t['p_value'])} ({t['n_units']} {t['unit']}s, {t['permutations']} "
            f"{'relabellings, exact' if t['exact'] else 'random permutations'}).",
            "",
        ]
    return lines


def _lwerr_sections(report: dict[str, Any]) -> list[str]:
    """LWERR between groups, one section per model."""
    lines: list[str] = []
    for sec in report["lwerr"]:
        rows = [
            {
                "model": sec["model"],
                "compare / base": f"{r['compare']} / {r['base']}",
                "rate compare": r[f"{r['metric']}_compare"],
                "rate base": r[f"{r['metric']}_base"],
                "LWERR (log2)": _ci(r["lwerr"], r["ci"]),
                "p": _p(r["test"]["p_value"]),
                "speakers": f"{r['n_speakers_compare']} / {r['n_speakers_base']}",
            }
            for r in sec["rows"]
        ]
        lines += [
            f"## LWERR: {sec['model']}",
            "",
            markdown(
                rows,
                [
                    "model",
                    "compare / base",
                    "rate compare",
                    "rate base",
                    "LWERR (log2)",
                    "p",
                    "speakers",
                ],
            ),
        ]
    return lines


def _robustness_sections(report: dict[str, Any]) -> list[str]:
    """Robustness disparity (SRB), one section per model."""
    lines: list[str] = []
    for sec in report["robustness"]:
        rows = [
            {
                "model": sec["model"],
                "group": r["group"],
                "perturbation": r["perturbation"],
                "severity": r["severity"],
                "gap": _ci(r["gap"], r["gap_ci"]),
                "WERD gap": _ci(r["werd_gap"], r["werd_gap_ci"]),
                "LWERR": _ci(r["lwerr"], r["lwerr_ci"], 2),
            }
            for r in sec["gaps"]
        ]
        slopes = [
            {
                "model": sec["model"],
                "group": r["group"],
                "base": r["base"],
                "perturbation": r["perturbation"],
                "slope": _ci(r["slope"], r["ci"], 4),
                "p": _p(r["p_value"]),
                "units": r["n_units"],
            }
            for r in sec["slopes"]
        ]
        lines += [
            f"## Robustness disparity (SRB): {sec['model']}, base group {sec['base']}",
            "",
            markdown(
                rows, ["model", "group", "perturbation", "severity", "gap", "WERD gap", "LWERR"]
            ),
            f"Slope of the gap over severity ({sec['slope_unit']}):",
            "",
            markdown(slopes, ["model", "group", "base", "perturbation", "slope", "p", "units"]),
        ]
    return lines


def _testing_sections(report: dict[str, Any]) -> list[str]:
    """Differential and metamorphic testing (AequeVox)."""
    lines: list[str] = []
    for kind, title in (
        ("differential", "AequeVox differential testing"),
        ("metamorphic", "Single-recogniser metamorphic testing"),
    ):
        for sec in report[kind]:
            who = " vs ".join(sec["models"]) if "models" in sec else sec["model"]
            counts = [
                {
                    "system(s)": who,
                    "base group": r["base"],
                    "tau": r["tau"],
                    "violations": r["violations"],
                    "violations (CI above tau)": r["violations_ci"],
                    "comparisons": r["comparisons"],
                }
                for r in sec["violations"]
            ]
            lines += [
                f"## {title}: {who}",
                "",
                markdown(
                    counts,
                    [
                        "system(s)",
                        "base group",
                        "tau",
                        "violations",
                        "violations (CI above tau)",
                        "comparisons",
                    ],
                ),
            ]
            viol = [r for r in sec["pairs"] if r["violation"]]
            if viol:
                lines += [
                    "Violations (D_base - D_other > tau):",
                    "",
                    markdown(
                        [
                            {
                                "base": r["base"],
                                "other": r["other"],
                                "transformation": r["transformation"],
                                "severity": r["severity"],
                                "D_base - D_other": _ci(r["delta"], r["ci"]),
                                "p": _p(r["p_value"]),
                                "q (BH)": _p(r["q_value"]),
                            }
                            for r in viol
                        ],
                        [
                            "base",
                            "other",
                            "transformation",
                            "severity",
                            "D_base - D_other",
                            "p",
                            "q (BH)",
                        ],
                    ),
                ]
            deg = [
                {
                    "group": r["group"],
                    "transformation": r["transformation"],
                    "severity": r["severity"],
                    "D": _ci(r["D"], r["ci"]),
                }
                for r in sec["degradation"]
            ]
            lines += [
                "Degradation D per group:",
                "",
                markdown(deg, ["group", "transformation", "severity", "D"]),
            ]
    return lines


def _localiser_sections(report: dict[str, Any]) -> list[str]:
    """The fault localiser, one section per model and transformation."""
    lines: list[str] = []
    for e in report["localiser"]:
        top = [r for r in e["top"] if r["group"] != "*"] + [
            r for r in e["top"] if r["group"] == "*"
        ]
        lines += [
            f"## Fault localiser: {e['model']}, {e['transformation']} "
            f"(omega {e['omega']}, ranked words need WC >= {e['min_count']})",
            "",
        ]
        if top:
            lines.append(
                markdown(
                    [
                        {
                            "group": r["group"],
                            "rank": r["rank"],
                            "word": r["word"],
                            "WC": r["wc"],
                            "counts by severity": " ".join(map(str, r["counts"])),
                            "drop": r["drop"],
                            "rel drop": r["rel_drop"],
                        }
                        for r in top
                    ],
                    ["group", "rank", "word", "WC", "counts by severity", "drop", "rel drop"],
                )
            )
        else:
            lines.append("No ranked non-robust word.\n")
        v = e.get("validation")
        if v:
            lines += [
                f"Validation on {v['n_heldout_utts']} held-out utterances: error rate of "
                f"predicted non-robust words {_ci(v['nonrobust']['error_rate'], v['nonrobust']['ci'])} "  # noqa: E501
                f"({v['nonrobust']['errors']}/{v['nonrobust']['occurrences']}), robust "
                f"words {_ci(v['robust']['error_rate'], v['robust']['ci'])} "
                f"({v['robust']['errors']}/{v['robust']['occurrences']}): "
                f"{_pct(v['more_errors_pct'], v['more_errors_pct_ci'])} more errors "
                f"(AequeVox: +{v['paper_more_errors_pct']} %).",
                "",
            ]
    return lines


def _notes(report: dict[str, Any]) -> list[str]:
    """Notes and warnings, when there are any."""
    lines: list[str] = []
    if report["notes"] or report["warnings"]:
        lines += (
            ["Notes and warnings:", ""]
            + [f"- {w}" for w in report["notes"] + report["warnings"]]
            + [""]
        )
    return lines


def _pct(v: float | None, ci: dict) -> str:
    if v is None:
        return "undefined"
    out = f"{v:+.1f} %"
    if ci.get("low") is not None:
        out += f" [{ci['low']:+.1f}, {ci['high']:+.1f}]"
    return out


def tsv(rows: list[dict]) -> str:
    lines = ["\t".join(TSV_COLUMNS)]
    for r in rows:
        cells = []
        for c in TSV_COLUMNS:
            v = r.get(c)
            if isinstance(v, list):
                v = ",".join("" if x is None else str(x) for x in v)
            elif isinstance(v, float):
                v = f"{v:.6g}"
            cells.append("" if v is None else str(v))
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"


def output_dir(
    root: Path,
    dataset: str,
    models: Sequence[str],
    by: str,
    grid_label: str | None,
    subset_key: str | None,
) -> Path:
    name = (
        by
        + (f"__{grid_label}" if grid_label else "")
        + (f"__sub{subset_key}" if subset_key else "")
    )
    return root / "fairness" / dataset / "+".join(models) / name


def write(report: FairnessRecord, rows: dict[str, list[dict]], target: Path) -> Path:
    """fairness.json, fairness.md and localiser/<model>.tsv, moved into place together."""
    files: dict[str, FairnessRecord | str] = {
        "fairness.json": report,
        "fairness.md": to_markdown(report),
    }
    files |= {f"localiser/{model}.tsv": tsv(r) for model, r in rows.items()}
    return write_outputs(target, files)
