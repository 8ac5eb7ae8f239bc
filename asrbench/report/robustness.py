"""The robustness page's content from one stored `robustness.json` (ops/robustness).

Shown: WER beside WERD and NWERD for every model x condition with the speech quality of the
condition's derived dataset, WER-vs-severity curves (severity 0 = the clean condition), the
Aurora-style table (per noise type x SNR, and the 0-20 dB average), and a ceiling flag.
Attack conditions (`perturb.attack_table`) are labelled, kept out of the per-model means, and
shown in their own white-box vs transfer table beside Gaussian noise at the same SNR.

The ceiling flag: WERD = WER(perturbed) - WER(clean) cannot grow much for a model that already
gets most words wrong on clean speech (deletions cap WER at 1), so a small mean WERD there says
little about robustness. A model is flagged when its clean WER is at least `CEILING`; beside
the mean WERD the page gives the share of the headroom lost, mean WERD / (1 - clean WER).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from asrbench.report.charts import ci_pair
from asrbench.report.collect import Cell
from asrbench.results.records import RobustnessRecord

CEILING = 0.5
AURORA_SNRS = (20.0, 15.0, 10.0, 5.0, 0.0)


def _spec(condition: str) -> list[Any] | None:
    from asrbench.perturb.spec import parse_spec

    try:
        return parse_spec(condition)
    except Exception:
        return None


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def match_cells(
    data: RobustnessRecord, cells: dict[tuple[str, str], Cell]
) -> dict[tuple[str, str], Cell]:
    """(model, condition) -> the stored cell of that condition's derived dataset, when unique."""
    found: dict[tuple[str, str], list[Cell]] = defaultdict(list)
    for c in cells.values():
        d = c.derived_from
        if not d or d.get("dataset") != data.dataset or d.get("seed") != data.seed:
            continue
        found[(c.model, str(d.get("spec")))].append(c)
    return {k: v[0] for k, v in found.items() if len(v) == 1}


def view(path: Path, data: RobustnessRecord, cells: dict[tuple[str, str], Cell]) -> dict[str, Any]:
    """Everything the page shows for one robustness.json."""
    rows = [dict(r) for r in data.rows]
    models = list(dict.fromkeys(r["model"] for r in rows))
    linked = match_cells(data, cells)
    for r in rows:
        c = linked.get((r["model"], r["condition"]))
        r["cell"] = c.key if c else None
        r["ci"] = ci_pair(c.summary.metrics.ter_ci if c and c.summary.metrics else None)
    clean: dict[str, float] = {}
    clean_ci: dict[str, list[float] | None] = {}
    for r in rows:
        clean.setdefault(r["model"], r["wer_clean"])
    for m in models:
        c = linked.get((m, "clean"))
        clean_ci[m] = ci_pair(c.summary.metrics.ter_ci if c and c.summary.metrics else None)
    summary = []
    for m in models:
        # attack conditions are summarised apart (the attacks table): WERD only, as SRB
        mine = [r for r in rows if r["model"] == m and not r.get("attack")]
        werd = _mean([r["werd"] for r in mine if r.get("werd") is not None])
        nw = [r["nwerd"] for r in mine if r.get("nwerd") is not None]
        wc = clean[m]
        headroom = 1.0 - wc if wc is not None else None
        summary.append(
            {
                "model": m,
                "wer_clean": wc,
                "wer_clean_ci": clean_ci[m],
                "mean_wer": _mean([r["wer"] for r in mine]),
                "mean_werd": werd,
                "mean_nwerd": _mean(nw),
                "n_conditions": len(mine),
                "headroom_lost": (werd / headroom)
                if werd is not None and headroom and headroom > 0
                else None,
                "ceiling": wc is not None and wc >= CEILING,
            }
        )
    # WER vs severity: single-step conditions with a severity; severity 0 is the clean WER.
    curves: dict[str, dict[str, list[tuple[float, float, list[float] | None]]]] = {}
    snr_table: dict[tuple[str, str], dict[str, Any]] = {}
    quality: dict[str, dict[str, Any]] = {}
    for r in rows:
        steps = _spec(r["condition"])
        quality.setdefault(
            r["condition"],
            {k: r.get(k) for k in ("pesq", "stoi", "dnsmos_ovrl")}
            | {"difficulty": r.get("difficulty")},
        )
        if not steps or len(steps) != 1:
            continue
        s = steps[0]
        if s.severity is not None:
            fam = curves.setdefault(s.name, {})
            line = fam.setdefault(r["model"], [(0, clean[r["model"]], clean_ci[r["model"]])])
            line.append((s.severity, r["wer"], r["ci"]))
        snr = s.params.get("snr")
        if snr is not None:
            noise = f"set {s.params['set']} {s.params['noise']}" if s.name == "aurora" else s.name
            entry = snr_table.setdefault(
                (r["model"], noise), {"model": r["model"], "noise": noise, "wer": {}}
            )
            entry["wer"]["clean" if snr == "clean" else f"{float(snr):g}"] = r["wer"]
    for fam in curves.values():
        for m, pts in fam.items():
            fam[m] = sorted(pts, key=lambda p: p[0])
    snr_cols: list[str] = []
    for e in snr_table.values():
        for k in e["wer"]:
            if k not in snr_cols:
                snr_cols.append(k)
    snr_cols.sort(key=lambda k: (k != "clean", -float(k) if k != "clean" else 0.0))
    aurora_rows = []
    for (_m, _n), e in sorted(snr_table.items()):
        vals = [e["wer"].get(f"{s:g}") for s in AURORA_SNRS]
        complete = all(v is not None for v in vals)
        avg = sum(vals) / len(vals) if complete else None
        aurora_rows.append(
            {**e, "avg_0_20": avg, "acc_0_20": 100.0 * (1.0 - avg) if avg is not None else None}
        )
    return {
        "path": str(path),
        "dataset": data.dataset,
        "grid": path.parent.name,
        "seed": data.seed,
        "normaliser": data.normaliser,
        "models": models,
        "rows": rows,
        "summary": summary,
        "curves": curves,
        "snr_cols": snr_cols,
        "aurora_rows": aurora_rows,
        "aurora_sets": data.aurora_average_accuracy,
        "quality": quality,
        "warnings": list(data.warnings),
        "provenance": data.provenance.to_dict() if data.provenance else None,
        "ceiling": CEILING,
        "attacks": [dict(a) for a in data.attacks],
    }
