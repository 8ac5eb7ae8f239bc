"""NSW: verbalise non-standard words (numbers, money, dates, times, measures, ordinals,
fractions, spoken symbols, URLs and e-mail addresses, dotted abbreviations) with
nemo-text-processing's English Normalizer.

The Normalizer runs at ~100 sentences/s and takes 30-70 s to build its grammars the first time,
so this step (1) only sends strings that hold something it verbalises (`NEEDS_NSW`: a digit, a
spoken symbol, or a dot between two word characters as in `www.asterisk.org`, `A.M.`,
`e.g.`), (2) keeps every result in a persistent SQLite cache keyed by the Normalizer's version
and settings, and (3) builds the Normalizer lazily, from its own grammar cache, only when a
string is not cached yet.
"""

from __future__ import annotations

import functools
import logging
import re
import sqlite3
import threading
from pathlib import Path

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
        self.input_case = input_case
        self._normalizer = None
        self._lock = threading.Lock()
        self._memo: dict[str, str] | None = None
        self._pending: dict[str, str] = {}
        self.calls = 0  # strings actually sent to nemo (for throughput reports)

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
                far.mkdir(parents=True, exist_ok=True)
                self._normalizer = Normalizer(
                    input_case=self.input_case, lang=self.lang, cache_dir=str(far)
                )
        return self._normalizer

    def batch(self, texts: list[str]) -> list[str]:
        """`[self(t) for t in texts]`; one pattern search over all texts when none needs NSW."""
        joined = "\n".join(texts)
        if joined.isascii():  # substring scans are much faster than the class search
            needed = any(c in joined for c in _ASCII_TRIGGERS) or (
                "." in joined and _DOTTED.search(joined) is not None
            )
        else:
            needed = NEEDS_NSW.search(joined) is not None
        if not needed:
            return list(texts)
        return [self(t) for t in texts]

    def __call__(self, text: str) -> str:
        if not NEEDS_NSW.search(text):
            return text
        memo = self._load()
        # The cache is keyed by what nemo is given, so a rewrite never meets a stale result.
        src = _PLURAL_S.sub("s", text) if "S" in text else text
        out = memo.get(src)
        if out is None:
            self.calls += 1
            out = self.normalizer().normalize(src, verbose=False, punct_post_process=True)
            memo[src] = out
            self._pending[src] = out
            if len(self._pending) >= 500:
                self.flush()
        return out
