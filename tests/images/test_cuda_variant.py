"""The CUDA image variant of the local cards (card `image.cuda`, `ops/build --gpus`,
`ops/benchmark --gpus`): the rendered Dockerfile and requirements, the tag, the card's checks,
the selection errors and the programs' choice of device when no GPU is visible.

No GPU here: the `full` test builds the faster-whisper CUDA image and runs it on the CPU, which
proves the image loads and falls back; GPU figures are measured as docs/MODELS.md ("GPU images")
says.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from asrbench.images import BuildOptions, build_context, image_tag
from asrbench.images import render_dockerfile as render
from asrbench.images.build import cuda_requirements
from asrbench.modelcard import (
    DEVICE_ENV,
    Model,
    ModelCardError,
    cuda_variant,
    for_gpus,
    parse_card,
    pin_name,
)
from asrbench.resolve import resolve_model
from asrbench.settings import REPO_ROOT

BASE_ID = "sha256:" + "0" * 64  # stands in for the base image's ID
NO_WHEELS = dict(mode="network", ca_bundle=None, base_image="asrbench/base:bookworm")
WITH_CUDA = (
    "whisper_tiny_en",
    "whisper_base",
    "whisper_user_weights",
    "hf_ctc_template",
    "hf_seq2seq_template",
    "onnx_asr_template",
)
# cards whose runtime has no CUDA build on PyPI, and a word of why, from their card
NO_CUDA = {
    "whispercpp_tiny_en": "pywhispercpp",
    "moonshine_base_en": "CPU-only ONNX Runtime",
    "pocketsphinx_en": "CPU only",
    "sherpa_onnx_template": "not on PyPI",
}
COMPILERS = re.compile(r"\b(gcc|g\+\+|clang|cc|build-essential|apt-get|make|cmake)\b")
# the runtime each CUDA variant must bring from a wheel
CUDA_RUNTIME = {
    "whisper": "nvidia-cublas-cu12",
    "hf": "torch",
    "onnx_asr": "onnxruntime-gpu",
}


def without_cuda(model: Model) -> Model:
    """The same model with its card's `image.cuda` taken out (the card as before the variant)."""
    image = model.card.image.model_copy(update={"cuda": None})
    return replace(model, card=model.card.model_copy(update={"image": image}))


@pytest.mark.parametrize("model_id", WITH_CUDA)
def test_cuda_dockerfile_installs_the_wheels_and_no_compiler(model_id):
    model = cuda_variant(resolve_model(model_id))
    pins = model.card.image.cuda.requirements
    dockerfile = render(model)
    assert f'{DEVICE_ENV}="cuda"' in dockerfile
    for name, value in model.card.image.cuda.env.items():
        assert f'{name}="{value}"' in dockerfile
    assert not COMPILERS.search(dockerfile.replace("/opt/build", ""))
    installed = cuda_requirements(model).splitlines()
    cpu = model.requirements.read_text().splitlines()
    for pin in pins:
        assert pin in installed and f"#   {pin}" in dockerfile
    replaced = {pin_name(p) for p in pins}
    # the CPU pin of a project the variant replaces (onnxruntime, torch) is gone; the rest stays
    kept = [ln for ln in cpu if pin_name(ln) not in replaced]
    assert [ln for ln in installed if ln in cpu] == kept
    runtime = next(v for k, v in CUDA_RUNTIME.items() if model_id.startswith(k))
    assert runtime in {pin_name(p) for p in installed}


def test_cuda_build_context_holds_the_variant_requirements(tmp_path):
    model = cuda_variant(resolve_model("whisper_tiny_en"))
    build_context(model, BuildOptions(**NO_WHEELS), tmp_path)
    assert (tmp_path / ".build" / "requirements.txt").read_text() == cuda_requirements(model)
    assert (tmp_path / ".asrbench.Dockerfile").read_text() == render(model)


@pytest.mark.parametrize("model_id", WITH_CUDA)
def test_cpu_image_unchanged_and_cuda_tagged_apart(model_id):
    model = resolve_model(model_id)
    assert model.variant == "cpu" and model.card.gpu == "optional"
    opts = BuildOptions(**NO_WHEELS)
    # byte for byte the Dockerfile (and tag) the card rendered before it had a CUDA variant
    assert render(model) == render(without_cuda(model))
    cpu_tag = image_tag(model, BASE_ID, opts)
    assert cpu_tag == image_tag(without_cuda(model), BASE_ID, opts)
    cuda_tag = image_tag(cuda_variant(model), BASE_ID, opts)
    assert cuda_tag.endswith("-cuda") and cuda_tag.startswith(f"asrbench/{model_id}:")
    assert cuda_tag.removesuffix("-cuda") != cpu_tag
    assert "cuda" not in render(model).lower()


def test_torch_pin_refuses_the_cpu_build():
    # `torch==2.13.0` is satisfied by the local wheel 2.13.0+cpu; the variant must not be
    text = cuda_requirements(cuda_variant(resolve_model("hf_ctc_template")))
    assert "torch===2.13.0" in text.splitlines()
    assert "torch==2.13.0" not in text.splitlines()


@pytest.mark.parametrize(("model_id", "why"), sorted(NO_CUDA.items()))
def test_build_gpus_names_why_a_card_has_no_cuda_image(model_id, why, cli):
    model = resolve_model(model_id)
    assert model.card.gpu == "none"
    with pytest.raises(ModelCardError, match=f"has no CUDA image: .*{re.escape(why)}"):
        cuda_variant(model)
    code, out, err = cli("build", "-m", model_id, "--gpus", "--print-dockerfile")
    assert code == 2 and out == ""
    assert f"model {model_id} has no CUDA image" in err and why in err
    assert for_gpus(model, "all") is model  # ops/benchmark --gpus keeps the CPU image


def test_api_card_has_no_cuda_image(cli):
    code, _, err = cli("build", "-m", "openai_api_en", "--gpus", "--print-dockerfile")
    assert code == 2 and "declares no image.cuda variant (gpu: none)" in err


def test_print_dockerfile_gpus_shows_the_variant(cli):
    code, out, _ = cli("build", "-m", "whisper_tiny_en", "--gpus", "--print-dockerfile")
    assert code == 0 and "#   nvidia-cublas-cu12==" in out and 'ASRBENCH_DEVICE="cuda"' in out
    code, out, _ = cli("build", "-m", "whisper_tiny_en", "--print-dockerfile")
    assert code == 0 and "cuda" not in out.lower()


def test_benchmark_gpus_selects_the_variant():
    model = resolve_model("whisper_tiny_en")
    assert for_gpus(model, "all").variant == "cuda"
    assert for_gpus(model, "1").variant == "cuda"
    assert for_gpus(model, None) is model
    # the variant is the image's, not the source's: one source hash for both
    assert for_gpus(model, "all").source_hash() == model.source_hash()


CARD = """\
id: x
name: x
family: x
architecture: x
licence: MIT
languages: [en]
sample_rate: 16000
program: run.py
gpu: {gpu}
image:
{image}
"""


@pytest.mark.parametrize(
    ("gpu", "image", "message"),
    [
        ("none", "  cuda: {requirements: [a==1]}", "gpu: the card has an image.cuda variant"),
        ("optional", "  cuda: {requirements: [a>=1]}", "image.cuda.requirements.0"),
        ("optional", "  cuda: {requirements: []}", "image.cuda.requirements"),
        ("optional", "  cuda: {requirements: [a==1, A==2]}", "a pinned twice"),
        (
            "optional",
            "  cuda: {requirements: [a==1], env: {ASRBENCH_DEVICE: gpu}}",
            "ASRBENCH_DEVICE is set by the platform",
        ),
        (
            "optional",
            "  cuda: {requirements: [a==1]}\n  cuda_unavailable: why",
            "give cuda or cuda_unavailable, not both",
        ),
        ("optional", "  cuda: {requirements: [a==1], compiler: gcc}", "image.cuda.compiler"),
    ],
)
def test_card_checks_its_cuda_variant(gpu, image, message, tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text(CARD.format(gpu=gpu, image=image))
    with pytest.raises(ModelCardError, match=re.escape(message)) as err:
        parse_card(path)
    assert str(path) in str(err.value)


@pytest.fixture
def program(request):
    """A shared program as a module, imported from models/_common (its import root), taken out
    of sys.modules again afterwards."""
    common = str(REPO_ROOT / "models" / "_common")
    names = (request.param, "contract", "weights", "audio")
    before = {n: sys.modules.get(n) for n in names}
    sys.path.insert(0, common)
    try:
        yield importlib.import_module(request.param)
    finally:
        sys.path.remove(common)
        for name, module in before.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def gpu_here() -> bool:
    """Whether the NVIDIA driver reports a GPU on this machine (none on the CI machines)."""
    gpus = Path("/proc/driver/nvidia/gpus")
    return gpus.is_dir() and any(gpus.iterdir())


def choice(module, card: dict) -> str:
    """The program's device: `device(card)`, or the first ONNX Runtime provider's device."""
    if hasattr(module, "providers"):
        first = module.providers(card)[0]
        return "cuda" if first == "CUDAExecutionProvider" else "cpu"
    return module.device(card)


@pytest.mark.parametrize(
    "program", ["whisper_transcribe", "transformers_asr", "onnx_asr_asr"], indirect=True
)
def test_program_runs_on_cpu_unless_the_variant_sees_a_gpu(program, monkeypatch, capsys):
    card = {"id": "a_card"}
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    assert choice(program, card) == "cpu"  # the CPU image: never the GPU
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    assert choice(program, card) == ("cuda" if gpu_here() else "cpu")
    if not gpu_here():
        assert "ASRBENCH_DEVICE=cuda but no GPU is visible: running on the CPU" in (
            capsys.readouterr().err
        )


@pytest.mark.full
@pytest.mark.docker
def test_faster_whisper_cuda_image_builds_and_runs_without_a_gpu(mini_en, tmp_path):
    """`ops/build whisper_tiny_en --gpus`, then the image without a GPU: CTranslate2 loads
    (cuBLAS from the wheel on LD_LIBRARY_PATH), counts 0 GPUs, and the program transcribes on
    the CPU."""
    from asrbench.dataset import load_dataset
    from asrbench.images import engine_available
    from asrbench.runners import read_tsv_pairs
    from asrbench.runners.docker import DockerRunner
    from tests.conftest import require

    require("docker", engine_available(), "no Docker Engine answers")
    built = subprocess.run(
        [str(REPO_ROOT / "ops" / "build"), "-m", "whisper_tiny_en", "--gpus"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    tag = built.stdout.split("\t")[0]
    assert tag.endswith("-cuda")
    probe = (
        "import ctypes, ctranslate2; ctypes.CDLL('libcublas.so.12'); "
        "print(ctranslate2.get_cuda_device_count())"
    )
    ran = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--entrypoint", "/opt/venv/bin/python"]
        + [tag, "-c", probe],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "0", ran.stderr
    model = cuda_variant(resolve_model("whisper_tiny_en"))
    ds = load_dataset(mini_en)
    runner = DockerRunner()
    assert runner.image_tag(model) == tag
    utts = sorted(ds.utterances, key=lambda u: u.duration)[:2]
    result = runner.run(model, ds, tmp_path, utts)
    log = result.log_path.read_text()
    hyps = read_tsv_pairs(result.hyp_path)
    assert set(hyps) == {u.id for u in utts} and all(hyps.values()), log[-2000:]
    assert "ASRBENCH_DEVICE=cuda but no GPU is visible: running on the CPU" in log
