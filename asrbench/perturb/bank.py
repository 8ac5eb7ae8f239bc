"""What the perturbation bank's output depends on besides the spec: code, libraries, assets.

Every cached perturbed utterance is keyed by `code_identity()` and `asset_identity(dataset)`
(asrbench.identity kind "perturb-audio"), so changing the bank's code, a pinned DSP library, a
noise file, a noise-folder override, the RIR bank or the `sox` binary can never serve stale
audio. The asset listing is also written into each derived dataset's provenance.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from asrbench.identity import digest, tree_files, tree_paths
from asrbench.settings import Settings

PACKAGE_DIR = Path(__file__).resolve().parent
ASSET_DIR = PACKAGE_DIR / "assets" / "noise"
BABBLE_DIR = PACKAGE_DIR / "assets" / "babble"  # fallback talkers (see assets/ATTRIBUTION.md)
MOH_DIR = Path("/usr/share/asterisk/moh")
AUDIO_EXT = (".wav", ".flac", ".ogg")
# Libraries whose numbers the bank's output depends on.
LIBRARIES = ("numpy", "scipy", "soxr", "soundfile", "pyroomacoustics")


def audio_files(folder: Path) -> list[Path]:
    """Audio files under `folder`, sorted by path (seeded choices must not depend on the FS)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in AUDIO_EXT and p.is_file())


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


@functools.lru_cache(maxsize=1)
def sox_version() -> str:
    sox = shutil.which("sox")
    if sox is None:
        return "missing"
    out = subprocess.run([sox, "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or out.stderr.strip()


@functools.lru_cache(maxsize=1)
def code_identity() -> dict[str, Any]:
    """The bank's source files (every .py/.yaml of asrbench/perturb) and library versions."""
    rels = tree_paths(PACKAGE_DIR, suffixes=(".py", ".yaml"), skip_names=("__pycache__",))
    return {
        "files": tree_files(PACKAGE_DIR, rels),
        "libraries": {n: _version(n) for n in LIBRARIES},
        "sox": sox_version(),
    }


def _listing(folder: Path) -> list[list[str]]:
    files = audio_files(folder)
    return tree_files(folder, [f.relative_to(folder).as_posix() for f in files]) if files else []


def asset_identity(settings: Settings, dataset_hash: str | None) -> dict[str, Any]:
    """Every input the noise pools, babble and RIRs can draw from, by content.

    Folders enter by (relative path, SHA-256) listings, never by absolute path, so the same
    bytes elsewhere give the same key. `dataset_hash` identifies the babble pool drawn from the
    dataset itself (other speakers' utterances).
    """
    overrides = {kind: _listing(Path(folder)) for kind, folder in sorted(settings.noise.items())}
    rir = (
        {"user": _listing(settings.rir_dir)}
        if settings.rir_dir
        else {"simulated": "pyroomacoustics " + _version("pyroomacoustics")}
    )
    return {
        "shipped": {"noise": _listing(ASSET_DIR), "babble": _listing(BABBLE_DIR)},
        "moh": _listing(MOH_DIR),
        "overrides": overrides,
        "rir": rir,
        "babble_dataset": dataset_hash,
    }


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    return digest("perturb-code", **code_identity())


def assets_digest(assets: dict[str, Any]) -> str:
    return digest("perturb-assets", **assets)


def perturb_key(audio_sha: str, spec: str, seed: int, utt_id: str, assets: str) -> str:
    """Content key of one perturbed utterance (`assets` from assets_digest)."""
    return digest(
        "perturb-audio",
        audio=audio_sha,
        spec=spec,
        seed=seed,
        utterance=utt_id,
        code=code_digest(),
        assets=assets,
    )
