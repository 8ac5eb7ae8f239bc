"""pocketsphinx_en, streaming: PocketSphinx 5's incremental decoder on framed audio from stdin.

Streaming contract v1 (models/README.md, "Streaming contract"): started once, the program
writes `{"type": "ready"}` once the model is loaded, then for each utterance reads a JSON header
line, then length-prefixed PCM frames (4-byte little-endian length, then that many bytes of
16-bit mono PCM; length 0 ends the utterance) until stdin ends. Each frame goes to
`Decoder.process_raw` as it arrives; a `partial` event is written whenever `hyp()` changes, and
the `final` one after `end_utt`. Events are JSON lines on stdout, each stamped with the audio
consumed so far (`audio_s`) and the program's wall clock (`t`); logs go to stderr.
"""

from __future__ import annotations

import sys
from typing import BinaryIO

from pocketsphinx import Config, Decoder
from stream_contract import ContractError, emit, frames, headers  # shared (image.shared)

SAMPLE_RATE = 16000


def text_of(decoder: Decoder) -> str:
    hyp = decoder.hyp()
    return hyp.hypstr if hyp is not None else ""


def stream_one(decoder: Decoder, inp: BinaryIO, out: BinaryIO, uid: str) -> None:
    # Fresh feature (CMN) statistics per utterance, as in the batch program: a result must not
    # depend on the utterances decoded before it.
    decoder.reinit_feat()
    decoder.start_utt()
    consumed, last = 0, ""
    for chunk in frames(inp):
        decoder.process_raw(chunk, no_search=False, full_utt=False)
        consumed += len(chunk) // 2
        text = text_of(decoder)
        if text != last:
            emit(out, id=uid, type="partial", text=text, audio_s=consumed / SAMPLE_RATE)
            last = text
    decoder.end_utt()
    emit(out, id=uid, type="final", text=text_of(decoder), audio_s=consumed / SAMPLE_RATE)


def main() -> int:
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    decoder = Decoder(Config(loglevel="FATAL"))
    emit(out, type="ready")
    try:
        for uid, _ in headers(inp, SAMPLE_RATE):
            stream_one(decoder, inp, out, uid)
    except ContractError as exc:
        print(f"stream: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
