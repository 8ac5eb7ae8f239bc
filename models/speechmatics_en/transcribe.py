"""speechmatics_en: Speechmatics batch transcription (ASR API v2), the documented job flow.

1. `POST {base}/v2/jobs/` multipart: `data_file` (the audio) and `config` (JSON:
   `{"type": "transcription", "transcription_config": {"language", "operating_point"}}`) ->
   201 `{"id"}`;
2. `GET {base}/v2/jobs/{id}` until `job.status` is `done` (or `rejected`, `deleted`, `expired`);
3. `GET {base}/v2/jobs/{id}/transcript?format=txt` -> the plain text;
4. `DELETE {base}/v2/jobs/{id}` so the vendor keeps no copy.
`Authorization: Bearer <SPEECHMATICS_API_KEY>`. Errors: `{"code", "error", "detail"}` (401,
429, 5xx). Each call is retried on its own (apiclient `step`).
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


def _error_message(resp: Any) -> str:
    body = resp.json()
    return " ".join(str(body.get(k, "")) for k in ("error", "detail")).strip() or str(body)


def _url(path: str) -> str:
    return SETTINGS["SPEECHMATICS_BASE_URL"].rstrip("/") + path


def _headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {os.environ.get('SPEECHMATICS_API_KEY', '')}"}


def transcribe_one(uid: str, path: str) -> str:
    config = {
        "type": "transcription",
        "transcription_config": {
            "language": SETTINGS["SPEECHMATICS_LANGUAGE"],
            "operating_point": SETTINGS["SPEECHMATICS_OPERATING_POINT"],
        },
    }
    with open(path, "rb") as f:
        audio = f.read()
    job_id = step(
        lambda: request(
            "POST",
            _url("/v2/jobs/"),
            POLICY.timeout_s,
            _error_message,
            headers=_headers(),
            files={"data_file": (Path(path).name, audio, "audio/wav")},
            data={"config": json.dumps(config)},
        )
    ).json()["id"]

    def status() -> tuple[bool, str]:
        job = request(
            "GET", _url(f"/v2/jobs/{job_id}"), POLICY.timeout_s, _error_message, headers=_headers()
        ).json()["job"]
        return job["status"] != "running", job["status"]

    try:
        state = poll(
            status,
            float(SETTINGS["SPEECHMATICS_POLL_S"]),
            float(SETTINGS["SPEECHMATICS_MAX_WAIT_S"]),
            f"job {job_id}",
        )
        if state != "done":
            raise ApiError("client", f"job {job_id} ended {state}")
        text = step(
            lambda: request(
                "GET",
                _url(f"/v2/jobs/{job_id}/transcript"),
                POLICY.timeout_s,
                _error_message,
                headers=_headers(),
                params={"format": "txt"},
            )
        ).text
    finally:
        try:
            step(
                lambda: request(
                    "DELETE",
                    _url(f"/v2/jobs/{job_id}"),
                    POLICY.timeout_s,
                    _error_message,
                    headers=_headers(),
                )
            )
        except ApiError as exc:
            print(f"speechmatics_en: {uid}: could not delete job {job_id}: {exc}", file=sys.stderr)
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "SPEECHMATICS_API_KEY"))
