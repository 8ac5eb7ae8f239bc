"""The one place the platform builds scorers and names them.

A `Scorer` compiles its transducers when built, so one is kept per (language, options) in the
process. Its identity has two parts: `config_hash`, the options a user chose (steps, data files
by content, bootstrap...), which decides whether two results are comparable; and `code`, the
scorer's source, recorded so a number can be traced (package versions are in run.json's
provenance). `scoring/` hashes nothing itself: the data files are hashed here.
"""

from __future__ import annotations

import json
import marshal
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from asrbench.fsio import atomic_write_bytes
from asrbench.identity import digest, file_sha256, tree_files, tree_paths
from asrbench.settings import settings
from scoring import Scorer, ScorerConfig
from scoring.dae import Compiled
from scoring.options import parse_options

_SCORERS: dict[tuple[str, str], Scorer] = {}


# ScorerConfig fields that name a data file: in the identity the file counts by its content
# (data_files[kind].sha256), so the same list elsewhere is the same scorer.
_DATA_FILE_FIELDS = ("interjections", "uk_us", "alternatives", "nonspeech_markers")


def _portable(cfg: Any, top: bool = True) -> Any:
    """Config without local paths: a data file is identified by its hash, not its location."""
    if isinstance(cfg, dict):
        drop = ("path", "cache_dir", "versions") + (_DATA_FILE_FIELDS if top else ())
        return {k: _portable(v, False) for k, v in cfg.items() if k not in drop}
    if isinstance(cfg, list):
        return [_portable(v, False) for v in cfg]
    return cfg


@lru_cache(maxsize=1)
def code_digest() -> str:
    """The scorer's code identity: every source and data file of the `scoring` package."""
    import scoring

    root = Path(scoring.__file__).resolve().parent
    # built artefacts are not code: the compiled DP and text work (scoring/_dp.pyx, _fast.pyx,
    # hashed as source) leave their generated C and .so beside them where they were built, and
    # give the same results as the numpy and Python paths where they were not, so a key is the
    # same either way
    rels = tree_paths(
        root, skip_names=("__pycache__", "_dp.c", "_fast.c"), skip_suffixes=(".pyc", ".so")
    )
    return "sha256:" + digest("scorer", config={"code": tree_files(root, rels)})


@dataclass(frozen=True)
class ScorerIdentity:
    config_hash: str
    code: str
    lang: str
    unit: str
    steps: list[str]
    options: dict[str, Any] = field(default_factory=dict)  # what the user chose ({}: defaults)

    def to_dict(self) -> dict[str, Any]:
        return {
            "config_hash": self.config_hash,
            "code": self.code,
            "lang": self.lang,
            "unit": self.unit,
            "steps": self.steps,
            "options": self.options,
        }


def get_scorer(lang: str = "en", options: dict[str, Any] | None = None) -> Scorer:
    """A Scorer for `lang` and user `options` (ScorerConfig fields), built once per process.

    `lang` is any BCP-47 tag (scoring.languages: a language it does not list gets the
    language-neutral steps). Raises ScoringError (an input error) for a malformed tag, an
    unknown option or a value of the wrong type (`scoring.options.parse_options`).
    """
    key = (lang, json.dumps(options or {}, sort_keys=True))
    if key not in _SCORERS:
        opts = parse_options(options, "scorer option")  # the one check of every option
        cfg = ScorerConfig(lang=lang, cache_dir=str(settings().cache), **opts)
        _SCORERS[key] = Scorer(cfg, dae_store=lambda build: _kept_rules(cfg, build))
    return _SCORERS[key]


def dae_rules_key(cfg: ScorerConfig) -> str:
    """The key of a configuration's compiled DAE rules: everything compiling them reads (the
    options, each data file by content, the scoring package's code, the Unicode tables of this
    interpreter and of `regex`, which PUNC's non-ASCII path runs)."""
    import unicodedata

    import regex

    files = {}
    for kind in _DATA_FILE_FIELDS:
        path = cfg.data_file(kind)
        files[kind] = None if path is None else file_sha256(path)
    runtime = {
        "python": list(sys.version_info[:3]),
        "unicodedata": unicodedata.unidata_version,
        "regex": regex.__version__,
    }
    return digest(
        "dae-rules", config=_portable(asdict(cfg)), files=files, code=code_digest(), runtime=runtime
    )


_KEPT_RULES = 32  # compiled rule sets kept in <cache>/dae, newest first (a few KB to 200 KB each)


def _kept_rules(cfg: ScorerConfig, build: Callable[[], Compiled]) -> Compiled:
    """The compiled DAE rules from `<cache>/dae` (scoring.dae.Store), compiled and kept there
    when absent or unreadable: ~8 ms of CPU in every scoring process (the rules' forms
    normalised and indexed) become a file read of ~1 ms."""
    folder = settings().cache / "dae"
    path = folder / f"{dae_rules_key(cfg)}.marshal"
    try:
        # marshal: the compiled rules are plain data, and it reads them several times faster
        # than json or pickle; the file is this cache's own
        return marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        pass  # absent, or cut short: compiled again (Alternatives also checks its layout)
    compiled = build()
    try:
        atomic_write_bytes(path, marshal.dumps(compiled))
        # every change to the scoring code is a new key: the oldest entries go
        kept = sorted(folder.glob("*.marshal"), key=lambda p: p.stat().st_mtime_ns)
        for old in kept[:-_KEPT_RULES]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only or full cache: the rules are compiled in every process, as before
    return compiled


def scorer_config(scorer: Scorer) -> dict[str, Any]:
    """`scorer.config_dict()` with each data file's SHA-256 beside its path (for run.json)."""
    cfg = scorer.config_dict()
    for entry in cfg["data_files"].values():
        entry["sha256"] = file_sha256(entry["path"])
    return cfg


def scorer_identity(scorer: Scorer, options: dict[str, Any] | None = None) -> ScorerIdentity:
    """Config hash (comparability), code digest (provenance) and the user's `options` (what
    `get_scorer` was given: which result a rerun may replace) of a built scorer."""
    cfg = scorer_config(scorer)
    return ScorerIdentity(
        config_hash="sha256:" + digest("scorer", config=_portable(cfg)),
        code=code_digest(),
        lang=scorer.config.lang,
        unit=scorer.config.unit or "word",
        steps=list(cfg.get("steps", [])),
        options=dict(sorted((options or {}).items())),
    )
