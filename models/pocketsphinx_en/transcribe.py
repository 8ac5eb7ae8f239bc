"""pocketsphinx_en: transcribe a wav list with PocketSphinx 5 (en-us acoustic model, bundled LM).

Contract v1 (models/README.md): `transcribe.py <wav_list> <result_dir>`; hyp.tsv, timing.tsv
and failed.tsv are written one flushed line per utterance by `contract.ResultWriter`, and a
rerun resumes (`contract.read_todo`).
"""

from __future__ import annotations

import os
import sys
import wave
from pathlib import Path

from contract import ResultWriter, WavListError, now, read_todo
from pocketsphinx import Config, Decoder

SAMPLE_RATE = 16000


def read_pcm(path: str) -> tuple[bytes, float]:
    """16 kHz mono 16-bit PCM: the file's own samples when it is already that, else resampled
    (other rates, channels or widths; `audio.py`, soxr)."""
    with wave.open(path, "rb") as w:
        if w.getframerate() == SAMPLE_RATE and w.getnchannels() == 1 and w.getsampwidth() == 2:
            return w.readframes(w.getnframes()), w.getnframes() / SAMPLE_RATE
    import numpy as np
    from audio import read_wav

    samples, seconds = read_wav(path, SAMPLE_RATE)
    pcm = np.clip(np.round(samples * 32768.0), -32768, 32767).astype("<i2")
    return pcm.tobytes(), seconds


def main(wav_list: str, result_dir: str) -> int:
    try:
        todo, n_done = read_todo(wav_list, result_dir)
    except WavListError as exc:
        print(exc, file=sys.stderr)
        return 2
    utt_timeout = float(os.environ.get("ASRBENCH_UTT_TIMEOUT") or 0)
    t0 = now()
    decoder = Decoder(Config(loglevel="FATAL"))  # default en-us acoustic model, LM, dictionary
    print(f"pocketsphinx_en: model loaded in {now() - t0:.2f} s; "
          f"{len(todo)} utterance(s) to do, {n_done} already done", file=sys.stderr)
    with ResultWriter(Path(result_dir), "pocketsphinx_en") as out:
        for uid, path in todo:
            start = now()
            try:
                pcm, seconds = read_pcm(path)
                # Without this the decoder carries feature (CMN) statistics from one utterance
                # into the next, so a result would depend on the order and sharding of the list.
                decoder.reinit_feat()
                decoder.start_utt()
                decoder.process_raw(pcm, full_utt=True)
                decoder.end_utt()
                result = decoder.hyp()
            except Exception as exc:  # one bad file must not stop the run: record it
                out.failed(uid, f"{type(exc).__name__}: {exc}")
                continue
            elapsed = now() - start
            if utt_timeout and elapsed > utt_timeout:
                # The C decoder cannot be interrupted mid-call; the limit is enforced when it
                # returns, and the utterance counts as failed, as the contract asks.
                out.failed(uid, f"timeout: {elapsed:.1f} s > {utt_timeout:g} s")
                continue
            out.ok(uid, result.hypstr if result is not None else "", elapsed, seconds)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: transcribe.py <wav_list> <result_dir>", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
