"""The NVIDIA NeMo runtime (issue 26): `models/nemo_template` end to end, offline, on a `.nemo`.

- the template's image is built from the host wheelhouse (nemo-toolkit[asr] 3.0.0 on CPU torch,
  144 distributions, one of them, antlr4-python3-runtime 4.9.3, an sdist the host builds into a
  pure-Python wheel: the card's `image.sdists`); the image holds no compiler and no pip;
- a tiny randomly initialised `EncDecCTCModel` is made *inside that image* with NeMo's own
  `save_to` (no NeMo on the host, no weights to download), into a folder mounted from the host;
- a copy of the template pointed at that folder (`weights.dir`) runs through `ops/benchmark`
  (Docker runner) on three real mini_en utterances, two per NeMo batch: every utterance gets a
  hypothesis, a timing and a score, NeMo's segment and word times in the same text
  (hyp.timed.jsonl), and the program loaded the file with `ASRModel.restore_from`;
- `ops/models add nemo:PATH.nemo` and `nemo:ORG/NAME@REV` write cards the platform loads.

In CI: 28-37 s with the image built; the first run builds it (4 min 23 s here, 2026-11-26: the
496 MB wheelhouse, then a 2.3 GB image), under the brief's 6-minute line for CI.

Only a tiny random model runs here (no NeMo weights on these machines): the runtime is checked
for loading, decoding and the contract, not for accuracy (docs/MODELS.md, "NeMo").
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import docker
import pytest
from models_support import require
from tiny_onnx import bench_docker, check_cell, image_tools, template_copy

from asrbench.images import build_model_image, engine_available
from asrbench.modelcard import load_model
from asrbench.settings import REPO_ROOT
from tests.factories import copy_model

TEMPLATE = "nemo_template"
VARIABLE = "ASRBENCH_NEMO_WEIGHTS"  # the template's weights.dir
N_UTTS = 3
# Run with the image's Python: a ConvASR CTC model (one separable block of 16 channels over
# 16 Mel features), its blank never the argmax so that random weights still say something.
TINY_CTC = """
import torch
from omegaconf import OmegaConf
from nemo.collections.asr.models import EncDecCTCModel

torch.manual_seed(0)
labels = [" ", "a", "e", "n", "o", "t"]
cfg = OmegaConf.create({
    "sample_rate": 16000, "labels": labels,
    "preprocessor": {
        "_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor",
        "sample_rate": 16000, "features": 16, "n_fft": 512, "dither": 0.0,
        "window_size": 0.025, "window_stride": 0.01,
    },
    "encoder": {
        "_target_": "nemo.collections.asr.modules.ConvASREncoder", "feat_in": 16,
        "activation": "relu", "conv_mask": True,
        "jasper": [{"filters": 16, "repeat": 1, "kernel": [11], "stride": [2], "dilation": [1],
                    "dropout": 0.0, "residual": False, "separable": True}],
    },
    "decoder": {
        "_target_": "nemo.collections.asr.modules.ConvASRDecoder", "feat_in": 16,
        "num_classes": len(labels), "vocabulary": labels,
    },
})
model = EncDecCTCModel(cfg=cfg)
with torch.no_grad():
    model.decoder.decoder_layers[0].bias[-1] = -1e4  # the blank (last class) never wins
model.save_to("/out/tiny.nemo")
print(type(model).__name__, sum(p.numel() for p in model.parameters()))
"""


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> tuple[str, float]:
    """The template's image without weights (the install layer every copy of it shares) and
    how long its build took here."""
    require("docker", engine_available(), "no Docker Engine answers")
    root = tmp_path_factory.mktemp("nemo-image")
    folder = template_copy_without_weights(root)
    t0 = time.monotonic()
    tag, _ = build_model_image(load_model(folder))
    return tag, time.monotonic() - t0


def template_copy_without_weights(dest: Path) -> Path:
    """models/nemo_template beside _common, its `weights` left out: the image to make a model in."""

    def without_weights(card: dict) -> None:
        card.pop("weights")
        card["image"]["env"] = {}

    return copy_model(TEMPLATE, dest, without_weights)


@pytest.fixture(scope="module")
def tiny_nemo(image, tmp_path_factory) -> Path:
    """A folder holding tiny.nemo, written by NeMo's `save_to` inside the template's image."""
    out = tmp_path_factory.mktemp("tiny-nemo")
    proc = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "-v", f"{out}:/out",
         "--entrypoint", "/opt/venv/bin/python", image[0], "-c", TINY_CTC],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[0] == "EncDecCTCModel"
    return out


# `full` (44 s + 10 s setup): the NeMo template's whole run; `make test` keeps the NeMo-ONNX
# runtime tests (tests/models/test_runtime_nemo_onnx.py).
@pytest.mark.full
def test_a_tiny_nemo_model_runs_from_the_template_through_ops_benchmark(
    image, tiny_nemo, mini, tmp_path, monkeypatch
):
    print(f"nemo_template image built (or found) in {image[1]:.0f} s")
    monkeypatch.setenv(VARIABLE, str(tiny_nemo))
    folder = template_copy(TEMPLATE, tmp_path, tiny_nemo, weight_files=["tiny.nemo"], batch_size=2)
    cell = bench_docker(folder, tmp_path, N_UTTS)
    durations = {u.id: u.duration for u in mini.utterances}
    hyps = check_cell(cell, durations, N_UTTS)
    timed = [json.loads(x) for x in (cell.out_dir / "hyp.timed.jsonl").read_text().splitlines()]
    assert sorted(t["id"] for t in timed) == sorted(hyps)
    for line in timed:  # NeMo's times, in the text hyp.tsv holds
        text, (segment,) = hyps[line["id"]], line["segments"]
        assert segment["text"] == text and [w["word"] for w in line["words"]] == text.split()
        starts = [w["start"] for w in line["words"]]
        assert starts == sorted(starts) and 0 <= segment["start"] < segment["end"]
        assert segment["end"] <= durations[line["id"]] + 0.05
    log = "".join(p.read_text() for p in (cell.out_dir / "logs").glob("*.log"))
    assert (
        "nemo_template: EncDecCTCModel from /opt/weights/tiny.nemo (batch 2, timestamps True)"
        in log
    )
    assert image_tools(folder) == ""  # no compiler, no pip in the image
    # this run's weights make this image alone (the install layer stays with the `image` one)
    docker.from_env().images.remove(build_model_image(load_model(folder))[0])


def test_the_template_dockerfile_installs_wheels_only(cli):
    code, out, err = cli("build", "-m", REPO_ROOT / "models" / TEMPLATE, "--print-dockerfile")
    assert code == 0, err
    assert "install.sh" in out and "FROM ${BASE_IMAGE}" in out
    for tool in ("apt-get", "gcc", "build-essential", "setup.py", "--no-binary"):
        assert tool not in out, tool


def test_ops_models_add_nemo_writes_cards_for_a_file_and_a_hub_name(tmp_path, cli):
    nemo = tmp_path / "weights" / "my-ctc.nemo"
    nemo.parent.mkdir()
    nemo.write_bytes(b"not read until the build")
    (nemo.parent / "other.bin").write_bytes(b"never copied")
    code, _, err = cli("models", "add", f"nemo:{nemo}", "--root", tmp_path / "m")
    assert code == 0, err
    card = load_model(tmp_path / "m" / "my_ctc").card
    assert card.program == "nemo_asr.py" and card.image.sdists == ["antlr4-python3-runtime==4.9.3"]
    weights, runtime = card.extra["weights"], card.extra["runtime"]
    assert weights["dir"] == str(nemo.parent) and weights["files"] == {"my-ctc.nemo": "my-ctc.nemo"}
    assert runtime["file"] == "my-ctc.nemo" and runtime["kind"] == "auto"
    code, _, err = cli(
        "models", "add", "nemo:nvidia/parakeet-ctc-0.6b@v1", "--root", tmp_path / "m"
    )
    assert code == 0, err
    hub = load_model(tmp_path / "m" / "nvidia_parakeet_ctc_0_6b").card.extra["weights"]["hub"]
    assert hub == {
        "repo": "nvidia/parakeet-ctc-0.6b",
        "revision": "v1",
        "files": ["parakeet-ctc-0.6b.nemo"],
    }


def test_a_nemo_file_that_is_not_there_is_refused_in_one_line(tmp_path, cli):
    code, _, err = cli("models", "add", f"nemo:{tmp_path}/none.nemo", "--root", tmp_path / "m")
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert f"{tmp_path}/none.nemo is not a file" in errors[0]
    assert not (tmp_path / "m").exists()
