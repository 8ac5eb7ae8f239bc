"""NVIDIA NeMo runtime: any `.nemo` ASR model (CTC, RNN-T/TDT, AED), per contract v1.

The program of the `nemo_*` cards (their cards' `program`, declared under `image.shared`): it
loads one `.nemo` file with `ASRModel.restore_from(path, map_location="cpu")`, which builds the
model class that the file's own config names (EncDecCTCModel, EncDecRNNTBPEModel,
EncDecMultiTaskModel...), and runs it on the wav list through the shared loop (`contract.run`).
What differs between models lives in the card beside this program:

- `runtime.kind`: `auto` (the class the file names), or a class name the file must hold;
- `runtime.file`: the `.nemo` file's name in the weights folder (null: the only one there);
- `runtime.batch_size` (default 1): files NeMo transcribes together (`transcribe(paths,
  batch_size=...)`); see `Batcher`;
- `runtime.cpu_threads` (0: torch's default; `ASRBENCH_CPU_THREADS` overrides), `runtime.seed`.

Decoding is the one saved in the `.nemo` file. `runtime.timestamps: true` asks NeMo for them
(`transcribe(..., timestamps=True)`: CTC and RNN-T/TDT give segment and word times, same
text) and writes `hyp.timed.jsonl` (models/README.md, "Timed output"); a model that gives none
(the call fails where the plain one does not) runs text only, said once on stderr.

Where the file is: `ASRBENCH_WEIGHTS_DIR` (the image: `/opt/weights`, where the build put the
files of `weights.dir` or `weights.hub`, checked against `weights.lock`), else
`ASRBENCH_WEIGHTS_SRC` (the local runner: the card's `weights.dir` on the host). The GPU only in
a CUDA image with a GPU visible (`contract.use_cuda`).
"""

from __future__ import annotations

import os
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from contract import (
    LookAhead,
    ModelSetupError,
    TimedOut,
    load_card,
    run,
    use_cuda,
    wav_seconds,
    weights_folder,
)

Decoded = tuple[str, list[dict], list[dict]]  # text, segments, words (timed output)


def nemo_file(card: dict[str, Any]) -> Path:
    """The `.nemo` file: `runtime.file` in the weights folder, else the only one there."""
    folder = weights_folder(card)
    name = (card.get("runtime") or {}).get("file")
    found = [folder / name] if name else sorted(folder.glob("*.nemo"))
    if len(found) != 1 or not found[0].is_file():
        what = f"{name} is not there" if name else f"{len(found)} .nemo files there"
        raise ModelSetupError(
            f"{card['id']}: weights folder {folder}: {what}; put one .nemo file in the card's "
            "weights.dir (or name it in runtime.file) and build again"
        )
    return found[0]


def unpack(path: Path, dest: Path) -> str:
    """Extract the `.nemo` archive into `dest`: regular files and folders only, every name
    inside `dest` (what tarfile's "data" filter allows); returns `dest`."""
    with tarfile.open(path, "r:*") as tar:
        for member in tar.getmembers():
            target = (dest / member.name).resolve()
            if not (member.isfile() or member.isdir()) or not target.is_relative_to(dest.resolve()):
                raise ModelSetupError(
                    f"{path}: member {member.name!r} is not a plain file inside the archive"
                )
            tar.extract(member, dest, set_attrs=False)
    return str(dest)


class Model:
    """The restored NeMo model and how a batch of wav files becomes text."""

    def __init__(self, card: dict[str, Any]) -> None:
        import torch

        runtime = card.get("runtime") or {}
        threads = int(os.environ.get("ASRBENCH_CPU_THREADS", runtime.get("cpu_threads", 0)))
        if threads > 0:
            torch.set_num_threads(threads)
        torch.manual_seed(int(runtime.get("seed", 0)))
        path = nemo_file(card)
        from nemo.collections.asr.models import ASRModel
        from nemo.core.connectors.save_restore_connector import SaveRestoreConnector

        # NeMo 3.0 unpacks with tarfile's `filter=` (Python 3.11.4+); the image's Python is
        # Debian's 3.11.2, so the file is unpacked here and NeMo restores from that folder.
        self._unpacked = tempfile.TemporaryDirectory(prefix="nemo-")
        connector = SaveRestoreConnector()
        connector.model_extracted_dir = unpack(path, Path(self._unpacked.name))
        self.model = ASRModel.restore_from(
            str(path), map_location="cpu", save_restore_connector=connector
        ).eval()
        kind = runtime.get("kind") or "auto"
        if kind not in ("auto", type(self.model).__name__):
            raise ModelSetupError(
                f"{card['id']}: {path} holds a {type(self.model).__name__}, the card's "
                f"runtime.kind says {kind}: set runtime.kind to auto or to that class"
            )
        if use_cuda(card["id"], torch.cuda.is_available):
            self.model = self.model.cuda()
        self.batch_size = max(1, int(runtime.get("batch_size", 1)))
        self.timestamps = bool(runtime.get("timestamps", False))
        self.label = card["id"]
        print(
            f"{card['id']}: {type(self.model).__name__} from {path} (batch {self.batch_size}, "
            f"timestamps {self.timestamps})",
            file=sys.stderr,
        )

    def decode(self, paths: list[str]) -> list[Decoded]:
        """(text, segments, words) of the wav files `paths`, in their order."""
        if self.timestamps:
            try:
                return [(h.text, *timed_parts(h)) for h in self._transcribe(paths, True)]
            except Exception as exc:
                self._transcribe(paths, False)  # the audio is fine: the model gives no times
                self.timestamps = False
                print(
                    f"{self.label}: no timestamps from this model ({exc}); text only",
                    file=sys.stderr,
                )
        return [
            (h if isinstance(h, str) else h.text, [], []) for h in self._transcribe(paths, False)
        ]

    def _transcribe(self, paths: list[str], timestamps: bool) -> list[Any]:
        import torch

        extra = {"timestamps": True} if timestamps else {}
        with torch.inference_mode():
            out = self.model.transcribe(paths, batch_size=len(paths), verbose=False, **extra)
        return list(out[0] if isinstance(out, tuple) else out)  # older RNN-T: (best, all)


def timed_parts(hyp: Any) -> tuple[list[dict], list[dict]]:
    """NeMo's segment and word times (seconds) as the timed output's (models/README.md);
    the words only where they spell the hypothesis exactly."""
    stamps = getattr(hyp, "timestamp", None) or {}
    segments = [
        {"start": float(s["start"]), "end": float(s["end"]), "text": s["segment"]}
        for s in stamps.get("segment", [])
    ]
    words = [
        {"start": float(w["start"]), "end": float(w["end"]), "word": w["word"]}
        for w in stamps.get("word", [])
    ]
    if [w["word"] for w in words] != hyp.text.split():
        words = []
    return segments, words


class Batcher:
    """Batching inside the one loop, as transformers_asr.Batcher does it: on a miss, the
    utterance is transcribed with the next `batch_size - 1` paths of a wav list that is a
    regular file (a named pipe gets batches of one); the first of a batch carries its time.
    A batch that fails is retried one file at a time, so an unreadable file fails alone."""

    def __init__(self, model: Model, argv: list[str]):
        self.model = model
        self.ahead = LookAhead(argv, model.batch_size)
        self.done: dict[str, Decoded] = {}
        self.timed = TimedOut(argv)

    def transcribe(self, path: str) -> tuple[str, float]:
        seconds = wav_seconds(path)  # an unreadable file fails here, alone
        if path not in self.done:
            self._run(self.ahead.batch_for(path))
        text, segments, words = self.done.pop(path)
        if segments:
            self.timed.write(path, segments, words)
        return text, seconds

    def _run(self, batch: list[str]) -> None:
        try:
            self.done.update(zip(batch, self.model.decode(batch), strict=True))
        except Exception:
            if len(batch) == 1:
                raise
            self.done[batch[0]] = self.model.decode(batch[:1])[0]  # the rest: when asked


def transcribe_one(batcher: Batcher, path: str) -> tuple[str, float]:
    return batcher.transcribe(path)


def main(argv: list[str]) -> int:
    card = load_card()
    return run(
        card["id"],
        argv,
        lambda: Batcher(Model(card), argv),
        transcribe_one,
        fatal=(ModelSetupError, OSError),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
