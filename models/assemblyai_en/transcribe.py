"""assemblyai_en: AssemblyAI pre-recorded transcription (v2), the documented three steps.

1. `POST {base}/v2/upload` with the raw audio -> `{"upload_url"}`;
2. `POST {base}/v2/transcript` with `{"audio_url", "language_code", "speech_model",
   "punctuate", "format_text"}` -> `{"id", "status": "queued"}`;
3. `GET {base}/v2/transcript/{id}` until `status` is `completed` (`text`) or `error` (`error`),
   then `DELETE {base}/v2/transcript/{id}` so the vendor keeps no copy.
The key goes in the `authorization` header as is (no scheme). Errors: `{"error": "..."}` with
401, 429, 5xx. Each call is retried on its own (apiclient `step`), so a throttled poll never
uploads the audio again.

Speakers (`ASSEMBLYAI_DIARIZE: true`): the request adds `"speaker_labels": true`, and the
completed transcript's `words` each carry `speaker` ("A", "B"...) beside `text`, `start` and
`end` in milliseconds (`utterances` groups them the same way;
https://www.assemblyai.com/docs/pre-recorded-audio/label-speakers): the words, one segment per
change of speaker, go to hyp.timed.jsonl.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from apiclient import (
    ApiError,
    RetryPolicy,
    Timed,
    diarize_setting,
    load_card,
    poll,
    request,
    run,
    settings,
    speaker_turns,
    step,
    timed_word,
)

CARD = load_card(__file__)
SETTINGS = settings(CARD)
POLICY = RetryPolicy.from_card(CARD)
DIARIZE = diarize_setting(SETTINGS, "ASSEMBLYAI_DIARIZE")


def _error_message(resp: Any) -> str:
    return str(resp.json().get("error") or resp.text[:300])


def _call(method: str, path: str, **kwargs: Any) -> Any:
    url = SETTINGS["ASSEMBLYAI_BASE_URL"].rstrip("/") + path
    headers = {
        "authorization": os.environ.get("ASSEMBLYAI_API_KEY", ""),
        **kwargs.pop("headers", {}),
    }
    return step(
        lambda: request(method, url, POLICY.timeout_s, _error_message, headers=headers, **kwargs)
    )


def _diarized(uid: str, body: dict[str, Any]) -> Timed:
    words = [
        timed_word(w["start"] / 1000, w["end"] / 1000, w["text"], w.get("speaker"))
        for w in body.get("words") or []
    ]
    return Timed(str(body.get("text") or ""), speaker_turns(uid, words), words)


def transcribe_one(uid: str, path: str) -> str | Timed:
    with open(path, "rb") as f:
        audio = f.read()
    upload = _call(
        "POST", "/v2/upload", data=audio, headers={"Content-Type": "application/octet-stream"}
    ).json()["upload_url"]
    config = {
        "audio_url": upload,
        "language_code": SETTINGS["ASSEMBLYAI_LANGUAGE"],
        "speech_model": SETTINGS["ASSEMBLYAI_SPEECH_MODEL"],
        "punctuate": True,
        "format_text": True,
    }
    if DIARIZE:
        config["speaker_labels"] = True
    job = _call("POST", "/v2/transcript", json=config).json()

    def status() -> tuple[bool, dict]:
        body = request(
            "GET",
            SETTINGS["ASSEMBLYAI_BASE_URL"].rstrip("/") + f"/v2/transcript/{job['id']}",
            POLICY.timeout_s,
            _error_message,
            headers={"authorization": os.environ.get("ASSEMBLYAI_API_KEY", "")},
        ).json()
        return body.get("status") in ("completed", "error"), body

    try:
        body = poll(
            status,
            float(SETTINGS["ASSEMBLYAI_POLL_S"]),
            float(SETTINGS["ASSEMBLYAI_MAX_WAIT_S"]),
            f"transcript {job['id']}",
        )
    finally:
        try:
            _call("DELETE", f"/v2/transcript/{job['id']}")
        except ApiError as exc:
            print(
                f"assemblyai_en: {uid}: could not delete transcript {job['id']}: {exc}",
                file=sys.stderr,
            )
    if body["status"] == "error":
        raise ApiError("client", f"transcript {job['id']} failed: {body.get('error')}")
    return _diarized(uid, body) if DIARIZE else str(body.get("text") or "")


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "ASSEMBLYAI_API_KEY"))
