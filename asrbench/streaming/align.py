"""Reference word times for the streaming metrics: a forced alignment of each reference.

Per-word emission latency and the cursor lag need to know when each reference word ends in
the audio. `mini_en` and most sets have no timed references, so the reference, as the scorer
normalises it (the tokens the hypotheses are aligned to), is force-aligned to the audio with
PocketSphinx 5's en-us model (`Decoder.set_align_text`, one `full_utt` pass, `seg()` word
frames at 100 frames a second). Only English is aligned (the one acoustic model at hand).

A word the aligner cannot place is recorded (its time is None), excluded from the word
metrics and counted: a word missing from CMUdict (PocketSphinx has no letter-to-sound rule
here, so the word is left out of the text it aligns and its audio goes to its neighbours), or a
word past the point where the alignment gave up (it returns a prefix of the text when the
audio runs out). When the whole alignment fails, every word of the utterance is unplaced.

The times are cached per (dataset content, scorer configuration, aligner) under the asrbench
cache (`<cache>/align/`), written atomically; a later run aligns only the utterances the cache
lacks.

`energy_bounds` is the independent check: the first and last 10-ms frame whose energy is
within 35 dB of the loudest frame's, the speech's start and end by energy alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asrbench import audio
from asrbench.dataset import Dataset, Utterance
from asrbench.errors import InputError
from asrbench.fsio import atomic_write_json
from asrbench.identity import bytes_sha256, canonical, short

FORMAT = "asrbench-align-v1"
FRAME_S = 0.01  # PocketSphinx's frame rate: 100 frames a second
LANGUAGES = ("en",)  # the aligner's acoustic model is en-us
_VARIANT = re.compile(r"\(\d+\)$")  # "the(2)": CMUdict's second pronunciation of "the"
_FILLERS = ("<s>", "</s>", "<sil>")


@dataclass(frozen=True)
class WordTimes:
    """One reference's scorer tokens and each one's aligned (start, end) in seconds; None
    where the aligner could not place the word."""

    uid: str
    words: list[str]
    starts: list[float | None]
    ends: list[float | None]
    why: str | None = None  # why words are unplaced, when some are

    @property
    def unplaced(self) -> int:
        return sum(e is None for e in self.ends)

    def to_dict(self) -> dict[str, Any]:
        return {"words": self.words, "starts": self.starts, "ends": self.ends, "why": self.why}

    @classmethod
    def from_dict(cls, uid: str, d: dict[str, Any]) -> WordTimes:
        return cls(uid, list(d["words"]), list(d["starts"]), list(d["ends"]), d.get("why"))


def aligner_version() -> str:
    from importlib.metadata import version

    return f"pocketsphinx {version('pocketsphinx')} en-us, set_align_text, full_utt"


class Aligner:
    """PocketSphinx's en-us decoder in alignment mode, loaded once."""

    def __init__(self) -> None:
        try:
            from pocketsphinx import Config, Decoder
        except ImportError:
            raise InputError(
                "forced alignment needs pocketsphinx: install the `models` extra "
                "(pip install -e '.[models]')"
            ) from None
        self.decoder = Decoder(Config(loglevel="FATAL"))

    def align(self, uid: str, words: Sequence[str], pcm: bytes) -> WordTimes:
        """Times of `words` (scorer tokens) in 16-kHz 16-bit mono `pcm`."""
        known = [i for i, w in enumerate(words) if self.decoder.lookup_word(w) is not None]
        oov = len(words) - len(known)
        starts: list[float | None] = [None] * len(words)
        ends: list[float | None] = [None] * len(words)
        why = f"{oov} word(s) not in the aligner's dictionary" if oov else None
        if not known:
            return WordTimes(uid, list(words), starts, ends, why or "no words")
        try:
            self.decoder.set_align_text(" ".join(words[i] for i in known))
            self.decoder.start_utt()
            self.decoder.process_raw(pcm, full_utt=True)
            self.decoder.end_utt()
            segs = [
                (_VARIANT.sub("", s.word), s.start_frame, s.end_frame)
                for s in self.decoder.seg()
                if s.word not in _FILLERS and not s.word.startswith("[")
            ]
        except RuntimeError as exc:
            return WordTimes(uid, list(words), starts, ends, f"alignment failed ({exc})")
        placed = _place(known, words, segs, starts, ends, len(pcm) / 2 / 16000)
        if placed < len(known):
            lost = f"{len(known) - placed} word(s) past where the alignment ended"
            why = f"{why}; {lost}" if why else lost
        return WordTimes(uid, list(words), starts, ends, why)


def _place(
    known: list[int],
    words: Sequence[str],
    segs: list[tuple[str, int, int]],
    starts: list[float | None],
    ends: list[float | None],
    duration: float,
) -> int:
    """Fill starts/ends from the segments, matched in order to the words aligned."""
    placed = 0
    for i, (word, first, last) in zip(known, segs, strict=False):
        if word != words[i]:
            break  # out of step: the rest stays unplaced rather than misplaced
        # seg() frames are inclusive: the word ends at the end of its last frame (the last
        # frame may run past the audio's end by a fraction of a frame)
        starts[i], ends[i] = first * FRAME_S, min((last + 1) * FRAME_S, duration)
        placed += 1
    return placed


def read_pcm16(path: Path) -> tuple[bytes, int]:
    """A WAV's 16-bit mono PCM and its rate; InputError naming the file otherwise."""
    try:
        pcm, rate, channels, width = audio.wav_pcm(path)
    except audio.WAV_ERRORS as exc:
        raise InputError(f"{path}: cannot read as WAV ({exc})") from None
    if channels != 1 or width != 2:
        raise InputError(f"{path}: the aligner reads 16-bit mono WAV only")
    return pcm, rate


def energy_bounds(pcm: bytes, rate: int, floor_db: float = 35.0) -> tuple[float, float] | None:
    """(start, end) in seconds of the 10-ms frames within `floor_db` of the loudest one."""
    x = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    step = max(1, int(rate * FRAME_S))
    n = len(x) // step
    if n == 0:
        return None
    power = (x[: n * step].reshape(n, step) ** 2).mean(axis=1) + 1e-9
    db = 10 * np.log10(power)
    loud = np.flatnonzero(db >= db.max() - floor_db)
    return float(loud[0] * FRAME_S), float((loud[-1] + 1) * FRAME_S)


def cache_path(cache_root: Path, ds: Dataset, scorer_config: dict[str, Any]) -> Path:
    """The cache file of this dataset's alignments under this scorer configuration."""
    key = bytes_sha256(
        canonical(
            {
                "format": FORMAT,
                "dataset": ds.content_hash(),
                "scorer": scorer_config,
                "aligner": aligner_version(),
            }
        )
    )
    return cache_root / "align" / f"{ds.id}-{short(key)}.json"


def _read_cache(path: Path) -> dict[str, WordTimes]:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return {}  # a damaged cache is rebuilt, not trusted
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        return {}
    return {uid: WordTimes.from_dict(uid, row) for uid, row in d["utterances"].items()}


def word_times(
    ds: Dataset,
    utts: Iterable[Utterance],
    normalize: Any,
    scorer_config: dict[str, Any],
    cache_root: Path,
) -> dict[str, WordTimes]:
    """Aligned word times of `utts` (from the cache where it has them); {} when the dataset's
    language is not one the aligner has a model for."""
    if ds.language.split("-")[0] not in LANGUAGES:
        return {}
    path = cache_path(cache_root, ds, scorer_config)
    cached = _read_cache(path)
    wanted = list(utts)
    missing = [u for u in wanted if u.id not in cached]
    if missing:
        aligner = Aligner()
        for u in missing:
            pcm, rate = read_pcm16(ds.audio_path(u))
            if rate != 16000:
                cached[u.id] = WordTimes(u.id, [], [], [], f"audio at {rate} Hz, not 16000")
                continue
            cached[u.id] = aligner.align(u.id, normalize(u.text), pcm)
        atomic_write_json(
            path,
            {
                "format": FORMAT,
                "aligner": aligner_version(),
                "dataset": ds.id,
                "utterances": {k: v.to_dict() for k, v in sorted(cached.items())},
            },
        )
    return {u.id: cached[u.id] for u in wanted}
