"""NeMo models through their ONNX exports (issue 26 items 1-2): the NeMo kinds not yet covered.

NeMo's `.nemo` files run in models/nemo_template (tests/models/test_runtime_nemo.py); this file
covers their ONNX exports. CTC (sherpa-onnx `nemo_ctc`, onnx-asr `nemo-conformer-ctc`) and TDT
(onnx-asr `nemo-conformer-tdt`) are tested with the runtimes' own tests; this file adds
onnx-asr's other two NeMo layouts, each a tiny random model the test exports
(tests/models/tiny_onnx.py):

- `nemo-conformer-rnnt`: Parakeet RNN-T and FastConformer transducers (the TDT files without
  duration logits);
- `nemo-conformer-aed`: Canary, an attention encoder-decoder with its prompt tokens;

and sherpa-onnx's NeMo transducer (`transducer` with `model_type: nemo_transducer`), RNN-T and
TDT (Parakeet's exports for sherpa-onnx), and its Canary (`nemo_canary`).

Each runs from a copy of `models/onnx_asr_template` (a card edit: the weights' files, the kind
from the folder's config.json) or `models/sherpa_onnx_template` (`runtime.kind`, `runtime.files`,
`decoding.model_type`) in Docker on three real mini_en utterances: the runtime loads the folder
offline, decodes real audio and the cell holds a hypothesis, a timing and a score for every
utterance. Random weights hear nothing: what is checked is the loading and the contract.
"""

from __future__ import annotations

import pytest
from models_support import require
from tiny_onnx import (
    bench_docker,
    check_cell,
    onnx_asr_nemo_aed,
    onnx_asr_nemo_rnnt,
    sherpa_nemo_canary,
    sherpa_nemo_transducer,
    template_copy,
)

from asrbench.images import engine_available
from asrbench.modelcard import load_model
from tests.factories import edit_card

VARIABLE = "ASRBENCH_ONNX_ASR_WEIGHTS"  # the template's weights.dir
TEMPLATE = "onnx_asr_template"
LAYOUTS = {
    "rnnt": (onnx_asr_nemo_rnnt, ["decoder_joint-model.onnx", "encoder-model.onnx"]),
    "aed": (onnx_asr_nemo_aed, ["decoder-model.onnx", "encoder-model.onnx"]),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_tiny_nemo_export_runs_from_the_onnx_asr_template(layout, mini, tmp_path, monkeypatch):
    require("docker", engine_available(), "no Docker Engine answers")
    make, model_files = LAYOUTS[layout]
    weights = make(tmp_path / layout)
    monkeypatch.setenv(VARIABLE, str(weights))
    files = sorted(["config.json", "vocab.txt", *model_files])
    folder = template_copy(TEMPLATE, tmp_path, weights, weight_files=files, kind=None)
    cell = bench_docker(folder, tmp_path, 3)
    check_cell(cell, {u.id: u.duration for u in mini.utterances}, 3)


@pytest.mark.parametrize("tdt", [False, True], ids=["rnnt", "tdt"])
def test_tiny_nemo_transducer_runs_from_the_sherpa_onnx_template(tdt, mini, tmp_path, monkeypatch):
    require("docker", engine_available(), "no Docker Engine answers")
    weights = sherpa_nemo_transducer(tmp_path / "nemo-transducer", tdt=tdt)
    monkeypatch.setenv("ASRBENCH_SHERPA_ONNX_WEIGHTS", str(weights))
    parts = {p: f"{p}.onnx" for p in ("encoder", "decoder", "joiner")} | {"tokens": "tokens.txt"}
    folder = template_copy(
        "sherpa_onnx_template",
        tmp_path,
        weights,
        weight_files=parts.values(),
        kind="transducer",
        files=parts,
    )
    # from_transducer's NeMo branch
    edit_card(folder, lambda card: card["decoding"].update(model_type="nemo_transducer"))
    cell = bench_docker(folder, tmp_path, 3)
    check_cell(cell, {u.id: u.duration for u in mini.utterances}, 3)


def test_tiny_canary_runs_from_the_sherpa_onnx_template(mini, tmp_path, monkeypatch):
    require("docker", engine_available(), "no Docker Engine answers")
    weights = sherpa_nemo_canary(tmp_path / "canary")
    monkeypatch.setenv("ASRBENCH_SHERPA_ONNX_WEIGHTS", str(weights))
    parts = {"encoder": "encoder.onnx", "decoder": "decoder.onnx", "tokens": "tokens.txt"}
    folder = template_copy(
        "sherpa_onnx_template",
        tmp_path,
        weights,
        weight_files=parts.values(),
        kind="nemo_canary",
        files=parts,
    )
    cell = bench_docker(folder, tmp_path, 3)
    check_cell(cell, {u.id: u.duration for u in mini.utterances}, 3)


@pytest.mark.parametrize(
    ("repo", "kind", "model_file"),
    [
        ("istupakov/parakeet-tdt-0.6b-v2-onnx", "nemo-conformer-tdt", "decoder_joint-model.onnx"),
        ("istupakov/parakeet-rnnt-0.6b-onnx", "nemo-conformer-rnnt", "decoder_joint-model.onnx"),
        ("istupakov/canary-1b-v2-onnx", "nemo-conformer-aed", "decoder-model.onnx"),
    ],
)
def test_ops_models_add_onnx_names_the_nemo_layout(repo, kind, model_file, tmp_path, cli):
    code, _, err = cli("models", "add", f"onnx:{repo}@v1", "--root", tmp_path)
    assert code == 0, err
    folder = next(tmp_path.iterdir())
    card = load_model(folder).card
    assert card.program == "onnx_asr_asr.py" and card.extra["runtime"]["kind"] == kind
    files = card.extra["weights"]["hub"]["files"]
    assert {model_file, "encoder-model.onnx", "encoder-model.onnx.data", "vocab.txt"} <= set(files)
