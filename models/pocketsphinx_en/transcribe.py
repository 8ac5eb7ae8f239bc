"""pocketsphinx_en: transcribe a wav list with PocketSphinx 5 (en-us acoustic model, bundled LM).

Contract (models/README.md): `transcribe.py <wav_list> <result_dir>`. Writes, one line per
utterance as it goes: `hyp.tsv` (ID, TEXT), `timing.tsv` (ID, processing s, audio s) and
`failed.tsv` (ID, reason) for utterances it could not process. Resumes: IDs already in
`hyp.tsv` or `failed.tsv` are skipped, and a line torn by a crash is discarded first.
"""

from __future__ import annotations

import os
import sys
import time
import wave
from pathlib import Path

from pocketsphinx import Config, Decoder

SAMPLE_RATE = 16000


def done_ids(path: Path) -> set[str]:
    """IDs already written; truncates a last line torn by a crash so appends stay clean."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return {line.split(b"\t", 1)[0].decode() for line in data.splitlines() if line}


def read_pcm(path: str) -> tuple[bytes, float]:
    with wave.open(path, "rb") as w:
        if w.getframerate() != SAMPLE_RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise ValueError(
                f"expected 16 kHz mono 16-bit WAV, got {w.getframerate()} Hz, "
                f"{w.getnchannels()} channel(s), {8 * w.getsampwidth()}-bit"
            )
        return w.readframes(w.getnframes()), w.getnframes() / SAMPLE_RATE


def clean(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def main(wav_list: str, result_dir: str) -> int:
    out = Path(result_dir)
    out.mkdir(parents=True, exist_ok=True)
    hyp_path, timing_path, failed_path = out / "hyp.tsv", out / "timing.tsv", out / "failed.tsv"
    skip = done_ids(hyp_path) | done_ids(failed_path)
    done_ids(timing_path)
    todo = []
    for n, line in enumerate(Path(wav_list).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        uid, sep, path = line.partition("\t")
        if not sep:
            print(f"{wav_list}:{n}: expected ID<TAB>PATH", file=sys.stderr)
            return 2
        if uid not in skip:
            todo.append((uid, path))
    utt_timeout = float(os.environ.get("ASRBENCH_UTT_TIMEOUT") or 0)
    t0 = time.perf_counter()
    config = Config(loglevel="FATAL")  # the default en-us acoustic model, LM and dictionary
    decoder = Decoder(config)
    print(f"pocketsphinx_en: model loaded in {time.perf_counter() - t0:.2f} s; "
          f"{len(todo)} utterance(s) to do, {len(skip)} already done", file=sys.stderr)
    with open(hyp_path, "a", encoding="utf-8") as hyp, \
         open(timing_path, "a", encoding="utf-8") as timing, \
         open(failed_path, "a", encoding="utf-8") as failed:
        for uid, path in todo:
            start = time.perf_counter()
            try:
                pcm, seconds = read_pcm(path)
                # Without this the decoder carries feature (CMN) statistics from one utterance
                # into the next, so a result would depend on the order and sharding of the list.
                decoder.reinit_feat()
                decoder.start_utt()
                decoder.process_raw(pcm, full_utt=True)
                decoder.end_utt()
                result = decoder.hyp()
                text = clean(result.hypstr) if result is not None else ""
            except Exception as exc:  # one bad file must not stop the run: record it
                failed.write(f"{uid}\t{clean(f'{type(exc).__name__}: {exc}')}\n")
                failed.flush()
                print(f"{uid}: failed: {exc}", file=sys.stderr)
                continue
            elapsed = time.perf_counter() - start
            if utt_timeout and elapsed > utt_timeout:
                # The C decoder cannot be interrupted mid-call; the limit is enforced when it
                # returns, and the utterance counts as failed, as the contract asks.
                failed.write(f"{uid}\ttimeout: {elapsed:.1f} s > {utt_timeout:g} s\n")
                failed.flush()
                continue
            hyp.write(f"{uid}\t{text}\n")
            hyp.flush()
            timing.write(f"{uid}\t{elapsed:.4f}\t{seconds:.3f}\n")
            timing.flush()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: transcribe.py <wav_list> <result_dir>", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
