"""The one place the benchmark talks to the scorer (`scoring/`).

`Scorer(ScorerConfig(...)).score(refs, hyps)` gives per-utterance results and a summary; if the
scorer package cannot be imported (a stripped-down install), a plain fallback scorer (lower
case, punctuation removed, Levenshtein alignment) keeps the job usable and says so in
`run.json` and `summary.json` (`scorer.name`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Scored:
    """Scorer output reduced to what the benchmark writes."""

    utterances: list[dict]  # per-utterance records (to_dict of the scorer + normalised text)
    summary: dict
    config: dict  # provenance: configuration, data-file hashes, versions
    name: str
    raw: Any = None  # the scorer's own result, for its `.write(out_dir)` reports
    extra: dict = field(default_factory=dict)

    @property
    def config_hash(self) -> str:
        blob = json.dumps(_portable(self.config), sort_keys=True).encode()
        return "sha256:" + hashlib.sha256(blob).hexdigest()

    def write_reports(self, out_dir: Path) -> list[str]:
        """The scorer's own reports (alignments, pra, sys); the fallback writes alignments."""
        if self.raw is not None and hasattr(self.raw, "write"):
            written = self.raw.write(out_dir)
            return sorted(str(Path(p).name) for p in written.values())
        from asrbench.fsio import atomic_write_text

        atomic_write_text(out_dir / "alignments.txt", "".join(_pra(u) for u in self.utterances))
        return ["alignments.txt"]


def _portable(cfg: Any) -> Any:
    """Config without absolute paths (a data file is identified by its hash, not its path)."""
    if isinstance(cfg, dict):
        return {k: _portable(v) for k, v in cfg.items() if k not in ("path", "cache_dir")}
    if isinstance(cfg, list):
        return [_portable(v) for v in cfg]
    return cfg


def _pra(u: dict) -> str:
    ref = [r or "*" * len(h or "") for _, r, h in u["ops"]]
    hyp = [h or "*" * len(r or "") for _, r, h in u["ops"]]
    w = [max(len(a), len(b)) for a, b in zip(ref, hyp, strict=True)]
    return (f"id: {u['id']}\nREF: {' '.join(a.ljust(n) for a, n in zip(ref, w, strict=True))}\n"
            f"HYP: {' '.join(b.ljust(n) for b, n in zip(hyp, w, strict=True))}\n"
            f"OPS: {' '.join(o[0].ljust(n) for o, n in zip(u['ops'], w, strict=True))}\n\n")


class BenchmarkScorer:
    """Built once per job (the scorer compiles its transducers once), used per dataset."""

    def __init__(self, lang: str = "en", options: dict | None = None):
        self.lang = lang
        self.options = dict(options or {})
        try:
            from scoring import Scorer, ScorerConfig
        except ImportError as exc:
            self.name = "fallback"
            self.why = f"scoring package unavailable ({exc})"
            self._scorer = None
            return
        self.name = "scoring"
        self.why = ""
        self._scorer = Scorer(ScorerConfig(lang=lang, **self.options))

    def score(self, refs: dict[str, str], hyps: dict[str, str]) -> Scored:
        """Score; every reference ID yields one record, a missing hypothesis counts as deletions."""
        if self._scorer is None:
            return _fallback(refs, hyps, self.why)
        res = self._scorer.score(refs, hyps)
        utts = []
        for u in res.utterances:
            d = u.to_dict()
            d["ref_norm"] = " ".join(u.ref)
            d["hyp_norm"] = " ".join(u.hyp)
            utts.append(d)
        config = dict(getattr(res, "config", None) or self._scorer.config_dict())
        return Scored(utts, dict(res.summary), config, "scoring", res)


_PUNCT = re.compile(r"[^\w\s']")


def _fallback(refs: dict[str, str], hyps: dict[str, str], why: str) -> Scored:
    def norm(t: str) -> list[str]:
        return _PUNCT.sub(" ", t.lower()).split()

    utts = []
    tot = {"cor": 0, "sub": 0, "ins": 0, "del": 0, "n_ref": 0, "n_hyp": 0, "m": 0}
    wrong = missing = 0
    for uid, ref_text in refs.items():
        r, h = norm(ref_text), norm(hyps.get(uid) or "")
        ops = _align(r, h)
        c = {k: sum(1 for o in ops if o[0] == code) for k, code in
             (("cor", "C"), ("sub", "S"), ("ins", "I"), ("del", "D"))}
        err = c["sub"] + c["ins"] + c["del"]
        miss = not (hyps.get(uid) or "").strip()
        missing += miss
        wrong += bool(err)
        for k in c:
            tot[k] += c[k]
        tot["n_ref"] += len(r)
        tot["n_hyp"] += len(h)
        tot["m"] += max(len(r), len(h))
        utts.append({"id": uid, "ter": err / len(r) if r else None,
                     "mter": err / max(len(r), len(h)) if (r or h) else 0.0,
                     "n_ref": len(r), "n_hyp": len(h), **c, "missing": miss,
                     "ops": [list(o) for o in ops], "alternatives": [],
                     "ref_norm": " ".join(r), "hyp_norm": " ".join(h)})
    n = len(refs)
    errors = tot["sub"] + tot["ins"] + tot["del"]
    summary = {"unit": "word", "n_utts": n, "n_ref": tot["n_ref"], "n_hyp": tot["n_hyp"],
               "cor": tot["cor"], "sub": tot["sub"], "ins": tot["ins"], "del": tot["del"],
               "errors": errors, "ter": errors / tot["n_ref"] if tot["n_ref"] else None,
               "mter": errors / tot["m"] if tot["m"] else 0.0, "ser": wrong / n if n else None,
               "n_missing": missing, "coverage": (n - missing) / n if n else None}
    summary["wer"] = summary["ter"]
    config = {"name": "asrbench.benchmark fallback scorer", "why": why,
              "steps": ["lower-case", "punctuation removed"], "data_files": {}}
    return Scored(utts, summary, config, "fallback")


def _align(ref: list[str], hyp: list[str]) -> list[tuple[str, str | None, str | None]]:
    n, m = len(ref), len(hyp)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i
    for j in range(m + 1):
        d[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]))
    ops: list[tuple[str, str | None, str | None]] = []
    i, j = n, m
    while i or j:
        if i and j and d[i][j] == d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]):
            ops.append(("C" if ref[i - 1] == hyp[j - 1] else "S", ref[i - 1], hyp[j - 1]))
            i, j = i - 1, j - 1
        elif i and d[i][j] == d[i - 1][j] + 1:
            ops.append(("D", ref[i - 1], None))
            i -= 1
        else:
            ops.append(("I", None, hyp[j - 1]))
            j -= 1
    return ops[::-1]
