"""The card's optional `streaming:` program, checked where the card enters."""

from __future__ import annotations

import pytest
import yaml

from asrbench.modelcard import ModelCardError, load_model
from asrbench.settings import REPO_ROOT
from tests.factories import copy_model


def _copy(tmp_path, streaming_line: str | None):
    """models/pocketsphinx_en with its `streaming:` line replaced by `streaming_line`."""

    def streaming(card: dict) -> None:
        del card["streaming"]
        card.update(yaml.safe_load(streaming_line or "{}"))

    return copy_model("pocketsphinx_en", tmp_path / "models", streaming)


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
