"""Loopback servers that speak the documented request/response formats of vendor speech APIs.

They never contact a vendor and listen on 127.0.0.1 only. Each checks what the real service
checks (auth header, content type, required fields) and answers with the real error shapes, so
a wrapper that passes here sends what the vendor expects. Tests script them:

- `transcripts`: audio SHA-256 -> the text to answer (unknown audio gets "");
- `script`: responses served first, in order, e.g. `[(429, {"Retry-After": "0"})]` (the headers
  may be a function, called when the response is sent);
- `slow`: audio SHA-256 -> seconds to wait before answering (to provoke client timeouts);
- `requests`: what was received (path, headers, body size, arrival time), for assertions;
- `turns`: audio SHA-256 -> who said what when, `[(start, end, text, speaker)]` (speaker an
  int, or None for words the vendor could not attribute): what a stub answers, in its
  vendor's documented diarized shape, to a request that asks for speakers. Audio without
  turns is one turn of speaker 0 (its transcript, a word every 0.5 s).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
import uuid
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_punct(word: str) -> tuple[str, str]:
    """A written word and its trailing punctuation ("modern." -> ("modern", ".")), as the
    vendors that list punctuation as items of its own give them."""
    m = re.fullmatch(r"(.*?)([.,;:!?]*)", word)
    return (m.group(1), m.group(2)) if m and m.group(1) else (word, "")


class StubServer:
    """Base: an HTTP server on 127.0.0.1 with scripted faults; subclasses implement `handle`."""

    key = "test-key-0123456789"

    def __init__(self, transcripts: dict[str, str] | None = None):
        self.transcripts = dict(transcripts or {})
        self.script: list[tuple[int, dict[str, str]]] = []
        self.slow: dict[str, float] = {}
        self.turns: dict[str, list[tuple[float, float, str, int | None]]] = {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def dispatch(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                record = {
                    "method": method,
                    "path": self.path,
                    "headers": dict(self.headers),
                    "size": len(body),
                    "t": time.monotonic(),
                }
                stub._local.record = record  # this thread's request (`current`)
                with stub._lock:
                    stub.requests.append(record)
                    scripted = stub.script.pop(0) if stub.script else None
                if scripted is not None:
                    status, headers = scripted
                    if callable(headers):  # made when answered (e.g. a date from now)
                        headers = headers()
                    code, payload = stub.error(status)
                    return self.reply(code, payload, headers)
                try:
                    if method == "POST":
                        code, payload = stub.handle(self.path, self.headers, body)
                    elif method == "GET":
                        code, payload = stub.handle_get(self.path, self.headers)
                    else:
                        code, payload = stub.handle_delete(self.path, self.headers)
                except Exception as exc:  # a stub bug must show up as a 500, not a hang
                    code, payload = 500, {"error": {"message": f"stub error: {exc}"}}
                self.reply(code, payload)

            def do_POST(self) -> None:
                self.dispatch("POST")

            def do_GET(self) -> None:
                self.dispatch("GET")

            def do_DELETE(self) -> None:
                self.dispatch("DELETE")

            def reply(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                # A payload of bytes is sent as it is (text bodies), anything else as JSON.
                raw = isinstance(payload, bytes)
                data = payload if raw else json.dumps(payload).encode()
                if code == 204:
                    data = b""
                self.send_response(code)
                self.send_header(
                    "Content-Type", "text/plain; charset=utf-8" if raw else stub.content_type
                )
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

    @property
    def current(self) -> dict[str, Any]:
        """The record of the request this thread is handling: `requests[-1]` may be another
        thread's when the wrapper sends several at once."""
        return self._local.record

    def answer(self, audio: bytes) -> str:
        """The scripted transcript, after the scripted delay for that audio."""
        digest = sha(audio)
        if digest in self.slow:
            time.sleep(self.slow[digest])
        return self.transcripts.get(digest, "")

    def spoken(self, audio: bytes) -> list[tuple[float, float, str, int | None]]:
        """The words of `audio` with times and speakers: each scripted turn's words spread
        evenly over the turn, else the transcript's words 0.5 s each, all speaker 0."""
        turns = self.turns.get(sha(audio))
        if turns is None:
            words = self.answer(audio).split()
            return [(0.5 * i, 0.5 * i + 0.4, w, 0) for i, w in enumerate(words)]
        out = []
        for start, end, text, speaker in turns:
            words = text.split()
            step = (end - start) / max(1, len(words))
            for i, w in enumerate(words):
                a = start + i * step
                out.append((round(a, 3), round(a + step * 0.9, 3), w, speaker))
        return out

    def error(self, status: int) -> tuple[int, Any]:
        raise NotImplementedError

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        raise NotImplementedError

    def handle_get(self, path: str, headers: Any = None) -> tuple[int, Any]:
        return 404, {"error": {"message": f"no GET {path}"}}

    def handle_delete(self, path: str, headers: Any = None) -> tuple[int, Any]:
        return 404, {"error": {"message": f"no DELETE {path}"}}

    def posts(self) -> list[dict[str, Any]]:
        """The POST requests received (uploads, job creations, synchronous calls)."""
        return [r for r in self.requests if r["method"] == "POST"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class OpenAIStub(StubServer):
    """`POST /v1/audio/transcriptions`, multipart, `Authorization: Bearer <key>`."""

    def error(self, status: int) -> tuple[int, Any]:
        kinds = {
            429: ("Rate limit reached for requests", "requests", "rate_limit_exceeded"),
            401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
            500: ("The server had an error while processing your request.", "server_error", None),
            503: ("The engine is currently overloaded.", "server_error", None),
        }
        msg, typ, code = kinds.get(status, ("error", "invalid_request_error", None))
        return status, {"error": {"message": msg, "type": typ, "param": None, "code": code}}

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if urlparse(path).path != "/v1/audio/transcriptions":
            return 404, {
                "error": {"message": f"Invalid URL (POST {path})", "type": "invalid_request_error"}
            }
        if headers.get("Authorization") != f"Bearer {self.key}":
            return self.error(401)
        ctype = headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data"):
            return 400, {
                "error": {
                    "message": "expected multipart/form-data",
                    "type": "invalid_request_error",
                }
            }
        msg = BytesParser(policy=email_policy).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body
        )
        fields: dict[str, bytes] = {}
        for part in msg.iter_parts():
            fields[part.get_param("name", header="content-disposition")] = (
                part.get_content()
                if part.get_content_maintype() != "text"
                else part.get_content().encode()
            )
        for required in ("file", "model"):
            if required not in fields:
                return 400, {
                    "error": {
                        "message": f"Missing required parameter: '{required}'.",
                        "type": "invalid_request_error",
                        "param": required,
                    }
                }
        self.current["fields"] = {
            k: v.decode(errors="replace") for k, v in fields.items() if k != "file"
        }
        return 200, {"text": self.answer(fields["file"])}


class GoogleStub(StubServer):
    """`POST /v1/speech:recognize`, JSON with base64 audio, `X-goog-api-key`."""

    _status = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
        503: "UNAVAILABLE",
    }

    def error(self, status: int, message: str = "") -> tuple[int, Any]:
        message = message or {
            429: "Quota exceeded for quota metric 'Requests'.",
            401: "Request is missing required authentication credential.",
            503: "The service is currently unavailable.",
        }.get(status, "error")
        return status, {
            "error": {
                "code": status,
                "message": message,
                "status": self._status.get(status, "UNKNOWN"),
            }
        }

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if urlparse(path).path != "/v1/speech:recognize":
            return 404, {"error": {"code": 404, "message": "Not Found", "status": "NOT_FOUND"}}
        key = headers.get("X-goog-api-key") or parse_qs(urlparse(path).query).get("key", [""])[0]
        if not key:
            return self.error(401)
        if key != self.key:
            code, payload = self.error(400, "API key not valid. Please pass a valid API key.")
            payload["error"]["details"] = [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            ]
            return code, payload
        req = json.loads(body)
        config, audio = req.get("config") or {}, req.get("audio") or {}
        self.current["config"] = config
        if config.get("encoding") != "LINEAR16" or not config.get("languageCode"):
            return self.error(400, "Invalid recognition 'config': encoding and languageCode.")
        if "content" not in audio:
            return self.error(400, "RecognitionAudio not set.")
        wav = base64.b64decode(audio["content"])
        text = self.answer(wav)
        if not text:
            return 200, {"totalBilledTime": "1s"}  # no speech: no `results` at all
        results = [
            {
                "alternatives": [{"transcript": text, "confidence": 0.9}],
                "resultEndTime": "1s",
                "languageCode": "en-us",
            }
        ]
        if (config.get("diarizationConfig") or {}).get("enableSpeakerDiarization"):
            # v1: a last result whose top alternative lists every word with its speakerTag
            words = [
                {"startTime": f"{a:.3f}s", "endTime": f"{b:.3f}s", "word": w}
                | ({"speakerTag": spk + 1} if spk is not None else {})
                for a, b, w, spk in self.spoken(wav)
            ]
            results.append({"alternatives": [{"words": words}], "languageCode": "en-us"})
        return 200, {"results": results, "totalBilledTime": "1s"}


class AzureStub(StubServer):
    """Short-audio REST: `POST /speech/recognition/conversation/cognitiveservices/v1`."""

    def error(self, status: int) -> tuple[int, Any]:
        msg = {
            401: "Access denied due to invalid subscription key or wrong API endpoint.",
            429: "Too many requests.",
        }.get(status, "Service error.")
        return status, {"error": {"code": str(status), "message": msg}}

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        url = urlparse(path)
        if url.path == "/speechtotext/transcriptions:transcribe":
            return self.fast(url, headers, body)
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
            return 200, {"RecognitionStatus": "InitialSilenceTimeout", "Offset": 0, "Duration": 0}
        return 200, {
            "RecognitionStatus": "Success",
            "DisplayText": text,
            "Offset": 0,
            "Duration": 10000000,
        }

    def fast(self, url: Any, headers: Any, body: bytes) -> tuple[int, Any]:
        """Fast transcription: multipart `audio` + `definition`, `api-version` in the query;
        `phrases` name their `speaker` when `definition.diarization.enabled`."""
        if headers.get("Ocp-Apim-Subscription-Key") != self.key:
            return self.error(401)
        if not parse_qs(url.query).get("api-version"):
            return 400, {"error": {"code": "InvalidRequest", "message": "api-version is required"}}
        fields = _multipart(headers, body)
        if "audio" not in fields or "definition" not in fields:
            return 422, {"code": "InvalidArgument", "message": "audio and definition are required"}
        definition = json.loads(fields["definition"])
        self.current["definition"] = definition
        diarize = (definition.get("diarization") or {}).get("enabled")
        phrases: list[dict[str, Any]] = []
        for a, b, w, spk in self.spoken(fields["audio"]):
            word = {"text": w, "offsetMilliseconds": round(a * 1000)}
            word["durationMilliseconds"] = round((b - a) * 1000)
            last = phrases[-1] if phrases else None
            if last is None or last.get("speaker") != (
                spk + 1 if diarize and spk is not None else None
            ):
                last = {"offsetMilliseconds": word["offsetMilliseconds"], "text": "", "words": []}
                last |= {"locale": definition["locales"][0], "confidence": 0.9}
                if diarize and spk is not None:
                    last["speaker"] = spk + 1
                phrases.append(last)
            last["words"].append(word)
            last["text"] = (last["text"] + " " + w).strip()
            last["durationMilliseconds"] = (
                word["offsetMilliseconds"]
                + word["durationMilliseconds"]
                - last["offsetMilliseconds"]
            )
        text = self.answer(fields["audio"])
        return 200, {
            "durationMilliseconds": 3000,
            "combinedPhrases": [{"text": text}] if text else [],
            "phrases": phrases,
        }


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
        code = code or {
            429: "LimitExceededException",
            500: "InternalFailureException",
            503: "ServiceUnavailableException",
            401: "UnrecognizedClientException",
        }.get(status, "BadRequestException")
        message = message or {
            "LimitExceededException": "Rate exceeded",
            "UnrecognizedClientException": "The security token included in the request is invalid.",
        }.get(code, code)
        http = 500 if status >= 500 else 400  # AWS JSON protocol: client errors are 400
        return http, {"__type": code, "message": message}

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        auth = headers.get("Authorization", "")
        m = re.match(
            r"AWS4-HMAC-SHA256 Credential=([^/]+)/\d{8}/[\w-]+/transcribe/aws4_request", auth
        )
        if not m or m.group(1) != self.key or not headers.get("X-Amz-Date"):
            return self.error(401)
        target = headers.get("X-Amz-Target", "")
        req = json.loads(body or b"{}")
        op = target.removeprefix("Transcribe.")
        self.current["json"] = req
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
            return self.error(
                400, "BadRequestException", "The S3 URI that you provided can't be accessed."
            )
        job = {
            "TranscriptionJobName": name,
            "TranscriptionJobStatus": "IN_PROGRESS",
            "LanguageCode": req["LanguageCode"],
            "MediaFormat": req.get("MediaFormat"),
            "MediaSampleRateHertz": req.get("MediaSampleRateHertz"),
            "Media": req["Media"],
            "CreationTime": time.time(),
            "_audio": audio,
        }
        if "Settings" in req:
            job["Settings"] = req["Settings"]
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
        return 200, {"TranscriptionJob": {k: v for k, v in job.items() if not k.startswith("_")}}

    def handle_get(self, path: str, headers: Any = None) -> tuple[int, Any]:
        m = re.fullmatch(r"/transcripts/(.+)\.json", urlparse(path).path)
        job = self.jobs.get(m.group(1)) if m else None
        if job is None or "_text" not in job:
            return 404, {"message": "NoSuchKey"}
        results: dict[str, Any] = {"transcripts": [{"transcript": job["_text"]}], "items": []}
        if (job.get("Settings") or {}).get("ShowSpeakerLabels"):
            results |= self.speaker_items(job["_audio"])
        return 200, {
            "jobName": job["TranscriptionJobName"],
            "accountId": "000000000000",
            "status": "COMPLETED",
            "results": results,
        }

    def speaker_items(self, audio: bytes) -> dict[str, Any]:
        """`items` (pronunciation and punctuation) naming their `speaker_label`, and the same
        by speaker turn in `speaker_labels.segments`, as a diarized job's transcript has."""
        items: list[dict[str, Any]] = []
        segments: list[dict[str, Any]] = []
        for a, b, w, spk in self.spoken(audio):
            bare, punct = split_punct(w)
            item = {"id": len(items), "start_time": f"{a:.3f}", "end_time": f"{b:.3f}"}
            item |= {"alternatives": [{"confidence": "0.9", "content": bare}]}
            item["type"] = "pronunciation"
            if spk is not None:
                item["speaker_label"] = f"spk_{spk}"
                label = {k: item[k] for k in ("start_time", "end_time", "speaker_label")}
                if not segments or segments[-1]["speaker_label"] != label["speaker_label"]:
                    segments.append({**label, "items": []})
                segments[-1]["items"].append(label)
                segments[-1]["end_time"] = label["end_time"]
            items.append(item)
            if punct:
                content = {"confidence": "0.0", "content": punct}
                items.append({"id": len(items), "alternatives": [content], "type": "punctuation"})
        speakers = len({s["speaker_label"] for s in segments})
        return {
            "items": items,
            "speaker_labels": {"channel_label": "ch_0", "speakers": speakers, "segments": segments},
        }


def _multipart(headers: Any, body: bytes) -> dict[str, bytes]:
    ctype = headers.get("Content-Type", "")
    if not ctype.startswith("multipart/form-data"):
        return {}
    msg = BytesParser(policy=email_policy).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body
    )
    return {
        part.get_param("name", header="content-disposition"): part.get_payload(decode=True) or b""
        for part in msg.iter_parts()
    }


class DeepgramStub(StubServer):
    """Pre-recorded `POST /v1/listen`, raw audio body, `Authorization: Token <key>`."""

    def error(self, status: int) -> tuple[int, Any]:
        code, msg = {
            401: ("INVALID_AUTH", "Invalid credentials."),
            429: ("TOO_MANY_REQUESTS", "Too many requests. Please try again later."),
            500: ("INTERNAL_SERVER_ERROR", "Internal server error."),
            503: ("SERVICE_UNAVAILABLE", "Service unavailable."),
        }.get(status, ("Bad Request", "Bad request."))
        return status, {"err_code": code, "err_msg": msg, "request_id": str(uuid.uuid4())}

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        url = urlparse(path)
        if url.path != "/v1/listen":
            return 404, {"err_code": "NOT_FOUND", "err_msg": f"no route {url.path}"}
        if headers.get("Authorization") != f"Token {self.key}":
            return self.error(401)
        query = parse_qs(url.query)
        if not headers.get("Content-Type", "").startswith("audio/") or not body:
            return 400, {"err_code": "Bad Request", "err_msg": "Bad Request: no audio"}
        self.current["query"] = {k: v[0] for k, v in query.items()}
        text = self.answer(body)
        words: list[dict[str, Any]] = []
        if query.get("diarize") == ["true"]:  # each word names its speaker, an integer
            for a, b, w, spk in self.spoken(body):
                bare = re.sub(r"[^\w']", "", w).lower()
                word = {"word": bare, "start": a, "end": b, "confidence": 0.9}
                word["punctuated_word"] = w
                if spk is not None:
                    word |= {"speaker": spk, "speaker_confidence": 0.8}
                words.append(word)
        return 200, {
            "metadata": {
                "request_id": str(uuid.uuid4()),
                "duration": 1.0,
                "channels": 1,
                "models": [query.get("model", ["nova-3"])[0]],
            },
            "results": {
                "channels": [
                    {"alternatives": [{"transcript": text, "confidence": 0.99, "words": words}]}
                ]
            },
        }


class _JobStub(StubServer):
    """Shared by the asynchronous (job) APIs: jobs keyed by ID, done on the first poll; the
    transcript is computed (with the scripted delay) when it is fetched."""

    def __init__(self, transcripts: dict[str, str] | None = None):
        super().__init__(transcripts)
        self.jobs: dict[str, dict[str, Any]] = {}
        self.deleted: list[str] = []

    def new_job(self, audio: bytes, **extra: Any) -> str:
        job_id = uuid.uuid4().hex[:20]
        self.jobs[job_id] = {"audio": audio, "polls": 0, **extra}
        return job_id

    def delete(self, job_id: str) -> bool:
        if self.jobs.pop(job_id, None) is None:
            return False
        self.deleted.append(job_id)
        return True


class AssemblyAIStub(_JobStub):
    """v2: `POST /v2/upload`, `POST /v2/transcript`, `GET`/`DELETE /v2/transcript/{id}`; the key
    in `authorization` as is."""

    def __init__(self, transcripts: dict[str, str] | None = None):
        super().__init__(transcripts)
        self.uploads: dict[str, bytes] = {}

    def error(self, status: int) -> tuple[int, Any]:
        msg = {
            401: "Authentication error, API token missing/invalid",
            429: "Too many requests",
            500: "Internal server error",
            503: "Service temporarily unavailable",
        }.get(status, "Bad request")
        return status, {"error": msg}

    def _auth(self, headers: Any) -> bool:
        return headers.get("authorization") == self.key

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        if path == "/v2/upload":
            url = f"{self.url}/cdn/upload/{uuid.uuid4().hex}"
            self.uploads[url] = body
            return 200, {"upload_url": url}
        if path == "/v2/transcript":
            req = json.loads(body)
            self.current["json"] = req
            audio = self.uploads.get(req.get("audio_url", ""))
            if audio is None:
                return 400, {"error": "Download error, unable to download the audio_url"}
            job_id = self.new_job(audio, request=req)
            return 200, {
                "id": job_id,
                "status": "queued",
                "audio_url": req["audio_url"],
                "language_code": req.get("language_code"),
            }
        return 404, {"error": "Not found"}

    def handle_get(self, path: str, headers: Any = None) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        m = re.fullmatch(r"/v2/transcript/([0-9a-f]+)", urlparse(path).path)
        job = self.jobs.get(m.group(1)) if m else None
        if job is None:
            return 404, {"error": "Transcript ID not found"}
        job["polls"] += 1
        text = self.answer(job["audio"])
        body = {
            "id": m.group(1),
            "status": "completed",
            "text": text,
            "audio_duration": 1,
            "language_code": job["request"].get("language_code"),
        }
        if job["request"].get("speaker_labels"):
            body |= self.speaker_words(job["audio"])
        return 200, body

    def speaker_words(self, audio: bytes) -> dict[str, Any]:
        """`words` (times in ms) each with its `speaker` ("A", "B"...), and `utterances`, the
        same words by speaker turn, as a transcript with `speaker_labels` has."""
        words, utterances = [], []
        for a, b, w, spk in self.spoken(audio):
            word = {"text": w, "start": round(a * 1000), "end": round(b * 1000)}
            word |= {"confidence": 0.9, "speaker": None if spk is None else assemblyai_label(spk)}
            words.append(word)
            if not utterances or utterances[-1]["speaker"] != word["speaker"]:
                utterances.append({"speaker": word["speaker"], "start": word["start"], "words": []})
            turn = utterances[-1]
            turn["words"].append(word)
            turn |= {"end": word["end"], "text": " ".join(x["text"] for x in turn["words"])}
        return {"words": words, "utterances": utterances}

    def handle_delete(self, path: str, headers: Any = None) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        m = re.fullmatch(r"/v2/transcript/([0-9a-f]+)", urlparse(path).path)
        if not m or not self.delete(m.group(1)):
            return 404, {"error": "Transcript ID not found"}
        return 200, {
            "id": m.group(1),
            "status": "completed",
            "text": "",
            "audio_url": "http://deleted_by_user",
        }


def assemblyai_label(n: int) -> str:
    """AssemblyAI's speaker labels: A, B, ... Z, AA, AB..."""
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


class SpeechmaticsStub(_JobStub):
    """Batch v2: `POST /v2/jobs/` (multipart `data_file` + `config`), `GET /v2/jobs/{id}`,
    `GET /v2/jobs/{id}/transcript?format=txt`, `DELETE /v2/jobs/{id}`; Bearer key."""

    def error(self, status: int) -> tuple[int, Any]:
        msg = {
            401: "Permission Denied",
            429: "Too Many Requests",
            500: "Internal Server Error",
            503: "Service Unavailable",
        }.get(status, "Bad Request")
        return status, {"code": status, "error": msg}

    def _auth(self, headers: Any) -> bool:
        return headers.get("Authorization") == f"Bearer {self.key}"

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        if urlparse(path).path.rstrip("/") != "/v2/jobs":
            return 404, {"code": 404, "error": "Not Found"}
        fields = _multipart(headers, body)
        try:
            config = json.loads(fields.get("config", b"{}"))
        except ValueError:
            return 400, {"code": 400, "error": "Invalid Config", "detail": "not JSON"}
        self.current["config"] = config
        lang = (config.get("transcription_config") or {}).get("language")
        if config.get("type") != "transcription" or not lang or "data_file" not in fields:
            return 400, {
                "code": 400,
                "error": "Job rejected",
                "detail": "config.type, transcription_config.language and data_file are required",
            }
        return 201, {"id": self.new_job(fields["data_file"], config=config)}

    def handle_get(self, path: str, headers: Any = None) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        url = urlparse(path)
        m = re.fullmatch(r"/v2/jobs/([0-9a-f]+)(/transcript)?", url.path)
        job = self.jobs.get(m.group(1)) if m else None
        if job is None:
            return 404, {"code": 404, "error": "Job not found"}
        if m.group(2):
            fmt = parse_qs(url.query).get("format")
            if fmt == ["json-v2"]:
                return 200, self.json_v2(job)
            if fmt != ["txt"]:
                return 400, {"code": 400, "error": "only format=txt or json-v2 in this stub"}
            return 200, (self.answer(job["audio"]) + "\n").encode()
        job["polls"] += 1
        return 200, {
            "job": {
                "id": m.group(1),
                "status": "done",
                "duration": 1,
                "data_name": "audio.wav",
                "created_at": "2025-01-01T00:00:00Z",
            }
        }

    def json_v2(self, job: dict[str, Any]) -> dict[str, Any]:
        """The json-v2 transcript: `results` of words and punctuation, each alternative with
        its `speaker` (S1, S2... UU when unknown) when the job asked for diarization."""
        diarize = job["config"]["transcription_config"].get("diarization") == "speaker"
        results = []
        for a, b, w, spk in self.spoken(job["audio"]):
            label = {"speaker": "UU" if spk is None else f"S{spk + 1}"} if diarize else {}
            bare, punct = split_punct(w)
            alt = {"content": bare, "confidence": 0.9, "language": "en"} | label
            results.append({"type": "word", "start_time": a, "end_time": b, "alternatives": [alt]})
            if punct:
                alt = {"content": punct, "confidence": 1.0, "language": "en"} | label
                results.append(
                    {"type": "punctuation", "start_time": b, "end_time": b, "alternatives": [alt]}
                    | {"attaches_to": "previous", "is_eos": punct in ".!?"}
                )
        return {"format": "2.9", "job": {"id": "stub"}, "results": results}

    def handle_delete(self, path: str, headers: Any = None) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        m = re.fullmatch(r"/v2/jobs/([0-9a-f]+)", urlparse(path).path)
        if not m or not self.delete(m.group(1)):
            return 404, {"code": 404, "error": "Job not found"}
        return 200, {"job": {"id": m.group(1), "status": "deleted"}}


class RevAIStub(_JobStub):
    """Async v1: `POST /speechtotext/v1/jobs` (multipart `media` + `options`), `GET .../jobs/{id}`,
    `GET .../jobs/{id}/transcript` (Rev JSON), `DELETE .../jobs/{id}`; Bearer token;
    problem+json errors."""

    content_type = "application/json"
    base = "/speechtotext/v1/jobs"

    def error(self, status: int) -> tuple[int, Any]:
        title = {
            401: "Authorization has been denied for this request",
            429: "Too Many Requests",
            500: "Internal Server Error",
            503: "Service Unavailable",
        }.get(status, "Bad Request")
        return status, {
            "type": f"https://www.rev.ai/api/v1/errors/{status}",
            "title": title,
            "status": status,
        }

    def _auth(self, headers: Any) -> bool:
        return headers.get("Authorization") == f"Bearer {self.key}"

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        if urlparse(path).path != self.base:
            return 404, {"title": "Not Found", "status": 404}
        fields = _multipart(headers, body)
        if "media" not in fields:
            return 400, {
                "type": "https://www.rev.ai/api/v1/errors/invalid-parameters",
                "title": "Your request parameters didn't validate",
                "status": 400,
                "parameters": {"media": ["media is required"]},
            }
        options = json.loads(fields.get("options", b"{}"))
        self.current["options"] = options
        job_id = self.new_job(fields["media"], options=options)
        return 200, {
            "id": job_id,
            "status": "in_progress",
            "created_on": "2025-01-01T00:00:00Z",
            "type": "async",
            "language": options.get("language", "en"),
        }

    def handle_get(self, path: str, headers: Any = None) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        m = re.fullmatch(re.escape(self.base) + r"/([0-9a-f]+)(/transcript)?", urlparse(path).path)
        job = self.jobs.get(m.group(1)) if m else None
        if job is None:
            return 404, {"title": "could not find job", "status": 404}
        if m.group(2):
            if headers.get("Accept") != "application/vnd.rev.transcript.v1.0+json":
                return 406, {"title": "Not Acceptable", "status": 406}
            if job["options"].get("skip_diarization") is False:
                return 200, {"monologues": self.monologues(job["audio"])}
            words = self.answer(job["audio"]).split()
            elements: list[dict[str, Any]] = []
            for i, w in enumerate(words):
                if i:
                    elements.append({"type": "punct", "value": " "})
                elements.append(
                    {
                        "type": "text",
                        "value": w,
                        "ts": float(i),
                        "end_ts": i + 0.5,
                        "confidence": 0.9,
                    }
                )
            return 200, {"monologues": [{"speaker": 0, "elements": elements}]}
        job["polls"] += 1
        return 200, {
            "id": m.group(1),
            "status": "transcribed",
            "duration_seconds": 1.0,
            "type": "async",
        }

    def monologues(self, audio: bytes) -> list[dict[str, Any]]:
        """One monologue per speaker turn, its `speaker` an integer; text elements timed,
        punctuation and spaces as `punct` elements (a word with no speaker: speaker -1, never
        sent by Rev, which always names one)."""
        monos: list[dict[str, Any]] = []
        for a, b, w, spk in self.spoken(audio):
            speaker = -1 if spk is None else spk
            if not monos or monos[-1]["speaker"] != speaker:
                monos.append({"speaker": speaker, "elements": []})
            elements = monos[-1]["elements"]
            if elements or len(monos) > 1:
                elements.append({"type": "punct", "value": " "})
            bare, punct = split_punct(w)
            elements.append(
                {"type": "text", "value": bare, "ts": a, "end_ts": b, "confidence": 0.9}
            )
            if punct:
                elements.append({"type": "punct", "value": punct})
        return monos

    def handle_delete(self, path: str, headers: Any = None) -> tuple[int, Any]:
        if not self._auth(headers):
            return self.error(401)
        m = re.fullmatch(re.escape(self.base) + r"/([0-9a-f]+)", urlparse(path).path)
        if not m or not self.delete(m.group(1)):
            return 404, {"title": "could not find job", "status": 404}
        return 204, {}
