"""Images rendered from the card: Dockerfile, build context, tags; the card's schema errors.

No Docker Engine needed: the Dockerfile and the build context are plain files, and the tag is
computed from a stand-in base image ID. Builds themselves are tested in
tests/models/test_docker_models.py and tests/runners/test_docker_and_local.py.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from asrbench.errors import InputError
from asrbench.images import BuildOptions, build_context, check_build_args, image_tag
from asrbench.images import render_dockerfile as render
from asrbench.modelcard import ModelCardError, load_model
from asrbench.runners.local import LocalRunner
from asrbench.settings import REPO_ROOT
from tests.factories import card_text, write_card

BASE_ID = "sha256:" + "0" * 64  # stands in for the base image's ID
NO_WHEELS = dict(mode="network", ca_bundle=None, base_image="asrbench/base:bookworm")


def make_tree(root: Path) -> Path:
    """models/_common/{helper.py, weights.py} and two models: one declares them, one does not."""
    common = root / "_common"
    common.mkdir(parents=True)
    (common / "helper.py").write_text("VALUE = 1\n")
    (common / "weights.py").write_text("import sys\nprint('weights into', sys.argv[1])\n")
    uses = write_card(
        root / "uses_helper",
        name="test model",
        program="run.py",
        extra=textwrap.dedent("""\
        image:
          shared: [helper.py, weights.py]
          build_args: {WEIGHTS_URL: ""}
          prepare: [weights.py, /opt/weights]
          uninstall: [six]
          env: {WEIGHTS_DIR: /opt/weights}
        """),
    )
    (uses / "run.py").write_text("import helper\n")
    (uses / "requirements.txt").write_text("six==1.17.0\n")
    (uses / "data").mkdir()
    (uses / "data" / "lexicon.txt").write_text("a a\n")
    plain = write_card(root / "plain", name="test model", program="main.py")
    (plain / "main.py").write_text("print('hi')\n")
    return root


def copies(dockerfile: str) -> dict[str, list[str]]:
    """COPY instructions of a rendered Dockerfile: destination -> sources."""
    out = {}
    for line in re.findall(r"^COPY (\[.*\])$", dockerfile, re.M):
        *sources, dest = json.loads(line)
        out[dest] = sources
    return out


def test_dockerfile_is_rendered_from_the_card(tmp_path):
    model = load_model(make_tree(tmp_path) / "uses_helper")
    text = render(model)
    lines = text.splitlines()
    assert lines[-1] == 'ENTRYPOINT ["/opt/venv/bin/python", "/opt/model/run.py"]'
    assert "FROM ${BASE_IMAGE} AS build" in lines and "ARG WEIGHTS_URL=" in lines
    # every source file, shared helpers included, lands under /opt/model, keeping folders
    assert copies(text) == {
        "/opt/model/": ["helper.py", "model.yaml", "requirements.txt", "run.py", "weights.py"],
        "/opt/model/data/": ["data/lexicon.txt"],
    }
    run = re.search(r"^RUN (.*?)\n(?! &&)", text, re.M | re.S).group(1)
    steps = [step.strip(" \\\n") for step in run.split("&&")]
    assert steps[0].endswith("sh /opt/build/install.sh /opt/build/requirements.txt")
    assert steps[2:4] == [
        "/opt/venv/bin/python /opt/model/weights.py /opt/weights",
        "/opt/venv/bin/pip uninstall --yes --quiet six",
    ]
    assert steps[-1].startswith("rm -rf /opt/venv/lib/python3.11/site-packages/pip ")
    # two stages: the image takes the build stage's /opt only, never its wheelhouse
    assert lines.count("FROM ${BASE_IMAGE}") == 1 and "FROM ${BASE_IMAGE} AS build" in lines
    final = text[text.index("FROM ${BASE_IMAGE}\n") :]
    assert "COPY --from=build /opt /opt" in final and ".build/" not in final
    # the build-time step needs the program, so the sources are copied before it
    assert text.index("COPY [") < text.index("RUN ")
    assert re.search(r'^ENV .*WEIGHTS_DIR="/opt/weights"', text, re.M)


def test_without_a_build_step_sources_come_after_the_install(tmp_path):
    text = render(load_model(make_tree(tmp_path) / "plain"))
    assert text.index("RUN ") < text.index("COPY [")  # a program edit reuses the install layer
    assert text.index("COPY --from=build") < text.index("COPY [")
    assert text.splitlines()[-1].endswith('"/opt/model/main.py"]')


def test_build_context_holds_the_declared_helpers(tmp_path):
    tree = make_tree(tmp_path / "models")
    model = load_model(tree / "uses_helper")
    ctx = tmp_path / "ctx"
    name = build_context(model, BuildOptions(**NO_WHEELS), ctx)
    assert (ctx / name).read_text() == render(model)
    for helper in ("helper.py", "weights.py"):
        assert not (ctx / helper).is_symlink()
        assert (ctx / helper).read_bytes() == (tree / "_common" / helper).read_bytes()
    assert (ctx / "data" / "lexicon.txt").is_file() and (ctx / "run.py").is_file()
    assert (ctx / ".build" / "install.sh").is_file()
    assert (ctx / ".build" / "requirements.txt").read_text() == "six==1.17.0\n"
    # the sources the Dockerfile copies are exactly the files placed in the context
    placed = sorted(
        p.relative_to(ctx).as_posix()
        for p in ctx.rglob("*")
        if p.is_file() and not p.relative_to(ctx).as_posix().startswith(".")
    )
    assert placed == sorted(s for srcs in copies(render(model)).values() for s in srcs)


def test_zoo_model_context_has_its_shared_program(tmp_path):
    model = load_model(REPO_ROOT / "models" / "whisper_tiny_en")
    build_context(model, BuildOptions(**NO_WHEELS), tmp_path)
    common = REPO_ROOT / "models" / "_common"
    assert (tmp_path / model.card.program).read_bytes() == (
        common / "whisper_transcribe.py"
    ).read_bytes()
    assert (tmp_path / "contract.py").read_bytes() == (common / "contract.py").read_bytes()
    assert not (tmp_path / "apiclient.py").exists()  # only what the card declares


def test_a_change_in_a_declared_helper_changes_the_image_tag(tmp_path):
    tree = make_tree(tmp_path)
    opts = BuildOptions(**NO_WHEELS)
    uses, plain = load_model(tree / "uses_helper"), load_model(tree / "plain")
    before = {m.id: (image_tag(m, BASE_ID, opts), LocalRunner().identity(m)) for m in (uses, plain)}
    assert image_tag(uses, BASE_ID, opts) == before["uses_helper"][0]  # stable
    (tree / "_common" / "helper.py").write_text("VALUE = 2  # a fix\n")
    after = {m.id: (image_tag(m, BASE_ID, opts), LocalRunner().identity(m)) for m in (uses, plain)}
    assert after["uses_helper"][0] != before["uses_helper"][0]
    assert after["uses_helper"][1] != before["uses_helper"][1]  # the local runner's too
    assert after["plain"] == before["plain"]  # a model that does not declare it is unaffected
    assert after["uses_helper"][0].startswith("asrbench/uses_helper:")


def test_every_build_input_moves_the_tag(tmp_path):
    tree = make_tree(tmp_path)
    model = load_model(tree / "uses_helper")
    bundle = tmp_path / "ca.crt"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    tags = {
        image_tag(model, BASE_ID, BuildOptions(**NO_WHEELS)),
        image_tag(model, "sha256:" + "1" * 64, BuildOptions(**NO_WHEELS)),
        image_tag(model, BASE_ID, BuildOptions(**{**NO_WHEELS, "mode": "wheelhouse"})),
        image_tag(model, BASE_ID, BuildOptions(**{**NO_WHEELS, "ca_bundle": bundle})),
        image_tag(model, BASE_ID, BuildOptions(**NO_WHEELS, build_args={"WEIGHTS_URL": "x"})),
        image_tag(model, BASE_ID, BuildOptions(**NO_WHEELS), render(model) + "# other\n"),
    }
    assert len(tags) == 6


def test_undeclared_build_argument_is_refused(tmp_path):
    model = load_model(make_tree(tmp_path) / "uses_helper")
    check_build_args(model, BuildOptions(**NO_WHEELS, build_args={"WEIGHTS_URL": "u"}))
    with pytest.raises(InputError, match=r"WHISPER_MODEL not declared .*WEIGHTS_URL"):
        check_build_args(model, BuildOptions(**NO_WHEELS, build_args={"WHISPER_MODEL": "x"}))


def test_a_models_own_dockerfile_is_used_as_it_is(tmp_path):
    model_dir = make_tree(tmp_path) / "plain"
    own = "FROM scratch\nCOPY main.py /\n"
    (model_dir / "Dockerfile").write_text(own)
    model = load_model(model_dir)
    assert render(model) == own
    assert build_context(model, BuildOptions(**NO_WHEELS), tmp_path / "ctx") == "Dockerfile"


# --- the card's schema: one line naming the file and the field ------------------------------


def card_error(tmp_path: Path, body: str, files: dict[str, str] | None = None) -> str:
    folder = tmp_path / "bad_model"
    folder.mkdir(parents=True)
    (folder / "model.yaml").write_text(body)
    for name, text in (files or {"run.py": ""}).items():
        (folder / name).write_text(text)
    with pytest.raises(ModelCardError) as err:
        load_model(folder)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{folder / 'model.yaml'}: ")
    return message


BASE = card_text("bad_model", name="test model", program="run.py")


@pytest.mark.parametrize(
    "change, field, expected",
    [
        ("sample_rate: 16k", "sample_rate", "valid integer"),
        ("sample_rate: -8000", "sample_rate", "greater than 0"),
        ("network: 'yes'", "network", "valid boolean"),
        ("languages: en", "languages", "valid list"),
        ("gpu: cuda", "gpu", "'none', 'optional' or 'required'"),
        ("secrets: [openai_key]", "secrets.0", "pattern"),
        ("parameters: lots", "parameters", "valid integer"),
        ("image: {shared: contract.py}", "image.shared", "valid list"),
        ("image: {dockerfile: Dockerfile}", "image.dockerfile", "unknown field"),
        ("api: {max_attempts: many}", "api.max_attempts", "valid integer"),
    ],
)
def test_wrong_field_type_names_the_field(tmp_path, change, field, expected):
    key = change.split(":")[0]
    body = "".join(line + "\n" for line in BASE.splitlines() if not line.startswith(key + ":"))
    message = card_error(tmp_path, body + change + "\n")
    assert f"field '{field}'" in message and expected in message, message


def test_cross_field_and_folder_checks(tmp_path):
    msg = card_error(tmp_path, BASE + "secrets: [VENDOR_KEY]\n")
    assert "set network: true" in msg
    msg = card_error(tmp_path / "a", BASE + "image: {uninstall: [numpy]}\n")
    assert "field 'image.uninstall'" in msg and "numpy is not in" in msg
    msg = card_error(tmp_path / "b", BASE + "image: {shared: [nothing_here.py]}\n")
    assert "field 'image.shared'" in msg and "nothing_here.py not found" in msg
    msg = card_error(tmp_path / "c", BASE.replace("run.py", "missing.py"))
    assert "field 'program'" in msg
    msg = card_error(
        tmp_path / "d",
        BASE + "image: {env: {X: y}}\n",
        {"run.py": "", "Dockerfile": "FROM scratch\n"},
    )
    assert "field 'image.env'" in msg and "rendered Dockerfile only" in msg


def test_bad_card_is_one_error_line_from_the_cli(tmp_path, cli):
    folder = tmp_path / "bad_model"
    folder.mkdir()
    (folder / "model.yaml").write_text(BASE.replace("16000", '"16 kHz"'))
    (folder / "run.py").write_text("")
    code, out, err = cli("build", "-m", str(folder))
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: ") and "field 'sample_rate'" in err and "model.yaml" in err
