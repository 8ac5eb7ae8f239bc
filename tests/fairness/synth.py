"""Synthetic per-utterance results with planted effects, for tests with known answers."""

from __future__ import annotations

import numpy as np

from asrbench.fairness.groups import Row, make_grouping


def grouping(
    speakers: dict[str, str],
    utts_per_speaker: int,
    column: str = "GENDER",
    min_speakers: int = 3,
    min_utts: int = 20,
):
    """speaker -> label; `utts_per_speaker` utterances each, in speaker order."""
    rows = [
        Row(f"{s}-{i}", label, s) for s, label in speakers.items() for i in range(utts_per_speaker)
    ]
    return make_grouping(rows, column, "synthetic", min_speakers, min_utts)


def counts(errors: np.ndarray, n_ref: np.ndarray) -> dict[str, np.ndarray]:
    """Alignment counts where every error is a substitution (|hyp| = |ref|)."""
    errors = np.asarray(errors, dtype=np.int64)
    n_ref = np.asarray(n_ref, dtype=np.int64)
    return {
        "cor": n_ref - errors,
        "sub": errors,
        "ins": np.zeros_like(errors),
        "del": np.zeros_like(errors),
        "n_ref": n_ref,
        "n_hyp": n_ref.copy(),
        "missing": np.zeros(len(errors), dtype=np.int64),
    }
