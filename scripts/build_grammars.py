#!/usr/bin/env python3
"""Build the NSW grammars of the embedded datasets' languages (`make grammars`; `make setup`).

nemo-text-processing compiles a language's grammars on its first use: 45-130 s per language
with nothing else to do, which the first `ops/score` of that language used to pay. Built here,
that first score only loads them (about a second). Idempotent: a language whose grammars are
in the cache is skipped at once. The languages are those of datasets/*/dataset.yaml (or the
ones named on the command line) that nemo reads; the others need no grammar. Then the
embedded datasets' references of those languages are read through the default pipeline once,
so their NSW readings are in the result cache and a first score pays nemo only for new text
(Italian's tagger takes about 0.2 s per text with a number).

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
from scoring.normalize.nsw import Nsw, grammars_cached, nsw_backend, primary_language


def _language(card: Path) -> str:
    """The primary language of a dataset card (dataset.yaml), "" where it names none."""
    meta = yaml.safe_load(card.read_text(encoding="utf-8")) or {}
    return primary_language(str(meta.get("language", "")))


def embedded_references(datasets_dir: Path, lang: str) -> dict[str, str]:
    """{dataset/utterance ID: reference} of the embedded datasets in `lang` (no audio read)."""
    from asrbench.dataset import DatasetError, load_dataset

    refs: dict[str, str] = {}
    for card in sorted(datasets_dir.glob("*/dataset.yaml")):
        if _language(card) != lang:
            continue
        try:
            ds = load_dataset(card.parent, check_audio=False)
        except DatasetError:  # not a valid dataset (yet): nothing of it to read ahead
            continue
        refs.update({f"{ds.id}/{u.id}": u.text for u in ds.utterances if u.text.strip()})
    return refs


def warm(lang: str, cache: Path, datasets_dir: Path) -> int:
    """Read `lang`'s embedded references through the default pipeline (NSW results cached
    under `cache`); how many references."""
    from scoring import score_corpus

    refs = embedded_references(datasets_dir, lang)
    if refs:
        score_corpus(refs, refs, lang=lang, cache_dir=str(cache), bootstrap=0)
    return len(refs)


def embedded_languages(datasets_dir: Path) -> list[str]:
    """The primary languages of the datasets under `datasets_dir` that nemo has grammars for."""
    langs = {_language(card) for card in datasets_dir.glob("*/dataset.yaml")}
    return sorted(lang for lang in langs if nsw_backend(lang) == "nemo")


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
    if todo:
        build_all(todo, cache)
    for lang in langs:
        n = warm(lang, cache, settings().datasets_dir)
        if n:
            print(f"NSW readings of {n} embedded {lang} references: cached", flush=True)
    return 0


def build_all(todo: list[str], cache: Path) -> None:
    """Compile the grammars of `todo`, a process per language."""
    # One process a language: each build is single-threaded pynini work.
    workers = max(1, min(len(todo), os.cpu_count() or 1))
    print(f"NSW grammars for {' '.join(todo)}: building, {workers} at a time", flush=True)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for lang, seconds in zip(todo, pool.map(build, todo, [cache] * len(todo)), strict=True):
            print(f"NSW grammars for {lang}: built in {seconds:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
