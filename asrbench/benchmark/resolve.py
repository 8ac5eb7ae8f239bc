"""Find a model and a dataset: a local folder, `models/<ID>` / `datasets/<ID>`, or the zoo."""

from __future__ import annotations

from pathlib import Path

from asrbench.benchmark.errors import BenchmarkError
from asrbench.dataset import Dataset, load_dataset
from asrbench.modelcard import Model, ModelCardError, load_model
from asrbench.paths import REPO_ROOT


def _split_version(spec: str) -> tuple[str, str | None]:
    """`ID@VERSION` pins a zoo version; a plain ID or a path takes what is there (or latest)."""
    if "@" in spec and not Path(spec).exists():
        name, _, version = spec.partition("@")
        return name, version or None
    return spec, None


def resolve_dataset_dir(dataset: str | Path) -> Path:
    """A dataset folder: the path itself, `datasets/<ID>`, or pulled from the zoo on demand."""
    spec, version = _split_version(str(dataset))
    path = Path(spec)
    if (path / "metadata.tsv").is_file() and version is None:
        return path.resolve()
    candidate = REPO_ROOT / "datasets" / spec
    if (candidate / "metadata.tsv").is_file() and version is None:
        return candidate
    from asrbench.zoo import ensure_dataset

    try:
        return Path(ensure_dataset(spec, version=version))
    except Exception as exc:  # the zoo raises ZooError, boto errors...: all mean "not found"
        raise BenchmarkError(
            f"dataset {dataset!r}: not a local folder (looked for {candidate}/metadata.tsv) "
            f"and the zoo could not provide it: {exc}"
        ) from exc


def resolve_model(model: str | Path) -> Model:
    """A model folder (path or `models/<ID>`), or pulled from the zoo when not present."""
    spec, version = _split_version(str(model))
    if version is None:
        try:
            return load_model(spec)
        except ModelCardError as exc:
            if "not found" not in str(exc) or Path(spec).is_dir():
                raise
            first = exc
    else:
        first = None
    from asrbench.zoo import ensure_model

    try:
        return load_model(Path(ensure_model(spec, version=version)))
    except ModelCardError:
        raise
    except Exception as exc:
        local = str(first) if first else f"model {model!r}: pinned version {version}"
        raise BenchmarkError(f"{local}; the zoo could not provide it either: {exc}") from exc


def resolve_dataset(dataset: str | Path) -> Dataset:
    """Load and validate the dataset (every problem is reported by file and line)."""
    return load_dataset(resolve_dataset_dir(dataset))
