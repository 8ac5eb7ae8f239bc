"""revai_en: Rev AI asynchronous speech-to-text (v1), the documented job flow.

1. `POST {base}/speechtotext/v1/jobs` multipart: `media` (the audio) and `options` (JSON:
   `{"language", "transcriber", "skip_diarization"}`) -> `{"id", "status": "in_progress"}`;
2. `GET {base}/speechtotext/v1/jobs/{id}` until `status` is `transcribed` or `failed`
   (`failure_detail`);
3. `GET {base}/speechtotext/v1/jobs/{id}/transcript` with `Accept:
   application/vnd.rev.transcript.v1.0+json` -> `{"monologues": [{"elements": [{"type",
   "value"}]}]}`, whose element values joined are the text;
4. `DELETE {base}/speechtotext/v1/jobs/{id}` so the vendor keeps no copy.
`Authorization: Bearer <REVAI_ACCESS_TOKEN>`. Errors are problem+json `{"type", "title",
"status", "detail"}` (401, 429 with Retry-After, 5xx). Each call is retried on its own.

Speakers (`REVAI_DIARIZE: true`): the job is created with `"skip_diarization": false`, and each
monologue of the transcript names its `speaker` (an integer), its `text` elements timed by
`ts` and `end_ts` in seconds (https://docs.rev.ai/api/asynchronous/reference/): each text
element, its punctuation attached, is a word of that speaker in hyp.timed.jsonl.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
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
DIARIZE = diarize_setting(SETTINGS, "REVAI_DIARIZE")
TRANSCRIPT_JSON = "application/vnd.rev.transcript.v1.0+json"


def _error_message(resp: Any) -> str:
    body = resp.json()
    return " ".join(str(body.get(k) or "") for k in ("title", "detail")).strip() or str(body)


def _url(path: str) -> str:
    return SETTINGS["REVAI_BASE_URL"].rstrip("/") + "/speechtotext/v1" + path


def _headers(**extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {os.environ.get('REVAI_ACCESS_TOKEN', '')}", **extra}


def _diarized(uid: str, text: str, monologues: list[dict[str, Any]]) -> Timed:
    words: list[dict[str, Any]] = []
    for mono in monologues:
        for el in mono["elements"]:
            if el["type"] == "text":
                words.append(timed_word(el["ts"], el["end_ts"], el["value"], mono.get("speaker")))
            elif words and el["value"].strip():  # punctuation: part of the word before it
                words[-1]["word"] += el["value"].strip()
    return Timed(text, speaker_turns(uid, words), words)


def transcribe_one(uid: str, path: str) -> str | Timed:
    options = {
        "language": SETTINGS["REVAI_LANGUAGE"],
        "transcriber": SETTINGS["REVAI_TRANSCRIBER"],
        "skip_diarization": not DIARIZE,
    }
    with open(path, "rb") as f:
        audio = f.read()
    job_id = step(
        lambda: request(
            "POST",
            _url("/jobs"),
            POLICY.timeout_s,
            _error_message,
            headers=_headers(),
            files={"media": (Path(path).name, audio, "audio/wav")},
            data={"options": json.dumps(options)},
        )
    ).json()["id"]

    def status() -> tuple[bool, dict]:
        job = request(
            "GET", _url(f"/jobs/{job_id}"), POLICY.timeout_s, _error_message, headers=_headers()
        ).json()
        return job["status"] in ("transcribed", "failed"), job

    try:
        job = poll(
            status,
            float(SETTINGS["REVAI_POLL_S"]),
            float(SETTINGS["REVAI_MAX_WAIT_S"]),
            f"job {job_id}",
        )
        if job["status"] == "failed":
            raise ApiError("client", f"job {job_id} failed: {job.get('failure_detail')}")
        body = step(
            lambda: request(
                "GET",
                _url(f"/jobs/{job_id}/transcript"),
                POLICY.timeout_s,
                _error_message,
                headers=_headers(Accept=TRANSCRIPT_JSON),
            )
        ).json()
    finally:
        try:
            step(
                lambda: request(
                    "DELETE",
                    _url(f"/jobs/{job_id}"),
                    POLICY.timeout_s,
                    _error_message,
                    headers=_headers(),
                )
            )
        except ApiError as exc:
            print(f"revai_en: {uid}: could not delete job {job_id}: {exc}", file=sys.stderr)
    try:
        text = "".join(el["value"] for mono in body["monologues"] for el in mono["elements"])
    except (KeyError, TypeError):
        raise ApiError("client", f"unexpected transcript: {str(body)[:200]}") from None
    text = " ".join(text.split())
    return _diarized(uid, text, body["monologues"]) if DIARIZE else text


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "REVAI_ACCESS_TOKEN"))
