"""Robustness tables: WERs over a perturbation grid turned into WERD/NWERD, and their view.

The campaign that derives the conditions and runs the models is `asrbench.campaign.robustness`
(`run_grid`); this module is its arithmetic, pure functions of the WERs and quality scores
(with `metrics`). The result is a `RobustnessRecord` (robustness.json); `to_markdown` is its
readable view (robustness.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asrbench.errors import InputError
from asrbench.identity import derive_seed
from asrbench.perturb import attack_table, metrics
from asrbench.perturb.attack_table import is_attack
from asrbench.perturb.quality import METRICS
from asrbench.perturb.spec import parse_spec
from asrbench.results.records import RobustnessRecord
from asrbench.results.summary import session_figure_text, session_order
from scoring.stats import resample_indices

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
        if is_attack(r["condition"]):  # WERD only, as SRB: audio made against one model
            r |= {"difficulty": None, "nwerd": None, "attack": True}
    curves = metrics.severity_curves(rows)
    return {
        "rows": rows,
        "summary": [_summary(m, [r for r in rows if r["model"] == m]) for m in models],
        "aurora_average_accuracy": {m: _aurora(wers[m], conditions) for m in models},
        # as JSON holds them: (severity, WER) pairs are lists
        "severity_curves": {
            m: {fam: [list(p) for p in pts] for fam, pts in fams.items()}
            for m, fams in curves.items()
        },
    }


def _summary(model: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A model's mean WERD over the non-attack conditions, and (when the grid has attacks)
    over the attack conditions apart: one attack must not swamp the robustness number."""
    out = {"model": model, "mean_werd": metrics.mean_werd([r for r in rows if not r.get("attack")])}
    attacked = [r for r in rows if r.get("attack")]
    return out | ({"mean_werd_attack": metrics.mean_werd(attacked)} if attacked else {})


def _aurora(wers: dict[str, float], conditions: list[str]) -> dict:
    keyed = {}
    for c in conditions:
        s = parse_spec(c)[0]
        if s.name == "aurora" and s.params["snr"] != "clean":
            keyed[(s.params["set"], s.params["noise"], float(s.params["snr"]))] = wers[c]
    return metrics.aurora_average_accuracy(keyed)


# --- across languages (SRB's cross-language comparison) ---------------------------------------
#
# The same perturbations on datasets of different languages: each language's WERD per condition
# and their mean, and the difference between two languages with a bootstrap CI. Utterances are
# resampled within each language (the languages are independent samples); one draw takes the
# same utterances under every condition, so a language's WERD stays a paired difference.

N_BOOT = 1000
CI = 0.95

# per utterance ID: (errors, reference words)
Counts = Mapping[str, tuple[int, int]]


@dataclass(frozen=True)
class LanguageSample:
    """One model on one dataset: its language and per-utterance counts per condition."""

    dataset: str
    language: str
    counts: Mapping[str, Counts]  # condition ("clean" included) -> counts


def _werd_draws(
    sample: LanguageSample, conditions: Sequence[str], rng: np.random.Generator, n_boot: int
) -> tuple[np.ndarray, np.ndarray]:
    """(WERD per condition (C,), bootstrap draws (C, n_boot)) of one language."""
    ids = sorted(sample.counts["clean"])
    missing = [c for c in conditions if set(sample.counts[c]) != set(ids)]
    if missing:
        raise InputError(
            f"dataset {sample.dataset}: conditions {', '.join(missing)} were scored on other "
            "utterances than the clean one; rerun ops/robustness"
        )
    n_ref = np.array([sample.counts["clean"][i][1] for i in ids], dtype=float)
    clean = np.array([sample.counts["clean"][i][0] for i in ids], dtype=float)
    errs = np.array([[sample.counts[c][i][0] for i in ids] for c in conditions], dtype=float)
    if n_ref.sum() == 0:
        raise InputError(f"dataset {sample.dataset}: no reference words in the selection")
    point = (errs.sum(axis=1) - clean.sum()) / n_ref.sum()
    idx = resample_indices(rng, len(ids), n_boot)
    denom = np.maximum(n_ref[idx].sum(axis=1), 1.0)  # a draw of empty references only: 0
    draws = (errs[:, idx].sum(axis=2) - clean[idx].sum(axis=1)) / denom
    return point, draws


def _interval(draws: np.ndarray) -> tuple[float, float]:
    lo, hi = np.quantile(draws, [(1 - CI) / 2, (1 + CI) / 2])
    return float(lo), float(hi)


def language_disparity(
    model: str,
    samples: Sequence[LanguageSample],
    conditions: Sequence[str],
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(per-language rows, between-language rows) of one model over `conditions` (the
    perturbed ones every dataset has). Per language: WERD per condition and their mean with
    a bootstrap CI; between each pair of languages (in the order given): the difference
    a - b of each, with a bootstrap CI from independent resampling within each language."""
    rng = np.random.default_rng(derive_seed(seed))
    names = [*conditions, "mean"]
    stats = []
    for s in samples:
        point, draws = _werd_draws(s, conditions, rng, n_boot)
        stats.append((np.append(point, point.mean()), np.vstack([draws, draws.mean(axis=0)])))
    per_lang = [
        {"model": model, "dataset": s.dataset, "language": s.language, "condition": c}
        | {"n_utts": len(s.counts["clean"]), "werd": float(pt[k])}
        | dict(zip(("ci_low", "ci_high"), _interval(dr[k]), strict=True))
        for s, (pt, dr) in zip(samples, stats, strict=True)
        for k, c in enumerate(names)
    ]
    between = [
        {"model": model, "condition": c}
        | {"language_a": a.language, "dataset_a": a.dataset}
        | {"language_b": b.language, "dataset_b": b.dataset}
        | {"werd_diff": float(stats[i][0][k] - stats[j][0][k])}
        | dict(zip(("ci_low", "ci_high"), _interval(stats[i][1][k] - stats[j][1][k]), strict=True))
        for i, a in enumerate(samples)
        for j, b in enumerate(samples)
        if i < j
        for k, c in enumerate(names)
    ]
    return per_lang, between


LANGUAGE_COLUMNS = [
    "model",
    "language",
    "dataset",
    "condition",
    "n_utts",
    "werd",
    "ci_low",
    "ci_high",
]
DISPARITY_COLUMNS = [
    "model",
    "language_a",
    "language_b",
    "condition",
    "werd_diff",
    "ci_low",
    "ci_high",
]

COLUMNS = ["model", "condition", "wer_clean", "wer", "werd", "nwerd", "pesq", "stoi", "dnsmos_ovrl"]


def sessions_markdown(sessions: list[dict[str, Any]]) -> str:
    """The session metrics of a long-form dataset per model and condition, each `rate [low,
    high]` in % with its interval over sessions (`-`: not supported; `not scored`: refused)."""
    keys = [k for k in session_order() if any(k in r["metrics"] for r in sessions)]
    labels = {
        k: next(r["metrics"][k]["label"] for r in sessions if k in r["metrics"]) for k in keys
    }
    rows = [
        {
            "model": r["model"],
            "condition": r["condition"],
            **{labels[k]: session_figure_text(r["metrics"].get(k)) for k in keys},
        }
        for r in sessions
    ]
    return (
        "Session metrics per condition (%, 95 % bootstrap CI over sessions; DER and JER with "
        "collar 0 s):\n\n" + metrics.markdown_table(rows, ["model", "condition", *labels.values()])
    )


def to_markdown(record: RobustnessRecord) -> str:
    """robustness.md: the tables of a robustness.json (every number comes from the record)."""
    aurora = record.aurora_average_accuracy
    columns = ["dataset", "language", *COLUMNS] if record.languages else COLUMNS
    md = (
        f"Dataset {record.dataset}, seed {record.seed}, NWERD normaliser {record.normaliser}\n\n"
        + metrics.markdown_table(record.rows, columns)
        + "\n"
        + metrics.markdown_table(
            record.summary, [*columns[: columns.index("model")], "model", "mean_werd"]
        )
    )
    if any(aurora.values()):
        md += "\nAurora-2 average word accuracy (%), 0-20 dB:\n\n" + metrics.markdown_table(
            [{"model": m, **{f"set {k}": v for k, v in a.items()}} for m, a in aurora.items()],
            ["model", *sorted({f"set {k}" for a in aurora.values() for k in a})],
        )
    if record.languages:
        md += (
            f"\nWERD per language ({int(CI * 100)}% bootstrap CI over utterances, {N_BOOT} "
            "draws; `mean`: the mean over the conditions):\n\n"
            + metrics.markdown_table(record.languages, LANGUAGE_COLUMNS)
            + "\nBetween languages (WERD of a minus WERD of b):\n\n"
            + metrics.markdown_table(record.language_disparity, DISPARITY_COLUMNS)
        )
    if record.attacks:
        md += "\n" + attack_table.to_markdown(record.attacks)
    if record.sessions:
        md += "\n" + sessions_markdown(record.sessions)
    if record.warnings:
        md += "\nWarnings:\n\n" + "".join(f"- {w}\n" for w in record.warnings)
    return md
