"""The one place the benchmark talks to the scorer (`scoring/`).

`Scorer(ScorerConfig(...)).score(refs, hyps)` gives per-utterance results and a summary; the
benchmark never scores any other way, so every stored number comes from the same pipeline.
"""

from __future__ import annotations

import hashlib
import json
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
        """The scorer's own reports (alignments, pra, sys)."""
        written = self.raw.write(out_dir)
        return sorted(str(Path(p).name) for p in written.values())


def _portable(cfg: Any) -> Any:
    """Config without absolute paths (a data file is identified by its hash, not its path)."""
    if isinstance(cfg, dict):
        return {k: _portable(v) for k, v in cfg.items() if k not in ("path", "cache_dir")}
    if isinstance(cfg, list):
        return [_portable(v) for v in cfg]
    return cfg


class BenchmarkScorer:
    """Built once per job (the scorer compiles its transducers once), used per dataset."""

    def __init__(self, lang: str = "en", options: dict | None = None):
        self.lang = lang
        self.options = dict(options or {})
        from scoring import Scorer, ScorerConfig

        self.name = "scoring"
        self._scorer = Scorer(ScorerConfig(lang=lang, **self.options))

    def score(self, refs: dict[str, str], hyps: dict[str, str]) -> Scored:
        """Score; every reference ID yields one record, a missing hypothesis counts as deletions."""
        res = self._scorer.score(refs, hyps)
        utts = []
        for u in res.utterances:
            d = u.to_dict()
            d["ref_norm"] = " ".join(u.ref)
            d["hyp_norm"] = " ".join(u.hyp)
            utts.append(d)
        config = dict(getattr(res, "config", None) or self._scorer.config_dict())
        return Scored(utts, dict(res.summary), config, "scoring", res)
