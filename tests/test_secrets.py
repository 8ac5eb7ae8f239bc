"""No secret value in any output: an API that echoes the key back in its error body.

A real model wrapper (openai_api_en, local runner) against a loopback server speaking OpenAI's
wire format, which answers the first request with a 400 whose message quotes the request's
Authorization header, as some gateways do. The key must appear nowhere: not in failed.tsv,
utterances.jsonl, summary.json, run.json, logs, the cache, nor on the console.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from asrbench.dataset import load_dataset
from asrbench.secrets import Redactor
from asrbench.settings import REPO_ROOT
from tests.stubs.vendors import OpenAIStub, sha

KEY = "sk-test-EchoedBackSecret-0123456789abcdef"


class EchoingStub(OpenAIStub):
    """Refuses one utterance's audio, every time, quoting the request's Authorization header."""

    key = KEY
    victim = ""  # the reference text of the utterance it refuses

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        code, payload = super().handle(path, headers, body)
        if code == 200 and payload["text"] == self.victim:
            return 400, {
                "error": {
                    "message": "Invalid request; you sent Authorization: "
                    f"{headers.get('Authorization')}",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            }
        return code, payload


def test_redactor_covers_values_and_their_encodings() -> None:
    red = Redactor.for_names(["K", "SHORT", "ABSENT"], {"K": "s3cr3t/v+lue", "SHORT": "ab"})
    import base64
    import urllib.parse

    for leaked in (
        "s3cr3t/v+lue",
        urllib.parse.quote("s3cr3t/v+lue", safe=""),
        base64.b64encode(b"apikey:s3cr3t/v+lue").decode(),
    ):
        assert red.redact(f"error: got {leaked}!") == "error: got [REDACTED:K]!"
    assert red.redact("ab is too short to be a secret worth hiding").startswith("ab")


def test_echoed_key_is_redacted_everywhere(tmp_path: Path, mini_en: Path) -> None:
    mini = load_dataset(mini_en)
    stub = EchoingStub({sha(mini.audio_path(u).read_bytes()): u.text for u in mini})
    from asrbench.dataset import sample_utterances

    stub.victim = sample_utterances(mini.utterances, 3, 0)[0].text
    try:
        cmd = [
            str(REPO_ROOT / "ops" / "benchmark"),
            "-m",
            "openai_api_en",
            "-d",
            "mini_en",
            "--runner",
            "local",
            "--max-utts",
            "3",
            "--no-progress",
            "-j",
            "1",
            "--env",
            f"OPENAI_BASE_URL={stub.url}/v1",
            "--results",
            str(tmp_path / "results"),
            "--cache",
            str(tmp_path / "cache"),
        ]
        p = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "OPENAI_API_KEY": KEY},
        )
    finally:
        stub.close()
    assert p.returncode == 1, p.stderr  # one utterance failed: over the default budget
    assert "1 of 3 utterance(s) failed" in p.stderr
    (cell,) = (tmp_path / "results" / "openai_api_en").glob("mini_en~sample-*")
    failed = (cell / "failed.tsv").read_text()
    assert "[REDACTED:OPENAI_API_KEY]" in failed  # the reason is kept, the value is not
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert any(f.name == "summary.json" for f in files) and any(f.suffix == ".log" for f in files)
    for f in files:
        assert KEY not in f.read_text(errors="replace"), f
    assert KEY not in p.stdout + p.stderr
