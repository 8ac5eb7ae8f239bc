"""Hugging Face `transformers` runtime: any CTC or seq2seq speech model folder, per contract v1.

The program of the `hf_*` cards (their cards' `program`, declared under `image.shared`): it
loads a model folder written by `save_pretrained` (config, weights, tokenizer / processor) and
runs it on the wav list through the shared loop (`contract.run`). What differs between models
lives in the card beside this program:

- `runtime.task`: `ctc` (Wav2Vec2ForCTC, HuBERT, MMS: `AutoModelForCTC`, greedy argmax decoding)
  or `seq2seq` (Whisper and other `AutoModelForSpeechSeq2Seq`, `generate`); left out, the kind
  comes from the folder's `config.json` (`architectures`, `is_encoder_decoder`);
- `runtime.batch_size` (default 1): utterances decoded together (padded); see `Batcher`;
- `runtime.cpu_threads` (0: torch's default; `ASRBENCH_CPU_THREADS` overrides);
- `decoding`: keyword arguments of `generate` for seq2seq models (`num_beams`,
  `max_new_tokens`, `language`, `task`...), pinned in the card so run.json records them.

Where the folder is: `ASRBENCH_HF_MODEL_DIR` (the image: `/opt/weights`, where the build put
the files of `weights.dir` or `weights.hub`, checked against their SHA-256 or `weights.lock`),
else `ASRBENCH_WEIGHTS_SRC` (the local runner: the card's `weights.dir` on the host).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from audio import read_wav
from contract import LookAhead, load_card, run, use_cuda

TASKS = ("ctc", "seq2seq")


class ModelFolderError(RuntimeError):
    """The model folder cannot be loaded (missing, or of a kind this runtime does not run)."""


def model_dir() -> Path:
    """The model folder: the image's prepared weights, or the local runner's user folder."""
    raw = os.environ.get("ASRBENCH_HF_MODEL_DIR") or os.environ.get("ASRBENCH_WEIGHTS_SRC")
    if not raw or not (Path(raw) / "config.json").is_file():
        where = raw or "ASRBENCH_HF_MODEL_DIR and ASRBENCH_WEIGHTS_SRC are unset"
        raise ModelFolderError(
            f"no Hugging Face model folder here ({where}): it needs config.json; set the "
            "card's weights.dir or weights.hub and build again"
        )
    return Path(raw)


def task_of(folder: Path, runtime: dict[str, Any]) -> str:
    """`ctc` or `seq2seq`: the card's `runtime.task`, else what the folder's config says."""
    task = runtime.get("task")
    if task is not None:
        if task not in TASKS:
            raise ModelFolderError(f"runtime.task {task!r}: choose one of {', '.join(TASKS)}")
        return str(task)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    archs = " ".join(config.get("architectures") or [])
    if "ForCTC" in archs:
        return "ctc"
    if config.get("is_encoder_decoder") or "ConditionalGeneration" in archs:
        return "seq2seq"
    raise ModelFolderError(
        f"{folder}/config.json: architectures {archs or 'none'}: neither CTC nor seq2seq; "
        "set runtime.task in the card"
    )


def device(card: dict[str, Any]) -> str:
    """`cuda` in the CUDA image when torch sees a GPU (`contract.use_cuda`), else `cpu`."""
    import torch

    return "cuda" if use_cuda(card["id"], torch.cuda.is_available) else "cpu"


class Model:
    """The loaded processor and model, and how one batch of audio becomes text."""

    def __init__(self, card: dict[str, Any]) -> None:
        import torch
        from transformers import AutoProcessor

        runtime = card.get("runtime") or {}
        threads = int(os.environ.get("ASRBENCH_CPU_THREADS", runtime.get("cpu_threads", 0)))
        if threads > 0:
            torch.set_num_threads(threads)
        torch.manual_seed(int(runtime.get("seed", 0)))
        folder = model_dir()
        self.task = task_of(folder, runtime)
        self.processor = AutoProcessor.from_pretrained(folder)
        if self.task == "ctc":
            from transformers import AutoModelForCTC as Auto
        else:
            from transformers import AutoModelForSpeechSeq2Seq as Auto
        self.device = device(card)
        self.model = Auto.from_pretrained(folder).eval().to(self.device)
        self.rate = int(self.processor.feature_extractor.sampling_rate)
        self.generate = dict(card.get("decoding") or {})
        self.batch_size = max(1, int(runtime.get("batch_size", 1)))
        print(
            f"{card['id']}: {type(self.model).__name__} from {folder} ({self.task}, "
            f"batch {self.batch_size}, {self.rate} Hz); decoding {self.generate}",
            file=sys.stderr,
        )

    def decode(self, audios: list[Any]) -> list[str]:
        """Texts of a batch of float32 mono arrays at `self.rate`."""
        import torch

        padded = len(audios) > 1
        inputs = self.processor(
            audios, sampling_rate=self.rate, return_tensors="pt", padding=padded
        ).to(self.device)
        with torch.inference_mode():
            if self.task != "ctc":
                ids = self.model.generate(**inputs, **self.generate).cpu()
                return list(self.processor.batch_decode(ids, skip_special_tokens=True))
            frames = self.model(**inputs).logits.argmax(dim=-1).cpu()
        if not padded or "attention_mask" not in inputs:
            return list(self.processor.batch_decode(frames))
        # A padded utterance's frames past its own end are the padding's: cut them off, so that
        # its text is the one it gets alone.
        lengths = self.model._get_feat_extract_output_lengths(inputs["attention_mask"].sum(-1))
        return [self.processor.decode(f[: int(n)]) for f, n in zip(frames, lengths, strict=True)]


class Batcher:
    """Batching inside the one loop: `contract.run` asks for one utterance at a time, so on a
    miss the batcher decodes that utterance together with the next `batch_size - 1` still to
    do in the wav list (a regular file; a named pipe, as `ops/serve` streams, gets batches of
    one) and keeps their texts for the calls that follow. The loop times each call, so the
    first utterance of a batch carries the batch's processing time and the others almost none:
    totals (RTF) are right, per-utterance latencies are not. An utterance whose audio cannot
    be read fails alone, when its turn comes."""

    def __init__(self, model: Model, argv: list[str]):
        self.model = model
        self.ahead = LookAhead(argv, model.batch_size)
        self.done: dict[str, tuple[str, float] | Exception] = {}

    def transcribe(self, path: str) -> tuple[str, float]:
        if path not in self.done:
            self._run(self.ahead.batch_for(path))
        result = self.done.pop(path)
        if isinstance(result, Exception):
            raise result
        return result

    def _run(self, paths: list[str]) -> None:
        audios, seconds, readable = [], [], []
        for p in paths:
            try:
                audio, secs = read_wav(p, self.model.rate)
            except Exception as exc:  # this utterance fails alone, when it is asked for
                self.done[p] = exc
                continue
            audios.append(audio)
            seconds.append(secs)
            readable.append(p)
        if readable:
            for p, text, secs in zip(readable, self.model.decode(audios), seconds, strict=True):
                self.done[p] = (text, secs)


def transcribe_one(batcher: Batcher, path: str) -> tuple[str, float]:
    return batcher.transcribe(path)


def main(argv: list[str]) -> int:
    card = load_card()
    return run(
        card["id"],
        argv,
        lambda: Batcher(Model(card), argv),
        transcribe_one,
        fatal=(ModelFolderError, OSError),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
