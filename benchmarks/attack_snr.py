"""The SNR of every written perturbed file against its clean parent; the count attacked (issue 28).

For each spec (an attack, or the Gaussian noise beside it), derives the dataset through the bank
(`derive_dataset`: from the cache when it is there, computing what is missing otherwise, exactly
as `ops/perturb` does), then reads every 16-bit WAV the bank wrote and its parent utterance and
measures 20 log10(||clean|| / ||written - clean||) on the samples as written (quantisation
included). The budget is the spec's `snr` parameter.

One JSON line per spec: {"spec", "dataset", "budget_db", "n_parent", "n_written",
"n_changed", "min_db", "max_db", "mean_db", "max_abs_error_db", "within_tol", "tol_db",
"worst": [utterance, dB]}; `n_written` == `n_parent` (the utterances selected) is the "every
utterance attacked" check, `within_tol` that every file is within `--tol` dB of the budget. With
`--per-utt` one line per utterance follows each spec's line. Exit status 1 when a check fails.

    .venv/bin/python benchmarks/attack_snr.py -d mini_en -p pgd:2 -p gaussian_noise:snr=30 \
        [--seed 0] [--tol 0.1] [--per-utt]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def measure(
    dataset: str,
    spec: str,
    seed: int = 0,
    tol: float = 0.1,
    per_utt: bool = False,
    utts: list[str] | None = None,
) -> list[dict]:
    import numpy as np
    import soundfile as sf

    from asrbench.adversarial.pgd import snr_db
    from asrbench.perturb.derive import derive_dataset
    from asrbench.perturb.spec import parse_spec
    from asrbench.resolve import resolve_dataset

    steps = parse_spec(spec)
    budgets = {float(s.params["snr"]) for s in steps if "snr" in s.params}
    if len(budgets) != 1:
        raise SystemExit(f"{spec}: needs exactly one step with an snr parameter")
    budget = budgets.pop()
    parent = resolve_dataset(dataset)
    derived = resolve_dataset(derive_dataset(dataset, spec, seed=seed, utt_ids=utts).path)
    chosen = [u for u in parent.utterances if utts is None or u.id in set(utts)]
    written = {u.id: u for u in derived.utterances}
    rows = []
    for u in chosen:
        if u.id not in written:
            continue
        clean, sr = sf.read(parent.audio_path(u), dtype="float32", always_2d=False)
        attacked, sr2 = sf.read(derived.audio_path(written[u.id]), dtype="float32", always_2d=False)
        if sr != sr2 or clean.shape != attacked.shape:
            raise SystemExit(f"{u.id}: written file differs in rate or length from its parent")
        rows.append((u.id, snr_db(np.asarray(clean, np.float64), attacked)))
    finite = [db for _, db in rows if np.isfinite(db)]
    worst = max(rows, key=lambda r: abs(r[1] - budget)) if rows else None
    head = {
        "spec": spec,
        "dataset": derived.id,
        "budget_db": budget,
        "n_parent": len(chosen),
        "n_written": len(rows),
        "n_changed": len(finite),
        "min_db": min(finite) if finite else None,
        "max_db": max(finite) if finite else None,
        "mean_db": float(np.mean(finite)) if finite else None,
        "max_abs_error_db": abs(worst[1] - budget) if worst else None,
        "within_tol": bool(rows) and all(abs(db - budget) <= tol for _, db in rows),
        "tol_db": tol,
        "worst": list(worst) if worst else None,
    }
    out = [head]
    if per_utt:
        out += [{"spec": spec, "utt": uid, "snr_db": db} for uid, db in rows]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-d", "--dataset", default="mini_en")
    ap.add_argument("-p", "--spec", action="append", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tol", type=float, default=0.1, help="dB")
    ap.add_argument("--per-utt", action="store_true")
    ap.add_argument("--utts", help="only these utterance IDs (comma-separated), as ops/perturb")
    args = ap.parse_args(argv)
    ok = True
    for spec in args.spec:
        for line in measure(
            args.dataset,
            spec,
            args.seed,
            args.tol,
            args.per_utt,
            args.utts.split(",") if args.utts else None,
        ):
            print(json.dumps(line), flush=True)
            if "within_tol" in line:
                ok = ok and line["within_tol"] and line["n_written"] == line["n_parent"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
