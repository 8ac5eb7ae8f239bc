"""The sherpa-onnx runtime end to end, offline: the template card, its image, the contract, a cell.

No weights can be downloaded here, so the test makes the model: a tiny randomly initialised
NeMo-style CTC network exported to ONNX with the metadata sherpa-onnx reads (tiny_onnx.py),
points a copy of `models/sherpa_onnx_template` at it (as a user copies the template for their
model: `weights.dir` and `weights.sha256`), builds the image and benchmarks three real mini_en
utterances through the platform. Random weights hear nothing: what is checked is that
sherpa-onnx loads the folder, decodes real audio into the model's own tokens and that the
cell holds a hypothesis, a timing and a score for every utterance.
"""

from __future__ import annotations

from runtime_cases import RuntimeTemplate, weights_fixture
from tiny_onnx import image_tools, sherpa_nemo_ctc, sherpa_transducer

from asrbench.modelcard import load_model

SHERPA = RuntimeTemplate("sherpa_onnx_template", "ASRBENCH_SHERPA_ONNX_WEIGHTS")
weights = weights_fixture(sherpa_nemo_ctc, "sherpa-nemo-ctc")


def test_tiny_nemo_ctc_runs_through_the_platform(weights, mini, tmp_path, monkeypatch):
    folder = SHERPA.bench(weights, mini, tmp_path, monkeypatch)
    assert image_tools(folder) == ""  # no compiler, no package installer in the image


def test_tiny_transducer_runs_from_the_same_template(mini, tmp_path, monkeypatch):
    """Another kind is a card edit: `runtime.kind`, `runtime.files` and the weights' files."""
    weights = sherpa_transducer(tmp_path / "transducer")
    parts = {p: f"{p}.onnx" for p in ("encoder", "decoder", "joiner")} | {"tokens": "tokens.txt"}
    SHERPA.bench(
        weights,
        mini,
        tmp_path,
        monkeypatch,
        weight_files=parts.values(),
        kind="transducer",
        files=parts,
    )


def test_unknown_kind_stops_the_run_naming_the_card_field(weights, tmp_path, monkeypatch):
    message = SHERPA.refusal(weights, tmp_path, monkeypatch, kind="nemo_ctcx")
    assert "field 'runtime.kind': 'nemo_ctcx' is not an offline model kind" in message, message
    assert "transducer" in message and "Traceback" not in message


def test_ops_models_add_sherpa_writes_a_card_of_this_runtime(tmp_path, cli):
    code, out, err = cli(
        "models",
        "add",
        "sherpa:csukuangfj/sherpa-onnx-nemo-ctc-en-citrinet-512",
        "--root",
        tmp_path,
    )
    assert code == 0, err
    card = load_model(tmp_path / "csukuangfj_sherpa_onnx_nemo_ctc_en_citrinet_512").card
    assert card.program == "sherpa_onnx_asr.py"
    runtime, hub = card.extra["runtime"], card.extra["weights"]["hub"]
    assert runtime["kind"] == "nemo_ctc" and set(runtime["files"].values()) <= set(hub["files"])
    assert hub["revision"] == "main"
    assert "--build-mode network" in out
