"""What the analyses read: stored result cells as arrays, and datasets at a model's rate.

A result cell's `utterances.jsonl` (docs/RESULTS.md) holds, per utterance, the alignment
counts and ops (scored datasets) or only the raw hypothesis (reference-free datasets). Nothing
is re-run or re-scored here: the cells come from `run_benchmark`, whose hypotheses are cached.

Model programs resample their input themselves (models/README.md); for one that cannot,
`--resample auto` gives a model whose card declares another sample rate than the dataset's a
resampled copy of the dataset: soxr VHQ, 16-bit WAV, under
`<cache>/fairness/datasets/<id>__sr<rate>`, with `derived_from` recording the parent's content
hash; the copy is rebuilt when the parent changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from asrbench.errors import InputError
from asrbench.fairness.tokens import TokenTable, Vocab, normalise

if TYPE_CHECKING:
    from asrbench.results.summary import Summary
from asrbench.fsio import replace_dir, stage_dir

RESAMPLER = "soxr VHQ, 16-bit PCM WAV"


@dataclass(frozen=True)
class Cell:
    """One model x condition result: where it is and its per-utterance records by ID."""

    model: str
    condition: str
    path: Path
    summary: Summary
    records: dict[str, dict]

    def missing(self, ids: list[str]) -> list[str]:
        return [i for i in ids if i not in self.records]

    def counts(self, ids: list[str]) -> dict[str, np.ndarray]:
        """Alignment counts per utterance (cor, sub, ins, del, n_ref, n_hyp, missing)."""
        recs = [self.records[i] for i in ids]
        if recs and "n_ref" not in recs[0]:
            raise InputError(f"{self.path}: a reference-free result has no alignment counts")
        return {
            k: np.array([int(r[k]) for r in recs], dtype=np.int64)
            for k in ("cor", "sub", "ins", "del", "n_ref", "n_hyp", "missing")
        }

    def hyps(self, ids: list[str]) -> list[str | None]:
        """Raw hypotheses; None for an utterance the model failed on."""
        return [
            None if self.records[i].get("failed") else (self.records[i].get("hyp") or "")
            for i in ids
        ]

    def ref_ops(self, ids: list[str], vocab: Vocab) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(utterance index, reference word id or -1, error) per reference word occurrence."""
        utt, word, err = [], [], []
        for i, uid in enumerate(ids):
            for op, ref, _ in self.records[uid].get("ops") or []:
                if ref is None:
                    continue
                utt.append(i)
                word.append(vocab.index.get(ref, -1))
                err.append(op in ("S", "D"))
        return (
            np.array(utt, dtype=np.int64),
            np.array(word, dtype=np.int64),
            np.array(err, dtype=bool),
        )


def read_cell(model: str, condition: str, path: Path) -> Cell:
    """A stored cell as the analyses use it, read by the one reader (`results.store`)."""
    from asrbench.results.store import read_cell as read_stored

    stored = read_stored(Path(path), model)
    return Cell(model, condition, Path(path), stored.summary, stored.records())


def tokens(cells: list[Cell], ids: list[str], vocab: Vocab, lang: str) -> list[TokenTable]:
    """Normalised hypotheses of several cells, one table each, one shared vocabulary."""
    texts = [c.hyps(ids) for c in cells]
    flat = [t for ts in texts for t in ts]
    norm = iter(normalise(flat, lang))
    return [vocab.table([next(norm) for _ in ts]) for ts in texts]


def at_rate(root: Path, rate: int, cache: Path) -> Path:
    """`root` itself when its sample rate is `rate`, else a resampled copy (built once)."""
    from asrbench.dataset import load_dataset, write_dataset

    ds = load_dataset(root, check_audio=False)
    if ds.sample_rate == rate:
        return Path(root)
    parent_hash = ds.content_hash()
    out = cache / "fairness" / "datasets" / f"{ds.id}__sr{rate}"
    # dataset.yaml's schema asks every derived dataset for a spec and a seed: a rate change is
    # no perturbation of the bank, so the spec names it in words and the seed is unused (0).
    want = {
        "dataset": ds.id,
        "hash": parent_hash,
        "spec": f"sample_rate={rate}",
        "seed": 0,
        "resample": {"from": ds.sample_rate, "to": rate, "with": RESAMPLER},
    }
    try:
        meta = yaml.safe_load((out / "dataset.yaml").read_text(encoding="utf-8"))
        if meta.get("derived_from") == want:
            return out
    except (OSError, yaml.YAMLError, AttributeError):
        pass
    from asrbench import audio

    stage = stage_dir(out)
    (stage / "audio").mkdir()
    rows = []
    for u in ds.utterances:
        y = np.clip(audio.read_mono(ds.audio_path(u), rate), -1.0, 1.0)
        rel = f"audio/{u.id}.wav"
        audio.write_pcm16(stage / rel, y, rate)
        rows.append(u.replaced(audio=rel, duration=round(len(y) / rate, 3)))
    meta = {k: v for k, v in ds.meta.items() if k not in ("id", "derived_from")}
    meta.update(
        {
            "id": out.name,
            "sample_rate": rate,
            "name": f"{ds.meta.get('name', ds.id)} at {rate} Hz",
            "description": f"{ds.id} resampled from {ds.sample_rate} Hz to {rate} Hz "
            f"({RESAMPLER}) by ops/fairness for models that take {rate} Hz.",
            "derived_from": want,
        }
    )
    write_dataset(stage, meta, ds.columns, rows)
    load_dataset(stage)  # the copy passes the same validator as any dataset
    return replace_dir(stage, out)
