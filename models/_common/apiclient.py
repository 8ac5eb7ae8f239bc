"""What every commercial-API wrapper shares: settings, retries, timeouts, concurrency, failures.

Lives once in `models/_common/`; each API model declares it under `image.shared` in its card
(with `contract.py`), so it is copied beside the program and is part of the model's source
identity. A vendor program supplies one function, `transcribe_one(uid, wav_path) -> text`, that
raises `ApiError` for what the vendor answered; `run()` does the rest:

- retries (tenacity) with exponential backoff and full jitter on throttling (429), 5xx and
  dropped connections, never sooner than the server's `Retry-After` (delta-seconds or HTTP-date,
  parsed by urllib3); an error the vendor's own client already retried (`retried=True`, e.g.
  botocore's standard retry mode) is not retried again;
- a per-request timeout: an utterance that times out is recorded in `failed.tsv` and the run
  goes on;
- a concurrency limit (a thread pool);
- rejected credentials (401/403) stop the whole run at once with a message naming the secret,
  rather than failing every utterance slowly;
- every other failure is recorded per utterance with its reason, never as an empty hypothesis.

- a per-utterance cost estimate in `cost.tsv` (`ID<TAB>USD`) from the card's `pricing:`
  (list price per audio minute, the vendor's billing increment and minimum);
- for vendors whose batch API takes several calls (upload, create a job, poll, fetch, delete),
  `step(fn)` retries each call on its own, so a throttled poll never re-uploads the audio, and
  `poll(...)` waits for the job, at most the card's max-wait setting (e.g. `REVAI_MAX_WAIT_S`).

- speakers: a vendor that diarizes (its card's `<VENDOR>_DIARIZE` setting, `diarize_setting`)
  returns a `Timed` (the text, and its words and segments each naming a `speaker`) instead of
  the text; `run()` writes it to `hyp.timed.jsonl` (models/README.md, "Timed output").
  `speaker_turns` groups words into segments (a change of speaker or a pause ends one).

Secrets never reach a log line: messages carry the HTTP status and the vendor's error text only.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from contract import ResultWriter, WavListError, now, read_todo, wav_seconds

__all__ = [
    "ApiError",
    "RetryPolicy",
    "Timed",
    "call_with_retry",
    "cost_usd",
    "diarize_setting",
    "http_error",
    "load_card",
    "poll",
    "request",
    "retry_after_seconds",
    "run",
    "settings",
    "speaker_turns",
    "step",
    "timed_word",
]

RETRYABLE = {"throttled", "server", "network"}


class ApiError(Exception):
    """One failed API call. `kind`: throttled, server, network, timeout, auth or client.

    `retry_after`: seconds the server asked to wait; `retried`: the vendor's client already
    retried this call per its own policy, so `run()` records it rather than retrying again.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        status: int | None = None,
        retry_after: float | None = None,
        retried: bool = False,
    ):
        self.kind, self.status, self.retry_after = kind, status, retry_after
        self.retried = retried
        super().__init__(message)

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE and not self.retried

    def __str__(self) -> str:
        where = f"HTTP {self.status}" if self.status else self.kind
        message = str(self.args[0])
        return message if message.startswith(where) else f"{where}: {message}"


@dataclass(frozen=True)
class RetryPolicy:
    """Retry, timeout and concurrency settings; the card's `api:` values, env overrides."""

    max_attempts: int = 5
    backoff_s: float = 0.5  # first backoff ceiling; doubles per attempt
    max_backoff_s: float = 20.0
    timeout_s: float = 60.0  # per request
    concurrency: int = 4

    @classmethod
    def from_card(cls, card: dict[str, Any]) -> RetryPolicy:
        api = dict(card.get("api") or {})
        env = {
            "max_attempts": "ASRBENCH_API_MAX_ATTEMPTS",
            "backoff_s": "ASRBENCH_API_BACKOFF_S",
            "max_backoff_s": "ASRBENCH_API_MAX_BACKOFF_S",
            "timeout_s": "ASRBENCH_API_TIMEOUT_S",
            "concurrency": "ASRBENCH_API_CONCURRENCY",
        }
        values = {}
        for name, var in env.items():
            typ = int if name in ("max_attempts", "concurrency") else float
            raw = os.environ.get(var, api.get(name))
            if raw is not None:
                values[name] = typ(raw)
        return cls(**values)

    def wait(self) -> Callable[[Any], float]:
        """tenacity wait: full-jitter exponential backoff (uniform in [0, min(max_backoff_s,
        backoff_s * 2**(attempt-1))]), never shorter than the server's Retry-After (capped)."""
        import tenacity

        jitter = tenacity.wait_random_exponential(multiplier=self.backoff_s, max=self.max_backoff_s)

        def wait(state: Any) -> float:
            exc = state.outcome.exception()
            floor = getattr(exc, "retry_after", None)
            floor = 0.0 if floor is None else min(floor, self.max_backoff_s)
            return max(jitter(state), floor)

        return wait


def load_card(program_file: str) -> dict[str, Any]:
    """The card of the model folder the program was started from (not _common's)."""
    return yaml.safe_load((Path(program_file).parent / "model.yaml").read_text(encoding="utf-8"))


def settings(card: dict[str, Any]) -> dict[str, str]:
    """The card's non-secret `settings`, each overridable by the environment variable so named."""
    return {
        k: os.environ.get(k, "" if v is None else str(v))
        for k, v in (card.get("settings") or {}).items()
    }


def diarize_setting(values: dict[str, str], name: str) -> bool:
    """Whether the card's diarization setting `name` (env-overridable) asks for speakers; a
    value that is neither true nor false stops the program with one line naming it."""
    value = values.get(name, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    # exit status 2, as run() for a bad command line: the run's settings are wrong, not the API
    print(f"setting {name}={values[name]!r}: expected true or false", file=sys.stderr)
    raise SystemExit(2)


@dataclass(frozen=True)
class Timed:
    """A transcript with its timed units: what a diarizing `transcribe_one` returns.

    `text` is hyp.tsv's text, as without diarization; `segments` and `words` are
    hyp.timed.jsonl's lists (models/README.md), each item naming its `speaker` where the
    vendor gave one."""

    text: str
    segments: list[dict[str, Any]]
    words: list[dict[str, Any]] = field(default_factory=list)


def timed_word(start: float, end: float, word: str, speaker: Any = None) -> dict[str, Any]:
    """One timed word of the contract: times rounded to the millisecond, the vendor's speaker
    label as a string (`0`, `A`, `S1`, `spk_0`...), left out where the vendor gave none."""
    item: dict[str, Any] = {"start": round(float(start), 3), "end": round(float(end), 3)}
    item["word"] = word
    if speaker is not None and str(speaker) != "":
        item["speaker"] = str(speaker)
    return item


# A pause that ends a segment even when the speaker goes on: Deepgram's own default for
# splitting utterances (`utt_split`, https://developers.deepgram.com/docs/utterance-split).
# Without it one speaker's turns merge into minute-long segments, and tcpWER, which spreads
# a segment's words over its span, would score times the vendor never gave.
PAUSE_S = 0.8


def speaker_turns(uid: str, words: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Timed words as segments, a new one where the speaker changes or after a pause of more
    than `PAUSE_S`. Words without a speaker make segments without one (said on stderr): such
    a hypothesis is not speaker-attributed, so its long-form cell is scored without speakers
    (ORC-WER), never with a guessed one."""
    segments: list[dict[str, Any]] = []
    for w in words:
        last = segments[-1] if segments else None
        if (
            last is not None
            and last.get("speaker") == w.get("speaker")
            and w["start"] - last["end"] <= PAUSE_S
        ):
            last["end"] = max(last["end"], w["end"])
            last["text"] += " " + w["word"]
            continue
        seg = {"start": w["start"], "end": w["end"], "text": w["word"]}
        if "speaker" in w:
            seg["speaker"] = w["speaker"]
        segments.append(seg)
    unnamed = sum(1 for w in words if "speaker" not in w)
    if unnamed:
        print(
            f"{uid}: {unnamed} of {len(words)} word(s) name no speaker: this hypothesis is "
            "not speaker-attributed (scored without speakers)",
            file=sys.stderr,
        )
    return segments


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a `Retry-After` value, delta-seconds or HTTP-date (RFC 9110
    10.2.3), as urllib3 reads it; None when absent or unreadable."""
    if value is None:
        return None
    from urllib3.exceptions import InvalidHeader
    from urllib3.util.retry import Retry

    try:
        return Retry().parse_retry_after(value)
    except InvalidHeader:
        return None


def _retry_after(headers: Any) -> float | None:
    return retry_after_seconds(headers.get("Retry-After")) if headers is not None else None


def http_error(status: int, message: str, headers: Any = None) -> ApiError:
    """Classify a non-2xx answer."""
    message = " ".join(str(message).split())[:300] or "(no error message)"
    if status == 429:
        return ApiError("throttled", message, status, _retry_after(headers))
    if status in (401, 403):
        return ApiError("auth", message, status)
    if status == 408:
        return ApiError("timeout", message, status)
    if status >= 500:
        return ApiError("server", message, status, _retry_after(headers))
    return ApiError("client", message, status)


def request(
    method: str, url: str, timeout_s: float, error_message: Callable[[Any], str], **kwargs: Any
) -> Any:
    """One HTTP request with `requests`; returns the response or raises a classified ApiError.

    `error_message(response)` extracts the vendor's error text from an error body.
    """
    import requests

    try:
        resp = requests.request(method, url, timeout=timeout_s, **kwargs)
    except requests.Timeout:
        raise ApiError("timeout", f"no answer within {timeout_s:g} s") from None
    except requests.ConnectionError as exc:
        raise ApiError("network", f"connection failed: {type(exc).__name__}") from None
    if resp.status_code >= 400:
        try:
            msg = error_message(resp)
        except (ValueError, KeyError, TypeError, AttributeError):
            msg = resp.text[:300]  # an error body that is not the vendor's documented JSON
        raise http_error(resp.status_code, msg, resp.headers)
    return resp


class _Fatal(Exception):
    """The run is stopping (rejected credentials elsewhere): abandon this utterance."""


_context = threading.local()  # (policy, uid, model id, stop event) of the utterance in this thread


def step(fn: Callable[[], Any]) -> Any:
    """One call of a multi-call exchange (upload, create, poll...), retried on its own per the
    policy; what still fails is marked retried, so the utterance is not started over."""
    ctx = getattr(_context, "value", None)
    if ctx is None:  # outside run(): no retry context, one attempt
        return fn()
    try:
        return call_with_retry(fn, *ctx)
    except ApiError as exc:
        exc.retried = True
        raise


def poll(
    fn: Callable[[], tuple[bool, Any]], interval_s: float, max_wait_s: float, what: str
) -> Any:
    """Call `fn` (each call a `step`) until it says done; `fn` returns (done, value)."""
    deadline = time.monotonic() + max_wait_s
    stop = getattr(_context, "value", (None, None, None, threading.Event()))[3]
    while True:
        done, value = step(fn)
        if done:
            return value
        if time.monotonic() + interval_s > deadline:
            raise ApiError("timeout", f"{what} not finished within {max_wait_s:g} s")
        if stop.wait(interval_s):
            raise _Fatal()


def cost_usd(card: dict[str, Any], seconds: float) -> float | None:
    """The list-price estimate of one request for `seconds` of audio (card `pricing:`)."""
    pricing = card.get("pricing") or {}
    per_minute = pricing.get("usd_per_minute")
    if per_minute is None:
        return None
    inc = float(pricing.get("billing_increment_s") or 0)
    billed = math.ceil(seconds / inc - 1e-9) * inc if inc > 0 else seconds
    billed = max(billed, float(pricing.get("minimum_s") or 0))
    return billed / 60.0 * float(per_minute) + float(pricing.get("usd_per_request") or 0)


def call_with_retry(
    fn: Callable[[], Any], policy: RetryPolicy, uid: str, model_id: str, stop: threading.Event
) -> Any:
    """Call `fn` until it succeeds, fails for good or the run is stopping.

    `ASRBENCH_UTT_TIMEOUT` (set by `ops/benchmark --utt-timeout`, see models/README.md) bounds
    the whole utterance: no retry starts that would end after it.
    """
    import tenacity

    budget = float(os.environ.get("ASRBENCH_UTT_TIMEOUT") or 0) or None
    give_up = tenacity.stop_after_attempt(policy.max_attempts)
    if budget is not None:
        give_up = give_up | tenacity.stop_before_delay(budget)

    def sleep(seconds: float) -> None:
        if stop.wait(seconds):
            raise _Fatal()

    def announce(state: Any) -> None:
        print(
            f"{model_id}: {uid}: {state.outcome.exception()}; retry "
            f"{state.attempt_number}/{policy.max_attempts - 1} in "
            f"{state.upcoming_sleep:.2f} s",
            file=sys.stderr,
        )

    retrying = tenacity.Retrying(
        stop=give_up,
        wait=policy.wait(),
        sleep=sleep,
        before_sleep=announce,
        retry=tenacity.retry_if_exception(lambda e: isinstance(e, ApiError) and e.retryable),
    )
    try:
        return retrying(fn)
    except tenacity.RetryError as err:
        exc, attempts = err.last_attempt.exception(), err.last_attempt.attempt_number
        if attempts < policy.max_attempts:  # stopped by the utterance's time budget
            raise ApiError(
                "timeout", f"timeout after {budget:g} s (last error: {exc}, {attempts} attempts)"
            ) from None
        if attempts == 1:
            raise exc from None
        raise ApiError(exc.kind, f"{exc.args[0]} (after {attempts} attempts)", exc.status) from None
    except ApiError as exc:  # not retryable: the last answer, saying how many attempts it took
        attempts = retrying.statistics.get("attempt_number", 1)
        if attempts > 1 and exc.kind != "auth":
            raise ApiError(
                exc.kind, f"{exc.args[0]} (after {attempts} attempts)", exc.status
            ) from None
        raise


def _record(out: ResultWriter, uid: str, result: str | Timed, seconds: float, t0: float) -> None:
    """One transcribed utterance: its text (hyp.tsv) and, from a diarizing vendor, its timed
    line (hyp.timed.jsonl), written only then so other runs keep their files' bytes."""
    if isinstance(result, Timed):
        out.ok(uid, result.text, now() - t0, seconds)
        out.timed(uid, result.segments, result.words)
    else:
        out.ok(uid, result, now() - t0, seconds)


def run(
    program_file: str,
    argv: list[str],
    transcribe_one: Callable[[str, str], str | Timed],
    secrets_hint: str,
) -> int:
    """The whole program: `<program> <wav_list> <result_dir>` per contract v1; exit status.

    `secrets_hint` names the variable(s) to check when the API rejects the credentials.
    """
    card = load_card(program_file)
    mid = card["id"]
    if len(argv) != 2:
        print(f"usage: {Path(program_file).name} <wav_list> <result_dir>", file=sys.stderr)
        return 2
    wav_list, result_dir = argv
    try:
        todo, n_done = read_todo(wav_list, result_dir)
    except WavListError as exc:
        print(f"{mid}: {exc}", file=sys.stderr)
        return 2
    policy = RetryPolicy.from_card(card)
    print(
        f"{mid}: {len(todo)} utterance(s) to do, {n_done} already done; {policy}", file=sys.stderr
    )
    stop = threading.Event()
    fatal: list[ApiError] = []

    def one(uid: str, path: str, out: ResultWriter) -> None:
        if stop.is_set():
            return
        start = now()
        _context.value = (policy, uid, mid, stop)
        try:
            seconds = wav_seconds(path)
            result = call_with_retry(lambda: transcribe_one(uid, path), policy, uid, mid, stop)
        except ApiError as exc:
            if exc.kind == "auth":
                fatal.append(exc)
                stop.set()
            else:
                out.failed(uid, str(exc))
        except _Fatal:
            pass
        except Exception as exc:  # unreadable audio, an unexpected answer: this utterance only
            out.failed(uid, f"{type(exc).__name__}: {exc}")
        else:
            _record(out, uid, result, seconds, start)
            usd = cost_usd(card, seconds)
            if usd is not None:
                out.cost(uid, usd)
        finally:
            _context.value = None

    with (
        ResultWriter(Path(result_dir), mid) as out,
        ThreadPoolExecutor(max_workers=max(1, policy.concurrency)) as pool,
    ):
        for future in [pool.submit(one, uid, path, out) for uid, path in todo]:
            future.result()
    if fatal:
        print(
            f"{mid}: the API rejected the credentials ({fatal[0]}); check {secrets_hint} in "
            f"the host environment. Stopped; {out.n_ok} utterance(s) done, rerun to resume.",
            file=sys.stderr,
        )
        return 3
    print(
        f"{mid}: done: {out.n_ok} transcribed, {out.n_failed} failed (see failed.tsv)",
        file=sys.stderr,
    )
    return 0
