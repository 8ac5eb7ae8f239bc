"""The onnx-asr runtime: any model type onnx-asr loads from a local folder, per contract v1
(`<program> <wav_list> <result_dir>`, models/README.md).

Which model it is comes from the card beside this program, so a new model is a card, no code:

    runtime:
      kind: nemo-conformer-ctc  # onnx_asr.load_model's model type: nemo-conformer-ctc/-rnnt/
                                # -tdt/-aed, kaldi-rnnt, gigaam-v2-ctc, whisper-ort, whisper...
                                # (left out: the one the folder's config.json names)
      quantization: null        # e.g. int8: loads model.int8.onnx instead of model.onnx
      num_threads: 0            # ONNX Runtime intra-op threads (0: its default, all cores)
    decoding: {}                # onnx-asr's recognize() options: language, target_language, pnc

The folder is the card's user-supplied weights (`weights.dir`), laid out as onnx-asr expects
for that type (for NeMo CTC: `model.onnx`, `vocab.txt`, optional `config.json`), checked on the
host before the build and placed in the image at `ASRBENCH_WEIGHTS_DIR` (/opt/weights); the
local runner passes the host folder itself (`ASRBENCH_WEIGHTS_SRC`). A folder that exists makes
onnx-asr load offline: nothing is ever downloaded. A type onnx-asr does not know, a missing
file or an option recognize() does not take stops the run in one line naming what to fix
(exit 2). Audio at another rate or with more channels is resampled to the card's `sample_rate`
(`audio.py`); utterances are recognised one at a time, so none depends on another.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from audio import read_wav
from contract import ModelSetupError, card_name, load_card, run, use_cuda, weights_folder

# Audio shorter than one feature window (25 ms) is "heard nothing", without calling the
# runtime: sherpa-onnx 2.0.1's transducer search crashes the process on a single sample, and
# onnx-asr 0.12.0 raises on one.
MIN_SECONDS = 0.025
RECOGNIZE_OPTIONS = ("language", "target_language", "pnc")  # onnx-asr's RecognizeOptions


@dataclass(frozen=True)
class OnnxAsr:
    asr: Any  # onnx_asr's TextResultsAsrAdapter
    rate: int  # the card's sample_rate: what the model takes
    options: dict[str, Any] = field(default_factory=dict)  # recognize()'s keyword arguments


def recognize_options(card: dict[str, Any]) -> dict[str, Any]:
    """The card's `decoding`, every key one recognize() takes."""
    options = dict(card.get("decoding") or {})
    for name in options:
        if name not in RECOGNIZE_OPTIONS:
            raise ModelSetupError(
                f"{card_name(card)}: field 'decoding.{name}': onnx-asr's recognize() takes no "
                f"{name!r}; it takes {', '.join(RECOGNIZE_OPTIONS)}"
            )
    return options


def gpu_visible() -> bool:
    """Whether the NVIDIA driver (mounted by `docker run --gpus`) reports a GPU."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return (
        cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    )


def providers(card: dict[str, Any]) -> list[str]:
    """ONNX Runtime's CUDA provider first in the CUDA image when a GPU is visible
    (`contract.use_cuda`); the CPU provider alone otherwise."""
    import onnxruntime

    def cuda_ready() -> bool:
        return gpu_visible() and "CUDAExecutionProvider" in onnxruntime.get_available_providers()

    if not use_cuda(card_name(card), cuda_ready):
        return ["CPUExecutionProvider"]
    onnxruntime.preload_dlls()  # the CUDA and cuDNN libraries of the nvidia-* wheels
    return ["CUDAExecutionProvider", "CPUExecutionProvider"]


def load() -> OnnxAsr:
    import onnx_asr
    import onnxruntime
    from onnx_asr.utils import ModelLoadingError

    card = load_card()
    runtime = card.get("runtime") or {}
    options = recognize_options(card)
    session = onnxruntime.SessionOptions()
    session.intra_op_num_threads = int(runtime.get("num_threads") or 0)
    try:
        asr = onnx_asr.load_model(
            runtime.get("kind") or None,  # None: the type config.json names
            weights_folder(card),
            quantization=runtime.get("quantization"),
            sess_options=session,
            providers=providers(card),
        )
    except ModelLoadingError as exc:  # unknown type, missing file: the user's
        raise ModelSetupError(
            f"{card_name(card)}: onnx-asr cannot load runtime.kind "
            f"{runtime.get('kind')!r} from the weights: {exc}"
        ) from None
    return OnnxAsr(asr, int(card["sample_rate"]), options)


def transcribe_one(model: OnnxAsr, path: str) -> tuple[str, float]:
    audio, seconds = read_wav(path, model.rate)
    if len(audio) < MIN_SECONDS * model.rate:
        return "", seconds
    return model.asr.recognize(audio, sample_rate=model.rate, **model.options).strip(), seconds


if __name__ == "__main__":
    sys.exit(run(load_card()["id"], sys.argv[1:], load, transcribe_one, fatal=(ModelSetupError,)))
