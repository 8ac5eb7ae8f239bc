"""Every model folder against contract v1 (models/README.md): card, entry point, secrets."""

from __future__ import annotations

import json
import py_compile
import re
import subprocess
from pathlib import Path

import pytest

from asrbench.commands.models import load_all, model_dirs, row, table
from asrbench.modelcard import load_model
from asrbench.settings import REPO_ROOT

MODELS = REPO_ROOT / "models"
FOLDERS = sorted(p for p in MODELS.iterdir() if p.is_dir() and not p.name.startswith("_"))
ENV_READ = re.compile(r"""os\.environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]*)["']""")
# Runtime knobs the platform documents for every model; not secrets.
KNOBS = re.compile(r"^(ASRBENCH_|WHISPER_MODEL|XDG_|HOME$|PATH$)")


def test_every_folder_is_a_model():
    assert {p.name for p in FOLDERS} == {p.name for p in model_dirs(MODELS)}
    models, problems = load_all(MODELS)
    assert not problems
    assert {m.id for m in models} >= {"whisper_tiny_en", "whisper_base", "pocketsphinx_en",
                                      "openai_api_en", "google_stt_en", "azure_speech_en"}


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_folder_follows_contract(folder: Path):
    model = load_model(folder)
    card = model.card
    program = folder / card.program
    py_compile.compile(str(program), doraise=True)
    assert 'if __name__ == "__main__":' in program.read_text()
    # The image runs the card's program with the contract's two arguments.
    dockerfile = (folder / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE" in dockerfile and "FROM ${BASE_IMAGE}" in dockerfile
    entry = re.search(r"^ENTRYPOINT (\[.*\])$", dockerfile, re.M)
    assert entry and json.loads(entry.group(1))[-1] == f"/opt/model/{card.program}"
    copied = " ".join(re.findall(r"^COPY (.*)$", dockerfile, re.M))
    for local in folder.glob("*.py"):  # every module the program may import is in the image
        assert local.name in copied, f"{folder.name}: {local.name} not copied into the image"
    # Hermetic builds need exact pins.
    for line in (folder / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        assert not line or re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.\-]+", line), line
    # Table II of the SpeechColab paper, plus licence, training data, languages, decoding.
    raw = card.to_dict()
    for key in ("type", "architecture", "parameters", "size_bytes", "licence", "languages",
                "training_data", "decoding"):
        assert key in raw and raw[key] != "", f"{folder.name}: card lacks {key}"
    if card.type == "open-source":
        assert not card.network and not card.secrets
        assert isinstance(card.size_bytes, int) and card.size_bytes > 0
    else:
        assert card.type == "commercial-api" and card.network and card.secrets
        assert isinstance(raw.get("api"), dict) and isinstance(raw.get("settings"), dict)
    # Secrets: every credential the code reads is declared, every declared one is used.
    read = set()
    for py in folder.glob("*.py"):
        read |= set(ENV_READ.findall(py.read_text()))
    settings = set(raw.get("settings") or {})
    undeclared = {v for v in read if not KNOBS.match(v) and v not in settings} - set(card.secrets)
    assert not undeclared, f"{folder.name} reads {undeclared} without declaring them as secrets"
    code = "".join(p.read_text() for p in folder.glob("*.py"))
    for secret in card.secrets:
        assert secret in code, f"{folder.name}: declared secret {secret} is never used"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_shared_files_are_links_into_common(folder: Path):
    for path in folder.iterdir():
        if path.is_symlink():
            target = path.resolve()
            assert target.parent == MODELS / "_common" and target.is_file(), path


def test_ops_models_table_and_json(repo_root):
    out = subprocess.run([str(repo_root / "ops" / "models"), "--json"], capture_output=True,
                         text=True, check=True).stdout
    cards = {c["id"]: c for c in json.loads(out)}
    assert cards["whisper_base"]["decoding"]["language"] == "en"
    assert cards["openai_api_en"]["secrets"] == ["OPENAI_API_KEY"]
    assert all(len(c["source_hash"]) == 64 for c in cards.values())
    text = subprocess.run([str(repo_root / "ops" / "models")], capture_output=True, text=True,
                          check=True).stdout
    models, _ = load_all(MODELS)
    assert text.strip() == table([row(m) for m in models])
    assert "| whisper_tiny_en | open-source | whisper |" in text


def test_ops_models_reports_a_broken_card(tmp_path, repo_root):
    bad = tmp_path / "broken_model"
    bad.mkdir()
    (bad / "model.yaml").write_text("id: broken_model\nname: x\n")
    proc = subprocess.run([str(repo_root / "ops" / "models"), "--root", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "missing field(s)" in proc.stderr and "broken_model" in \
        proc.stderr
