"""Precision and recall of the reference audit on planted faults in a real set (issue 39, item 2).

Reads the stored hypotheses of >= 3 models on a dataset (`ops/benchmark -m ... -d mini_en`),
takes the references the cells were scored on, applies `--fix ID=TEXT` corrections (the known
true texts, so that the set starts clean), then, per seed, plants faults of four kinds into
distinct utterances:

    swap      the reference replaced by another utterance's reference
    truncate  the reference cut to its first 30-70 % of words
    word      one word replaced by a word of another reference
    accent    one letter of a word (4+ letters) replaced by `?` (a lost accented letter,
              as the Asterisk transcripts show it)

scores each voter's hypotheses against the planted references with the cells' scorer, runs the
audit's rule (`asrbench.results.audit.find_suspects`) over a grid of thresholds, and prints
precision and recall with counts and Wilson 95 % intervals: per fault kind at the defaults,
overall over the grid. Also the audit of the stored cells as they are (`--real`: the unfixed
set, whose real faults it should flag).

    .venv/bin/python benchmarks/reference_audit.py --results results -d mini_en \
        --fix 'arctic_a0010=...' --fix 'LJ001-0024=...' --seeds 10 --per-kind 2 [--json out.json]
        [-m MODEL ...]   # only these models' cells (default: every model stored on the dataset)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asrbench.results import audit  # noqa: E402
from asrbench.results.store import StoredCell, scan  # noqa: E402
from asrbench.scorers import get_scorer  # noqa: E402

KINDS = ("swap", "truncate", "word", "accent")
GRID_REF_MIN = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4)
GRID_AGREE_MAX = (0.0, 0.05, 0.1, 0.2, 0.3)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """Wilson score interval of a proportion k/n (None for n = 0)."""
    if n == 0:
        return None
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def plant(kind: str, uid: str, refs: dict[str, str], rng: random.Random) -> str | None:
    """The reference of `uid` with one fault of `kind`; None where the kind cannot apply."""
    words = refs[uid].split()
    others = [u for u in sorted(refs) if u != uid]
    if kind == "swap":
        return refs[rng.choice(others)]
    if kind == "truncate":
        if len(words) < 4:
            return None
        keep = max(1, round(len(words) * rng.uniform(0.3, 0.7)))
        return " ".join(words[:keep])
    if kind == "word":
        pool = [w for u in others for w in refs[u].split() if w.isalpha()]
        i = rng.randrange(len(words))
        choices = [w for w in pool if w.lower() != words[i].lower().strip(",.;:!?")]
        words[i] = rng.choice(choices)
        return " ".join(words)
    long = [i for i, w in enumerate(words) if sum(ch.isalpha() for ch in w) >= 4]
    if not long:
        return None
    i = rng.choice(long)
    letters = [j for j, ch in enumerate(words[i]) if ch.isalpha()]
    j = rng.choice(letters[1:])  # not the first letter: `pu? essere`, `Il numero ? stato`
    words[i] = words[i][:j] + "?" + words[i][j + 1 :]
    return " ".join(words)


def _cells(results: Path, dataset: str, models: list[str]) -> list[StoredCell]:
    found = scan(results, models or None, [dataset])
    return [c for (_, d), c in sorted(found.cells.items()) if d == dataset]


class Setup:
    """The voters' speakers, their raw hypotheses, the clean references, the cached scorer."""

    def __init__(self, cells: list[StoredCell], fixes: dict[str, str], by: str) -> None:
        models = {c.model: c for c in cells}
        ter = {m: c.summary.metrics.ter for m, c in models.items() if c.summary.metrics}
        self.voters = audit.group_voters({m: c.card for m, c in models.items()}, ter, by)
        self.speakers = [v.speaker for v in self.voters]
        recs = {m: models[m].records() for m in self.speakers}
        self.hyps = {m: audit.voiced(recs[m]) for m in self.speakers}
        self.stored_refs = {u: r["ref"] for u, r in recs[self.speakers[0]].items()}
        self.refs = {**self.stored_refs, **fixes}
        sc = models[self.speakers[0]].summary.scorer
        self.scorer = get_scorer(sc.get("lang", "en"), sc.get("options") or {})
        inner = audit.scorer_mutual(sc.get("lang", "en"), sc.get("options") or {})
        self._mutual: dict[tuple[str, str, str], float] = {}
        self.mutual = lambda u, a, b: self._mutual.setdefault((u, a, b), inner(u, a, b))

    def ref_mter(self, refs: dict[str, str]) -> dict[str, dict[str, float]]:
        out = {}
        for m in self.speakers:
            res = self.scorer.utterances(refs, {u: h for u, h in self.hyps[m].items()})
            out[m] = {
                r.id: r.errors / max(len(r.ref), len(r.hyp), 1) for r in res if r.id in self.hyps[m]
            }
        return out


def one_seed(setup: Setup, seed: int, per_kind: int) -> tuple[dict, dict[str, str]]:
    """(ref mTER per speaker on the planted set, planted utterance -> kind)."""
    rng = random.Random(seed)
    ids = sorted(setup.refs)
    rng.shuffle(ids)
    refs = dict(setup.refs)
    planted: dict[str, str] = {}
    for kind in KINDS:
        n = 0
        while n < per_kind and ids:
            uid = ids.pop()
            new = plant(kind, uid, setup.refs, rng)
            if new is None or new == setup.refs[uid]:
                continue
            refs[uid], planted[uid], n = new, kind, n + 1
    return {"refs": refs, "mter": setup.ref_mter(refs)}, planted


def count(flags: set[str], planted: dict[str, str], n_utts: int) -> dict:
    tp = {k: sum(1 for u, kk in planted.items() if kk == k and u in flags) for k in KINDS}
    n = {k: sum(1 for kk in planted.values() if kk == k) for k in KINDS}
    fp = len(flags - set(planted))
    return {"tp": tp, "n": n, "fp": fp, "n_clean": n_utts - len(planted)}


def _add(total: dict, c: dict) -> None:
    for k in KINDS:
        total["tp"][k] = total["tp"].get(k, 0) + c["tp"][k]
        total["n"][k] = total["n"].get(k, 0) + c["n"][k]
    total["fp"] += c["fp"]
    total["n_clean"] += c["n_clean"]


def evaluate(setup: Setup, seeds: int, per_kind: int) -> dict:
    """Counts for every threshold pair of the grid, summed over seeds."""
    grid = {
        (r, a): {"tp": {}, "n": {}, "fp": 0, "n_clean": 0}
        for r in GRID_REF_MIN
        for a in GRID_AGREE_MAX
    }
    for seed in range(seeds):
        data, planted = one_seed(setup, seed, per_kind)
        for (r, a), total in grid.items():
            th = audit.Thresholds(r, a)
            found = audit.find_suspects(data["mter"], setup.hyps, data["refs"], setup.mutual, th)
            _add(total, count({s.id for s in found}, planted, len(setup.refs)))
    return grid


def summarise(c: dict) -> dict:
    tp = sum(c["tp"].values())
    n = sum(c["n"].values())
    flagged = tp + c["fp"]
    per_kind = {
        k: {
            "found": c["tp"][k],
            "planted": c["n"][k],
            "recall": c["tp"][k] / c["n"][k] if c["n"][k] else None,
            "ci": wilson(c["tp"][k], c["n"][k]),
        }
        for k in KINDS
    }
    return {
        "recall": tp / n if n else None,
        "recall_ci": wilson(tp, n),
        "found": tp,
        "planted": n,
        "precision": tp / flagged if flagged else None,
        "precision_ci": wilson(tp, flagged),
        "flagged": flagged,
        "false_flags": c["fp"],
        "clean_utterances": c["n_clean"],
        "per_kind": per_kind,
    }


def _pct(x: float | None, ci: tuple[float, float] | None) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.0f} % [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]" if ci else f"{100 * x:.0f} %"


def real_audit(setup: Setup, th: audit.Thresholds) -> list[dict]:
    """The stored references as they are (no fixes): what the audit flags on the real set."""
    mter = setup.ref_mter(setup.stored_refs)
    found = audit.find_suspects(mter, setup.hyps, setup.stored_refs, setup.mutual, th)
    return [s.to_dict() for s in found]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.add_argument("-d", "--dataset", default="mini_en")
    ap.add_argument("-m", "--model", action="append", default=[], help="only these models")
    ap.add_argument("--fix", action="append", default=[], help="ID=TEXT: the true reference")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--per-kind", type=int, default=2)
    ap.add_argument("--voters", choices=audit.VOTERS, default="weights")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    fixes = dict(f.split("=", 1) for f in a.fix)
    setup = Setup(_cells(a.results, a.dataset, a.model), fixes, a.voters)
    print(f"voters: {', '.join(v.name + ' (' + v.speaker + ')' for v in setup.voters)}")
    grid = {k: summarise(v) for k, v in evaluate(setup, a.seeds, a.per_kind).items()}
    default = (audit.DEFAULT_REF_MIN, audit.DEFAULT_AGREE_MAX)
    print(f"\n{a.seeds} seeds x {a.per_kind} faults per kind; grid (ref_min, agree_max):")
    print("ref_min agree_max  recall            precision         flagged  false")
    for (r, ag), s in sorted(grid.items()):
        mark = " <- default" if (r, ag) == default else ""
        rec = _pct(s["recall"], s["recall_ci"])
        prec = _pct(s["precision"], s["precision_ci"])
        print(
            f"{r:7.2f} {ag:9.2f}  {rec:17} {prec:17} {s['flagged']:7d} {s['false_flags']:6d}{mark}"
        )
    print("\nper kind at the defaults:")
    for k, s in grid[default]["per_kind"].items():
        print(f"  {k:9} {s['found']:3d}/{s['planted']:<3d} recall {_pct(s['recall'], s['ci'])}")
    real = real_audit(setup, audit.Thresholds(*default))
    print(
        f"\nstored references as they are: {len(real)} flagged: {', '.join(s['id'] for s in real)}"
    )
    if a.json:
        out = {
            "voters": [v.to_dict() for v in setup.voters],
            "seeds": a.seeds,
            "per_kind": a.per_kind,
            "grid": [{"ref_min": r, "agree_max": ag, **s} for (r, ag), s in sorted(grid.items())],
            "real": real,
        }
        a.json.write_text(json.dumps(out, indent=1, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
