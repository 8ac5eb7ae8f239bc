"""openai_compatible: any self-hosted server that speaks OpenAI's transcription API (vLLM,
whisper.cpp's server, LocalAI, faster-whisper-server, `ops/serve`), at a configurable base URL.

`POST {OPENAI_COMPATIBLE_BASE_URL}/audio/transcriptions`, multipart (`file`, `model`,
`language`, `response_format=json`, `temperature`), `Authorization: Bearer
$OPENAI_COMPATIBLE_API_KEY` when that key is set (many self-hosted servers take none). Answer
`{"text"}`; errors `{"error": {"message", "type", "code"}}` (some servers answer
`{"detail": ...}` or plain text: the message is taken from whatever came back).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from apiclient import ApiError, RetryPolicy, load_card, request, run, settings

CARD = load_card(__file__)
SETTINGS = settings(CARD)
POLICY = RetryPolicy.from_card(CARD)


def _error_message(resp: Any) -> str:
    body = resp.json()
    err = body.get("error") or body.get("detail") or body
    return str(err.get("message") if isinstance(err, dict) and err.get("message") else err)


def transcribe_one(uid: str, path: str) -> str:
    url = SETTINGS["OPENAI_COMPATIBLE_BASE_URL"].rstrip("/") + "/audio/transcriptions"
    key = os.environ.get("OPENAI_COMPATIBLE_API_KEY", "")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = {"model": SETTINGS["OPENAI_COMPATIBLE_MODEL"], "response_format": "json",
            "temperature": "0"}
    if SETTINGS["OPENAI_COMPATIBLE_LANGUAGE"]:
        data["language"] = SETTINGS["OPENAI_COMPATIBLE_LANGUAGE"]
    with open(path, "rb") as audio:
        resp = request("POST", url, POLICY.timeout_s, _error_message, headers=headers, data=data,
                       files={"file": (Path(path).name, audio, "audio/wav")})
    try:
        return str(resp.json()["text"])
    except (ValueError, KeyError, TypeError):
        raise ApiError("client", f"unexpected answer (no 'text'): {resp.text[:200]}",
                       resp.status_code) from None


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "OPENAI_COMPATIBLE_API_KEY"))
