"""Per-frame speech scores of a recording, from a streamed VAD: the input of `vad.spans`.

Both detectors see the file as 16 kHz mono blocks (`stream.blocks`), cut them into their own
fixed frames (silero: 512 samples, 32 ms; webrtc: 480 samples, 30 ms) and give one score per
frame: silero its speech probability, webrtc its 0/1 decision. The frame's RMS energy is kept
beside it: it breaks ties when a long segment is cut at its quietest frame. Only these two
float32 arrays grow with the file (8 bytes per 32 ms: 0.9 MB for an hour), never the audio.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from asrbench.identity import file_sha256
from asrbench.segmentation.records import SegmentationError

RATE = 16000  # both detectors work at 16 kHz
SILERO_FRAME = 512
SILERO_CONTEXT = 64  # samples of the previous frame the model sees before each frame
SILERO_FILE = "silero_vad.onnx"  # opset 16, 8 and 16 kHz, in the silero-vad wheel's data/
WEBRTC_FRAME = 480


@dataclass(frozen=True)
class FrameScores:
    """One speech score and one RMS energy per frame of `frame_s` seconds, from time 0."""

    probs: np.ndarray
    energy: np.ndarray
    frame_s: float


def frames_of(blocks: Iterable[np.ndarray], size: int) -> Iterator[np.ndarray]:
    """Re-cut blocks of any length into (n, size) arrays of whole frames; the tail is padded
    with zeros to one last frame (as silero pads its last chunk)."""
    rest = np.zeros(0, np.float32)
    for block in blocks:
        data = np.concatenate([rest, block]) if len(rest) else block
        whole = len(data) // size * size
        if whole:
            yield data[:whole].reshape(-1, size)
        rest = data[whole:]
    if len(rest):
        yield np.pad(rest, (0, size - len(rest))).reshape(1, size)


def _rms(frames: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(np.square(frames, dtype=np.float32), axis=1, dtype=np.float32))


# --- silero (ONNX Runtime) -----------------------------------------------------------------


def silero_path() -> Path:
    """The ONNX weights inside the installed silero-vad wheel (its package is not imported:
    it would load torch)."""
    spec = importlib.util.find_spec("silero_vad")
    if spec is None or not spec.submodule_search_locations:
        raise SegmentationError(
            "silero VAD needs the silero-vad package (pip install silero-vad); "
            "or segment with --segment windows"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / SILERO_FILE
    if not path.is_file():
        raise SegmentationError(f"{path}: the silero-vad wheel has no {SILERO_FILE}")
    return path


@lru_cache(maxsize=1)
def silero_model_id() -> str:
    """What goes into provenance: the weights file and its SHA-256."""
    path = silero_path()
    return f"silero-vad {SILERO_FILE} sha256:{file_sha256(path)}"


class Silero:
    """The silero VAD's ONNX model, one 512-sample frame at a time with its recurrent state."""

    def __init__(self) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        # one thread: a frame is 32 ms of audio, too small to share out; frees cores for models
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(silero_path()), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self.sr = np.array(RATE, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        self.state = np.zeros((2, 1, 128), np.float32)
        self.context = np.zeros((1, SILERO_CONTEXT), np.float32)

    def prob(self, frame: np.ndarray) -> float:
        x = np.concatenate([self.context, frame.reshape(1, -1)], axis=1)
        out, self.state = self.session.run(None, {"input": x, "state": self.state, "sr": self.sr})
        self.context = x[:, -SILERO_CONTEXT:]
        return float(out[0, 0])


def silero_scores(blocks: Iterable[np.ndarray]) -> FrameScores:
    """Silero's speech probability for every 32 ms frame of a 16 kHz stream."""
    model = Silero()
    probs: list[np.ndarray] = []
    energy: list[np.ndarray] = []
    for chunk in frames_of(blocks, SILERO_FRAME):
        probs.append(np.array([model.prob(f) for f in chunk], np.float32))
        energy.append(_rms(chunk))
    return _scores(probs, energy, SILERO_FRAME)


# --- webrtcvad -----------------------------------------------------------------------------


def webrtc_model_id() -> str:
    from importlib.metadata import version

    return f"webrtcvad-wheels {version('webrtcvad-wheels')}"


def webrtc_scores(blocks: Iterable[np.ndarray], aggressiveness: int) -> FrameScores:
    """webrtcvad's 0/1 decision for every 30 ms frame of a 16 kHz stream."""
    try:
        import webrtcvad
    except ImportError:
        raise SegmentationError(
            "webrtc VAD needs the webrtcvad-wheels package (pip install webrtcvad-wheels); "
            "or use the silero VAD"
        ) from None
    vad = webrtcvad.Vad(aggressiveness)
    probs: list[np.ndarray] = []
    energy: list[np.ndarray] = []
    for chunk in frames_of(blocks, WEBRTC_FRAME):
        pcm = (np.clip(chunk, -1.0, 1.0) * 32767).astype("<i2")
        probs.append(np.array([vad.is_speech(f.tobytes(), RATE) for f in pcm], np.float32))
        energy.append(_rms(chunk))
    return _scores(probs, energy, WEBRTC_FRAME)


def _scores(probs: list[np.ndarray], energy: list[np.ndarray], size: int) -> FrameScores:
    empty = np.zeros(0, np.float32)
    return FrameScores(
        probs=np.concatenate(probs) if probs else empty,
        energy=np.concatenate(energy) if energy else empty,
        frame_s=size / RATE,
    )
