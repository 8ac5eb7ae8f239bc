"""NSW: verbalise non-standard words (numbers, money, dates, times, measures, ordinals,
fractions, spoken symbols, URLs and e-mail addresses, dotted abbreviations) with
nemo-text-processing's Normalizer for the language (`NEMO_LANGUAGES`), else num2words for its
numbers only (`NUM2WORDS_LANGUAGES`: cardinals and decimals), else none (`nsw_step`). Both
reference and hypothesis go through the same step, so a language's digits are spelled in that
language (`Нажмите 1` and `Нажмите один` match under ru), never in English.

The Normalizer runs at ~100 sentences/s and takes 20-160 s (by language) to build its grammars
the first time, so this step (1) only sends strings that hold something it verbalises
(`NEEDS_NSW`: a digit, a spoken symbol, or a dot between two word characters as in
`www.asterisk.org`, `A.M.`, `e.g.`), (2) keeps every result in a persistent SQLite cache keyed
by the Normalizer's version and settings, and (3) builds the Normalizer lazily, from its own
grammar cache, only when a string is not cached yet. sclite's alternations are marked before
this step (ALTERNATION): the stretches between their marks are read one by one. (4) A long
English text reaches nemo in pieces, the stretches around its triggers (`piece_spans`). (5) In
English nemo's tagger is composed in its compacted form (`nemo_tagger`, the same tags): a
piece costs about a seventh of the CPU.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import sqlite3
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scoring.normalize.alternation import ALT_MARKS

# The symbols nemo says aloud (`*` asterisk, `#` hash, `@` at, `&` and, `©` copyright, ...).
# Left out on purpose: `|` (a word separator in some corpora), `~ ^ _ ® ™` (rarely read
# aloud), `< >` (tags: see NONSPEECH) and the symbols nemo leaves as they are (`× ÷ ± ²`).
SPOKEN_SYMBOLS = "$€£¥%&@#+=/°§½¼¾*©"
# A string needs NSW when it holds a digit, a spoken symbol, or a dot between two word
# characters (URLs, e-mail addresses, dotted abbreviations such as A.M., U.S.A., e.g.).
NEEDS_NSW = re.compile(r"[0-9" + re.escape(SPOKEN_SYMBOLS) + r"]|\.(?<=\w\.)(?=\w)")
_ASCII_TRIGGERS = "".join(c for c in "0123456789" + SPOKEN_SYMBOLS if c.isascii())
_DOTTED = re.compile(r"\.(?<=\w\.)(?=\w)")
# A capital S right after a number is the plural (`30S` = thirties, as in lower-case text);
# nemo's cased grammar would read it as the letter (`thirty S`).
_PLURAL_S = re.compile(r"(?<=\d)S\b")
# Outside English, a space (or a no-break space) between digit groups of three is a thousands
# separator, as the Open ASR Leaderboard's normaliser reads it too.
_GROUPS = re.compile(r"(?<=\d)[ \u00a0\u202f](?=\d{3}(?!\d))")
# ALTERNATION's marks (`scoring.normalize.alternation`), one a match.
_MARKED = re.compile("([" + "".join(sorted(ALT_MARKS)) + "])")
# An English text longer than this many words reaches nemo in pieces (`pieces`): nemo's time
# grows faster than a text's length (an hour-long call's 10,000 words: 150 s whole).
PIECE_MIN_WORDS = 60
# Words either side of a trigger that a piece keeps: nemo reads a trigger with its neighbours
# (`$5 million`, `3 p.m. EST`, `March 3, 2020`, `No. 5`); its grammars' longest such reach
# in English is within three words (docs/SCORING.md, "NSW in pieces").
CONTEXT = 3
# Edge punctuation nemo's tagger splits off a word before its whitelist reads it.
_EDGE = ".,;:!?\"'()[]"
_UPPER_DOT = re.compile(r"[A-Z]\.")  # `A. B. C.`: nemo's whitelist joins such letters


# nemo-text-processing 1.2.0's text-normalisation grammars that build with pynini 2.1.6.post1
# (each measured: docs/SCORING.md, "Numbers and compounds per language"). Left out on purpose:
# Chinese (its pipeline and numbers are those of before the language registry: no NSW), Russian
# (nemo builds it only non-deterministic, several readings per number: num2words reads it) and
# Kinyarwanda (its grammar fails to build: KeyError 'verbalize').
NEMO_LANGUAGES = (
    "en", "ar", "de", "es", "fr", "hi", "hu", "hy", "it", "ja", "ko", "pt", "sv", "vi",
)  # fmt: skip
# num2words 0.5.14's languages (its regional variants such as es_CO left out).
NUM2WORDS_ALL = (
    "am ar az be bn ca ce cs cy da de en eo es fa fi fr he hu id is it ja kn ko kz lt lv nl no "
    "pl pt ro ru sk sl sr sv te tet tg th tr uk vi"
).split()
# Where nemo has no grammar, num2words reads the digits: cardinal numbers (decimals with their
# comma or point), nothing else.
NUM2WORDS_LANGUAGES = tuple(x for x in NUM2WORDS_ALL if x not in NEMO_LANGUAGES)
# The languages the NSW step handles (scoring.languages reads this list).
LANGUAGES = NEMO_LANGUAGES + NUM2WORDS_LANGUAGES
# Outside English a digit of any script triggers NSW (Arabic-Indic, Devanagari...); English
# keeps its ASCII-only pattern, so its numbers stay those of before.
NEEDS_NSW_ANY = re.compile(r"[\d" + re.escape(SPOKEN_SYMBOLS) + r"]|\.(?<=\w\.)(?=\w)")


def primary_language(lang: str) -> str:
    """A BCP-47 tag's primary language subtag, lower case ("es_MX", "es-MX" -> "es")."""
    return lang.replace("_", "-").split("-")[0].lower()


def nsw_backend(lang: str) -> str | None:
    """The reader of a BCP-47 tag's primary language: "nemo", "num2words" or None (no NSW)."""
    primary = primary_language(lang)
    if primary in NEMO_LANGUAGES:
        return "nemo"
    if primary in NUM2WORDS_LANGUAGES:
        return "num2words"
    return None


def nsw_step(lang: str, cache_dir: str | Path | None) -> Nsw | Num2Words | None:
    """The NSW step for a language tag (None where neither backend has the language); nemo's
    grammars and results live under `cache_dir`, else under `default_cache_dir()`."""
    backend = nsw_backend(lang)
    primary = primary_language(lang)
    if backend == "num2words":
        return Num2Words(primary)
    if backend is None:
        return None
    return Nsw(Path(cache_dir) if cache_dir else default_cache_dir(), primary)


def default_cache_dir(root: Path | None = None, env: dict[str, str] | None = None) -> Path:
    """Where NSW keeps its grammars and results when the caller names no folder.

    In a checkout of the platform (`root`, the folder above `scoring/`, holds
    `asrbench/settings.py`) and writable: `<root>/.cache`, the platform's default cache
    (`ASRBENCH_CACHE` unset), so `scoring.wer(...)` reuses the grammars `ops/benchmark` built
    (the first English build takes 1-2 minutes). Elsewhere `$XDG_CACHE_HOME/asrbench`, by
    default `~/.cache/asrbench`. The library imports nothing from the platform, so it looks
    for the checkout's files rather than asking `asrbench.settings`.
    """
    root = Path(__file__).resolve().parents[2] if root is None else root
    if (root / "asrbench" / "settings.py").is_file() and os.access(root, os.W_OK):
        return root / ".cache"
    variables: Mapping[str, str] = os.environ if env is None else env
    base = variables.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "asrbench"


# nemo names each language's tagger grammar (the part that takes minutes to build) with
# `<tag>_tn` in the file name; Japanese's is written under zh's tag. Its verbalizer and
# post-processing files are small, and some languages write them under another's tag (hi: en).
_TAGGER_TAG = {"ja": "zh"}
_NOT_TAGGER = ("_verbalizer.far", "_post_processing.far")


def grammars_cached(far_dir: Path, lang: str) -> bool:
    """Whether nemo's tagger grammar for `lang` is already compiled in `far_dir`: then the
    Normalizer loads in about a second; otherwise it builds for 2-160 s (docs/SCORING.md)."""
    tag = f"{_TAGGER_TAG.get(lang, lang)}_tn"
    try:
        names = [p.name for p in Path(far_dir).iterdir()]
    except OSError:  # no folder yet: nothing built
        return False
    return any(n.endswith(".far") and tag in n and not n.endswith(_NOT_TAGGER) for n in names)


def _nemo_labels(name: str) -> list[list[str]]:
    """A data file of nemo's English grammars, read as nemo's `load_labels` reads it, without
    importing nemo (pynini: seconds) when every result is already cached."""
    import csv
    import importlib.util

    spec = importlib.util.find_spec("nemo_text_processing")
    assert spec is not None and spec.submodule_search_locations  # a pinned requirement
    root = Path(next(iter(spec.submodule_search_locations)))
    path = root / "text_normalization" / "en" / "data" / name
    return list(csv.reader(path.read_text(encoding="utf-8").splitlines(), delimiter="\t"))


@functools.cache
def _whitelist() -> tuple[frozenset[str], dict[str, list[tuple[str, ...]]], frozenset[str]]:
    """What nemo's English grammars rewrite in a text without a trigger: (single words of its
    whitelist and symbol list, with `St` that it reads as Saint; phrases of several words by
    their first word; state names and codes, which it rewrites after a comma)."""
    single = {"St", "ST", "st", "St.", "ST.", "st."}
    phrases: dict[str, list[tuple[str, ...]]] = {}
    for name in ("whitelist/tts.tsv", "whitelist/symbol.tsv"):
        for row in _nemo_labels(name):
            words = tuple(w.strip(_EDGE) or w for w in row[0].split())
            if len(words) == 1:
                single.update((row[0], words[0]))
            elif words:
                phrases.setdefault(words[0], []).append(words)
    states = {x for row in _nemo_labels("address/state.tsv") for x in row}
    return frozenset(single), phrases, frozenset(states)


def _special(words: list[str]) -> list[int]:
    """Indices of the words nemo's English whitelist rewrites even far from any trigger
    (`Mr.`, `vs`, `A. D.`, `Dallas, TX`): a piece holds them too, as the whole text would."""
    single, phrases, states = _whitelist()
    out = []
    for i, w in enumerate(words):
        bare = w.strip(_EDGE) or w
        if w in single or bare in single or _UPPER_DOT.fullmatch(w):
            out.append(i)
        elif bare in states and i and words[i - 1].endswith(","):
            out.append(i)
        for phrase in phrases.get(bare, ()):
            n = len(phrase)
            if tuple(x.strip(_EDGE) or x for x in words[i : i + n]) == phrase:
                out.extend(range(i, i + n))
    return out


def piece_spans(words: list[str], needs: re.Pattern[str]) -> list[tuple[int, int]]:
    """The stretches `[a, b)` of `words` that nemo reads: each trigger (`needs`) or whitelist
    word with `CONTEXT` words either side, stretches that meet or overlap joined. Words
    outside every stretch are what nemo's word class passes through unchanged."""
    marked = {i for i, w in enumerate(words) if needs.search(w)}
    marked.update(_special(words))
    spans: list[tuple[int, int]] = []
    for i in sorted(marked):
        a, b = max(0, i - CONTEXT), min(len(words), i + CONTEXT + 1)
        if spans and a <= spans[-1][1]:
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return spans


class _WarningsOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING


_QUIET = _WarningsOnly()


def _nemo_version() -> str:
    from importlib import metadata  # only when a text needs NSW: it scans installed packages

    try:
        return metadata.version("nemo-text-processing")
    except metadata.PackageNotFoundError:  # pragma: no cover - nemo is a pinned requirement
        return "missing"


class Nsw:
    """Normalise non-standard words; results cached under `cache_dir`."""

    name = "NSW"

    def __init__(self, cache_dir: Path, lang: str = "en", input_case: str = "cased") -> None:
        self.cache_dir = Path(cache_dir)
        self.lang = lang
        self._needs = NEEDS_NSW if lang == "en" else NEEDS_NSW_ANY
        self.input_case = input_case
        self._normalizer = None
        self._lock = threading.Lock()
        self._memo: dict[str, str] | None = None
        self._pending: dict[str, str] = {}
        self.calls = 0  # strings actually sent to nemo (for throughput reports)
        self.failures = 0  # strings nemo's grammar could not read (num2words read them)
        self.jobs: int | None = None  # processes reading a batch's new strings (None: by size)
        # NSW inputs a later batch will read (the entity mapping's pieces): their new strings
        # are read after the next prefetch's, in the background (`_prefetch`)
        self.later: list[str] = []
        self._ahead: Any = None  # (pool, future) of strings being read in the background

    @functools.cached_property
    def signature(self) -> str:
        """The result cache key: nemo's version and this step's settings."""
        return f"nemo-text-processing=={_nemo_version()}|{self.lang}|{self.input_case}"

    # -- persistent result cache -------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.cache_dir / "nsw_results.sqlite", timeout=30)
        con.execute(
            "CREATE TABLE IF NOT EXISTS nsw (sig TEXT, src TEXT, out TEXT, PRIMARY KEY (sig, src))"
        )
        return con

    def _load(self) -> dict[str, str]:
        if self._memo is None:
            con = self._db()
            try:
                rows = con.execute("SELECT src, out FROM nsw WHERE sig = ?", (self.signature,))
                self._memo = dict(rows.fetchall())
            finally:
                con.close()
        return self._memo

    def flush(self) -> None:
        """Write results computed since the last flush to the SQLite cache."""
        if not self._pending:
            return
        con = self._db()
        try:
            with con:
                con.executemany(
                    "INSERT OR REPLACE INTO nsw (sig, src, out) VALUES (?, ?, ?)",
                    [(self.signature, k, v) for k, v in self._pending.items()],
                )
        finally:
            con.close()
        self._pending.clear()

    # -- nemo -----------------------------------------------------------------------------------
    def normalizer(self):
        """Build (once) nemo's Normalizer from its grammar cache under `cache_dir/nemo_tn`."""
        with self._lock:
            if self._normalizer is None:
                # nemo logs every sentence at INFO and resets its logger's level to INFO on each
                # normalize() call: a filter on the logger outlasts that.
                for name in ("NeMo-text-processing", "nemo_text_processing"):
                    log = logging.getLogger(name)
                    if _QUIET not in log.filters:
                        log.addFilter(_QUIET)
                from nemo_text_processing.text_normalization.normalize import Normalizer

                far = self.cache_dir / "nemo_tn"
                if not grammars_cached(far, self.lang):
                    # minutes with nothing on screen otherwise; a plain line, as the library
                    # configures no logging of its own
                    print(
                        f"building the NSW grammars for {self.lang} (first use, up to about 3 "
                        f"min; cached in {far})",
                        file=sys.stderr,
                        flush=True,
                    )
                far.mkdir(parents=True, exist_ok=True)
                normalizer = Normalizer(
                    input_case=self.input_case, lang=self.lang, cache_dir=str(far)
                )
                if self.lang == "en":
                    self._compact(normalizer, far)
                self._normalizer = normalizer
        return self._normalizer

    def _compact(self, normalizer: Any, far: Path) -> None:
        """nemo's composition of a text with its tagger is nearly all of its time: the same
        best tags from the compacted tagger (nemo_tagger.py), nemo's other steps as they are.
        English only, where the readings were compared with nemo's. (Its verbaliser reads a
        byte at nearly every arc: compacted, it shrank by 2%, so it is left as it is.)"""
        from scoring.normalize import nemo_tagger

        # the archive nemo's English ClassifyFst reads its tagger from (no whitelist)
        tagger = far / f"en_tn_True_deterministic_{self.input_case}__tokenize.far"
        if tagger.is_file():
            fst = normalizer.tagger.fst
            normalizer.find_tags = nemo_tagger.load(tagger, lambda: fst).best

    def _normalize(self, src: str) -> str:
        """nemo's reading of one text. Where a grammar finds no path through a text (pynini's
        FstOpError, a RuntimeError: seen in the Portuguese and Vietnamese grammars on some
        mixed texts, e.g. `$3` in vi) the text is read by num2words instead (numbers only), or
        kept as it is; `self.failures` counts them."""
        try:
            return self.normalizer().normalize(src, verbose=False, punct_post_process=True)
        except RuntimeError:
            self.failures += 1
            return Num2Words(self.lang)(src) if self.lang in NUM2WORDS_ALL else src

    def batch(self, texts: list[str]) -> list[str]:
        """`[self(t) for t in texts]`; one pattern search over all texts when none needs NSW."""
        joined = "\n".join(texts)
        if joined.isascii():  # substring scans are much faster than the class search
            needed = any(c in joined for c in _ASCII_TRIGGERS) or (
                "." in joined and _DOTTED.search(joined) is not None
            )
        else:
            needed = self._needs.search(joined) is not None
        if not needed:
            return list(texts)
        self.join()
        later, self.later = self.later, []
        outs, misses = self._walk(texts)
        if not misses:
            return outs  # every string read before: the walk's readings are the batch's
        self._prefetch(misses, later)
        return [self(t) for t in texts]

    def _prefetch(self, misses: list[str], later: list[str]) -> None:
        """Many strings nemo has not read (a batch of a cold corpus, from `_walk`): read by this
        process and a forked second one side by side, into the result cache the batch then
        reads from (nemo's reading of a string is the same in either). The two take the
        strings in blocks from one shared count, so both stay busy until the last block,
        however the strings' costs fall. The new strings of `later` (`self.later` when the
        batch began) are then read by the second process in the background while this one
        goes on (the alignment, ~4 s of a corpus, has one core otherwise); the next batch,
        or whoever needs them first, joins in (`join`)."""
        import multiprocessing

        workers = self.jobs if self.jobs is not None else min(2, os.cpu_count() or 1)
        if workers < 2 or multiprocessing.current_process().daemon:
            return  # a daemonic pool worker may not start processes
        if len(misses) < POOL_MIN_READS:
            return
        from concurrent.futures import ProcessPoolExecutor

        global _FORKED
        now = set(misses)
        ahead = [s for s in self._walk(later)[1] if s not in now] if later else []
        self.normalizer()  # built once, before the fork: the child shares it
        ctx = multiprocessing.get_context("fork")
        _FORKED = (self, (misses, ahead), (ctx.Value("l", 0), ctx.Value("l", 0)))
        pool = ProcessPoolExecutor(1, mp_context=ctx)
        try:
            first = pool.submit(_read_blocks, 0)
            second = pool.submit(_read_blocks, 1) if ahead else None
            outs, _ = _read_blocks(0)  # this process counts its failures in `self`
            more, failures = first.result()
        except BaseException:
            pool.shutdown(cancel_futures=True)
            _FORKED = None
            raise
        self._store(misses, {**outs, **more}, failures)
        if second is None:
            pool.shutdown()
            _FORKED = None
        else:
            self._ahead = (pool, second)

    def join(self) -> None:
        """The strings `_prefetch` left reading in the background (none: nothing to do): this
        process takes the blocks left, and the readings of both go to the result cache."""
        global _FORKED
        if self._ahead is None:
            return
        pool, second = self._ahead
        self._ahead = None
        try:
            assert _FORKED is not None
            ahead = _FORKED[1][1]
            outs, _ = _read_blocks(1)
            more, failures = second.result()
        finally:
            pool.shutdown()
            _FORKED = None
        self._store(ahead, {**outs, **more}, failures)

    def _store(self, srcs: list[str], outs: dict[int, str], failures: int) -> None:
        """Readings of `srcs` by index (from `_read_blocks`) into the result cache."""
        memo = self._load()
        for k, src in enumerate(srcs):
            memo[src] = self._pending[src] = outs[k]
        self.calls += len(srcs)
        self.failures += failures
        self.flush()

    def _walk(self, texts: list[str]) -> tuple[list[str], list[str]]:
        """The batch walked with a `_read` that reads only the result cache: each text's
        reading where every string it sends was read before (`self(text)`'s, as `_read`
        would find them all there), and the strings nemo has not read, in order, once each
        (which strings are read never depends on a reading)."""
        memo = self._load()
        wanted: dict[str, None] = {}

        def cached(text: str) -> str:
            src = self._source(text)
            out = memo.get(src)
            if out is None:
                wanted[src] = None
                return ""
            return out

        self._read = cached  # type: ignore[method-assign]
        try:
            outs = [self(text) for text in texts]
        finally:
            del self._read
        return outs, list(wanted)

    def __call__(self, text: str) -> str:
        if not self._needs.search(text):
            return text
        if _MARKED.search(text):
            # ALTERNATION's marks (it runs first): each stretch between them is read on its
            # own, so nemo never sees a mark and a branch's number stays in its branch
            parts = _MARKED.split(text)
            return "".join(self(p) if i % 2 == 0 else f" {p} " for i, p in enumerate(parts))
        if self.lang == "en":
            words = text.split()
            if len(words) > PIECE_MIN_WORDS:
                return self._pieces(words)
        return self._read(text)

    def _pieces(self, words: list[str]) -> str:
        """A long text read in pieces (`piece_spans`), the words between them kept as they
        are: the same reading as nemo's over the whole text (docs/SCORING.md) in a fraction
        of the time, and pieces that repeat across texts are read once (the cache)."""
        out: list[str] = []
        last = 0
        for a, b in piece_spans(words, self._needs):
            out += words[last:a]
            out.append(self._read(" ".join(words[a:b])))
            last = b
        out += words[last:]
        return " ".join(out)

    def _source(self, text: str) -> str:
        """What nemo is given for a text, the result cache's key (so a rewrite never meets a
        stale result)."""
        if self.lang == "en":
            return _PLURAL_S.sub("s", text) if "S" in text else text
        # `10 000`: one number (nemo's German grammar reads `zehn null null null`)
        return _GROUPS.sub("", text)

    def _read(self, text: str) -> str:
        """nemo's reading of a text, from the result cache where it was read before."""
        memo = self._load()
        src = self._source(text)
        out = memo.get(src)
        if out is None:
            self.calls += 1
            out = self._normalize(src)
            memo[src] = out
            self._pending[src] = out
            if len(self._pending) >= 500:
                self.flush()
        return out


POOL_MIN_READS = 300  # new strings (~1.4 CPU s of nemo) before a second process pays its start
READ_BLOCK = 32  # strings a process takes at a time (~0.1 s): the two end within about one
# the step, a prefetch's strings (the batch's, those read ahead) and each part's next block
# index (shared): inherited by the forked reader, not pickled
_FORKED: tuple[Nsw, tuple[list[str], list[str]], tuple[Any, Any]] | None = None


def _read_blocks(part: int) -> tuple[dict[int, str], int]:
    """nemo's readings of the strings this process took (by index) of a prefetch's `part`
    (0: the batch's, 1: those read ahead), and how many fell back; blocks taken from the
    part's shared count until none is left."""
    assert _FORKED is not None
    nsw, parts, counters = _FORKED
    srcs, counter = parts[part], counters[part]
    before = nsw.failures
    out: dict[int, str] = {}
    while True:
        with counter.get_lock():
            start = counter.value
            counter.value = start + READ_BLOCK
        if start >= len(srcs):
            return out, nsw.failures - before
        for k in range(start, min(start + READ_BLOCK, len(srcs))):
            out[k] = nsw._normalize(srcs[k])


# A number as num2words reads it: digits with optional groups of three after a space (`10 000`)
# and an optional decimal part after a comma or a point.
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+)(?:([.,])(\d+))?(?!\w)")


class Num2Words:
    """NSW where nemo has no grammar for the language: each number becomes num2words' cardinal
    in the language (decimals read as `<int> <comma word> <digits>` by num2words), nothing
    else (no ordinals, money, times or symbols). Fast, so no cache."""

    name = "NSW-num2words"

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.calls = 0
        self.jobs: int | None = None  # the Nsw interface (fast: read in one process)
        self.later: list[str] = []  # the Nsw interface (nothing read ahead)

    def join(self) -> None:
        """Nothing read ahead (the Nsw interface)."""

    def _number(self, m: re.Match[str]) -> str:
        from num2words import num2words

        whole = re.sub(r"\D", "", m.group(1))
        try:
            if m.group(3) is None:
                return str(num2words(int(whole), lang=self.lang))
            return str(num2words(float(f"{whole}.{m.group(3)}"), lang=self.lang))
        except (NotImplementedError, OverflowError, ValueError, TypeError, IndexError):
            return m.group(0)  # a number num2words cannot read stays as written

    def batch(self, texts: list[str]) -> list[str]:
        """`[self(t) for t in texts]`."""
        return [self(t) for t in texts]

    def flush(self) -> None:
        """Nothing to write (the Nsw interface)."""

    def __call__(self, text: str) -> str:
        if not any(c.isdigit() for c in text):
            return text
        self.calls += 1
        return _NUMBER.sub(self._number, text)
