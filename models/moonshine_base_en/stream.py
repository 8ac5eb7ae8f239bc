"""moonshine_base_en, streaming: the LocalAgreement-2 re-decoding policy (`stream_policy.py`,
shared) over libmoonshine, which has no streaming API (moonshine-cpp 0.1.4 exports
`moonshine_load_model`, `moonshine_transcribe`, `moonshine_transcribe_wav`, and the two frees).

Moonshine gives text only: no segment or word times, so the policy trims the buffer only at its
end, once the two latest hypotheses agree on all of it (stream_policy's module docstring).

libmoonshine keeps the memory every transcription takes (about 40 MB per second of audio
decoded: 3 passes of growing buffers over a 9.7-s utterance took the process from 2.4 to
5.9 GB), and re-decoding decodes each second of audio many times. So the model runs in the
shared loop's worker process (`contract._Worker`, as in the batch program), replaced as soon as
its resident memory passes the card's `runtime.recycle_rss_mb`, mid-utterance if need be; the
reload (under a second) delays that decode's partial, and is counted in the latencies.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from contract import _Worker
from stream_policy import Hypothesis, Transcribe, serve
from transcribe import load as load_moonshine
from transcribe import load_card
from weights import WeightsError


def _transcribe_file(model, path: str) -> tuple[str, float]:
    audio = np.fromfile(path, dtype=np.float32)
    return (model.transcribe(audio) if len(audio) else ""), len(audio) / model.rate


def load() -> Transcribe:
    card = load_card()
    recycle_mb = float(card["runtime"]["recycle_rss_mb"])
    worker = _Worker(load_moonshine, _transcribe_file, (WeightsError,), None, track_rss=True)
    worker.start()
    folder = Path(tempfile.mkdtemp(prefix="moonshine-stream-"))  # the buffer goes by file
    atexit.register(shutil.rmtree, folder, True)
    buffer = folder / "buffer.f32"

    def transcribe(audio: np.ndarray, prompt: str) -> Hypothesis:
        del prompt  # libmoonshine takes no prompt
        if worker.pid is None:
            print(f"{card['id']}: model reloaded in {worker.start():.2f} s", file=sys.stderr)
        np.ascontiguousarray(audio, dtype=np.float32).tofile(buffer)
        reply = worker.transcribe("buffer", os.fspath(buffer), None)
        if "text" not in reply:
            raise RuntimeError(f"moonshine: {reply.get('error') or reply.get('died')}")
        if reply.get("rss_mb", 0) > recycle_mb:
            worker.close()
        return Hypothesis.from_segments([(reply["text"], None)])

    return transcribe


if __name__ == "__main__":
    sys.exit(serve(load_card()["id"], load))
