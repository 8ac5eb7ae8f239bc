"""Your own weights, found in one step (issue 39, item 7).

`ops/models add ./FOLDER` reads a folder of weights on this host (a Hugging Face
`save_pretrained` folder, a `.nemo` file, an onnx-asr or a sherpa-onnx export), picks the runtime
and task from its files and writes a card whose `weights.dir` is that folder; the first build
(or local run) pins the files in `weights.lock` beside that card. A shipped template
(`models/*_template`, weights from `$ASRBENCH_..._WEIGHTS`) never receives a lock: one written
there pinned the first folder and refused every other model until the user copied the template.
`-m hf:ORG/NAME` with a hub that does not answer is one line at once naming the offline route,
and leaves no card folder behind.

Detection reads file names and config.json only, so the weights here are tiny fake files; no
model runs, no Docker. The hub is a closed loopback port (`HF_ENDPOINT`).
"""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import pytest

from asrbench.errors import InputError
from asrbench.images.weights import check_card, verify_user_weights
from asrbench.images.weightslock import LOCK_NAME
from asrbench.modelcard import load_model
from asrbench.settings import REPO_ROOT

MODELS = REPO_ROOT / "models"


def write(folder: Path, files: dict[str, str | dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        text = json.dumps(content) if isinstance(content, dict) else content
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# kind -> (the folder's files, the template the card is written from, its runtime fields)
KINDS = {
    "hf_ctc": (
        {
            "config.json": {"architectures": ["Wav2Vec2ForCTC"], "model_type": "wav2vec2"},
            "preprocessor_config.json": {},
            "model.safetensors": "weights",
            "vocab.json": {"a": 1},
        },
        "hf_ctc_template",
        {"task": "ctc"},
    ),
    "hf_seq2seq": (
        {
            "config.json": {"architectures": ["WhisperForConditionalGeneration"]},
            "preprocessor_config.json": {},
            "pytorch_model.bin": "weights",
            "tokenizer.json": {},
        },
        "hf_seq2seq_template",
        {"task": "seq2seq"},
    ),
    "nemo": ({"tiny.nemo": "a tar file"}, "nemo_template", {"kind": "auto", "file": "tiny.nemo"}),
    "onnx_asr": (
        {
            "encoder-model.onnx": "onnx",
            "decoder_joint-model.onnx": "onnx",
            "vocab.txt": "a 0\n",
            "config.json": {"model_type": "nemo-conformer-tdt"},
        },
        "onnx_asr_template",
        {"kind": "nemo-conformer-tdt"},
    ),
    "sherpa_onnx": (
        {"model.int8.onnx": "onnx", "tokens.txt": "a 0\n"},
        "sherpa_onnx_template",
        {"kind": "nemo_ctc", "files": {"model": "model.int8.onnx", "tokens": "tokens.txt"}},
    ),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_folder_of_each_kind_gets_a_card_that_points_at_it(kind, tmp_path, cli):
    files, template, runtime = KINDS[kind]
    weights = write(tmp_path / f"my_{kind}", files)
    code, out, err = cli("models", "add", weights, "--root", tmp_path / "cards")
    assert code == 0, err
    folder = tmp_path / "cards" / f"my_{kind}"
    assert f"ops/build -m {folder}" in out
    text = (folder / "model.yaml").read_text(encoding="utf-8")
    assert text.startswith(f"# Written by `ops/models add {weights}` from models/{template}/")
    model = load_model(folder)  # the card reader takes it
    spec = check_card(model)  # and so does the build's weights check
    assert spec is not None and spec.dir == str(weights) and spec.locked
    card_runtime = model.card.extra["runtime"]
    assert {k: card_runtime[k] for k in runtime} == runtime
    assert model.card.program == load_model(MODELS / template).card.program


def test_each_card_pins_its_own_folder_so_a_second_model_is_not_refused(tmp_path, cli):
    """Two folders of one runtime: two cards, each with its own lock beside it; the shipped
    template is left as it was."""
    files = KINDS["hf_ctc"][0]
    pinned = {}
    for name, blob in (("first", "weights A"), ("second", "weights B")):
        weights = write(tmp_path / name, {**files, "model.safetensors": blob})
        assert cli("models", "add", weights, "--root", tmp_path / "cards")[0] == 0
        model = load_model(tmp_path / "cards" / name)
        assert verify_user_weights(model, check_card(model)) == weights
        lock = json.loads((tmp_path / "cards" / name / LOCK_NAME).read_text(encoding="utf-8"))
        assert lock["source"] == {"dir": str(weights)}
        pinned[name] = lock["sha256"]["model.safetensors"]
    assert pinned["first"] != pinned["second"]
    assert not (MODELS / "hf_ctc_template" / LOCK_NAME).exists()


def test_a_shipped_template_gets_no_lock(tmp_path, monkeypatch):
    """Building or running models/hf_ctc_template on $ASRBENCH_HF_CTC_WEIGHTS wrote the lock
    into the shipped folder; a second folder was then refused as 'changed'. Now: one line
    saying which command gives these weights their own card, and no lock there."""
    template = MODELS / "hf_ctc_template"
    lock = template / LOCK_NAME
    assert not lock.exists()
    weights = write(tmp_path / "mine", KINDS["hf_ctc"][0])
    monkeypatch.setenv("ASRBENCH_HF_CTC_WEIGHTS", str(weights))
    model = load_model(template)
    try:
        with pytest.raises(InputError) as err:
            verify_user_weights(model, check_card(model))
        assert not lock.exists()
    finally:
        lock.unlink(missing_ok=True)  # before the change the call wrote it: keep the tree clean
    msg = str(err.value)
    assert "\n" not in msg and "shipped template" in msg
    assert f"ops/models add {weights}" in msg


def test_an_unrecognised_folder_is_one_line_naming_what_was_looked_for(tmp_path, cli):
    weights = write(tmp_path / "notes", {"README.md": "my model", "model.onnx": "no vocabulary"})
    code, _, err = cli("models", "add", weights, "--root", tmp_path / "cards")
    assert code == 2 and err.count("\n") == 1, err
    assert str(weights) in err and "no model weights recognised" in err
    for looked_for in ("config.json", "model.safetensors", ".nemo", "vocab.txt", "tokens.txt"):
        assert looked_for in err
    assert not (tmp_path / "cards").exists()
    code, _, err = cli("models", "add", tmp_path / "absent", "--root", tmp_path / "cards")
    assert code == 2 and err.count("\n") == 1 and "not a folder" in err, err


def closed_port() -> int:
    """A loopback port nothing listens on (bound once by the OS, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_hf_name_with_an_unreachable_hub_is_one_line_at_once_and_leaves_no_folder(
    tmp_path, monkeypatch, cli
):
    models = tmp_path / "models"
    shutil.copytree(MODELS / "hf_ctc_template", models / "hf_ctc_template")
    monkeypatch.setenv("ASRBENCH_MODELS_DIR", str(models))
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    hub = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", hub)
    start = time.monotonic()
    code, out, err = cli("build", "-m", "hf:tiny-org/tiny-ctc", "--build-mode", "network")
    assert time.monotonic() - start < 5  # no retries with backoff
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "Retrying" not in err, err
    assert f"the hub {hub} cannot be reached" in err and "Connection refused" in err
    assert "ops/models add ./FOLDER" in err and "no card was written" in err
    assert sorted(p.name for p in models.iterdir()) == ["hf_ctc_template"]  # no card folder
