"""The Hugging Face `transformers` runtime (issue 26): templates, hub weights with a lock, names.

- the two template cards (`hf_ctc_template`, `hf_seq2seq_template`), pointed at tiny randomly
  initialised models this test makes in the runtime's own format (`save_pretrained`), are built
  into images and run through `ops/benchmark` on real mini_en utterances: every utterance gets
  a hypothesis line and a timing line, and a scored result cell is written;
- batching (`runtime.batch_size`) gives the texts of batch size 1, on real audio;
- `weights.hub` fetches files by repository and revision from a loopback stub of the Hub's
  download API (tests/stubs/hf_hub.py) with huggingface_hub, pins them in `weights.lock` on the
  first build and refuses changed files on a later one;
- `ops/models add hf:ORG/NAME[@REV]` writes a card the platform loads and lists.

Only tiny random models run here (no real transformers weights on these machines): the runtime
is checked for loading, decoding and the contract, not for accuracy (docs/MODELS.md).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from models_support import require
from stubs.hf_hub import HubStub, tiny_wav2vec2, tiny_whisper

from asrbench.errors import InputError
from asrbench.images import BuildOptions, build_context, engine_available
from asrbench.images.weightslock import LOCK_NAME
from asrbench.modelcard import ModelCardError, load_model
from asrbench.runtimes import parse_ref, write_card_folder
from asrbench.settings import REPO_ROOT
from tests.factories import copy_model, edit_card

MODELS = REPO_ROOT / "models"
MINI_EN = REPO_ROOT / "datasets" / "mini_en"
ENV = {
    "hf_ctc_template": "ASRBENCH_HF_CTC_WEIGHTS",
    "hf_seq2seq_template": "ASRBENCH_HF_SEQ2SEQ_WEIGHTS",
}
COMMIT_A, COMMIT_B = "a" * 40, "b" * 40


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    return {
        "hf_ctc_template": tiny_wav2vec2(root / "ctc"),
        "hf_seq2seq_template": tiny_whisper(root / "seq2seq"),
    }


def copy_template(name: str, dest: Path, edit=None) -> Path:
    """models/<name> beside a copy of _common, so its shared helpers resolve (no weights lock)."""
    return copy_model(name, dest, edit, ignore=("__pycache__", LOCK_NAME))


def lines(path: Path) -> list[list[str]]:
    return [ln.split("\t") for ln in path.read_text(encoding="utf-8").splitlines() if ln]


# CI runs the CTC image; the seq2seq one (same install layer, about 25 s more) with `full`.
@pytest.mark.parametrize(
    "template", ["hf_ctc_template", pytest.param("hf_seq2seq_template", marks=pytest.mark.full)]
)
def test_template_runs_in_docker_through_ops_benchmark(template, tiny, tmp_path, monkeypatch, cli):
    require("docker", engine_available(), "no Docker Engine answers")
    folder = copy_template(template, tmp_path)
    monkeypatch.setenv(ENV[template], str(tiny[template]))
    results = tmp_path / "results"
    code, out, err = cli(
        "benchmark", "-m", folder, "-d", MINI_EN, "--max-utts", "3", "--runner", "docker",
        "--results", results, "--cache", tmp_path / "hyps", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    lock = json.loads((folder / LOCK_NAME).read_text())  # written by the first build
    assert lock["sha256"]["config.json"] and lock["source"] == {"dir": f"${ENV[template]}"}
    (cell,) = (results / template).glob("mini_en~sample-*")  # --max-utts: a sample cell
    hyps, timing = lines(cell / "hyp.raw.tsv"), lines(cell / "timing.tsv")
    utts = [json.loads(x) for x in (cell / "utterances.jsonl").read_text().splitlines()]
    assert len(utts) == 3 and not any(u["failed"] for u in utts)
    assert (
        sorted(h[0] for h in hyps) == sorted(t[0] for t in timing) == sorted(u["id"] for u in utts)
    )
    assert all(float(t[1]) > 0 and float(t[2]) > 0 for t in timing)
    summary = json.loads((cell / "summary.json").read_text())
    assert summary["model"] == template and summary["dataset"] == "mini_en"
    run = json.loads((cell / "run.json").read_text())
    assert run["model"]["card"]["runtime"] == load_model(folder).card.extra["runtime"]
    # The image carries no build tool: every requirement (torch included) is a wheel.
    tools = subprocess.run(
        ["docker", "run", "--rm", "--entrypoint", "/bin/sh", run["model"]["image"], "-c",
         "for t in cc gcc g++ make ld; do command -v $t; done; true"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert tools.strip() == ""


@pytest.fixture
def program(monkeypatch, tmp_path):
    """`run(folder, weights, wav_list, out)`: the runtime program of a card folder, run in this
    process (torch is loaded once for all) as the local runner runs it (ASRBENCH_WEIGHTS_SRC)."""
    monkeypatch.setenv("ASRBENCH_CPU_THREADS", "1")
    before = set(sys.modules)

    def run(folder: Path, weights: Path, wav_list: Path, out: Path) -> int:
        src = tmp_path / f"src-{out.name}"
        load_model(folder).assemble(src)
        # its `contract` and `audio` are the copies beside the card, as in the image
        monkeypatch.syspath_prepend(str(src))
        for name in ("contract", "audio"):
            sys.modules.pop(name, None)
        spec = importlib.util.spec_from_file_location(
            f"_tasr_{out.name}", src / "transformers_asr.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        monkeypatch.setenv("ASRBENCH_WEIGHTS_SRC", str(weights))
        return module.main([str(wav_list), str(out)])

    yield run
    for name in set(sys.modules) - before:  # the helpers' modules, loaded from _common
        if name in ("contract", "audio"):
            del sys.modules[name]


@pytest.mark.parametrize("template", ["hf_ctc_template", "hf_seq2seq_template"])
def test_batched_decoding_gives_the_texts_of_batch_one(template, tiny, tmp_path, mini_en, program):
    from asrbench.dataset import load_dataset

    mini = load_dataset(mini_en)
    utts = sorted(mini.utterances, key=lambda u: u.duration)[:5]
    wav_list = tmp_path / "list"
    wav_list.write_text("".join(f"{u.id}\t{mini.audio_path(u)}\n" for u in utts))
    texts = {}
    for batch in (1, 4):
        folder = copy_template(
            template, tmp_path / f"b{batch}", lambda c, b=batch: c["runtime"].update(batch_size=b)
        )
        assert program(folder, tiny[template], wav_list, tmp_path / f"out{batch}") == 0
        texts[batch] = dict(lines(tmp_path / f"out{batch}" / "hyp.tsv"))
        assert len(lines(tmp_path / f"out{batch}" / "timing.tsv")) == len(utts)
    assert set(texts[1]) == {u.id for u in utts}
    assert texts[4] == texts[1]
    assert any(texts[1].values())  # a random model still says something


def test_runtime_refuses_a_folder_it_cannot_run(tiny, tmp_path, program, capsys):
    folder = copy_template("hf_ctc_template", tmp_path, lambda c: c["runtime"].pop("task"))
    broken = tmp_path / "notasr"
    shutil.copytree(tiny["hf_ctc_template"], broken)
    config = json.loads((broken / "config.json").read_text())
    config["architectures"] = ["Wav2Vec2Model"]
    (broken / "config.json").write_text(json.dumps(config))
    (tmp_path / "list").write_text(f"u1\t{MINI_EN}/audio/none.wav\n")
    assert program(folder, broken, tmp_path / "list", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "architectures Wav2Vec2Model" in err and "set runtime.task in the card" in err


# --- weights by hub name and revision, pinned by the lock ------------------------------------


@pytest.fixture
def hub(tiny, monkeypatch, tmp_path):
    stub = HubStub()
    stub.publish("tiny-org/tiny-ctc", COMMIT_A, tiny["hf_ctc_template"], refs=("main", "v1"))
    monkeypatch.setenv("HF_ENDPOINT", stub.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    yield stub
    stub.close()


def hub_card(tmp_path: Path, tiny: dict[str, Path], revision: str = "main") -> Path:
    files = sorted(p.name for p in tiny["hf_ctc_template"].iterdir())
    folder = write_card_folder(
        parse_ref(f"hf:tiny-org/tiny-ctc@{revision}"), tmp_path / "models", "ctc", templates=MODELS
    )
    edit_card(folder, lambda card: card["weights"]["hub"].update(files=files))
    shutil.copytree(MODELS / "_common", tmp_path / "models" / "_common", dirs_exist_ok=True)
    return folder


def test_hub_weights_are_fetched_pinned_and_checked(hub, tiny, tmp_path):
    folder = hub_card(tmp_path, tiny)
    network = BuildOptions(mode="network", ca_bundle=None)
    build_context(load_model(folder), network, tmp_path / "ctx1")
    lock = json.loads((folder / LOCK_NAME).read_text())
    assert lock["source"] == {"hub": "tiny-org/tiny-ctc", "revision": "main", "commit": COMMIT_A}
    for name, sha in lock["sha256"].items():  # what the image receives is what the lock pins
        from asrbench.identity import file_sha256

        assert file_sha256(tmp_path / "ctx1" / ".weights" / name) == sha
        assert file_sha256(tiny["hf_ctc_template"] / name) == sha
    assert ("HEAD", "/tiny-org/tiny-ctc/resolve/main/config.json") in hub.requests
    # The lock is part of the model's identity: the image is keyed by the pinned files.
    assert LOCK_NAME in load_model(folder).source_files()

    # `main` moves to a commit with other weights: the next build refuses them, naming both.
    changed = tmp_path / "changed"
    shutil.copytree(tiny["hf_ctc_template"], changed)
    (changed / "model.safetensors").write_bytes(b"not the weights")
    hub.publish("tiny-org/tiny-ctc", COMMIT_B, changed, refs=("main",))
    with pytest.raises(InputError) as err:
        build_context(load_model(folder), network, tmp_path / "ctx2")
    msg = str(err.value)
    assert "weights file model.safetensors changed" in msg and str(folder / LOCK_NAME) in msg
    assert lock["sha256"]["model.safetensors"] in msg and "delete the lock" in msg


def test_hub_weights_need_a_network_build_and_a_real_file(hub, tiny, tmp_path, cli):
    folder = hub_card(tmp_path, tiny)
    with pytest.raises(InputError, match="only with --build-mode network"):
        build_context(load_model(folder), BuildOptions(mode="wheelhouse"), tmp_path / "ctx")
    edit_card(folder, lambda card: card["weights"]["hub"]["files"].append("missing.bin"))
    code, _, err = cli("build", "-m", folder, "--build-mode", "network")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "cannot fetch missing.bin of tiny-org/tiny-ctc@main" in err
    assert not (folder / LOCK_NAME).exists()


def test_hub_spec_is_checked_with_the_card(tmp_path, tiny):
    folder = hub_card(tmp_path, tiny)
    edit_card(folder, lambda card: card["weights"]["hub"].update(repo="no-slash"))
    from asrbench.images import check_card

    with pytest.raises(ModelCardError, match="weights.hub.repo"):
        check_card(load_model(folder))


# --- the shorthand: ops/models add ---------------------------------------------------------


def test_ops_models_add_writes_a_card_the_platform_lists(tmp_path, cli):
    root = tmp_path / "models"
    root.mkdir()
    code, out, err = cli("models", "add", "hf:openai/whisper-tiny.en@v1", "--root", root)
    assert code == 0, err
    folder = root / "openai_whisper_tiny_en"
    assert f"ops/build -m {folder} --build-mode network" in out
    card = load_model(folder).card
    assert card.program == "transformers_asr.py"
    assert card.extra["runtime"]["task"] == "seq2seq"  # guessed from the name
    assert card.extra["weights"]["hub"]["repo"] == "openai/whisper-tiny.en"
    assert card.extra["weights"]["hub"]["revision"] == "v1"
    assert card.extra["decoding"]["language"] == "en"
    assert (folder / "requirements.txt").read_text() == (
        MODELS / "hf_seq2seq_template" / "requirements.txt"
    ).read_text()
    code, out, _ = cli("models", "add", "hf:facebook/wav2vec2-base", "--id", "w2v", "--root", root)
    assert code == 0 and load_model(root / "w2v").card.extra["runtime"]["task"] == "ctc"
    code, out, err = cli("models", "--root", root)
    assert code == 0 and "| openai_whisper_tiny_en |" in out and "| w2v |" in out
    code, _, err = cli("models", "add", "hf:facebook/wav2vec2-base", "--id", "w2v", "--root", root)
    assert code == 2 and "already exists" in err and err.count("\n") == 1
    code, _, err = cli("models", "add", "nope:x/y", "--root", root)
    assert code == 2 and "SCHEME:ORG/NAME" in err and "hf:" in err


def test_template_cards_describe_the_tiny_models(tiny):
    """As shipped, each template's facts are those of the tiny model the tests make."""
    from safetensors import safe_open

    for name, folder in tiny.items():
        card = load_model(MODELS / name).card
        assert card.size_bytes == sum(p.stat().st_size for p in folder.iterdir()), name
        with safe_open(folder / "model.safetensors", "np") as weights:
            assert card.parameters == sum(weights.get_tensor(k).size for k in weights.keys())
        assert f"${ENV[name]}" == card.extra["weights"]["dir"]


def test_template_with_its_folder_unset_is_one_clear_error(monkeypatch, cli):
    monkeypatch.delenv("ASRBENCH_HF_CTC_WEIGHTS", raising=False)
    code, _, err = cli("build", "-m", "hf_ctc_template")
    assert code == 2 and err.count("\n") == 1, err
    assert "field 'weights.dir'" in err and "ASRBENCH_HF_CTC_WEIGHTS" in err


def test_a_name_as_model_spec_finds_or_writes_its_card(tmp_path):
    """`-m hf:ORG/NAME[@REV]` (once resolve.py calls it): the card `ops/models add` wrote for
    that repository and revision, else a new one; another model's card under that ID is refused."""
    from asrbench.runtimes import ensure_card_folder

    root = tmp_path / "models"
    first = ensure_card_folder("hf:org/tiny-ctc@v1", root, templates=MODELS)
    assert first == root / "org_tiny_ctc" and load_model(first).card.extra["weights"]["hub"]
    (first / "model.yaml").write_text((first / "model.yaml").read_text() + "# edited\n")
    assert ensure_card_folder("hf:org/tiny-ctc@v1", root, templates=MODELS) == first
    assert (first / "model.yaml").read_text().endswith("# edited\n")  # the user's card, kept
    with pytest.raises(InputError, match="holds another model"):
        ensure_card_folder("hf:org/tiny-ctc@v2", root, templates=MODELS)
