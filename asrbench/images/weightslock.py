"""Weights pinned by a lock: a card's folder or hub files, checked against `weights.lock`.

A card that names its weights by a folder (`weights.dir`) or by a hub repository and revision
(`weights.hub`, fetched at build time) without writing their checksums in `weights.sha256`
gets them pinned here: the first build writes `models/<ID>/weights.lock` (JSON: the source,
the hub commit the revision resolved to, the SHA-256 of every file), every later build checks
the files against it and stops on a difference, naming the file, both checksums and what to do.
The lock is a file of the model folder, so it is part of the model's source identity and the
image tag: it is written before the tag is computed, so the first build's image already
carries it.

Hub files are fetched with `huggingface_hub` (its documented download API,
`{endpoint}/{repo}/resolve/{revision}/{file}`; `HF_ENDPOINT` names another endpoint, as the
tests' stub does) into the platform cache, only with `--build-mode network`: a hermetic build
never reaches a hub.

The local runner (`--runner local`, no image) applies the same lock before the program runs:
a `weights.dir` folder through `pin` as the build does (the first run writes the lock), hub
files from the cache folder of the commit the lock records (`pinned_snapshot`: a network build
fetched them; the local runner never reaches a hub either).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asrbench.errors import InputError
from asrbench.fsio import atomic_write_json
from asrbench.identity import file_sha256
from asrbench.settings import REPO_ROOT, settings

LOCK_NAME = "weights.lock"
LOCK_FORMAT = "asrbench-weights-lock/1"
HUB = "https://huggingface.co"  # huggingface_hub's default endpoint
PROBE_TIMEOUT_S = 10.0
__all__ = [
    "LOCK_NAME",
    "HubFetchError",
    "WeightsLock",
    "fetch_hub",
    "folder_files",
    "pin",
    "pinned_snapshot",
    "require_hub",
]
# Offline, the files come from a folder on this host: one command writes that folder's card.
OFFLINE_ROUTE = (
    "put the model's files in a folder here and run `ops/models add ./FOLDER`: its card's "
    "weights.dir builds with the default --build-mode wheelhouse, without any network"
)


class HubFetchError(InputError):
    """Hub weights that could not be fetched; names the repository, revision and file."""


@dataclass(frozen=True)
class WeightsLock:
    """`weights.lock`: where the weights came from and the SHA-256 of each file."""

    source: dict[str, str]
    sha256: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": LOCK_FORMAT,
            "source": self.source,
            "sha256": dict(sorted(self.sha256.items())),
        }

    @classmethod
    def read(cls, path: Path) -> WeightsLock:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("format") != LOCK_FORMAT:
                raise ValueError(f"format {raw.get('format')!r}, expected {LOCK_FORMAT!r}")
            return cls(source=dict(raw["source"]), sha256=dict(raw["sha256"]))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(
                f"{path}: not a weights lock ({exc}); delete it and build again to re-pin"
            ) from None


def folder_files(folder: Path) -> list[str]:
    """Every regular file of a weights folder (relative, sorted), hidden ones left out."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def pin(card_path: Path, folder: Path, names: list[str], source: dict[str, str]) -> dict[str, str]:
    """name -> SHA-256 of the files in `folder`, checked against the lock beside the card
    (written on the first call). A file missing, changed or new is an InputError."""
    lock_path = card_path.parent / LOCK_NAME
    _refuse_shipped_template(card_path, folder, source)
    for name in names:
        if not (folder / name).is_file():
            raise InputError(
                f"weights file {name} is missing: {folder / name} not found ({card_path})"
            )
    got = {name: file_sha256(folder / name) for name in names}
    if not lock_path.is_file():
        atomic_write_json(lock_path, WeightsLock(source, got).to_dict())
        return got
    want = WeightsLock.read(lock_path).sha256
    for name in sorted(set(got) | set(want)):
        if got.get(name) != want.get(name):
            raise InputError(
                f"weights file {name} changed: sha256 {got.get(name, 'absent')}, {lock_path} "
                f"pins {want.get(name, 'absent')}; restore the pinned files, or delete the "
                "lock to pin these"
            )
    return got


def _refuse_shipped_template(card_path: Path, folder: Path, source: dict[str, str]) -> None:
    """A template shipped in the checkout's models/ that takes its weights from a variable
    (`weights.dir: $ASRBENCH_..._WEIGHTS`) gets no lock: one written there would pin the first
    folder the variable named and refuse every other model. Those weights get a card of their
    own, with the lock beside it."""
    shipped = (REPO_ROOT / "models").resolve()
    if "$" not in source.get("dir", "") or card_path.parent.resolve().parent != shipped:
        return
    raise InputError(
        f"{card_path.parent} is a shipped template ({source['dir']}): no lock is written into "
        f"it; give these weights a card of their own with `ops/models add {folder}` and build "
        "or run that card"
    )


def fetch_hub(card_path: Path, hub: Any, mode: str) -> tuple[Path, dict[str, str]]:
    """Download `hub.files` of `hub.repo` at `hub.revision` into the platform cache; the folder
    holding them and the lock's source record (with the commit the revision resolved to)."""
    if mode != "network":
        raise InputError(
            f"{card_path}: weights.hub ({hub.repo}@{hub.revision}) is fetched at build time "
            "only with --build-mode network (or ASRBENCH_BUILD_MODE=network)"
        )
    from huggingface_hub import hf_hub_download

    endpoint = os.environ.get("HF_ENDPOINT") or None  # read now: the library reads it at import
    cache = _hub_cache()
    # One request first: a hub that does not answer is one line at once; the library would
    # retry five times with backoff (23 s) and log two warning lines a try before its error.
    unreachable = _unreachable(endpoint or HUB)
    local = ""
    for name in hub.files:
        try:
            local = hf_hub_download(
                hub.repo,
                name,
                revision=hub.revision,
                cache_dir=cache,
                endpoint=endpoint,
                local_files_only=unreachable is not None,  # offline: the files fetched before
            )
        except Exception as exc:  # the library's errors (not found, offline, HTTP) are many
            if unreachable is not None:
                raise HubFetchError(
                    f"{card_path}: weights.hub: the hub {endpoint or HUB} cannot be reached "
                    f"({unreachable}) and {name} of {hub.repo}@{hub.revision} is not in the "
                    f"cache ({cache}); fetch once where the hub is reachable (HF_ENDPOINT names "
                    f"a mirror), or {OFFLINE_ROUTE}"
                ) from None
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise HubFetchError(
                f"{card_path}: weights.hub: cannot fetch {name} of {hub.repo}@{hub.revision} "
                f"({type(exc).__name__}: {first}); check the repository, revision and file "
                "name, and that the hub is reachable"
            ) from None
    # The files sit in the cache's snapshot folder, which is named by the resolved commit.
    folder = Path(local)
    for _ in Path(hub.files[-1]).parts:
        folder = folder.parent
    source = {"hub": hub.repo, "revision": hub.revision, "commit": folder.name}
    return folder, source


def require_hub(what: str, repo: str) -> None:
    """Before a card is written for hub weights (`-m hf:ORG/NAME`): one probe of the hub, so
    that a hub that does not answer, with no copy of `repo` in the cache, is one line at once
    naming the offline route (HubFetchError), and no card folder is left for a model that
    cannot be fetched."""
    snapshots = _hub_cache() / f"models--{repo.replace('/', '--')}" / "snapshots"
    if snapshots.is_dir() and any(snapshots.iterdir()):
        return  # fetched before: a build may pin it from the cache
    endpoint = os.environ.get("HF_ENDPOINT") or HUB
    why = _unreachable(endpoint)
    if why is not None:
        raise HubFetchError(
            f"{what}: the hub {endpoint} cannot be reached ({why}) and {repo} is not in the "
            f"cache; no card was written. Offline, {OFFLINE_ROUTE}; online, HF_ENDPOINT names "
            "a mirror"
        )


def _unreachable(url: str) -> str | None:
    """Why `url` gives no HTTP answer within PROBE_TIMEOUT_S (one try), or None: any answer,
    an error status included, means the hub is there."""
    import requests

    try:
        requests.head(url, timeout=PROBE_TIMEOUT_S, allow_redirects=False)
    except requests.RequestException as exc:
        cause = re.search(r"\[Errno -?\d+\][^'\")]*", str(exc))  # the socket's own words
        return type(exc).__name__ + (f": {cause.group(0).strip()}" if cause else "")
    return None


def _hub_cache() -> Path:
    return settings().cache / "hf-hub"


def pinned_snapshot(card_path: Path, hub: Any) -> Path:
    """The folder of hub files that a network build fetched and pinned: the cache's snapshot of
    the commit `weights.lock` records. Missing lock or files: an InputError saying what to run."""
    lock_path = card_path.parent / LOCK_NAME
    todo = f"fetch and pin them once with `ops/build -m {card_path.parent} --build-mode network`"
    if not lock_path.is_file():
        raise InputError(
            f"{card_path}: weights.hub ({hub.repo}@{hub.revision}) are not pinned yet "
            f"({lock_path} not found); {todo}"
        )
    source = WeightsLock.read(lock_path).source
    commit = source.get("commit", "")
    if source.get("hub") != hub.repo or not commit:
        raise InputError(
            f"{lock_path}: pins {source}, not hub files of {hub.repo}; delete it and {todo}"
        )
    # huggingface_hub's cache layout: models--ORG--NAME/snapshots/<commit>/<file>
    folder = _hub_cache() / f"models--{hub.repo.replace('/', '--')}" / "snapshots" / commit
    if not folder.is_dir():
        raise InputError(
            f"{card_path}: the pinned files of {hub.repo} (commit {commit}) are not in the "
            f"cache ({folder}); {todo}"
        )
    return folder
