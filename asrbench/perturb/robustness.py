"""Robustness tables: WERs over a perturbation grid turned into WERD/NWERD, and their view.

The campaign that derives the conditions and runs the models is `asrbench.campaign.robustness`
(`run_grid`); this module is its arithmetic, pure functions of the WERs and quality scores
(with `metrics`). The result is a `RobustnessRecord` (robustness.json); `to_markdown` is its
readable view (robustness.md).
"""

from __future__ import annotations

from typing import Any

from asrbench.errors import InputError
from asrbench.perturb import metrics
from asrbench.perturb.quality import METRICS
from asrbench.perturb.spec import parse_spec
from asrbench.results.records import RobustnessRecord

# Perturbations that mix in other talkers (the babble pool): named so a fallback is reported.
BABBLE_USERS = ("crosstalk", "babble")
QUALITY_COLUMNS = ("pesq", "stoi", "dnsmos_ovrl")


def check_normaliser(normaliser: str) -> str | None:
    """The NWERD normaliser's form: a quality metric, `none`, or `model:ID` (the ID is
    returned, None otherwise)."""
    if normaliser.startswith("model:"):
        base = normaliser[6:]
        if not base:
            raise InputError(
                "--normaliser model: give the base model's ID, e.g. model:whisper_tiny_en"
            )
        return base
    if normaliser != "none" and normaliser not in METRICS:
        raise InputError(
            f"--normaliser {normaliser!r}: unknown; use one of "
            f"{', '.join(METRICS)}, model:ID or none"
        )
    return None


def _normaliser(
    base: str | None, normaliser: str, wers: dict[str, dict[str, float]], quality: dict
) -> Any:
    if base:
        return metrics.base_model_normaliser(wers[base]["clean"], wers[base])
    if quality:
        return metrics.quality_normaliser(
            quality["clean"][normaliser], {c: q.get(normaliser) for c, q in quality.items()}
        )
    return None


def tabulate(
    models: list[str],
    conditions: list[str],
    wers: dict[str, dict[str, float]],
    quality: dict[str, dict],
    normaliser: str,
    base: str | None,
) -> dict[str, Any]:
    """rows, summary, Aurora-2 averages and severity curves of a RobustnessRecord, from each
    model's WER per condition ("clean" included) and the mean quality scores per condition."""
    norm = _normaliser(base, normaliser, wers, quality)
    rows: list[dict[str, Any]] = []
    for m in models:
        for r in metrics.robustness_rows(
            wers[m]["clean"], {c: wers[m][c] for c in conditions}, norm
        ):
            q = quality.get(r["condition"], {})
            rows.append(
                {"model": m, "wer_clean": wers[m]["clean"], **r}
                | {k: q.get(k) for k in QUALITY_COLUMNS}
            )
    for r in rows:
        step = parse_spec(r["condition"])
        r["perturbation"] = "+".join(s.name for s in step)
        r["severity"] = step[0].severity if len(step) == 1 else None
    curves = metrics.severity_curves(rows)
    return {
        "rows": rows,
        "summary": [
            {"model": m, "mean_werd": metrics.mean_werd([r for r in rows if r["model"] == m])}
            for m in models
        ],
        "aurora_average_accuracy": {m: _aurora(wers[m], conditions) for m in models},
        # as JSON holds them: (severity, WER) pairs are lists
        "severity_curves": {
            m: {fam: [list(p) for p in pts] for fam, pts in fams.items()}
            for m, fams in curves.items()
        },
    }


def _aurora(wers: dict[str, float], conditions: list[str]) -> dict:
    keyed = {}
    for c in conditions:
        s = parse_spec(c)[0]
        if s.name == "aurora" and s.params["snr"] != "clean":
            keyed[(s.params["set"], s.params["noise"], float(s.params["snr"]))] = wers[c]
    return metrics.aurora_average_accuracy(keyed)


COLUMNS = ["model", "condition", "wer_clean", "wer", "werd", "nwerd", "pesq", "stoi", "dnsmos_ovrl"]


def to_markdown(record: RobustnessRecord) -> str:
    """robustness.md: the tables of a robustness.json (every number comes from the record)."""
    aurora = record.aurora_average_accuracy
    md = (
        f"Dataset {record.dataset}, seed {record.seed}, NWERD normaliser {record.normaliser}\n\n"
        + metrics.markdown_table(record.rows, COLUMNS)
        + "\n"
        + metrics.markdown_table(record.summary, ["model", "mean_werd"])
    )
    if any(aurora.values()):
        md += "\nAurora-2 average word accuracy (%), 0-20 dB:\n\n" + metrics.markdown_table(
            [{"model": m, **{f"set {k}": v for k, v in a.items()}} for m, a in aurora.items()],
            ["model", *sorted({f"set {k}" for a in aurora.values() for k in a})],
        )
    if record.warnings:
        md += "\nWarnings:\n\n" + "".join(f"- {w}\n" for w in record.warnings)
    return md
