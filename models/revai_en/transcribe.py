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
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from apiclient import ApiError, RetryPolicy, load_card, poll, request, run, settings, step

CARD = load_card(__file__)
SETTINGS = settings(CARD)
POLICY = RetryPolicy.from_card(CARD)
TRANSCRIPT_JSON = "application/vnd.rev.transcript.v1.0+json"


def _error_message(resp: Any) -> str:
    body = resp.json()
    return " ".join(str(body.get(k) or "") for k in ("title", "detail")).strip() or str(body)


def _url(path: str) -> str:
    return SETTINGS["REVAI_BASE_URL"].rstrip("/") + "/speechtotext/v1" + path


def _headers(**extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {os.environ.get('REVAI_ACCESS_TOKEN', '')}", **extra}


def transcribe_one(uid: str, path: str) -> str:
    options = {
        "language": SETTINGS["REVAI_LANGUAGE"],
        "transcriber": SETTINGS["REVAI_TRANSCRIBER"],
        "skip_diarization": True,
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
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "REVAI_ACCESS_TOKEN"))
