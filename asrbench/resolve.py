"""The one resolver for datasets and models, used by every command.

A spec is one of:
- a folder path (`datasets/mini_en`, `/data/my_set`, `models/whisper_base`): used as it is;
- an ID (`mini_en`): `datasets/<ID>` (or `models/<ID>`) when present, else pulled from the zoo;
- `ID@VERSION`: that zoo version; the local folder when it holds exactly that version, else a
  checkout in the zoo cache, pulled on demand.

"Not found" is said only when nothing holds the entry; a zoo that cannot be reached or refuses
the credentials is reported as such, never as a missing dataset.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from asrbench.entries import MARKER_FILES, is_entry, local_dir
from asrbench.errors import InputError, NotFoundError
from asrbench.ids import COMBINE

if TYPE_CHECKING:
    from asrbench.dataset import Dataset
    from asrbench.modelcard import Model


def parse_spec(spec: str | Path) -> tuple[str, str | None]:
    """`ID@VERSION` -> (ID, VERSION); an existing path or a plain ID -> (spec, None)."""
    text = str(spec)
    if "@" in text and not Path(text).exists():
        name, _, version = text.partition("@")
        return name, version or None
    return text, None


def model_parts(spec: str | Path) -> list[str]:
    """The models of a model spec: `[spec]`, or for `ASR+DIARIZER` (not an existing path) the
    two (asrbench/benchmark/speakers.py); InputError for any other use of `+`."""
    text = str(spec)
    if COMBINE not in text or Path(text).exists():
        return [text]
    parts = text.split(COMBINE)
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise InputError(
            f"model {text!r}: a combination is ASR{COMBINE}DIARIZER, two models, e.g. "
            f"whisper_tiny_en{COMBINE}resemblyzer_diar"
        )
    return [p.strip() for p in parts]


def _looks_like_path(text: str) -> bool:
    return "/" in text or text.startswith(".") or Path(text).is_absolute()


def _runtime_card(spec: str | Path) -> Path | None:
    """`hf:ORG/NAME[@REV]` (and the other runtime schemes, asrbench.runtimes): the card folder
    written for it once; None for any other model spec."""
    from asrbench.runtimes import ensure_card_folder, is_ref
    from asrbench.settings import settings

    if not is_ref(str(spec)):
        return None
    # the command will fetch the weights: a hub that does not answer is said before any card
    return ensure_card_folder(str(spec), settings().models_dir, probe_hub=True)


def resolve_dir(kind: str, spec: str | Path, config: Path | None = None) -> Path:
    """The local folder of a dataset or model spec, pulling it from the zoo when needed; a
    composed dataset's audio is composed here on first use (asrbench.importers.composed)."""
    folder = _resolve_dir(kind, spec, config)
    if kind == "dataset":
        from asrbench.importers.composed import ensure_audio

        ensure_audio(folder)
    return folder


def _resolve_dir(kind: str, spec: str | Path, config: Path | None = None) -> Path:
    from asrbench.zoo.errors import ZooNotFound

    if kind == "model" and (card := _runtime_card(spec)) is not None:
        return card
    name, version = parse_spec(spec)
    path = Path(name)
    if version is None and is_entry(path, kind):
        return path.resolve()
    if _looks_like_path(name):
        raise NotFoundError(f"{kind} {name!r}: no {MARKER_FILES[kind]} in that folder")
    local = local_dir(kind, name)
    if is_entry(local, kind):
        from asrbench.zoo.pull import read_marker

        marker = read_marker(local)
        if version is None or (marker and marker.get("version") == version):
            return local
    from asrbench.zoo import pull
    from asrbench.zoo.cache import Cache
    from asrbench.zoo.manifest import check_id

    check_id(name)
    if local.exists() and not is_entry(local, kind):
        raise NotFoundError(
            f"{kind} {name!r}: {local} exists but holds no {MARKER_FILES[kind]}; "
            "fix or remove that folder"
        )
    try:
        if version is not None and local.exists():
            # Another version is checked out here: keep it, put this one in the zoo cache.
            out = Cache().checkout_path(kind, name, version)
            from asrbench.zoo.pull import read_marker

            if read_marker(out) is None:
                pull(kind, name, version=version, dest=out, force=True, config=config)
            return out
        pull(kind, name, version=version, dest=local, config=config)
        return local
    except ZooNotFound as exc:
        where = "" if version else f"not a folder, not under {local.parent}, and "
        cause = exc.__cause__ if isinstance(exc.__cause__, ZooNotFound) else exc
        listing = "ops/models" if kind == "model" else "ls datasets/"
        raise NotFoundError(
            f"{kind} {name!r}{'@' + version if version else ''}: {where}"
            f"the zoo does not hold it ({cause}); check the ID ({listing}, ops/zoo list)"
        ) from None


def resolve_dataset(
    spec: str | Path, check_audio: bool = True, config: Path | None = None
) -> Dataset:
    """A loaded, validated Dataset (every problem reported by file and line)."""
    from asrbench.dataset import load_dataset

    return load_dataset(resolve_dir("dataset", spec, config), check_audio=check_audio)


def resolve_model(spec: str | Path, config: Path | None = None) -> Model:
    """A loaded, checked Model."""
    from asrbench.modelcard import load_model

    return load_model(resolve_dir("model", spec, config))


def resolve_models(spec: str | Path) -> list[Model]:
    """The models of a spec, each loaded and checked: one, or `ASR+DIARIZER`'s two."""
    return [resolve_model(part) for part in model_parts(spec)]


def model_name(spec: str | Path) -> str:
    """The ID a spec's cells are stored under: the model's, or `ASR+DIARIZER` of both IDs."""
    return COMBINE.join(m.id for m in resolve_models(spec))
