"""Commercial-API cards carry no `api:` block that only repeats the client's defaults; a card
without one runs (and records) those defaults (issue 23 item 5)."""

from __future__ import annotations

import yaml

from asrbench.modelcard import ApiPolicy, ModelCard, model_dirs
from asrbench.settings import REPO_ROOT

MODELS = REPO_ROOT / "models"


def test_no_card_repeats_the_default_retry_policy():
    defaults = ApiPolicy().model_dump()
    copies = [
        d.name
        for d in model_dirs(MODELS)
        if ApiPolicy(
            **(yaml.safe_load((d / "model.yaml").read_text()).get("api") or {"max_attempts": 1})
        ).model_dump()
        == defaults
    ]
    assert copies == []


def test_a_commercial_card_without_api_runs_the_defaults():
    base = {
        "id": "x_en",
        "name": "X",
        "family": "commercial",
        "architecture": "remote",
        "licence": "proprietary",
        "languages": ["en"],
        "sample_rate": 16000,
        "program": "transcribe.py",
        "network": True,
        "secrets": ["X_API_KEY"],
    }
    card = ModelCard.model_validate({**base, "type": "commercial-api"})
    assert card.api == ApiPolicy()
    assert card.to_dict()["api"] == ApiPolicy().model_dump()  # recorded in run.json as before
    changed = ModelCard.model_validate(
        {**base, "type": "commercial-api", "api": {"concurrency": 1}}
    )
    assert changed.api == ApiPolicy(concurrency=1)
    local = {k: v for k, v in base.items() if k not in ("network", "secrets")}
    assert ModelCard.model_validate(local).api is None


def test_one_openai_program_for_both_openai_cards():
    from asrbench.modelcard import load_model

    models = [load_model(MODELS / m) for m in ("openai_api_en", "openai_compatible")]
    assert {m.card.program for m in models} == {"openai_transcribe.py"}
    for m in models:
        assert "openai_transcribe.py" in m.card.image.shared
        # the batch program lives in models/_common; a folder holds at most its streaming one
        local = sorted(p.name for p in m.root.glob("*.py"))
        assert local == ([m.card.streaming] if m.card.streaming else []), m.id
