"""The card's optional `streaming:` program, checked where the card enters."""

from __future__ import annotations

import shutil

import pytest

from asrbench.modelcard import ModelCardError, load_model
from asrbench.settings import REPO_ROOT


def _copy(tmp_path, streaming_line: str | None):
    models = tmp_path / "models"
    shutil.copytree(REPO_ROOT / "models" / "_common", models / "_common")
    folder = models / "pocketsphinx_en"
    shutil.copytree(REPO_ROOT / "models" / "pocketsphinx_en", folder)
    card = folder / "model.yaml"
    lines = [x for x in card.read_text().splitlines() if not x.startswith("streaming:")]
    if streaming_line:
        lines.append(streaming_line)
    card.write_text("\n".join(lines) + "\n")
    return folder


def test_the_zoo_card_names_its_streaming_program():
    assert load_model(REPO_ROOT / "models" / "pocketsphinx_en").card.streaming == "stream.py"


def test_a_card_without_streaming_is_batch_only(tmp_path):
    assert load_model(_copy(tmp_path, None)).card.streaming is None


@pytest.mark.parametrize(
    "line, why",
    [("streaming: nosuch.py", "nosuch.py is neither in"), ("streaming: stream.sh", "pattern")],
)
def test_a_streaming_program_that_is_not_there_is_refused(tmp_path, line, why):
    with pytest.raises(ModelCardError, match=f"streaming.*{why}"):
        load_model(_copy(tmp_path, line))
