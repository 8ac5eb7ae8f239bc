"""The sherpa-onnx runtime: any offline model sherpa-onnx loads, from a folder of weights, per
contract v1 (`<program> <wav_list> <result_dir>`, models/README.md).

Which model it is comes from the card beside this program, so a new model is a card, no code:

    runtime:
      kind: nemo_ctc            # sherpa_onnx.OfflineRecognizer.from_<kind>: nemo_ctc,
                                # transducer, paraformer, whisper, sense_voice, zipformer_ctc...
      files: {model: model.onnx, tokens: tokens.txt}   # from_<kind>'s file arguments -> files
      num_threads: 1            # ONNX Runtime threads (sherpa-onnx's own setting)
      provider: cpu
    decoding: {decoding_method: greedy_search}         # more from_<kind> options, as they are

The files are the card's user-supplied weights (`weights.dir`), checked on the host before the
build and placed in the image at `ASRBENCH_WEIGHTS_DIR` (/opt/weights); the local runner passes
the host folder itself (`ASRBENCH_WEIGHTS_SRC`). A kind sherpa-onnx does not have, a file or
option the kind does not take, or a missing file stops the run in one line naming the card's
field (exit 2). Audio at another rate or with more channels is resampled to the card's
`sample_rate` (`audio.py`); each utterance is its own stream, so no state crosses utterances.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audio import read_wav
from contract import ModelSetupError, card_name, load_card, run, weights_folder

# Audio shorter than one feature window (25 ms) is "heard nothing", without calling the
# runtime: sherpa-onnx 2.0.1's transducer search crashes the process on a single sample, and
# onnx-asr 0.12.0 raises on one.
MIN_SECONDS = 0.025


@dataclass(frozen=True)
class Sherpa:
    recognizer: Any  # sherpa_onnx.OfflineRecognizer
    rate: int  # the card's sample_rate: what the model takes


def factory_for(card: dict[str, Any]) -> tuple[str, Any]:
    """(kind, sherpa_onnx.OfflineRecognizer.from_<kind>) named by the card's runtime.kind."""
    from sherpa_onnx import OfflineRecognizer

    kind = str((card.get("runtime") or {}).get("kind") or "")
    factory = getattr(OfflineRecognizer, f"from_{kind}", None) if kind else None
    if factory is None:
        kinds = sorted(n[5:] for n in dir(OfflineRecognizer) if n.startswith("from_"))
        raise ModelSetupError(
            f"{card_name(card)}: field 'runtime.kind': {kind or 'missing'!r} is not an offline "
            f"model kind of sherpa-onnx; one of: {', '.join(kinds)}"
        )
    return kind, factory


def known(card: dict[str, Any], kind: str, params: Any, field: str) -> dict[str, Any]:
    """The card's `field` (a mapping), every key one of from_<kind>'s parameters."""
    section, _, key = field.partition(".")
    values = (card.get(section) or {}).get(key) if key else card.get(section)
    for name in values or {}:
        if name not in params:
            raise ModelSetupError(
                f"{card_name(card)}: field '{field}.{name}': from_{kind} takes no {name!r}; "
                f"it takes {', '.join(params)}"
            )
    return dict(values or {})


def weight_file(card: dict[str, Any], folder: Path, arg: str, name: str) -> str:
    path = folder / name
    if not path.is_file():
        raise ModelSetupError(
            f"weights file {name} (runtime.files.{arg} of {card_name(card)}) is missing in {folder}"
        )
    return str(path)


def recognizer_args(card: dict[str, Any], kind: str, factory: Any, folder: Path) -> dict:
    """from_<kind>'s arguments: the card's files (in `folder`), threads, provider, decoding."""
    runtime = card.get("runtime") or {}
    params = inspect.signature(factory).parameters
    options = {"num_threads": runtime.get("num_threads", 1), "provider": runtime.get("provider")}
    args: dict[str, Any] = {k: v for k, v in options.items() if v is not None}
    if "sample_rate" in params:
        args["sample_rate"] = card["sample_rate"]
    args.update(known(card, kind, params, "decoding"))
    files = known(card, kind, params, "runtime.files")
    args.update({arg: weight_file(card, folder, arg, str(n)) for arg, n in files.items()})
    missing = [n for n, p in params.items() if p.default is p.empty and n not in args]
    if missing:
        raise ModelSetupError(
            f"{card_name(card)}: field 'runtime.files': from_{kind} needs {', '.join(missing)}"
        )
    return args


def load() -> Sherpa:
    card = load_card()
    kind, factory = factory_for(card)
    args = recognizer_args(card, kind, factory, weights_folder(card))
    return Sherpa(factory(**args), int(card["sample_rate"]))


def transcribe_one(model: Sherpa, path: str) -> tuple[str, float]:
    audio, seconds = read_wav(path, model.rate)
    if len(audio) < MIN_SECONDS * model.rate:
        return "", seconds
    stream = model.recognizer.create_stream()
    stream.accept_waveform(model.rate, audio)
    model.recognizer.decode_stream(stream)
    return stream.result.text.strip(), seconds


if __name__ == "__main__":
    sys.exit(run(load_card()["id"], sys.argv[1:], load, transcribe_one, fatal=(ModelSetupError,)))
