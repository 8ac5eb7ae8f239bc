"""Loopback servers that speak the documented request/response formats of vendor speech APIs.

They never contact a vendor and listen on 127.0.0.1 only. Each checks what the real service
checks (auth header, content type, required fields) and answers with the real error shapes, so
a wrapper that passes here sends what the vendor expects. Tests script them:

- `transcripts`: audio SHA-256 -> the text to answer (unknown audio gets "");
- `script`: responses served first, in order, e.g. `[(429, {"Retry-After": "0"})]`;
- `slow`: audio SHA-256 -> seconds to wait before answering (to provoke client timeouts);
- `requests`: what was received (path, headers, body size, arrival time), for assertions.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class StubServer:
    """Base: an HTTP server on 127.0.0.1 with scripted faults; subclasses implement `handle`."""

    key = "test-key-0123456789"

    def __init__(self, transcripts: dict[str, str] | None = None):
        self.transcripts = dict(transcripts or {})
        self.script: list[tuple[int, dict[str, str]]] = []
        self.slow: dict[str, float] = {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with stub._lock:
                    stub.requests.append({"path": self.path, "headers": dict(self.headers),
                                          "size": len(body), "t": time.monotonic()})
                    scripted = stub.script.pop(0) if stub.script else None
                if scripted is not None:
                    status, headers = scripted
                    code, payload = stub.error(status)
                    return self.reply(code, payload, headers)
                try:
                    code, payload = stub.handle(self.path, self.headers, body)
                except Exception as exc:  # a stub bug must show up as a 500, not a hang
                    code, payload = 500, {"error": {"message": f"stub error: {exc}"}}
                self.reply(code, payload)

            def do_GET(self) -> None:  # noqa: N802
                code, payload = stub.handle_get(self.path)
                self.reply(code, payload)

            def reply(self, code: int, payload: Any, headers: dict[str, str] | None = None
                      ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", stub.content_type)
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    content_type = "application/json"

    def answer(self, audio: bytes) -> str:
        """The scripted transcript, after the scripted delay for that audio."""
        digest = sha(audio)
        if digest in self.slow:
            time.sleep(self.slow[digest])
        return self.transcripts.get(digest, "")

    def error(self, status: int) -> tuple[int, Any]:
        raise NotImplementedError

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        raise NotImplementedError

    def handle_get(self, path: str) -> tuple[int, Any]:
        return 404, {"error": {"message": f"no GET {path}"}}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class OpenAIStub(StubServer):
    """`POST /v1/audio/transcriptions`, multipart, `Authorization: Bearer <key>`."""

    def error(self, status: int) -> tuple[int, Any]:
        kinds = {429: ("Rate limit reached for requests", "requests", "rate_limit_exceeded"),
                 401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
                 500: ("The server had an error while processing your request.", "server_error",
                       None),
                 503: ("The engine is currently overloaded.", "server_error", None)}
        msg, typ, code = kinds.get(status, ("error", "invalid_request_error", None))
        return status, {"error": {"message": msg, "type": typ, "param": None, "code": code}}

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if urlparse(path).path != "/v1/audio/transcriptions":
            return 404, {"error": {"message": f"Invalid URL (POST {path})",
                                   "type": "invalid_request_error"}}
        if headers.get("Authorization") != f"Bearer {self.key}":
            return self.error(401)
        ctype = headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data"):
            return 400, {"error": {"message": "expected multipart/form-data",
                                   "type": "invalid_request_error"}}
        msg = BytesParser(policy=email_policy).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        fields: dict[str, bytes] = {}
        for part in msg.iter_parts():
            fields[part.get_param("name", header="content-disposition")] = part.get_content() \
                if part.get_content_maintype() != "text" else part.get_content().encode()
        for required in ("file", "model"):
            if required not in fields:
                return 400, {"error": {"message": f"Missing required parameter: '{required}'.",
                                       "type": "invalid_request_error", "param": required}}
        self.requests[-1]["fields"] = {k: v.decode(errors="replace") for k, v in fields.items()
                                       if k != "file"}
        return 200, {"text": self.answer(fields["file"])}


class GoogleStub(StubServer):
    """`POST /v1/speech:recognize`, JSON with base64 audio, `X-goog-api-key`."""

    _status = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
               429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}

    def error(self, status: int, message: str = "") -> tuple[int, Any]:
        message = message or {429: "Quota exceeded for quota metric 'Requests'.",
                              401: "Request is missing required authentication credential.",
                              503: "The service is currently unavailable."}.get(status, "error")
        return status, {"error": {"code": status, "message": message,
                                  "status": self._status.get(status, "UNKNOWN")}}

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if urlparse(path).path != "/v1/speech:recognize":
            return 404, {"error": {"code": 404, "message": "Not Found", "status": "NOT_FOUND"}}
        key = headers.get("X-goog-api-key") or parse_qs(urlparse(path).query).get("key", [""])[0]
        if not key:
            return self.error(401)
        if key != self.key:
            code, payload = self.error(400, "API key not valid. Please pass a valid API key.")
            payload["error"]["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                            "reason": "API_KEY_INVALID"}]
            return code, payload
        req = json.loads(body)
        config, audio = req.get("config") or {}, req.get("audio") or {}
        if config.get("encoding") != "LINEAR16" or not config.get("languageCode"):
            return self.error(400, "Invalid recognition 'config': encoding and languageCode.")
        if "content" not in audio:
            return self.error(400, "RecognitionAudio not set.")
        text = self.answer(base64.b64decode(audio["content"]))
        if not text:
            return 200, {"totalBilledTime": "1s"}  # no speech: no `results` at all
        return 200, {"results": [{"alternatives": [{"transcript": text, "confidence": 0.9}],
                                  "resultEndTime": "1s", "languageCode": "en-us"}],
                     "totalBilledTime": "1s"}


class AzureStub(StubServer):
    """Short-audio REST: `POST /speech/recognition/conversation/cognitiveservices/v1`."""

    def error(self, status: int) -> tuple[int, Any]:
        msg = {401: "Access denied due to invalid subscription key or wrong API endpoint.",
               429: "Too many requests."}.get(status, "Service error.")
        return status, {"error": {"code": str(status), "message": msg}}

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        url = urlparse(path)
        if url.path != "/speech/recognition/conversation/cognitiveservices/v1":
            return 404, {"error": {"code": "404", "message": "Resource not found"}}
        if headers.get("Ocp-Apim-Subscription-Key") != self.key:
            return self.error(401)
        query = parse_qs(url.query)
        if "language" not in query:
            return 400, {"error": {"code": "400", "message": "language is required"}}
        if not headers.get("Content-Type", "").startswith("audio/wav"):
            return 415, {"error": {"code": "415", "message": "Unsupported Media Type"}}
        text = self.answer(body)
        if not text:
            return 200, {"RecognitionStatus": "InitialSilenceTimeout", "Offset": 0,
                         "Duration": 0}
        return 200, {"RecognitionStatus": "Success", "DisplayText": text,
                     "Offset": 0, "Duration": 10000000}


class TranscribeStub(StubServer):
    """Amazon Transcribe's JSON 1.1 protocol (`X-Amz-Target: Transcribe.<Operation>`).

    Media is read back from the real S3 server (SeaweedFS) the wrapper uploaded to, with the
    stub's own S3 client: a job only succeeds if the upload really landed at `MediaFileUri`.
    Requests must carry a SigV4 `Authorization` for service `transcribe` and the known access
    key; others get `UnrecognizedClientException`, as from AWS. A job is IN_PROGRESS on its
    first poll, then COMPLETED with a `TranscriptFileUri` served by this stub.
    """

    content_type = "application/x-amz-json-1.1"
    key = "AKIASTUBTRANSCRIBE01"

    def __init__(self, transcripts: dict[str, str] | None = None, s3: Any = None):
        super().__init__(transcripts)
        self.s3 = s3
        self.jobs: dict[str, dict[str, Any]] = {}
        self.polls: dict[str, int] = {}

    def error(self, status: int, code: str = "", message: str = "") -> tuple[int, Any]:
        code = code or {429: "LimitExceededException", 500: "InternalFailureException",
                        503: "ServiceUnavailableException",
                        401: "UnrecognizedClientException"}.get(status, "BadRequestException")
        message = message or {"LimitExceededException": "Rate exceeded",
                              "UnrecognizedClientException":
                                  "The security token included in the request is invalid."
                              }.get(code, code)
        http = 500 if status >= 500 else 400  # AWS JSON protocol: client errors are 400
        return http, {"__type": code, "message": message}

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        auth = headers.get("Authorization", "")
        m = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/\d{8}/[\w-]+/transcribe/aws4_request",
                     auth)
        if not m or m.group(1) != self.key or not headers.get("X-Amz-Date"):
            return self.error(401)
        target = headers.get("X-Amz-Target", "")
        req = json.loads(body or b"{}")
        op = target.removeprefix("Transcribe.")
        if op == "StartTranscriptionJob":
            return self.start(req)
        if op == "GetTranscriptionJob":
            return self.get(req)
        if op == "DeleteTranscriptionJob":
            name = req.get("TranscriptionJobName", "")
            if self.jobs.pop(name, None) is None:
                return self.error(400, "NotFoundException", "The requested job couldn't be found")
            return 200, {}
        return self.error(400, "UnknownOperationException", f"unknown target {target!r}")

    def start(self, req: dict[str, Any]) -> tuple[int, Any]:
        name = req.get("TranscriptionJobName", "")
        if not re.fullmatch(r"[0-9a-zA-Z._-]{1,200}", name):
            return self.error(400, "BadRequestException", "invalid TranscriptionJobName")
        for field in ("LanguageCode", "Media"):
            if field not in req:
                return self.error(400, "BadRequestException", f"{field} is required")
        if name in self.jobs:
            return self.error(400, "ConflictException", "The requested job name already exists")
        uri = req["Media"].get("MediaFileUri", "")
        m = re.fullmatch(r"s3://([^/]+)/(.+)", uri)
        if not m:
            return self.error(400, "BadRequestException", f"invalid MediaFileUri {uri!r}")
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            audio = self.s3.get_object(Bucket=m.group(1), Key=m.group(2))["Body"].read()
        except (ClientError, BotoCoreError):
            return self.error(400, "BadRequestException",
                              "The S3 URI that you provided can't be accessed.")
        job = {"TranscriptionJobName": name, "TranscriptionJobStatus": "IN_PROGRESS",
               "LanguageCode": req["LanguageCode"], "MediaFormat": req.get("MediaFormat"),
               "MediaSampleRateHertz": req.get("MediaSampleRateHertz"),
               "Media": req["Media"], "CreationTime": time.time(), "_audio": audio}
        self.jobs[name] = job
        return 200, {"TranscriptionJob": {k: v for k, v in job.items() if k != "_audio"}}

    def get(self, req: dict[str, Any]) -> tuple[int, Any]:
        name = req.get("TranscriptionJobName", "")
        job = self.jobs.get(name)
        if job is None:
            return self.error(400, "NotFoundException", "The requested job couldn't be found")
        self.polls[name] = self.polls.get(name, 0) + 1
        if self.polls[name] > 1 and job["TranscriptionJobStatus"] == "IN_PROGRESS":
            job["_text"] = self.answer(job["_audio"])
            job["TranscriptionJobStatus"] = "COMPLETED"
            job["Transcript"] = {"TranscriptFileUri": f"{self.url}/transcripts/{name}.json"}
        return 200, {"TranscriptionJob": {k: v for k, v in job.items()
                                          if not k.startswith("_")}}

    def handle_get(self, path: str) -> tuple[int, Any]:
        m = re.fullmatch(r"/transcripts/(.+)\.json", urlparse(path).path)
        job = self.jobs.get(m.group(1)) if m else None
        if job is None or "_text" not in job:
            return 404, {"message": "NoSuchKey"}
        return 200, {"jobName": job["TranscriptionJobName"], "accountId": "000000000000",
                     "status": "COMPLETED",
                     "results": {"transcripts": [{"transcript": job["_text"]}], "items": []}}
