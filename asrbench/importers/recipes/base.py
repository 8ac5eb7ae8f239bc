"""What a recipe is, and the one function that runs any of them.

A recipe knows a test set's official files (`Archive`: path under its base URL, size and the
published checksum), which archive members it needs, and how to turn the extracted files into
`Item`s (segmenting long recordings by the set's own segmentation). `run_recipe` downloads (or
takes `--from` a mirror, an archive or an extracted copy), verifies, extracts only the members
needed into a scratch folder of the cache, converts and writes the dataset atomically, with its
licence, citation, source and the archives' checksums in dataset.yaml.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import yaml

from asrbench.errors import InputError
from asrbench.importers.common import ImportProblem, Item, build_dataset, check_out_folder
from asrbench.importers.download import Archive, DownloadError, extract, fetch, local

UNPACK = (".tar.gz", ".tgz", ".tar", ".zip", ".tar.bz2", ".tar.xz")


@dataclass(frozen=True)
class RecipeOptions:
    """What a user can choose for a recipe: the language (multilingual sets), the split."""

    language: str = "en"
    split: str = "test"


@dataclass(frozen=True)
class Recipe:
    name: str
    title: str
    base_url: str  # the official location; archive paths are relative to it
    archives: Callable[[RecipeOptions], list[Archive]]
    wanted: Callable[[str, RecipeOptions], bool]  # archive member -> extract it?
    items: Callable[[Path, RecipeOptions], Iterator[Item]]  # extracted root -> utterances
    marker: Callable[[RecipeOptions], str]  # a glob that finds the set inside an extracted copy
    licence: str
    citation: str
    homepage: str
    hours: str = "?"  # of the official test split, as published
    utterances: str = "?"
    needs_from: str = ""  # non-empty: no public download; says how to obtain the data
    languages: tuple[str, ...] = ("en",)
    notes: str = ""
    multilingual: bool = False
    splits: tuple[str, ...] = ("test",)
    extra_meta: dict = field(default_factory=dict)
    # (extracted root, the new dataset folder, its row IDs) -> dataset.yaml keys: files a
    # recipe adds beside the audio (Earnings' NLP references: `nlp:`)
    sidecars: Callable[[Path, Path, list[str]], dict] | None = None


def parse_checksums(values: list[str]) -> dict[str, tuple[str, str]]:
    """`NAME=sha256:HEX` / `NAME=md5:HEX` options -> {NAME: (algo, hex)}."""
    out = {}
    for v in values:
        name, _, spec = v.partition("=")
        algo, _, hexd = spec.partition(":")
        if not name or algo not in ("sha256", "md5") or not hexd:
            raise InputError(f"--checksum {v!r}: write ARCHIVE=sha256:HEX or ARCHIVE=md5:HEX")
        out[name] = (algo, hexd.lower())
    return out


def _override(archive: Archive, sums: dict[str, tuple[str, str]]) -> Archive:
    if archive.name not in sums:
        return archive
    algo, hexd = sums[archive.name]
    return replace(
        archive,
        size=None,
        md5=hexd if algo == "md5" else None,
        sha256=hexd if algo == "sha256" else None,
        checksum_source="--checksum given by the user",
    )


def _place(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def run_recipe(
    recipe: Recipe,
    out: Path,
    *,
    dataset_id: str,
    source: str | None = None,
    options: RecipeOptions = RecipeOptions(),
    checksums: list[str] | None = None,
    rate: int = 16000,
    force: bool = False,
    cache: Path | None = None,
) -> Path:
    """Fetch, verify, extract and import one recipe into `out`; returns `out`."""
    from asrbench.settings import settings

    check_out_folder(Path(out), force)  # before any download

    if (
        recipe.languages
        and recipe.multilingual is False
        and options.language not in recipe.languages
    ):
        raise InputError(
            f"{recipe.name}: --language {options.language!r} not available "
            f"(has {', '.join(recipe.languages)})"
        )
    if options.split not in recipe.splits:
        raise InputError(
            f"{recipe.name}: --split {options.split!r} not available "
            f"(has {', '.join(recipe.splits)})"
        )
    if recipe.needs_from and not source:
        raise InputError(
            f"{recipe.name}: no public download; {recipe.needs_from}, then pass "
            "--from PATH (the archive or the extracted folder)"
        )
    cache = cache or settings().cache
    sums = parse_checksums(checksums or [])
    archives = [_override(a, sums) for a in recipe.archives(options)]
    unknown = set(sums) - {a.name for a in archives}
    if unknown:
        raise InputError(
            f"--checksum names {', '.join(sorted(unknown))}, not a file of "
            f"{recipe.name} ({', '.join(a.name for a in archives)})"
        )
    scratch_root = cache / "extract"
    scratch_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{recipe.name}-", dir=scratch_root))
    try:
        extracted_copy = _extracted_copy(recipe, source, options)
        records = []
        if extracted_copy is not None:
            root = extracted_copy
            records.append(
                {
                    "url": str(extracted_copy),
                    "sha256": "-",
                    "verified": "extracted copy given with --from (not checked)",
                }
            )
        else:
            root = scratch
            for a in archives:
                path, got, url, downloaded = _obtain(
                    recipe, a, source, cache, single=len(archives) == 1
                )
                published = a.sha256 or a.md5
                records.append(
                    {
                        "url": url,
                        "sha256": got["sha256"],
                        "verified": (
                            f"{'sha256' if a.sha256 else 'md5'} {published} ({a.checksum_source})"
                        )
                        if published
                        else "no published checksum",
                    }
                )
                if a.name.endswith(UNPACK):
                    try:
                        extract(path, scratch, lambda n: recipe.wanted(n, options))
                    except DownloadError:
                        if downloaded:
                            path.unlink(missing_ok=True)
                        raise
                else:
                    _place(path, scratch / a.path)
        if not any(root.glob(recipe.marker(options))):
            raise ImportProblem(
                f"{recipe.name}: {recipe.marker(options)} not found in "
                f"{source or recipe.base_url}; is this the right archive/folder?"
            )
        built = build_dataset(
            out,
            recipe.items(root, options),
            dataset_id=dataset_id,
            rate=rate,
            language=options.language.replace("_", "-").split("-")[0],
            licence=recipe.licence,
            source=f"{recipe.title}: {source or recipe.base_url}",
            description=f"{recipe.title}, imported by `ops/import "
            f"{recipe.name}`. Reference text as published.",
            force=force,
            meta=_card(recipe, options, records),
        )
        return _add_sidecars(built, partial(recipe.sidecars, root) if recipe.sidecars else None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _card(recipe: Recipe, options: RecipeOptions, records: list[dict]) -> dict:
    """dataset.yaml's keys from the recipe: its name, where from, the archives fetched."""
    return {
        "name": f"{recipe.title} ({options.language}, {options.split})"
        if recipe.multilingual
        else recipe.title,
        "recipe": recipe.name,
        "url": recipe.homepage,
        "citation": recipe.citation,
        "archives": records,
        **recipe.extra_meta,
    }


def _add_sidecars(folder: Path, sidecars: Callable[[Path, list[str]], dict] | None) -> Path:
    """A recipe's files beside the audio (`Recipe.sidecars`, given the built dataset's row
    IDs), and the dataset.yaml keys naming them; validated again."""
    from asrbench.dataset import load_dataset
    from asrbench.fsio import atomic_write_text

    keys = sidecars(folder, [u.id for u in load_dataset(folder)]) if sidecars else {}
    if keys:
        card = yaml.safe_load((folder / "dataset.yaml").read_text(encoding="utf-8"))
        card.update(keys)
        text = yaml.safe_dump(card, sort_keys=False, allow_unicode=True)
        atomic_write_text(folder / "dataset.yaml", text)
        load_dataset(folder)
    return folder


def _extracted_copy(recipe: Recipe, source: str | None, options: RecipeOptions) -> Path | None:
    if not source or "://" in source:
        return None
    path = Path(source)
    if path.is_dir() and any(path.glob(recipe.marker(options))):
        return path
    return None


def _obtain(
    recipe: Recipe, a: Archive, source: str | None, cache: Path, single: bool
) -> tuple[Path, dict[str, str], str, bool]:
    """(file, digests, where from, downloaded?) for one archive of a recipe. `--from` is the
    archive itself (one-archive recipes), a folder or base URL holding the official paths, or
    an extracted copy (handled before this)."""
    if source and "://" not in source:
        path = Path(source)
        if path.is_file() and (single or path.name == a.name):
            return (*local(path, a), str(path), False)
        for cand in (path / a.path, path / a.name):
            if cand.is_file():
                return (*local(cand, a), str(cand), False)
        raise InputError(
            f"--from {source}: neither {a.path} nor {a.name} is there, nor an "
            f"extracted copy ({recipe.marker(RecipeOptions())})"
        )
    if source:
        from urllib.parse import urlparse

        last = urlparse(source).path.rsplit("/", 1)[-1]
        is_file_url = single and (last == a.name or last.endswith(UNPACK))
        url = source if is_file_url else f"{source.rstrip('/')}/{a.path}"
    else:
        url = f"{recipe.base_url.rstrip('/')}/{a.path}"
    return (*fetch(url, a, cache), url, True)
