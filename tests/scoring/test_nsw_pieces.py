"""NSW over long texts in pieces (scoring/normalize/nsw.py `piece_spans`): nemo reads only the
stretches around triggers and whitelist words, and the reading equals nemo's over the whole
text on a real Earnings-21 excerpt (tests/fixtures/earnings21)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT
from scoring.nlp import hypothesis_text, read_nlp
from scoring.normalize.nsw import NEEDS_NSW, PIECE_MIN_WORDS, Nsw, piece_spans

E21 = REPO_ROOT / "tests" / "fixtures" / "earnings21"


@pytest.fixture
def fresh_nsw(cache_dir: Path, tmp_path: Path) -> Nsw:
    """An NSW step with the checkout's compiled grammars (and its compacted tagger, once
    built) and an empty result cache, so every string it reads is counted in `calls`."""
    far = tmp_path / "nemo_tn"
    far.mkdir()
    for path in (cache_dir / "nemo_tn").glob("en_*"):
        shutil.copy2(path, far / path.name)
    return Nsw(tmp_path)


def test_spans_hold_triggers_and_whitelist_words_with_their_context() -> None:
    words = "one two three four five six $5 million seven eight nine ten eleven twelve".split()
    words += "so then we met Mr. Smith who said it went well and then we left".split()
    spans = piece_spans(words, NEEDS_NSW)
    assert [" ".join(words[a:b]) for a, b in spans] == [
        "four five six $5 million seven eight",
        "then we met Mr. Smith who said",
    ]
    plain = "the call went well and everyone agreed on the plan".split()
    assert piece_spans(plain, NEEDS_NSW) == []


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("we moved to Dallas, TX last year", "TX"),  # a state code after a comma
        ("it was built around A. D. nine hundred", "A. D."),  # letters joined by dots
        ("the Atlanta vs Boston game", "vs"),  # a whitelist word
        ("we saw St Mary there", "St"),  # Saint before a name
    ],
)
def test_whitelist_words_are_read_without_a_trigger(text: str, marked: str) -> None:
    words = text.split()
    spans = piece_spans(words, NEEDS_NSW)
    assert spans and all(marked in " ".join(words[a:b]) for a, b in spans)
    assert piece_spans([w for w in words if w not in marked.split()], NEEDS_NSW) == []


def test_long_text_reads_only_its_pieces_and_shares_them(fresh_nsw: Nsw) -> None:
    filler = " ".join(["and then we talked about the weather"] * 12)  # 84 plain words
    text = f"{filler} revenue was $5 million in 2020 {filler}"
    assert len(text.split()) > PIECE_MIN_WORDS
    out = fresh_nsw(text)
    assert "five million dollars in twenty twenty" in out
    assert out.startswith(filler) and out.endswith(filler)
    assert fresh_nsw.calls == 1  # one piece, never the plain words around it
    again = fresh_nsw(f"{filler} {filler} revenue was $5 million in 2020 {filler}")
    assert fresh_nsw.calls == 1 and again.endswith(out[len(filler) :])  # the piece, cached


@pytest.mark.parametrize("side", ["reference", "google"])
def test_pieces_equal_nemo_on_the_whole_excerpt(fresh_nsw: Nsw, scorer, side: str) -> None:
    path = E21 / "4320211.nlp" if side == "reference" else E21 / "google" / "4320211.nlp"
    text = hypothesis_text(read_nlp(path))  # tokens with their punctuation: ~370 words
    assert len(text.split()) > PIECE_MIN_WORDS
    whole = fresh_nsw._normalize(text)  # nemo over the whole text at once
    pieces = fresh_nsw(text)
    assert fresh_nsw.calls >= 3  # it was read in pieces (one whole-text read would be 1)
    # The words scored (the later steps, CASE, PUNC...) are the same. The strings differ in
    # one space on the reference: over the whole text nemo's punctuation realignment
    # (post_process_punct, by counts of each mark) joins `performance.Actual` after the
    # URL's dots became "dot"; a piece holds the URL without that sentence.
    assert scorer.normalize(pieces) == scorer.normalize(whole)
    if side == "google":
        assert pieces == whole
    else:
        assert pieces.replace("performance. Actual", "performance.Actual") == whole


def test_a_batchs_new_strings_read_in_two_processes_equal_one(
    fresh_nsw: Nsw, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Nsw._prefetch`: the excerpt's sentences read cold by one process and by two (the
    threshold lowered so a test-sized batch uses the fork, one string a block so that both
    take some): the same readings, the same strings sent to nemo and stored."""
    import sqlite3

    from scoring.normalize import nsw as nsw_module

    monkeypatch.setattr(nsw_module, "POOL_MIN_READS", 2)
    monkeypatch.setattr(nsw_module, "READ_BLOCK", 1)
    text = hypothesis_text(read_nlp(E21 / "4320211.nlp"))
    texts = [s for s in text.replace("? ", ". ").split(". ") if s]
    two = Nsw(tmp_path / "two")
    (tmp_path / "two").mkdir()
    shutil.copytree(tmp_path / "nemo_tn", tmp_path / "two" / "nemo_tn")
    fresh_nsw.jobs, two.jobs = 1, 2
    assert len(two._walk(texts)[1]) >= 3
    assert two.batch(texts) == fresh_nsw.batch(texts)
    assert two.calls == fresh_nsw.calls >= 3
    fresh_nsw.flush()

    def stored(folder: Path) -> dict[str, str]:
        con = sqlite3.connect(folder / "nsw_results.sqlite")
        try:
            return dict(con.execute("SELECT src, out FROM nsw").fetchall())
        finally:
            con.close()

    assert stored(tmp_path / "two") == stored(tmp_path) != {}
