"""A card's `image.no_deps`: its requirements are the whole closure, installed with
`pip --no-deps` by the local runner, the host wheelhouse and the image (`PIP_NO_DEPS=1`), for a
package whose metadata names a dependency another distribution provides (Resemblyzer's
`webrtcvad`, which `webrtcvad-wheels` provides).

Here with a real wheel this test writes, whose metadata requires a project no index holds: pip
itself refuses it without the switch and installs it with it. No network, no Docker.
"""

from __future__ import annotations

import base64
import zipfile
from pathlib import Path

import pytest

from asrbench.images.build import ImageBuildError, wheelhouse
from asrbench.images.dockerfile import render
from asrbench.modelcard import load_model
from asrbench.runners.base import RunnerError
from asrbench.runners.local import LocalRunner
from tests.factories import make_model

PIN = "asrbench-needy==0.1"
WHEEL = "asrbench_needy-0.1-py3-none-any.whl"


def write_wheel(where: Path) -> Path:
    """asrbench_needy 0.1: one module; its metadata requires `asrbench-nowhere`, held by no
    index (as `webrtcvad` has no wheel anywhere)."""
    where.mkdir(parents=True, exist_ok=True)
    info = "asrbench_needy-0.1.dist-info"
    files = {
        "asrbench_needy.py": "ANSWER = 42\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: asrbench-needy\nVersion: 0.1\n"
        "Requires-Dist: asrbench-nowhere>=1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    path = where / WHEEL
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
            record.append(f"{name},sha256={_b64_sha256(text.encode())},{len(text.encode())}")
        record.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def _b64_sha256(data: bytes) -> str:
    from asrbench.identity import bytes_sha256

    digest = bytes.fromhex(bytes_sha256(data))
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def card_folder(root: Path, no_deps: bool) -> Path:
    return make_model(
        root,
        "needy_deps" if no_deps else "needy",
        "import asrbench_needy\n",
        requirements=PIN + "\n",
        name="no-deps test",
        type="open-source",
        parameters=1,
        size_bytes=1,
        program="main.py",
        network=False,
        secrets=[],
        memory="1g",
        training_data="none",
        decoding={"method": "none"},
        image={"shared": [], **({"no_deps": True} if no_deps else {})},
    )


@pytest.fixture
def links(tmp_path, monkeypatch) -> Path:
    """A links folder holding the wheel, searched by pip; a cache of this test's own."""
    where = tmp_path / "links"
    write_wheel(where)
    monkeypatch.setenv("PIP_FIND_LINKS", str(where))
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    return where


def test_the_wheelhouse_takes_the_closure_as_written_only_with_no_deps(links, tmp_path):
    with pytest.raises(ImageBuildError):
        wheelhouse(load_model(card_folder(tmp_path / "a", no_deps=False)))
    house = wheelhouse(load_model(card_folder(tmp_path / "b", no_deps=True)))
    assert house is not None
    assert sorted(p.name for p in house.iterdir() if p.name != ".complete") == [WHEEL]


def test_the_local_runner_installs_with_no_deps(links, tmp_path):
    runner = LocalRunner(venv_root=tmp_path / "venvs", source_root=tmp_path / "src")
    with pytest.raises(RunnerError, match="installing its requirements failed"):
        runner.prepare(load_model(card_folder(tmp_path / "a", no_deps=False)))
    model = load_model(card_folder(tmp_path / "b", no_deps=True))
    runner.prepare(model)
    site = list((runner.venv_dir(model) / "lib").glob("python3*/site-packages"))
    assert (site[0] / "asrbench_needy.py").is_file()


def test_the_switch_is_in_the_image_and_the_environment_key(tmp_path):
    plain = load_model(card_folder(tmp_path / "a", no_deps=False))
    switched = load_model(card_folder(tmp_path / "b", no_deps=True))
    assert "PIP_NO_DEPS=1 sh /opt/build/install.sh" in render(switched)
    assert "PIP_NO_DEPS" not in render(plain)  # every other card's Dockerfile as it was
    assert plain.environment_digest() != switched.environment_digest()
