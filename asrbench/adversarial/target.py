"""The white-box target an attack optimises against: one differentiable Whisper, loaded once.

The contract the attacks (`asrbench/adversarial/`'s PGD and universal perturbation) code against:

    target = load_target("whisper_tiny_en")        # or "whisper_base"
    target.identity()   # {"model", "weights_sha256": {file: sha}, "code": sha of the port's files}
    target.loss(audio, texts)      # audio [B, T] float32 in [-1, 1] -> [B], differentiable
    target.transcribe(audio)       # greedy transcripts, as faster-whisper's greedy decoding

`loss` is the teacher-forced cross-entropy of each reference transcript, summed over its tokens:
the decoding prompt (faster-whisper's, language en / task transcribe / no timestamps) is the
context, then the text's tokens and `<|endoftext|>` are scored. Give the text as the model would
write it; a dataset's text as is (cased, punctuated) is fine: it is what Whisper writes.

Audio over 30 s is cut into consecutive 30-s windows of the log-Mel spectrogram, exactly as
faster-whisper seeks without timestamps (the Mel is computed over the whole utterance, then
sliced). A reference text cannot be split between windows, so the label of each window is the
CLEAN audio's greedy transcript of that window: the caller computes them once,
`windows = target.window_labels(clean_audio)`, keeps them (they are fixed while the audio
moves) and passes `loss(audio, texts, windows=windows)`; the loss is then the sum over windows.
A long utterance without `windows` is an InputError saying so (labels computed from the audio
being attacked would follow the attack). Utterances of 30 s or less use `texts[i]`.
Batches hold utterances of different lengths as a zero-padded [B, T] tensor plus `lengths`
(samples), as `loss`, `transcribe` and `window_labels` take.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from asrbench.adversarial.ct2 import WEIGHT_SOURCES, load_weights
from asrbench.adversarial.decode import WhisperTokenizer, greedy, teacher_forced_nll
from asrbench.adversarial.mel import log_mel, mel_windows
from asrbench.adversarial.whisper_torch import Whisper
from asrbench.errors import InputError
from asrbench.identity import bytes_sha256, canonical, file_sha256

__all__ = ["SAMPLE_RATE", "WhiteBoxTarget", "load_target", "white_box_models"]

SAMPLE_RATE = 16000
PORT_FILES = ("ct2.py", "decode.py", "mel.py", "target.py", "whisper_torch.py")


def white_box_models() -> tuple[str, ...]:
    """The model ids that have a differentiable port."""
    return tuple(sorted(WEIGHT_SOURCES))


def code_sha256() -> str:
    """SHA-256 over the port's source files (name and bytes), in a fixed order."""
    here = Path(__file__).parent
    return bytes_sha256(canonical({name: file_sha256(here / name) for name in PORT_FILES}))


@dataclass
class WhiteBoxTarget:
    """One loaded Whisper port: the model in float32 on `device`, its tokenizer and identity."""

    model_id: str
    model: Whisper
    tokenizer: WhisperTokenizer
    weights_sha256: dict[str, str]
    sample_rate: int = SAMPLE_RATE

    @property
    def device(self) -> torch.device:
        return self.model.device

    def identity(self) -> dict[str, object]:
        """What an attacked dataset's identity includes: the model, its weights, the port's code."""
        return {
            "model": self.model_id,
            "weights_sha256": dict(sorted(self.weights_sha256.items())),
            "code": code_sha256(),
        }

    def _mel_windows(
        self, audio: torch.Tensor, lengths: torch.Tensor | None
    ) -> list[list[torch.Tensor]]:
        """Per utterance, its 30-s log-Mel windows, each [80, 3000] (differentiable)."""
        audio = _as_batch(audio).to(device=self.device, dtype=self.model.dtype)
        lens = _lengths(audio, lengths)
        return [mel_windows(log_mel(audio[i, : lens[i]]), i) for i in range(audio.shape[0])]

    @torch.no_grad()
    def transcribe(self, audio: torch.Tensor, lengths: torch.Tensor | None = None) -> list[str]:
        """Greedy transcripts (temperature 0, no timestamps), one per utterance."""
        return [" ".join(t for t in ts if t) for ts in self.window_labels(audio, lengths)]

    @torch.no_grad()
    def window_labels(
        self, audio: torch.Tensor, lengths: torch.Tensor | None = None
    ) -> list[list[str]]:
        """Per utterance, the greedy transcript of each 30-s window (the labels of long audio);
        every window of the batch is decoded in one batch."""
        mels = self._mel_windows(audio, lengths)
        flat = self.window_labels_of([m for ms in mels for m in ms])
        out, start = [], 0
        for ms in mels:
            out.append(flat[start : start + len(ms)])
            start += len(ms)
        return out

    def window_labels_of(self, mels: list[torch.Tensor]) -> list[str]:
        """The greedy transcript (stripped) of each [80, 3000] window."""
        batch = torch.stack(mels)
        enc = self.model.encode(batch)
        tokens = greedy(self.model, self.tokenizer, enc)
        return [self.tokenizer.decode(t).strip() for t in tokens]

    def loss(
        self,
        audio: torch.Tensor,
        texts: list[str],
        lengths: torch.Tensor | None = None,
        windows: list[list[str]] | None = None,
    ) -> torch.Tensor:
        """[B] teacher-forced cross-entropy (summed over tokens) of each reference, differentiable
        with respect to `audio`. An utterance over 30 s is scored window by window against
        `windows[i]`, the clean audio's greedy window transcripts (`window_labels`)."""
        mels = self._mel_windows(audio, lengths)
        if len(texts) != len(mels):
            raise InputError(f"loss: {len(mels)} utterances but {len(texts)} reference texts")
        labels = [self._labels_for(i, mels[i], text, windows) for i, text in enumerate(texts)]
        flat_mels = torch.stack([m for ms in mels for m in ms])
        flat_labels = [t for ls in labels for t in ls]
        enc = self.model.encode(flat_mels)
        per_window = teacher_forced_nll(self.model, self.tokenizer, enc, flat_labels)
        owner = torch.tensor([i for i, ms in enumerate(mels) for _ in ms], device=per_window.device)
        return torch.zeros(len(mels), dtype=per_window.dtype, device=per_window.device).index_add(
            0, owner, per_window
        )

    def _labels_for(
        self, i: int, mels: list[torch.Tensor], text: str, given: list[list[str]] | None
    ) -> list[str]:
        if len(mels) == 1:
            return [text]
        if given is None:
            raise InputError(
                f"loss: utterance {i} is over 30 s ({len(mels)} windows); label its windows with "
                "the clean audio's transcripts: windows = target.window_labels(clean_audio), "
                "then loss(audio, texts, windows=windows)"
            )
        if len(given[i]) != len(mels):
            raise InputError(
                f"loss: utterance {i} has {len(mels)} 30-s windows but {len(given[i])} labels"
            )
        return given[i]


def _as_batch(audio: torch.Tensor) -> torch.Tensor:
    if audio.dim() == 1:
        audio = audio.unsqueeze(0)
    if audio.dim() != 2:
        raise InputError(f"audio must be [B, T] samples, got shape {tuple(audio.shape)}")
    return audio


def _lengths(audio: torch.Tensor, lengths: torch.Tensor | None) -> list[int]:
    if lengths is None:
        return [audio.shape[1]] * audio.shape[0]
    return [int(n) for n in lengths]


def load_target(model_id: str, device: str | torch.device = "cpu") -> WhiteBoxTarget:
    """Load the port of `model_id` (weights from its card's registry package, checked by
    SHA-256); InputError for a model with no white-box port, naming those that have one."""
    if model_id not in WEIGHT_SOURCES:
        raise InputError(
            f"model {model_id!r} has no differentiable (white-box) port; "
            f"those with one: {', '.join(white_box_models())}"
        )
    loaded = load_weights(model_id)
    model = Whisper.from_ct2(loaded.variables).to(device).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    tokenizer = WhisperTokenizer(loaded.tokenizer_json, multilingual=model.multilingual)
    return WhiteBoxTarget(model_id, model, tokenizer, loaded.sha256)
