"""OpenAI's transcription API, `POST {base}/audio/transcriptions`: the one program of both
OpenAI cards (their `program`, declared under `image.shared`).

- `openai_api_en`: OpenAI itself (or any compatible endpoint), key `OPENAI_API_KEY`, settings
  `OPENAI_BASE_URL`, `OPENAI_MODEL`, `OPENAI_LANGUAGE`;
- `openai_compatible`: a self-hosted server that speaks the same API (vLLM, whisper.cpp's
  server, LocalAI, faster-whisper-server, `ops/serve`), key `OPENAI_COMPATIBLE_API_KEY`,
  settings `OPENAI_COMPATIBLE_BASE_URL`, `_MODEL`, `_LANGUAGE`.

The card beside this program names its secret (`secrets: [PREFIX_API_KEY]`) and the settings
are `PREFIX_BASE_URL`, `PREFIX_MODEL` and `PREFIX_LANGUAGE`. The request is the documented
multipart form (`file`, `model`, `language` when set, `response_format=json`, `temperature=0`)
with `Authorization: Bearer $KEY` when the key is set (many self-hosted servers take none); the
answer is `{"text": ...}`, an error `{"error": {"message", "type", "code"}}` (some servers
answer `{"detail": ...}` or plain text: the message is taken from whatever came back).
Retries, timeouts and concurrency: apiclient.py.
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
KEY = CARD["secrets"][0]  # OPENAI_API_KEY or OPENAI_COMPATIBLE_API_KEY
PREFIX = KEY.removesuffix("_API_KEY")


def _error_message(resp: Any) -> str:
    body = resp.json()
    err = body.get("error") or body.get("detail") or body
    return str(err.get("message") if isinstance(err, dict) and err.get("message") else err)


def transcribe_one(uid: str, path: str) -> str:
    url = SETTINGS[f"{PREFIX}_BASE_URL"].rstrip("/") + "/audio/transcriptions"
    key = os.environ.get(KEY, "")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = {"model": SETTINGS[f"{PREFIX}_MODEL"], "response_format": "json", "temperature": "0"}
    if SETTINGS[f"{PREFIX}_LANGUAGE"]:
        data["language"] = SETTINGS[f"{PREFIX}_LANGUAGE"]
    with open(path, "rb") as audio:
        resp = request(
            "POST",
            url,
            POLICY.timeout_s,
            _error_message,
            headers=headers,
            data=data,
            files={"file": (Path(path).name, audio, "audio/wav")},
        )
    try:
        return str(resp.json()["text"])
    except (ValueError, KeyError, TypeError):
        raise ApiError(
            "client", f"unexpected answer (no 'text'): {resp.text[:200]}", resp.status_code
        ) from None


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, KEY))
