"""The onnx-asr runtime end to end, offline: the template card, its image, the contract, a cell.

No weights can be downloaded here, so the test makes the model: a tiny randomly initialised
NeMo-style CTC network exported to ONNX, with the `vocab.txt` and `config.json` onnx-asr's
`nemo-conformer-ctc` type reads (tiny_onnx.py), points a copy of `models/onnx_asr_template` at
it, builds the image and benchmarks three real mini_en utterances through the platform. Random
weights hear nothing: what is checked is that onnx-asr loads the folder offline, decodes real
audio into the model's own tokens and that the cell holds a hypothesis, a timing and a score
for every utterance.
"""

from __future__ import annotations

from runtime_cases import RuntimeTemplate, weights_fixture
from tiny_onnx import image_tools, onnx_asr_nemo_ctc, onnx_asr_nemo_tdt

from asrbench.modelcard import load_model

ONNX_ASR = RuntimeTemplate("onnx_asr_template", "ASRBENCH_ONNX_ASR_WEIGHTS")
weights = weights_fixture(onnx_asr_nemo_ctc, "onnx-asr-nemo-ctc")


def test_tiny_nemo_ctc_runs_through_the_platform(weights, mini, tmp_path, monkeypatch):
    folder = ONNX_ASR.bench(weights, mini, tmp_path, monkeypatch)
    assert image_tools(folder) == ""  # no compiler, no package installer in the image


def test_tiny_tdt_runs_from_the_same_template(mini, tmp_path, monkeypatch):
    """Parakeet's kind, a token-and-duration transducer: a card edit (the weights' files; with
    no `runtime.kind`, onnx-asr takes the type from the folder's config.json)."""
    weights = onnx_asr_nemo_tdt(tmp_path / "tdt")
    files = ["config.json", "decoder_joint-model.onnx", "encoder-model.onnx", "vocab.txt"]
    ONNX_ASR.bench(weights, mini, tmp_path, monkeypatch, weight_files=files, kind=None)


def test_unknown_model_type_stops_the_run_in_one_line(weights, tmp_path, monkeypatch):
    message = ONNX_ASR.refusal(weights, tmp_path, monkeypatch, kind="nemo-conformer-cttc")
    assert "onnx-asr cannot load runtime.kind 'nemo-conformer-cttc'" in message, message
    assert "not supported" in message and "Traceback" not in message


def test_ops_models_add_onnx_writes_a_card_of_this_runtime(tmp_path, cli):
    code, out, err = cli(
        "models", "add", "onnx:istupakov/parakeet-ctc-0.6b-onnx@v1", "--root", tmp_path
    )
    assert code == 0, err
    card = load_model(tmp_path / "istupakov_parakeet_ctc_0_6b_onnx").card
    assert card.program == "onnx_asr_asr.py"
    assert card.extra["runtime"]["kind"] == "nemo-conformer-ctc"
    assert card.extra["weights"]["hub"] == {
        "repo": "istupakov/parakeet-ctc-0.6b-onnx",
        "revision": "v1",
        "files": ["config.json", "model.onnx", "vocab.txt"],
    }
    assert "--build-mode network" in out
