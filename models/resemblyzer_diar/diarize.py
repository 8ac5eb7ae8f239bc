"""resemblyzer_diar: who spoke when, with no words (a diarization-only card).

Contract v1 (models/README.md): `diarize.py <wav_list> <result_dir>`; the shared loop
(`contract.run`) owns resume, the result files and failures. Each recording's hyp.tsv text is
empty (no words are recognised); its speakers go to `hyp.timed.jsonl` as segments with a
`speaker` and empty text, the timed output a benchmark cell scores with DER and JER, and that
`-m ASR+resemblyzer_diar` gives to an ASR model's words (docs/LONGFORM.md, "Speakers").

The pipeline, deterministic on the CPU:
1. silero VAD (the TorchScript model the silero-vad wheel ships) finds the speech spans;
2. windows of 1.6 s (the encoder's own partial-utterance length), every 0.8 s inside each span,
   are embedded by Resemblyzer's trained GE2E speaker encoder (the weights its wheel ships);
3. average-linkage agglomerative clustering of the embeddings by cosine distance, cut at
   `DIAR_THRESHOLD`, or into exactly `DIAR_NUM_SPEAKERS` clusters when that is > 0;
4. each stretch of speech goes to the window whose centre is nearest; runs of one speaker
   become one segment.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from audio import read_wav
from contract import TimedOut, load_card, run

RATE = 16000
WINDOW = 25600  # 1.6 s: the encoder's partial utterance (160 mel frames of 10 ms)
HOP = 12800  # 0.8 s between window starts
TIMED = TimedOut([])


def setting(name: str) -> float:
    """A knob of the card's `settings`, overridden by the environment variable of that name."""
    default = load_card()["settings"][name]
    raw = os.environ.get(name, str(default))
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"resemblyzer_diar: {name}={raw!r}: expected a number") from None


def load() -> tuple:
    """(silero VAD, speech-timestamps function, speaker encoder, its helpers), on one thread."""
    import torch
    from resemblyzer import VoiceEncoder
    from resemblyzer.audio import normalize_volume, wav_to_mel_spectrogram
    from silero_vad import get_speech_timestamps, load_silero_vad

    torch.set_num_threads(1)  # one thread: results never depend on the machine's core count
    encoder = VoiceEncoder("cpu", verbose=False)
    vad = load_silero_vad()
    return vad, get_speech_timestamps, encoder, normalize_volume, wav_to_mel_spectrogram


def window_starts(a: int, b: int) -> list[int]:
    """Starts of the windows inside the speech span [a, b) (samples): one for a short span."""
    if b - a <= WINDOW:
        return [a]
    starts = list(range(a, b - WINDOW + 1, HOP))
    if starts[-1] + WINDOW < b:
        starts.append(b - WINDOW)  # the span's tail gets a window of its own
    return starts


def embed(model: tuple, wav: np.ndarray, starts: list[int]) -> np.ndarray:
    """One L2-normed speaker embedding per window (zero-padded past the end)."""
    import torch

    _, _, encoder, _, to_mel = model
    padded = np.pad(wav, (0, WINDOW))
    mels = np.stack([to_mel(padded[s : s + WINDOW])[:160] for s in starts])
    with torch.no_grad():
        return encoder(torch.from_numpy(mels)).numpy()


def cluster(embeddings: np.ndarray, threshold: float, n_speakers: int) -> np.ndarray:
    """A speaker index per window, numbered by first appearance."""
    from scipy.cluster.hierarchy import fcluster, linkage

    if len(embeddings) < 2:
        return np.zeros(len(embeddings), dtype=int)
    tree = linkage(embeddings, method="average", metric="cosine")
    if n_speakers > 0:
        labels = fcluster(tree, t=n_speakers, criterion="maxclust")
    else:
        labels = fcluster(tree, t=threshold, criterion="distance")
    order = {lab: n for n, lab in enumerate(dict.fromkeys(labels.tolist()))}
    return np.array([order[lab] for lab in labels.tolist()])


def turns(spans: list[tuple[int, int, list[int]]], labels: np.ndarray) -> list[dict]:
    """Segments: each span cut between neighbouring window centres, one speaker's runs merged."""
    out: list[dict] = []
    k = 0
    for a, b, starts in spans:
        centres = [s + WINDOW / 2 for s in starts]
        cuts = [a, *[(x + y) / 2 for x, y in zip(centres[:-1], centres[1:], strict=True)], b]
        for n in range(len(starts)):
            start, end, speaker = cuts[n] / RATE, cuts[n + 1] / RATE, f"spk{labels[k + n]}"
            if out and out[-1]["speaker"] == speaker and abs(out[-1]["end"] - start) < 1e-9:
                out[-1]["end"] = round(end, 3)
            else:
                out.append({"start": round(start, 3), "end": round(end, 3), "text": ""})
                out[-1]["speaker"] = speaker
        k += len(starts)
    return out


def transcribe_one(model: tuple, path: str) -> tuple[str, float]:
    import torch

    vad, timestamps, _, normalize, _ = model
    wav, seconds = read_wav(path, RATE)
    wav = normalize(wav, -30, increase_only=True)  # Resemblyzer's own preprocessing level
    found = timestamps(torch.from_numpy(wav.astype(np.float32)), vad, sampling_rate=RATE)
    spans = [(t["start"], t["end"], window_starts(t["start"], t["end"])) for t in found]
    starts = [s for _, _, ss in spans for s in ss]
    segments: list[dict] = []
    if starts:
        labels = cluster(
            embed(model, wav, starts),
            setting("DIAR_THRESHOLD"),
            int(setting("DIAR_NUM_SPEAKERS")),
        )
        segments = turns(spans, labels)
    TIMED.write(path, segments)
    return "", seconds


if __name__ == "__main__":
    TIMED = TimedOut(sys.argv[1:])
    sys.exit(run("resemblyzer_diar", sys.argv[1:], load, transcribe_one))
