"""Composed datasets: a folder whose references are committed but whose audio is composed on
first use from sources the repository already holds (dataset.yaml `composed: <recipe>`), so that
a set of many minutes adds kilobytes, not tens of megabytes, to a clone.

`composed.json` beside dataset.yaml records the SHA-256 of every source file the recipe reads
and of every audio file it writes. On first use (dataset resolution, ops/validate) the sources
are checked against it, the recipe writes the whole folder into a staging folder, the written
references must equal the committed ones byte for byte and the audio its recorded hashes, and
only then does `audio/` move into place in one rename: a reader sees no audio or all of it,
and two processes composing at once both end with the same bytes.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from asrbench.errors import InputError
from asrbench.fsio import atomic_write_json, replace_dir, stage_dir
from asrbench.identity import file_sha256
from asrbench.settings import REPO_ROOT

HASHES = "composed.json"
CHECKED = ("metadata.tsv", "segments.seglst.json", "segments.rttm", "dataset.yaml")


class ComposeError(InputError):
    """A composed set that cannot be composed here: a source changed, or the result differs."""


def _recipes() -> dict[str, Callable[[Path, Path], list[str]]]:
    from asrbench.importers import meeting_overlap

    return {meeting_overlap.NAME: meeting_overlap.build}


def recipe_of(root: Path) -> str | None:
    """The `composed:` recipe a dataset folder names, None for any other folder."""
    card = root / "dataset.yaml"
    if not card.is_file():
        return None
    try:
        meta = yaml.safe_load(card.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return None  # the loader reports the card itself
    value = meta.get("composed") if isinstance(meta, dict) else None
    return value if isinstance(value, str) else None


def build(name: str, out: Path, repo: Path = REPO_ROOT) -> None:
    """Write the whole folder of recipe `name` to `out` and its composed.json (the recipes'
    build scripts call this)."""
    recipe = _recipe(name, out)
    sources = recipe(out, repo)
    audio = sorted(p.relative_to(out).as_posix() for p in (out / "audio").glob("*.wav"))
    atomic_write_json(
        out / HASHES,
        {
            "recipe": name,
            "sources": {s: file_sha256(repo / s) for s in sources},
            "audio": {a: file_sha256(out / a) for a in audio},
        },
    )


def _recipe(name: str, root: Path) -> Callable[[Path, Path], list[str]]:
    recipes = _recipes()
    if name not in recipes:
        raise ComposeError(
            f"{root / 'dataset.yaml'}: composed: {name!r} is no recipe of this asrbench "
            f"(known: {', '.join(sorted(recipes))}); update asrbench or remove the key"
        )
    return recipes[name]


def ensure_audio(root: Path, repo: Path = REPO_ROOT) -> None:
    """Compose the audio of a composed set that lacks it; nothing for any other folder or when
    every recorded audio file is there."""
    name = recipe_of(root)
    if name is None:
        return
    recorded = _recorded(root)
    if all((root / a).is_file() for a in recorded["audio"]):
        return
    _recipe(name, root)
    _check_sources(root, recorded["sources"], repo)
    print(
        f"composing {name} ({len(recorded['audio'])} recordings) from the embedded sources "
        f"into {root / 'audio'} (once)",
        file=sys.stderr,
        flush=True,
    )
    try:
        scratch = stage_dir(root / "audio")  # .audio.tmp<PID>: a killed run's goes next time
    except PermissionError as exc:
        raise ComposeError(
            f"{root}: cannot write its composed audio there ({exc.strerror}); copy the folder "
            "somewhere writable and give that path"
        ) from None
    try:
        build(name, scratch / "set", repo)
        _check_result(root, scratch / "set", recorded["audio"])
        replace_dir(scratch / "set" / "audio", root / "audio")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _recorded(root: Path) -> dict:
    import json

    path = root / HASHES
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {"sources": dict(data["sources"]), "audio": dict(data["audio"])}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ComposeError(f"{path}: unreadable ({exc}); restore it from the repository") from None


def _check_sources(root: Path, sources: dict[str, str], repo: Path) -> None:
    for rel, sha in sources.items():
        path = repo / rel
        if not path.is_file():
            raise ComposeError(
                f"{root.name}: its source {path} is missing; restore it (git checkout)"
            )
        if file_sha256(path) != sha:
            raise ComposeError(
                f"{root.name}: its source {path} differs from the one it was composed from "
                f"({root / HASHES}); restore it, or rebuild the set with its build script"
            )


def _check_result(root: Path, built: Path, audio: dict[str, str]) -> None:
    for name in CHECKED:
        if (built / name).read_bytes() != (root / name).read_bytes():
            raise ComposeError(
                f"{root / name}: the recipe wrote different content here; rebuild the set with "
                "its build script (or restore the file)"
            )
    for rel, sha in audio.items():
        if file_sha256(built / rel) != sha:
            raise ComposeError(
                f"{root.name}: composed {rel} does not match its hash in {HASHES} (a different "
                "numpy/soxr?); rebuild the set with its build script and report it"
            )
