"""Every model folder against contract v1 (models/README.md): card, entry point, secrets."""

from __future__ import annotations

import json
import py_compile
import re
import subprocess
from pathlib import Path

import pytest

from asrbench.images import render_dockerfile
from asrbench.modelcard import (
    SUMMARY_COLUMNS,
    ApiPolicy,
    load_all,
    load_model,
    model_dirs,
    summary_row,
)
from asrbench.settings import REPO_ROOT
from asrbench.table import markdown

MODELS = REPO_ROOT / "models"
FOLDERS = sorted(p for p in MODELS.iterdir() if p.is_dir() and not p.name.startswith("_"))
ENV_READ = re.compile(r"""os\.environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]*)["']""")
# Runtime knobs the platform documents for every model; not secrets.
KNOBS = re.compile(r"^(ASRBENCH_|WHISPER_MODEL|XDG_|HOME$|PATH$)")


def test_every_folder_is_a_model():
    assert {p.name for p in FOLDERS} == {p.name for p in model_dirs(MODELS)}
    models, problems = load_all(MODELS)
    assert not problems
    assert {m.id for m in models} >= {
        "whisper_tiny_en",
        "whisper_base",
        "pocketsphinx_en",
        "openai_api_en",
        "google_stt_en",
        "azure_speech_en",
    }


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_folder_follows_contract(folder: Path):
    model = load_model(folder)
    card = model.card
    sources = model.source_files()
    program = sources[card.program]
    py_compile.compile(str(program), doraise=True)
    assert 'if __name__ == "__main__":' in program.read_text()
    # A card plus a program: no model keeps a Dockerfile of its own or a link into _common.
    assert model.dockerfile is None, f"{folder.name}: the image is rendered from the card"
    assert not [p for p in folder.rglob("*") if p.is_symlink()], "declare helpers in the card"
    # The image runs the card's program with the contract's two arguments.
    dockerfile = render_dockerfile(model)
    entry = re.search(r"^ENTRYPOINT (\[.*\])$", dockerfile, re.M)
    assert entry and json.loads(entry.group(1))[-1] == f"/opt/model/{card.program}"
    copied = [
        name
        for line in re.findall(r"^COPY (\[.*\])$", dockerfile, re.M)
        for name in json.loads(line)[:-1]
        if name != ".weights/"
    ]  # user weights
    assert sorted(copied) == sorted(sources)  # every module the program may import
    # Hermetic builds need exact pins.
    for line in (folder / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        assert not line or re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.\-]+", line), line
    # Table II of the SpeechColab paper, plus licence, training data, languages, decoding.
    raw = card.to_dict()
    for key in (
        "type",
        "architecture",
        "parameters",
        "size_bytes",
        "licence",
        "languages",
        "training_data",
        "decoding",
    ):
        assert key in raw and raw[key] != "", f"{folder.name}: card lacks {key}"
    if card.type == "open-source":
        assert not card.network and not card.secrets
        assert isinstance(card.size_bytes, int) and card.size_bytes > 0
    else:
        assert card.type == "commercial-api" and card.network and card.secrets
        assert card.api is not None and card.settings
    # Secrets: every credential the code reads is declared, every declared one is used.
    code = "".join(p.read_text() for rel, p in sources.items() if rel.endswith(".py"))
    read = set(ENV_READ.findall(code))
    undeclared = {v for v in read if not KNOBS.match(v) and v not in card.settings}
    assert not undeclared - set(card.secrets), f"{folder.name} reads {undeclared} undeclared"
    for secret in card.secrets:
        assert secret in code, f"{folder.name}: declared secret {secret} is never used"


def test_card_api_defaults_match_the_client():
    """The host-side schema and the in-container client agree on the retry policy defaults."""
    import importlib.util
    import sys

    sys.path.insert(0, str(MODELS / "_common"))  # apiclient imports its sibling `contract`
    spec = importlib.util.spec_from_file_location("_apiclient", MODELS / "_common" / "apiclient.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(MODELS / "_common"))
        del sys.modules[spec.name]
    from dataclasses import asdict

    assert asdict(module.RetryPolicy()) == ApiPolicy().model_dump()


def test_ops_models_table_and_json(repo_root):
    out = subprocess.run(
        [str(repo_root / "ops" / "models"), "--json"], capture_output=True, text=True, check=True
    ).stdout
    cards = {c["id"]: c for c in json.loads(out)}
    assert cards["whisper_base"]["decoding"]["language"] == "en"
    assert cards["openai_api_en"]["secrets"] == ["OPENAI_API_KEY"]
    assert cards["openai_api_en"]["image"]["shared"] == [
        "contract.py",
        "apiclient.py",
        "openai_transcribe.py",
        "stream_contract.py",
        "vendor_stream.py",
    ]
    assert all(len(c["source_hash"]) == 64 for c in cards.values())
    text = subprocess.run(
        [str(repo_root / "ops" / "models")], capture_output=True, text=True, check=True
    ).stdout
    models, _ = load_all(MODELS)
    assert text == markdown([summary_row(m) for m in models], SUMMARY_COLUMNS)
    assert "| whisper_tiny_en | open-source | whisper |" in text


def test_ops_models_reports_a_broken_card(tmp_path, repo_root):
    bad = tmp_path / "broken_model"
    bad.mkdir()
    (bad / "model.yaml").write_text("id: broken_model\nname: x\n")
    proc = subprocess.run(
        [str(repo_root / "ops" / "models"), "--root", str(tmp_path)], capture_output=True, text=True
    )
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert str(bad / "model.yaml") in line and "missing field(s): family, architecture" in line
