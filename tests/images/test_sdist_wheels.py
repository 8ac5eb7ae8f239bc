"""Pure-Python sdists become wheels on the host, never in the image (card `image.sdists`).

A requirement published only as a source distribution (NeMo's antlr4-python3-runtime 4.9.3) is
named by the card; the wheelhouse step downloads that one sdist, builds it on the host with pip
and keeps the wheel only when it is `py3-none-any`; the image installs wheels only, in both
build modes. Here with a real sdist this test writes (a one-module setuptools project), built
by pip with the host's setuptools: no network. The `full` test builds its image in both modes
(about 30 s; the network build's pip asks the index for the project, then takes the wheel);
the wheelhouse mode with Docker runs in CI through tests/models/test_runtime_nemo.py.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import docker
import pytest

from asrbench.errors import InputError
from asrbench.images import BuildOptions, build_context, build_model_image, engine_available
from asrbench.images.build import ImageBuildError, check_pure_wheel, wheelhouse
from asrbench.images.dockerfile import PYTHON
from asrbench.modelcard import ModelCardError, load_model
from tests.conftest import require
from tests.factories import make_model

PIN = "asrbench-purepkg==0.1"
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "asrbench-purepkg"
version = "0.1"

[tool.setuptools]
py-modules = ["asrbench_purepkg"]
"""


def write_sdist(where: Path) -> Path:
    """asrbench_purepkg-0.1.tar.gz: a pure-Python project as pip finds it in a links folder."""
    where.mkdir(parents=True, exist_ok=True)
    files = {
        "pyproject.toml": PYPROJECT,
        "PKG-INFO": "Metadata-Version: 2.1\nName: asrbench-purepkg\nVersion: 0.1\n",
        "asrbench_purepkg.py": "ANSWER = 42\n",
    }
    sdist = where / "asrbench_purepkg-0.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        for name, text in files.items():
            info = tarfile.TarInfo(f"asrbench_purepkg-0.1/{name}")
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return sdist


def card_folder(root: Path, sdists: list[str], requirements: str = PIN) -> Path:
    return make_model(
        root,
        "purecard",
        "import asrbench_purepkg\n",
        requirements=requirements + "\n",
        name="sdist test",
        type="open-source",
        parameters=1,
        size_bytes=1,
        program="main.py",
        network=False,
        secrets=[],
        memory="1g",
        training_data="none",
        decoding={"method": "none"},
        image={"shared": [], **({"sdists": sdists} if sdists else {})},
    )


@pytest.fixture
def links(tmp_path, monkeypatch) -> Path:
    """A links folder holding the sdist, searched by pip before the machine's own; a cache of
    this test's own, so the wheelhouse is made here."""
    where = tmp_path / "links"
    write_sdist(where)
    monkeypatch.setenv("PIP_FIND_LINKS", f"{where} /opt/wheels")
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    return where


def test_a_named_pure_python_sdist_becomes_a_wheel_in_the_wheelhouse(links, tmp_path):
    model = load_model(card_folder(tmp_path, [PIN]))
    house = wheelhouse(model)
    assert house is not None
    names = sorted(p.name for p in house.iterdir() if p.name != ".complete")
    assert names == ["asrbench_purepkg-0.1-py3-none-any.whl"]


def test_an_sdist_the_card_does_not_name_stops_the_wheelhouse(links, tmp_path):
    with pytest.raises(ImageBuildError) as err:
        wheelhouse(load_model(card_folder(tmp_path, [])))
    assert "image.sdists" in str(err.value) and "a wheel for every requirement" in str(err.value)


def test_a_network_build_gets_the_host_built_wheel_and_pip_takes_wheels_only(links, tmp_path):
    model = load_model(card_folder(tmp_path, [PIN]))
    network = BuildOptions(mode="network", ca_bundle=None)
    build_context(model, network, tmp_path / "ctx")
    build = tmp_path / "ctx" / ".build"
    wheels = sorted(p.name for p in (build / "wheels").iterdir())
    assert wheels == ["asrbench_purepkg-0.1-py3-none-any.whl"]  # only the sdist's, not all
    req = (build / "requirements.txt").read_text().splitlines()
    assert "--only-binary=:all:" in req and "--find-links /opt/build/wheels" in req and PIN in req


def test_an_sdist_missing_from_the_requirements_is_refused_naming_the_card(links, tmp_path):
    model = load_model(card_folder(tmp_path, [PIN], requirements="asrbench-purepkg==0.2"))
    with pytest.raises(InputError) as err:
        wheelhouse(model)
    assert str(model.card_path) in str(err.value) and f"{PIN} is not a line" in str(err.value)


@pytest.mark.full
@pytest.mark.parametrize("mode", ["network", "wheelhouse"])
def test_the_image_installs_the_host_built_wheel_in_either_build_mode(mode, links, tmp_path):
    require("docker", engine_available(), "no Docker Engine answers")
    model = load_model(card_folder(tmp_path, [PIN]))
    tag, _ = build_model_image(model, BuildOptions(mode=mode, ca_bundle=None))
    engine = docker.from_env()
    try:
        code = "import asrbench_purepkg; print(asrbench_purepkg.ANSWER)"
        out = engine.containers.run(tag, ["-c", code], entrypoint=[PYTHON], remove=True)
        assert out == b"42\n"
    finally:
        engine.images.remove(tag)


@pytest.mark.parametrize(
    "wheel, pure",
    [
        ("antlr4_python3_runtime-4.9.3-py3-none-any.whl", True),
        ("six-1.17.0-py2.py3-none-any.whl", True),
        ("numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl", False),
        ("cext-0.1-cp311-cp311-linux_x86_64.whl", False),
        ("abi3-1.0-cp39-abi3-linux_x86_64.whl", False),
        ("cpyonly-1.0-cp311-none-any.whl", True),
    ],
)
def test_only_a_py3_none_any_wheel_is_accepted(wheel, pure, tmp_path):
    model = load_model(card_folder(tmp_path, [PIN]))
    if pure:
        check_pure_wheel(model, PIN, Path(wheel))
        return
    with pytest.raises(InputError) as err:
        check_pure_wheel(model, PIN, Path(wheel))
    message = str(err.value)
    assert "needs a compiler; not allowed in images" in message and wheel in message
    assert str(model.card_path) in message


def test_a_project_named_twice_in_image_sdists_is_refused(tmp_path):
    with pytest.raises(ModelCardError) as err:
        load_model(card_folder(tmp_path, [PIN, "Asrbench_Purepkg==0.1"]))
    assert "image.sdists" in str(err.value) and "asrbench-purepkg named twice" in str(err.value)
