"""Model runtimes by scheme: `hf:ORG/NAME[@REVISION]` names a model, this table makes its card.

The Open ASR Leaderboard's habit, "give a model ID, get a row", kept to this platform's rules:
a name becomes a **card folder** (`models/<ID>/`, written once, the user's to read and edit),
filled in from the runtime's template card, with the weights fetched from the hub by name and
revision at build time and pinned by `weights.lock` on the first build (`asrbench.images`).
Nothing runs from a name without a card, so every row still has one.

One `Runtime` per scheme in `SCHEMES`: the template card folder for each task it runs, the task
guessed from the name when not given, the hub files a folder of that task usually holds, and
the decoding options the written card pins. `hf:` is the Hugging Face `transformers` runtime
(models/_common/transformers_asr.py), `sherpa:` sherpa-onnx, `onnx:` onnx-asr (NeMo's CTC,
RNN-T, TDT and Canary exports), `nemo:` NVIDIA NeMo's own `.nemo` files
(models/_common/nemo_asr.py): `nemo:ORG/NAME[@REVISION]` fetches `NAME.nemo` from the hub,
`nemo:PATH.nemo` takes a file on this host (`weights.dir`, its folder; `weights.files`, it).

A folder of weights on this host (`ops/models add ./my_model`) is recognised by its files
(`detect_folder`: a Hugging Face `save_pretrained` folder, a `.nemo` file, an onnx-asr or
sherpa-onnx export) and gets a card whose `weights.dir` is that folder, its lock beside the card.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from asrbench.errors import InputError
from asrbench.fsio import atomic_write_text
from asrbench.ids import MAX_ID_LEN

__all__ = [
    "SCHEMES",
    "ModelRef",
    "Runtime",
    "card_for",
    "detect_folder",
    "ensure_card_folder",
    "folder_ref",
    "is_ref",
    "parse_ref",
    "write_card_folder",
]


@dataclass(frozen=True)
class ModelRef:
    """`SCHEME:ORG/NAME[@REVISION]`, parsed."""

    scheme: str
    repo: str
    revision: str | None = None
    path: Path | None = None  # a weights file or folder on this host, not a hub name
    task: str | None = None  # the task a folder's own files decide (`--task` overrides it)
    # runtime fields the weights' own files decide (a folder's `.nemo` or ONNX file names)
    runtime: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def text(self) -> str:
        if self.path is not None and self.path.is_dir():
            return str(self.path)
        if self.path is not None:
            return f"{self.scheme}:{self.path}"
        return f"{self.scheme}:{self.repo}" + (f"@{self.revision}" if self.revision else "")


@dataclass(frozen=True)
class Runtime:
    """How a scheme's names become cards."""

    scheme: str
    what: str  # in words, for help and errors
    templates: dict[str, str]  # task -> template card folder under models/
    guess_task: Callable[[str], str]  # the task when the user names none, from the repo name
    # task -> the files a hub folder of that task holds; `{name}`: the repository's name
    hub_files: dict[str, tuple[str, ...]]
    decoding: Callable[[str, str], dict[str, Any]] = field(default=lambda repo, task: {})
    task_field: str = "task"  # the card's `runtime` field that names the task

    def task(self, repo: str, task: str | None) -> str:
        task = task or self.guess_task(repo)
        if task not in self.templates:
            raise InputError(
                f"{self.scheme}:{repo}: task {task!r}: the {self.what} runtime runs "
                f"{', '.join(self.templates)}"
            )
        return task


def _hf_task(repo: str) -> str:
    name = repo.lower()
    return "seq2seq" if any(k in name for k in ("whisper", "speech2text", "s2t")) else "ctc"


def _onnx_asr_task(repo: str) -> str:
    """onnx-asr's model type of a NeMo export, from its name (Canary, TDT, RNN-T, else CTC)."""
    name = repo.lower()
    for key, kind in (("canary", "aed"), ("tdt", "tdt"), ("rnnt", "rnnt"), ("transducer", "rnnt")):
        if key in name:
            return f"nemo-conformer-{kind}"
    return "nemo-conformer-ctc"


# NeMo's transducer and Canary exports as onnx-asr reads them; a large encoder's weights are
# ONNX external data beside it (`encoder-model.onnx.data`, as Parakeet 0.6B's and Canary's).
_NEMO_TRANSDUCER = (
    "config.json",
    "decoder_joint-model.onnx",
    "encoder-model.onnx",
    "encoder-model.onnx.data",
    "vocab.txt",
)
_NEMO_AED = (
    "config.json",
    "decoder-model.onnx",
    "encoder-model.onnx",
    "encoder-model.onnx.data",
    "vocab.txt",
)
# Schemes whose name may also be a weights file on this host, and that file's suffix.
LOCAL_FILES = {"nemo": ".nemo"}


def _hf_decoding(repo: str, task: str) -> dict[str, Any]:
    if task == "ctc":
        return {"method": "greedy CTC (argmax per frame, repeats and blanks removed)"}
    opts: dict[str, Any] = {"num_beams": 1, "max_new_tokens": 128}
    if "whisper" in repo.lower():
        opts.update(language="en", task="transcribe")
    return opts


SCHEMES: dict[str, Runtime] = {
    "hf": Runtime(
        scheme="hf",
        what="Hugging Face transformers",
        templates={"ctc": "hf_ctc_template", "seq2seq": "hf_seq2seq_template"},
        guess_task=_hf_task,
        hub_files={
            "ctc": (
                "config.json",
                "model.safetensors",
                "preprocessor_config.json",
                "special_tokens_map.json",
                "tokenizer_config.json",
                "vocab.json",
            ),
            "seq2seq": (
                "added_tokens.json",
                "config.json",
                "generation_config.json",
                "merges.txt",
                "model.safetensors",
                "normalizer.json",
                "preprocessor_config.json",
                "special_tokens_map.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "vocab.json",
            ),
        },
        decoding=_hf_decoding,
    ),
    # sherpa-onnx and onnx-asr (models/_common/sherpa_onnx_asr.py, onnx_asr_asr.py): one task
    # each, the model kind their template is checked with (a NeMo CTC export); other kinds are a
    # copy of the template with another `runtime.kind`.
    "sherpa": Runtime(
        scheme="sherpa",
        what="sherpa-onnx",
        templates={"nemo_ctc": "sherpa_onnx_template"},
        guess_task=lambda repo: "nemo_ctc",
        hub_files={"nemo_ctc": ("model.onnx", "tokens.txt")},
        decoding=lambda repo, task: {"decoding_method": "greedy_search"},
        task_field="kind",
    ),
    # onnx-asr: one template, the model type in `runtime.kind` (NeMo's four layouts, each
    # checked with a tiny export: test_runtime_onnx_asr.py, test_runtime_nemo_onnx.py).
    "onnx": Runtime(
        scheme="onnx",
        what="onnx-asr",
        templates={
            kind: "onnx_asr_template"
            for kind in (
                "nemo-conformer-ctc",
                "nemo-conformer-rnnt",
                "nemo-conformer-tdt",
                "nemo-conformer-aed",
            )
        },
        guess_task=_onnx_asr_task,
        hub_files={
            "nemo-conformer-ctc": ("config.json", "model.onnx", "vocab.txt"),
            "nemo-conformer-rnnt": _NEMO_TRANSDUCER,
            "nemo-conformer-tdt": _NEMO_TRANSDUCER,
            "nemo-conformer-aed": _NEMO_AED,
        },
        task_field="kind",
    ),
    # NeMo (models/_common/nemo_asr.py): ASRModel.restore_from builds the class the .nemo's
    # own config names, so one template runs CTC, RNN-T/TDT and AED models alike.
    "nemo": Runtime(
        scheme="nemo",
        what="NVIDIA NeMo",
        templates={"auto": "nemo_template"},
        guess_task=lambda repo: "auto",
        hub_files={"auto": ("{name}.nemo",)},  # NVIDIA's repositories: nvidia/X holds X.nemo
        decoding=lambda repo, task: {"method": "the model's own, as saved in the .nemo file"},
        task_field="kind",
    ),
}

_REF = re.compile(
    r"^(?P<scheme>[a-z][a-z0-9]*):(?P<repo>[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)"
    r"(?:@(?P<revision>[A-Za-z0-9][A-Za-z0-9._/-]*))?$"
)


def is_ref(text: str) -> bool:
    """Whether `text` names a model by scheme (`hf:ORG/NAME`), not by ID or folder."""
    scheme, sep, _ = text.partition(":")
    return bool(sep) and scheme in SCHEMES


def _local_ref(scheme: str, raw: str) -> ModelRef:
    """`nemo:PATH.nemo`: an existing file on this host (InputError naming it otherwise)."""
    path = Path(raw).expanduser().resolve()
    if not path.is_file():
        raise InputError(
            f"{scheme}:{raw}: {path} is not a file; name an existing {LOCAL_FILES[scheme]} "
            f"file, or a hub model as {scheme}:ORG/NAME[@REVISION]"
        )
    return ModelRef(scheme, repo=path.stem, path=path)


def parse_ref(text: str) -> ModelRef:
    """`hf:ORG/NAME[@REVISION]`, or `nemo:PATH.nemo` (InputError naming the forms and schemes
    otherwise)."""
    scheme, _, rest = text.partition(":")
    if scheme in LOCAL_FILES and rest.endswith(LOCAL_FILES[scheme]):
        return _local_ref(scheme, rest)
    m = _REF.match(text)
    if m is None or m["scheme"] not in SCHEMES:
        raise InputError(
            f"{text!r}: expected SCHEME:ORG/NAME[@REVISION] with SCHEME one of "
            f"{', '.join(s + ':' for s in SCHEMES)} (e.g. hf:facebook/wav2vec2-base-960h@main), "
            "or a folder of weights on this host (ops/models add ./FOLDER)"
        )
    return ModelRef(m["scheme"], m["repo"], m["revision"])


# What `detect_folder` looks for, in words, for the error that names a folder it did not know.
FOLDER_KINDS = (
    "a Hugging Face folder (config.json with model.safetensors or pytorch_model.bin, and "
    "preprocessor_config.json), one NeMo .nemo file, or an ONNX export (*.onnx with vocab.txt "
    "for onnx-asr, or with tokens.txt for sherpa-onnx)"
)


def _hf_folder_task(folder: Path, name: str) -> str:
    """`ctc` or `seq2seq` from config.json as transformers_asr.py decides it when the card
    names no task (`architectures`, `is_encoder_decoder`), else from the folder's name."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise InputError(
            f"{folder}/config.json: not JSON; is this a save_pretrained folder?"
        ) from None
    config = config if isinstance(config, dict) else {}
    archs = " ".join(str(a) for a in config.get("architectures") or [])
    if "ForCTC" in archs:
        return "ctc"
    if config.get("is_encoder_decoder") or "ConditionalGeneration" in archs:
        return "seq2seq"
    return _hf_task(f"{config.get('model_type', '')} {name}")


def _onnx_folder_kind(folder: Path, files: set[str]) -> str:
    """onnx-asr's model type: the one config.json names, else from the files' layout."""
    try:
        kind = json.loads((folder / "config.json").read_text(encoding="utf-8"))["model_type"]
    except (OSError, ValueError, KeyError, TypeError):
        kind = None
    if kind in SCHEMES["onnx"].templates:
        return str(kind)
    if "decoder-model.onnx" in files:
        return "nemo-conformer-aed"
    if "decoder_joint-model.onnx" in files:
        guess = _onnx_asr_task(folder.name)
        return guess if guess.endswith(("tdt", "rnnt")) else "nemo-conformer-rnnt"
    return "nemo-conformer-ctc"


def detect_folder(folder: Path) -> tuple[str, str, dict[str, Any]]:
    """(scheme, task, runtime fields) of a folder of weights, from its files: a `.nemo` file,
    a Hugging Face folder, an onnx-asr or a sherpa-onnx export (InputError naming what was
    looked for otherwise)."""
    files = {p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")}
    nemo = sorted(f for f in files if f.endswith(".nemo"))
    onnx = sorted(f for f in files if f.endswith(".onnx"))
    if len(nemo) > 1:
        raise InputError(
            f"{folder}: {len(nemo)} .nemo files ({', '.join(nemo)}); add one of them with "
            f"`ops/models add nemo:{folder / nemo[0]}`"
        )
    if nemo:
        return "nemo", "auto", {"file": nemo[0]}
    weights = any(f.endswith(".safetensors") for f in files) or "pytorch_model.bin" in files
    if {"config.json", "preprocessor_config.json"} <= files and weights:
        return "hf", _hf_folder_task(folder, folder.name), {}
    if onnx and "vocab.txt" in files:
        return "onnx", _onnx_folder_kind(folder, files), {}
    if len(onnx) == 1 and "tokens.txt" in files:  # sherpa-onnx's from_nemo_ctc arguments
        return "sherpa", "nemo_ctc", {"files": {"model": onnx[0], "tokens": "tokens.txt"}}
    raise InputError(f"{folder}: no model weights recognised; looked for {FOLDER_KINDS}")


def folder_ref(path: Path) -> ModelRef:
    """A folder of weights on this host (or a `.nemo` file) as a reference to write a card
    for: its runtime and task from its files."""
    path = Path(path).expanduser().resolve()
    if path.is_file() and path.suffix == LOCAL_FILES["nemo"]:
        return ModelRef("nemo", repo=path.stem, path=path)
    if not path.is_dir():
        raise InputError(
            f"{path}: not a folder; give a folder of model weights ({FOLDER_KINDS}), or a hub "
            "model as SCHEME:ORG/NAME[@REVISION]"
        )
    scheme, task, runtime = detect_folder(path)
    return ModelRef(scheme, repo=path.name, path=path, task=task, runtime=runtime)


def default_id(ref: ModelRef) -> str:
    """A card ID from the name: `hf:facebook/wav2vec2-base` -> `facebook_wav2vec2_base`
    (a local file: its name without the suffix)."""
    return re.sub(r"[^a-z0-9]+", "_", ref.repo.lower()).strip("_")


def _weights(ref: ModelRef, runtime: Runtime, task: str) -> dict[str, Any]:
    """The card's `weights`: the hub files at the revision, the one local file, or every file
    of a local folder (`dir` without `files`)."""
    if ref.path is not None and ref.path.is_dir():
        return {
            "source": f"user-supplied, {ref.path}, pinned by weights.lock on the first build",
            "dir": str(ref.path),
        }
    if ref.path is not None:
        return {
            "source": f"user-supplied, {ref.path}, pinned by weights.lock on the first build",
            "dir": str(ref.path.parent),
            "files": {ref.path.name: ref.path.name},
        }
    revision = ref.revision or "main"
    name = ref.repo.split("/")[1]
    return {
        "source": f"{_page(ref)} at revision {revision}, pinned by weights.lock on the first build",
        "hub": {
            "repo": ref.repo,
            "revision": revision,
            "files": [f.format(name=name) for f in runtime.hub_files[task]],
        },
    }


def _page(ref: ModelRef) -> str:
    if ref.path is not None:
        return str(ref.path)
    return f"https://huggingface.co/{ref.repo}" if ref.scheme in ("hf", "nemo") else ref.repo


def card_for(ref: ModelRef, task: str, model_id: str, template: dict[str, Any]) -> dict[str, Any]:
    """The template card filled in for `ref`: ID, name, the hub weights, the task, decoding."""
    runtime = SCHEMES[ref.scheme]
    page = _page(ref)
    card = dict(template)
    card.update(
        id=model_id,
        name=f"{ref.repo} ({runtime.what}, {task})",
        family=ref.repo.split("/")[-1].split("-")[0].lower(),
        architecture=f"{ref.repo} as published (fill in: layers, width, vocabulary)",
        licence=f"as published at {page} (fill in)",
        training_data=f"as published at {page} (fill in)",
        paper=f"see {page}",
    )
    for fact in ("parameters", "size_bytes"):
        card.pop(fact, None)  # unknown until the weights are fetched: fill in
    card["weights"] = _weights(ref, runtime, task)
    card["runtime"] = {**(template.get("runtime") or {}), runtime.task_field: task}
    if ref.path is not None and ref.path.is_file():
        card["runtime"]["file"] = ref.path.name
    card["runtime"].update(ref.runtime)
    card["decoding"] = runtime.decoding(ref.repo, task)
    return card


HEADER = """\
# Written by `ops/models add {ref}` from models/{template}/ (the {what} runtime template).
# Fill in the facts marked "fill in" from the model's own card. `weights.hub.files` lists the
# files a {task} folder usually holds: make it the files this repository has. The first
# network build fetches them and pins their SHA-256 in weights.lock beside this card.
"""
LOCAL_HEADER = """\
# Written by `ops/models add {ref}` from models/{template}/ (the {what} runtime template).
# Fill in the facts marked "fill in" from the model's own card. The first build copies the
# file of `weights.files` from `weights.dir` and pins its SHA-256 in weights.lock beside this
# card; every later build checks it.
"""
FOLDER_HEADER = """\
# Written by `ops/models add {ref}` from models/{template}/ (the {what} runtime template).
# Fill in the facts marked "fill in" from the model's own card. The first build copies every
# file of `weights.dir` and pins their SHA-256 in weights.lock beside this card; every later
# build checks them.
"""


def card_id(ref: ModelRef, model_id: str | None = None) -> str:
    """The card's ID: `model_id` (`--id`) or the one made from the name, checked before it
    names a folder (InputError naming the fix otherwise)."""
    given = model_id is not None
    model_id = model_id or default_id(ref)
    if not re.fullmatch(r"[a-z0-9][a-z0-9_]*", model_id):
        raise InputError(f"--id {model_id!r}: lower-case letters, digits and _ only")
    if len(model_id) > MAX_ID_LEN:  # a folder name the file system would refuse
        fix = "pass a shorter --id" if given else "name it with `ops/models add NAME --id ID`"
        raise InputError(
            f"{'--id' if given else 'the ID made from the name'} is {len(model_id)} "
            f"characters long; a model ID has at most {MAX_ID_LEN}: {fix}"
        )
    return model_id


def write_card_folder(
    ref: ModelRef,
    models_root: Path,
    task: str | None = None,
    model_id: str | None = None,
    templates: Path | None = None,
) -> Path:
    """Write `models_root/<ID>/` (model.yaml, requirements.txt) for `ref` from the template
    card in `templates` (default: `models_root`); refuses to overwrite a folder."""
    runtime = SCHEMES[ref.scheme]
    task = runtime.task(ref.repo, task or ref.task)
    model_id = card_id(ref, model_id)
    folder = Path(models_root) / model_id
    if folder.exists():
        raise InputError(f"{folder} already exists: choose another --id, or edit that card")
    template_dir = Path(templates or models_root) / runtime.templates[task]
    if not (template_dir / "model.yaml").is_file():
        raise InputError(f"{template_dir}/model.yaml not found: the {task} template card")
    template = yaml.safe_load((template_dir / "model.yaml").read_text(encoding="utf-8"))
    card = card_for(ref, task, model_id, template)
    try:
        folder.mkdir(parents=True)
    except (NotADirectoryError, PermissionError) as exc:  # --root names a file, or no rights
        raise InputError(
            f"cannot create {folder}: {exc.strerror}; give --root a folder of model folders "
            "you can write to"
        ) from None
    shutil.copy2(template_dir / "requirements.txt", folder / "requirements.txt")
    header = HEADER if ref.path is None else FOLDER_HEADER if ref.path.is_dir() else LOCAL_HEADER
    text = header.format(
        ref=ref.text, template=runtime.templates[task], what=runtime.what, task=task
    ) + yaml.safe_dump(card, sort_keys=False, allow_unicode=True, width=100)
    atomic_write_text(folder / "model.yaml", text)
    return folder


def ensure_card_folder(
    text: str, models_root: Path, templates: Path | None = None, probe_hub: bool = False
) -> Path:
    """The card folder of `hf:ORG/NAME[@REV]` as a model spec (`ops/benchmark -m hf:...`): the
    one `ops/models add` wrote for that repository and revision, else written now (with
    `probe_hub`, only once the hub answered, or the cache holds the repository)."""
    ref = parse_ref(text)
    folder = Path(models_root) / card_id(ref)
    card_path = folder / "model.yaml"
    if not card_path.is_file():
        if probe_hub and ref.path is None:  # a hub that does not answer stops here, no folder
            from asrbench.images.weightslock import require_hub

            require_hub(text, ref.repo)
        return write_card_folder(ref, models_root, templates=templates)
    weights = (yaml.safe_load(card_path.read_text(encoding="utf-8")) or {}).get("weights") or {}
    if ref.path is not None:
        held = f"{weights.get('dir')}/{next(iter(weights.get('files') or {}), '')}"
        wanted = str(ref.path)
    else:
        hub = weights.get("hub") or {}
        held, wanted = (
            f"{hub.get('repo')}@{hub.get('revision')}",
            f"{ref.repo}@{ref.revision or 'main'}",
        )
    if held != wanted:
        raise InputError(
            f"{text}: {card_path} holds another model ({held}); "
            f"name that card by its folder, or write this one with `ops/models add {text} --id ID`"
        )
    return folder
