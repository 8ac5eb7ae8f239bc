"""`ops/benchmark --env`: point a wrapper at another endpoint without touching its card."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from asrbench.errors import EXIT_INPUT
from asrbench.settings import REPO_ROOT
from tests.stubs.vendors import OpenAIStub, sha


def _bench(tmp: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    cmd = [
        str(REPO_ROOT / "ops" / "benchmark"),
        "-m",
        "openai_api_en",
        "-d",
        "mini_en",
        "--runner",
        "local",
        "--max-utts",
        "4",
        "--no-progress",
        "--results",
        str(tmp / "results"),
        "--cache",
        str(tmp / "cache"),
        *args,
    ]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, env={**os.environ, **env}
    )


def test_env_setting_reaches_the_program_and_secret_stays_out(mini, tmp_path):
    # The stub answers each real audio file with its own reference text, so a WER of 0 on the
    # sampled utterances proves every request reached it through the --env setting.
    all_refs = OpenAIStub({sha(mini.audio_path(u).read_bytes()): u.text for u in mini})
    try:
        key = OpenAIStub.key
        p = _bench(
            tmp_path, "--env", f"OPENAI_BASE_URL={all_refs.url}/v1", env={"OPENAI_API_KEY": key}
        )
        assert p.returncode == 0, p.stderr
        assert "WER 0.00%" in p.stdout
        run = json.loads(next((tmp_path / "results").rglob("run.json")).read_text())
        assert f"{all_refs.url}/v1" in json.dumps(run)  # the setting is part of provenance
        everything = "\n".join(
            f.read_text(errors="replace") for f in tmp_path.rglob("*") if f.is_file()
        )
        assert key not in everything and key not in p.stdout + p.stderr
    finally:
        all_refs.close()


def test_secret_given_as_setting_is_refused(tmp_path):
    p = _bench(tmp_path, "--env", "OPENAI_API_KEY=sk-oops", env={})
    assert p.returncode == EXIT_INPUT  # bad input: the user moves it to the environment
    refusal = p.stderr.strip().splitlines()[-1]
    assert refusal.startswith("error: ") and "OPENAI_API_KEY" in refusal
    assert "declared a secret" in refusal or "is a declared secret" in refusal
    assert "sk-oops" not in p.stderr + p.stdout
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.json"))
