"""Robustness metrics as pure functions over per-condition WERs (fractions, 0.25 = 25 %).

- WERD = WER(perturbed) - WER(clean)
- NWERD = WERD / difficulty(condition), difficulty from a pluggable normaliser:
  `quality_normaliser` (relative speech-quality degradation, as in SRB) or `base_model_normaliser`
  (the WERD a reference model suffers under the same condition).
- Aurora-2 average word accuracy per test set over 0-20 dB.
- Severity curves per model and perturbation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

Normaliser = Callable[[str], float | None]


def werd(wer_perturbed: float, wer_clean: float) -> float:
    """WER degradation: absolute WER increase over the clean condition."""
    return wer_perturbed - wer_clean


def nwerd(wer_perturbed: float, wer_clean: float, difficulty: float | None) -> float | None:
    """Normalised WERD: WERD divided by how hard the condition is; None if difficulty <= 0."""
    if difficulty is None or difficulty <= 0:
        return None
    return werd(wer_perturbed, wer_clean) / difficulty


def quality_normaliser(
    clean_quality: float, quality_by_condition: Mapping[str, float | None], floor: float = 1e-3
) -> Normaliser:
    """Difficulty = relative quality loss 1 - Q(perturbed)/Q(clean) (e.g. DNSMOS OVRL, PESQ)."""

    def difficulty(condition: str) -> float | None:
        q = quality_by_condition.get(condition)
        if q is None or clean_quality <= 0:
            return None
        return max(1.0 - q / clean_quality, floor)

    return difficulty


def base_model_normaliser(
    base_wer_clean: float, base_wer_by_condition: Mapping[str, float], floor: float = 1e-3
) -> Normaliser:
    """Difficulty = the WERD of a base model under the same condition."""

    def difficulty(condition: str) -> float | None:
        w = base_wer_by_condition.get(condition)
        return None if w is None else max(werd(w, base_wer_clean), floor)

    return difficulty


def robustness_rows(
    wer_clean: float, wer_by_condition: Mapping[str, float], normaliser: Normaliser | None = None
) -> list[dict[str, Any]]:
    """One row per condition: WER, WERD and (with a normaliser) NWERD."""
    rows = []
    for cond, w in wer_by_condition.items():
        d = normaliser(cond) if normaliser else None
        rows.append(
            {
                "condition": cond,
                "wer": w,
                "werd": werd(w, wer_clean),
                "difficulty": d,
                "nwerd": nwerd(w, wer_clean, d),
            }
        )
    return rows


def mean_werd(rows: list[dict[str, Any]]) -> float | None:
    """Average WERD over rows (the model's one-number robustness summary)."""
    vals = [r["werd"] for r in rows if r.get("werd") is not None]
    return sum(vals) / len(vals) if vals else None


def aurora_average_accuracy(
    wer_by_condition: Mapping[tuple[str, str, float], float],
    snrs: tuple[float, ...] = (0.0, 5.0, 10.0, 15.0, 20.0),
) -> dict[str, float]:
    """Aurora-2 summary: per test set, mean word accuracy (%) over its noises at 0-20 dB.

    Keys of the input are (set, noise, snr_db); accuracy = 100 * (1 - WER). A set is reported
    only when every noise of it has all five SNRs, so partial grids never look complete.
    """
    by_set: dict[str, dict[str, dict[float, float]]] = defaultdict(lambda: defaultdict(dict))
    for (s, noise, snr), w in wer_by_condition.items():
        if snr in snrs:
            by_set[s][noise][snr] = 100.0 * (1.0 - w)
    out = {}
    for s, noises in sorted(by_set.items()):
        if all(len(v) == len(snrs) for v in noises.values()):
            vals = [a for v in noises.values() for a in v.values()]
            out[s] = sum(vals) / len(vals)
    return out


def severity_curves(results: list[dict[str, Any]]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """{model: {perturbation: [(severity, WER), ...] sorted}} from rows with those keys."""
    curves: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.get("severity") is not None:
            curves[r["model"]][r["perturbation"]].append((int(r["severity"]), float(r["wer"])))
    return {m: {p: sorted(v) for p, v in ps.items()} for m, ps in curves.items()}


def markdown_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A Markdown table of `rows` (floats to 3 decimals, None as '-'): asrbench.table's."""
    from asrbench.table import markdown

    return markdown(rows, columns)
