"""The one place tests make fake models: a card (`model.yaml`) and the program beside it.

A test states only what its model needs (`make_model(root, "fake", CODE, program="prog.py",
network=True)`); everything else is the smallest card the platform accepts. Tests that edit a
real or template card go through `edit_card`. A test that needs a broken card on purpose writes
it by hand and is named in tests/test_architecture.py's allow-list. `copy_model` copies a zoo
model or template as the runtime tests start from one.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from asrbench.settings import REPO_ROOT

# Changes a card's fields in place (the parsed model.yaml).
EditCard = Callable[[dict[str, Any]], None]

# The smallest card `load_model` accepts (the fields set here), in the order of the zoo's own
# cards; the optional fields (None) only hold their place, so a card made here reads (and
# hashes) as the hand-written ones it replaced did.
CARD_DEFAULTS: dict[str, Any] = {
    "id": None,
    "name": "Fake",
    "family": "test",
    "type": None,
    "architecture": "none",
    "parameters": None,
    "size_bytes": None,
    "licence": "MIT",
    "languages": ["en"],
    "sample_rate": 16000,
    "program": "fake.py",
    "streaming": None,
    "network": None,
    "secrets": None,
    "gpu": None,
    "memory": None,
    "cpu": None,
    "max_input_s": None,
    "image": None,
    "training_data": None,
}


def card_text(model_id: str, **fields: Any) -> str:
    """The text of a card: CARD_DEFAULTS with `fields` over them (a key keeps its place, new
    keys follow in the order given; None leaves a field out). One top-level key a line, lists
    and flat mappings in flow style (`languages: [en]`), as a person writes a card."""
    card = {**CARD_DEFAULTS, "id": model_id, **fields}
    return "".join(_line(key, value) for key, value in card.items() if value is not None)


def _line(key: str, value: Any) -> str:
    # Flow style only inside a list or mapping: a whole one-key mapping in flow style would
    # read `{id: x}`.
    nested = isinstance(value, (list, dict))
    return yaml.safe_dump(
        {key: value},
        sort_keys=False,
        default_flow_style=None if nested else False,
        width=10**6,
        allow_unicode=True,
    )


def write_card(
    folder: Path, model_id: str | None = None, *, extra: str = "", **fields: Any
) -> Path:
    """Write `folder/model.yaml` (the folder made if missing) and return the folder. The id is
    the folder's name unless given; `extra` is YAML text appended as it is, for a block a test
    spells out line by line."""
    folder.mkdir(parents=True, exist_ok=True)
    text = card_text(model_id or folder.name, **fields) + extra
    (folder / "model.yaml").write_text(text, encoding="utf-8")
    return folder


def make_model(
    root: Path,
    model_id: str,
    code: str = "",
    *,
    requirements: str | None = "# none\n",
    files: dict[str, str] | None = None,
    extra: str = "",
    **fields: Any,
) -> Path:
    """A model folder `root/model_id`: its card (`fields` as in `card_text`), `code` as the
    program the card names, `requirements.txt` (None: none) and any other `files`."""
    folder = root / model_id
    folder.mkdir(parents=True)
    write_card(folder, model_id, extra=extra, **fields)
    (folder / (fields.get("program") or CARD_DEFAULTS["program"])).write_text(code)
    if requirements is not None:
        (folder / "requirements.txt").write_text(requirements)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


def edit_card(folder: Path, edit: EditCard) -> Path:
    """Let `edit` change the card in `folder` (a copy of a real or template card), in place;
    key order is kept. Returns the folder."""
    path = folder / "model.yaml"
    card = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(card)
    path.write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
    return folder


def copy_model(
    name: str, dest: Path, edit: EditCard | None = None, ignore: tuple[str, ...] = ()
) -> Path:
    """models/<name> copied to `dest/<name>` beside a copy of models/_common (so its shared
    helpers resolve), its card changed by `edit` if given; `ignore` as shutil.ignore_patterns."""
    shutil.copytree(REPO_ROOT / "models" / "_common", dest / "_common", dirs_exist_ok=True)
    folder = dest / name
    shutil.copytree(REPO_ROOT / "models" / name, folder, ignore=shutil.ignore_patterns(*ignore))
    if edit is not None:
        edit_card(folder, edit)
    return folder
