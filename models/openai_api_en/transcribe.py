"""openai_api_en: any OpenAI-compatible `POST {base}/audio/transcriptions` endpoint.

The request is the documented multipart form (`file`, `model`, `language`, `response_format`,
`temperature`) with `Authorization: Bearer $OPENAI_API_KEY`; the answer is `{"text": ...}`, an
error `{"error": {"message", "type", "code"}}`. Base URL and model name are settings
(`OPENAI_BASE_URL`, `OPENAI_MODEL`), so the same wrapper covers OpenAI, hosted and self-hosted
compatible servers, and `ops/serve`. Retries, timeouts and concurrency: apiclient.py.
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
    err = resp.json().get("error") or {}
    return err.get("message") or str(err)


def transcribe_one(uid: str, path: str) -> str:
    url = SETTINGS["OPENAI_BASE_URL"].rstrip("/") + "/audio/transcriptions"
    key = os.environ.get("OPENAI_API_KEY", "")
    headers = {"Authorization": f"Bearer {key}"} if key else {}  # some self-hosted servers: none
    data = {"model": SETTINGS["OPENAI_MODEL"], "language": SETTINGS["OPENAI_LANGUAGE"],
            "response_format": "json", "temperature": "0"}
    with open(path, "rb") as audio:
        resp = request("POST", url, POLICY.timeout_s, _error_message, headers=headers, data=data,
                       files={"file": (Path(path).name, audio, "audio/wav")})
    try:
        return str(resp.json()["text"])
    except (ValueError, KeyError, TypeError):
        raise ApiError("client", f"unexpected answer (no 'text'): {resp.text[:200]}",
                       resp.status_code) from None


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "OPENAI_API_KEY"))
