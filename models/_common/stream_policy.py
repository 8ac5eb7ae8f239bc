"""Streaming by re-decoding: whisper_streaming's LocalAgreement-2 policy, and the program loop
that drives it (streaming contract, models/README.md).

A model that can only transcribe a whole buffer (Whisper, whisper.cpp, Moonshine) streams by
decoding the audio it has so far again and again. The policy is ufal/whisper_streaming's
(`whisper_online.py`, `OnlineASRProcessor` with `HypothesisBuffer`; Machacek et al. 2023,
"Turning Whisper into Real-Time Transcription System"):

- **Re-decode** the growing audio buffer once at least `min_chunk_s` of new audio has arrived
  (all the audio received by then, however much that is: a slow decoder takes bigger steps).
- **Commit** (LocalAgreement-2) the longest common prefix of the two latest hypotheses, after
  the words already committed. Committed words never change.
- **Emit** the committed words plus the latest hypothesis's uncommitted tail as the partial.
- **Trim** the buffer once it is longer than `trim_s`: cut it at the end of the last segment
  the decoder marked (never the last one) whose words are all committed; the committed words
  cut away become the next decodes' prompt (their last `prompt_chars` characters).
- **Final**, at the end of the utterance: decode the rest once more and append the whole
  uncommitted tail of that last hypothesis.

Decoder-agnostic: the decoder is a callable `transcribe(audio, prompt) -> Hypothesis`, float32
mono samples at the model's rate in, words and (where the decoder gives them) segment ends out.

Where this differs from whisper_online.py, and why:
- Words are compared case- and punctuation-blind (`norm`): Whisper often writes "modern." at
  the end of a buffer and "modern," once more audio follows; the reference would hold that word
  back one more step. The committed word is the text of its first agreeing hypothesis.
- The committed words still inside the buffer are found in a new hypothesis by text, not by
  word times (`skip_committed`): the prefix when it matches, else the best match of up to 5
  trailing words, as the reference's n-gram check does. So decoders without word times
  (Moonshine) run the same policy, and Whisper needs no word-timestamp pass.
- A decoder without segment ends (Moonshine) has one place to trim: the end of the buffer,
  once the whole hypothesis is committed. Past `max_buffer_s` (a hard cap, 30 s: Whisper's
  window) with no cut found, the latest hypothesis is committed whole and the buffer emptied.
"""

from __future__ import annotations

import difflib
import json
import queue
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np
from stream_contract import ContractError, emit, frames  # shared beside this file (image.shared)

NGRAM = 5  # the longest run of trailing committed words matched in a new hypothesis


@dataclass(frozen=True)
class Params:
    """The policy's parameters (docs/STREAMING.md, "Re-decoding policy")."""

    min_chunk_s: float = 1.0  # least new audio before the next decode
    trim_s: float = 15.0  # trim the buffer at a committed segment end once it is this long
    max_buffer_s: float = 30.0  # hard cap: past it, commit all and empty the buffer
    prompt_chars: int = 200  # the committed text cut from the buffer, passed as the prompt
    sample_rate: int = 16000


@dataclass(frozen=True)
class Hypothesis:
    """One decode of the buffer: its words, and segment ends `(words so far, end seconds)`
    (each: the first `n` words end by `end` seconds into the buffer); none where unknown."""

    words: tuple[str, ...]
    ends: tuple[tuple[int, float], ...] = ()

    @classmethod
    def from_segments(cls, segments: Iterable[tuple[str, float | None]]) -> Hypothesis:
        """From (segment text, segment end in seconds or None), in order."""
        words: list[str] = []
        ends: list[tuple[int, float]] = []
        for text, end in segments:
            words.extend(text.split())
            if end is not None and words:
                ends.append((len(words), float(end)))
        return cls(tuple(words), tuple(ends))


Transcribe = Callable[[np.ndarray, str], Hypothesis]


def norm(word: str) -> str:
    """A word as the agreement compares it: lower case, letters and digits only."""
    return "".join(c for c in word.lower() if c.isalnum())


def common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading words of `a` and `b` agree (`norm`)."""
    n = 0
    while n < len(a) and n < len(b) and norm(a[n]) == norm(b[n]):
        n += 1
    return n


def _suffix_match(head: Sequence[str], committed: Sequence[str]) -> int:
    n = 0
    while n < min(len(head), len(committed), NGRAM) and norm(head[-1 - n]) == norm(
        committed[-1 - n]
    ):
        n += 1
    return n


def skip_committed(words: Sequence[str], committed: Sequence[str]) -> int:
    """How many leading words of a new hypothesis are the committed words still in the buffer:
    all of them when the hypothesis starts with them, else the cut whose last words match the
    committed ones' last words best (up to NGRAM, nearest the committed count on a tie), else
    as many words as were committed."""
    want = len(committed)
    if want == 0 or common_prefix(words, committed) == want:
        return min(want, len(words))
    best, cut = 0, min(want, len(words))
    for j in range(1, len(words) + 1):
        n = _suffix_match(words[:j], committed)
        if n > best or (n == best and n and abs(j - want) < abs(cut - want)):
            best, cut = n, j
    return cut


def committed_index(head: Sequence[str], in_buffer: Sequence[str], n: int) -> int:
    """Where word `n` of a hypothesis's already-committed head (`head`, matched to the
    committed words `in_buffer` by `skip_committed`) falls among those committed words: the
    two can differ by a word or two (a revision), so positions map through their alignment."""
    if len(head) == len(in_buffer):
        return n
    matcher = difflib.SequenceMatcher(None, [norm(w) for w in head], [norm(w) for w in in_buffer])
    at = 0
    for a, b, _size in matcher.get_matching_blocks():
        if a > n:
            break
        at = b + n - a  # the offset of the last block that starts at or before n
    return min(at, len(in_buffer))


@dataclass(frozen=True)
class Update:
    """What a decode left: the committed words and the latest hypothesis's uncommitted tail."""

    committed: tuple[str, ...]
    tail: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.committed + self.tail)


class LocalAgreement:
    """LocalAgreement-2 over one utterance (module docstring). `insert` audio as it arrives,
    `step` when `due`, `finish` at the end; each returns the `Update` to emit."""

    def __init__(self, transcribe: Transcribe, params: Params | None = None):
        self.transcribe, self.p = transcribe, params or Params()
        self.audio = np.zeros(0, dtype=np.float32)  # the buffer
        self.offset_s = 0.0  # where the buffer starts in the utterance
        self.fresh = 0  # samples added since the last decode
        self.committed: list[str] = []  # every committed word of the utterance
        self.in_buffer = 0  # how many of the last committed words lie in the buffer
        self.tail: list[str] = []  # the latest hypothesis's uncommitted words
        self.decodes = 0

    @property
    def buffer_s(self) -> float:
        return len(self.audio) / self.p.sample_rate

    def insert(self, samples: np.ndarray) -> None:
        self.audio = np.concatenate([self.audio, np.asarray(samples, dtype=np.float32)])
        self.fresh += len(samples)

    def due(self) -> bool:
        return self.fresh >= self.p.min_chunk_s * self.p.sample_rate

    def prompt(self) -> str:
        """The last `prompt_chars` characters (whole words) of the committed text cut away."""
        out: list[str] = []
        size = 0
        for word in reversed(self.committed[: len(self.committed) - self.in_buffer]):
            if size >= self.p.prompt_chars:
                break
            out.append(word)
            size += len(word) + 1
        return " ".join(reversed(out))

    def _decode(self) -> tuple[Hypothesis, int]:
        """Decode the buffer; the hypothesis and how many of its words were committed before."""
        hyp = self.transcribe(self.audio, self.prompt())
        self.fresh, self.decodes = 0, self.decodes + 1
        in_buffer = self.committed[len(self.committed) - self.in_buffer :]
        return hyp, skip_committed(hyp.words, in_buffer)

    def step(self) -> Update:
        """Decode the buffer, commit what the last two hypotheses agree on, trim if long."""
        old = self.committed[len(self.committed) - self.in_buffer :]
        hyp, skip = self._decode()
        new = list(hyp.words[skip:])
        agreed = common_prefix(self.tail, new)
        self.committed += new[:agreed]
        self.in_buffer += agreed
        self.tail = new[agreed:]
        if self.buffer_s > min(self.p.trim_s, self.p.max_buffer_s):
            self._trim(hyp, skip, old)
        return self.update()

    def _trim(self, hyp: Hypothesis, skip: int, old: list[str]) -> None:
        """Cut the buffer at the last segment end (not the last one) whose words are all
        committed (`skip`: the hypothesis's words matched to the committed words `old` that
        were in the buffer before this decode); see the module docstring for decoders without
        segment ends and the hard cap."""
        done = skip + self.in_buffer - len(old)  # the hypothesis's words now committed
        cuts = [(n, end) for n, end in hyp.ends[:-1] if 0 < n <= done and end > 0]
        if not hyp.ends and not self.tail and done == len(hyp.words) > 0:
            cuts = [(done, self.buffer_s)]  # no segment ends: all committed, cut at the end
        if cuts:
            n, end = cuts[-1]
            at = committed_index(hyp.words[:skip], old, n) if n < skip else len(old) + n - skip
            self._cut(end, keep=self.in_buffer - at)
        elif self.buffer_s > self.p.max_buffer_s:
            self.committed += self.tail
            self.tail = []
            self._cut(self.buffer_s, keep=0)

    def _cut(self, seconds: float, keep: int) -> None:
        """Drop the buffer's first `seconds`; `keep` committed words remain inside it."""
        samples = min(len(self.audio), int(seconds * self.p.sample_rate))
        self.audio = self.audio[samples:]
        self.offset_s += samples / self.p.sample_rate
        self.in_buffer = max(0, min(keep, self.in_buffer))

    def finish(self) -> Update:
        """The final: decode what came since the last decode, keep its whole tail."""
        if self.fresh or not self.decodes:
            if len(self.audio):
                hyp, skip = self._decode()
                self.tail = list(hyp.words[skip:])
            else:
                self.tail = []
        done = Update(tuple(self.committed), tuple(self.tail))
        self.committed += self.tail
        self.tail = []
        return done

    def update(self) -> Update:
        return Update(tuple(self.committed), tuple(self.tail))


# ---------------------------------------------------------------------------------------------
# The program loop: the streaming contract's wire format around the policy.


class Inbox:
    """Reads stdin on its own thread, so the feed never waits on a decode: the loop takes
    everything that came in since its last decode. Items: ("head", dict), ("pcm", bytes),
    ("end", None), ("eof", None), ("error", message). `received` counts the samples of the
    current utterance read so far (what `audio_s` reports)."""

    def __init__(self, inp: BinaryIO):
        self.inp, self.items, self.received = inp, queue.Queue[tuple[str, Any]](), 0
        threading.Thread(target=self._run, daemon=True).start()

    def _utterance(self) -> None:
        for pcm in frames(self.inp):
            self.received += len(pcm) // 2
            self.items.put(("pcm", pcm))
        self.items.put(("end", None))

    def _run(self) -> None:
        try:
            while line := self.inp.readline():
                self.received = 0
                self.items.put(("head", json.loads(line)))
                self._utterance()
            self.items.put(("eof", None))
        except (OSError, ValueError, ContractError) as exc:
            self.items.put(("error", f"{type(exc).__name__}: {exc}"))

    def take(self) -> list[tuple[str, Any]]:
        """The next item (waiting for it), then every other one already there."""
        got = [self.items.get()]
        while True:
            try:
                got.append(self.items.get_nowait())
            except queue.Empty:
                return got


def pcm_to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


def stream_one(inbox: Inbox, out: BinaryIO, uid: str, policy: LocalAgreement) -> None:
    """Feed one utterance to the policy; a partial whenever the text changes, then the final."""
    rate = policy.p.sample_rate
    last = ""
    while True:
        items = inbox.take()
        for kind, data in items:
            if kind == "pcm":
                policy.insert(pcm_to_float(data))
            elif kind != "end":
                raise EOFError(f"{uid}: the stream ended before the utterance did ({data})")
        if items[-1][0] == "end":
            text = policy.finish().text
            emit(out, id=uid, type="final", text=text, audio_s=inbox.received / rate)
            return
        if policy.due():
            text = policy.step().text
            if text != last:
                emit(out, id=uid, type="partial", text=text, audio_s=inbox.received / rate)
                last = text


def serve(name: str, load: Callable[[], Transcribe], params: Params | None = None) -> int:
    """The whole streaming program: load the decoder, `ready`, then each utterance until
    stdin ends; its exit status (2: a header the model cannot take, 1: a broken stream or a
    decoder that failed; the message names the utterance)."""
    params = params or Params()
    transcribe = load()
    print(f"{name}: streaming with LocalAgreement-2, {params}", file=sys.stderr, flush=True)
    out = sys.stdout.buffer
    emit(out, type="ready")
    inbox = Inbox(sys.stdin.buffer)
    while True:
        kind, head = inbox.items.get()
        if kind == "eof":
            return 0
        if kind != "head":
            print(f"{name}: {head}", file=sys.stderr, flush=True)
            return 1
        uid = str(head.get("id"))
        if head.get("sample_rate") != params.sample_rate:
            print(f"{name}: {uid}: sample_rate must be {params.sample_rate}", file=sys.stderr)
            return 2
        try:
            stream_one(inbox, out, uid, LocalAgreement(transcribe, params))
        except EOFError as exc:
            print(f"{name}: {exc}", file=sys.stderr, flush=True)
            return 1
        except Exception as exc:  # the decoder failed: the platform fails this and later utts
            print(f"{name}: {uid}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            return 1
