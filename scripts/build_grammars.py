#!/usr/bin/env python3
"""Build the NSW grammars of the embedded datasets' languages (`make grammars`; `make setup`).

nemo-text-processing compiles a language's grammars on its first use: 45-130 s per language
with nothing else to do, which the first `ops/score` of that language used to pay. Built here,
that first score only loads them (about a second). Idempotent: a language whose grammars are
in the cache is skipped at once. The languages are those of datasets/*/dataset.yaml (or the
ones named on the command line) that nemo reads; the others need no grammar.

    scripts/build_grammars.py [LANG ...]
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from asrbench.settings import settings
from scoring.normalize.nsw import Nsw, grammars_cached, nsw_backend


def embedded_languages(datasets_dir: Path) -> list[str]:
    """The primary languages of the datasets under `datasets_dir` that nemo has grammars for."""
    langs = set()
    for card in sorted(datasets_dir.glob("*/dataset.yaml")):
        lang = str((yaml.safe_load(card.read_text(encoding="utf-8")) or {}).get("language", ""))
        if nsw_backend(lang) == "nemo":
            langs.add(lang.replace("_", "-").split("-")[0].lower())
    return sorted(langs)


def build(lang: str, cache: Path) -> float:
    """Compile `lang`'s grammars into the cache; the seconds it took."""
    start = time.perf_counter()
    Nsw(cache, lang).normalizer()
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    cache = settings().cache
    langs = argv or embedded_languages(settings().datasets_dir)
    todo = [lang for lang in langs if not grammars_cached(cache / "nemo_tn", lang)]
    for lang in sorted(set(langs) - set(todo)):
        print(f"NSW grammars for {lang}: built already ({cache / 'nemo_tn'})", flush=True)
    if not todo:
        return 0
    # One process a language: each build is single-threaded pynini work.
    workers = max(1, min(len(todo), os.cpu_count() or 1))
    print(f"NSW grammars for {' '.join(todo)}: building, {workers} at a time", flush=True)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for lang, seconds in zip(todo, pool.map(build, todo, [cache] * len(todo)), strict=True):
            print(f"NSW grammars for {lang}: built in {seconds:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
