"""Issue 38, items 4 and low (scoring): numbers in every script's digits, Russian letter names,
and a bound on the pairs the aligner takes (`--unit char` on a 1,000,000-character utterance ran
for tens of minutes: now refused at once, naming it, by ORC-WER's bound, `scoring.align.MAX_CELLS`).

`--lang ar` scored `العدد ١٢٣` against `العدد 123` as TER 0.75: nemo's Arabic grammar reads only
ASCII digits and left `١٢٣` as written (Persian went to num2words, whose `\\d` and `int()` take
any script's digits; nemo's Hindi grammar reads Devanagari digits itself). UNICODE now makes
every decimal digit (category Nd) the ASCII digit of its value, in every language, before NSW
or any other step sees it. The Russian hesitation list removed `эм`, the name of the letter М:
a reference spelling letters lost them.
"""

from __future__ import annotations

import sys
import unicodedata
from functools import cache
from pathlib import Path

import pytest

from scoring import Scorer, ScorerConfig
from scoring.align import MAX_CELLS, PairTooLong, check_pair, levenshtein
from scoring.meeting import ORC_MAX_CELLS
from scoring.normalize import UnicodeForm
from scoring.normalize.itj import load_wordlist

DATA = Path(__file__).resolve().parents[2] / "scoring" / "data"

# The zero of every script's decimal digits (Unicode keeps each script's 0-9 contiguous).
ZEROS = [
    c
    for c in map(chr, range(sys.maxunicode + 1))
    if unicodedata.category(c) == "Nd" and unicodedata.decimal(c) == 0
]


def _written(zero: str, number: str) -> str:
    """`number` (ASCII digits) in the digits of the script whose zero is `zero`."""
    return "".join(chr(ord(zero) + int(d)) for d in number)


@cache
def _scorer(lang: str, nsw: bool = False, cache_dir: str | None = None) -> Scorer:
    return Scorer(ScorerConfig(lang=lang, nsw=nsw, bootstrap=0, cache_dir=cache_dir))


def _counts(scorer: Scorer, ref: str, hyp: str) -> tuple[int, int, int, int]:
    m = scorer.score({"u": ref}, {"u": hyp}).metrics
    return m.n_ref, m.sub, m.dele, m.ins


def test_every_scripts_digits_are_found() -> None:
    assert len(ZEROS) >= 60  # 66 in Python 3.12's Unicode 15
    assert {"0", "\u0660", "\u06f0", "\u0966", "\u0be6", "\u0e50", "\u1040", "\uff10"} <= set(ZEROS)


@pytest.mark.parametrize("form", ["NFC", "NFKC"])
def test_unicode_step_reads_every_decimal_digit_as_its_value(form: str) -> None:
    step = UnicodeForm(form)
    texts = [f"n {_written(z, '9081726354')} n" for z in ZEROS]
    assert [step(t) for t in texts] == ["n 9081726354 n"] * len(ZEROS)
    assert step.batch(texts) == ["n 9081726354 n"] * len(ZEROS)
    assert step("x²") == ("x2" if form == "NFKC" else "x²")  # No (superscript), not Nd


@pytest.mark.parametrize("lang", ["en", "ar", "fa", "hi", "ta", "my", "th", "ru", "zh", "qaa"])
def test_a_number_in_any_scripts_digits_is_the_same_number(lang: str) -> None:
    scorer = _scorer(lang)  # NSW off: the digits themselves must be the same tokens
    want = scorer.normalize("x 1230 y")
    for zero in ZEROS:
        assert scorer.normalize(f"x {_written(zero, '1230')} y") == want, (lang, hex(ord(zero)))


def test_the_issues_arabic_case_without_nsw() -> None:
    assert _counts(_scorer("ar"), "العدد ١٢٣", "العدد 123") == (2, 0, 0, 0)


@pytest.mark.parametrize("lang", ["ru", "fa", "th", "bn", "tr"])
def test_num2words_reads_every_scripts_digits(lang: str) -> None:
    scorer = _scorer(lang, nsw=True)
    for zero in ZEROS:
        assert _counts(scorer, f"a {_written(zero, '1230')}", "a 1230")[1:] == (0, 0, 0), zero


def test_english_nemo_reads_arabic_indic_and_devanagari_digits(cache_dir: Path) -> None:
    en = _scorer("en", nsw=True, cache_dir=str(cache_dir))
    assert en.normalize("number ١٢٣") == en.normalize("number 123")
    assert en.normalize("number 123") == ["number", "one", "hundred", "and", "twenty", "three"]
    assert _counts(en, "room १२", "room twelve") == (2, 0, 0, 0)


@pytest.mark.full
def test_the_issues_arabic_case_through_nemo(cache_dir: Path) -> None:
    ar = _scorer("ar", nsw=True, cache_dir=str(cache_dir))
    # nemo reads 123 as three words: TER was 0.75 (1 substitution, 2 insertions over 2 words)
    assert _counts(ar, "العدد ١٢٣", "العدد 123") == (4, 0, 0, 0)
    assert ar.normalize("العدد ١٢٣") == ar.normalize("العدد مئة وثلاثة وعشرون")


# The names of the Russian letters as they are spelled out (`МВД`: `эм вэ дэ`).
RU_LETTER_NAMES = (
    "а бэ вэ гэ дэ е ё жэ зэ и ка эль эл эм эн о пэ эр эс тэ у эф ха цэ че ша ща ы э ю я"
).split()


def test_russian_letter_names_are_not_hesitations() -> None:
    words = load_wordlist(DATA / "interjections_ru.txt")
    # `э` alone stays: the commonest filler (`э-э`); its letter is rare in speech (the file says)
    assert words & set(RU_LETTER_NAMES) == {"э"}
    ru = _scorer("ru")
    assert _counts(ru, "Эм.", "эм") == (1, 0, 0, 0)  # was an empty reference
    assert _counts(ru, "МВД: эм вэ дэ", "мвд эм вэ дэ") == (4, 0, 0, 0)
    assert ru.normalize("э-э, хм, ну да") == ["ну", "да"]  # the fillers still go


# -- low: a bound on the pairs the aligner takes -------------------------------------------------


@pytest.mark.timeout(120)  # unbounded before: tens of minutes
def test_a_million_character_utterance_is_refused_naming_it(cli, tmp_path: Path) -> None:
    text = ("abcdefghij " * 91_000)[:1_000_000]
    ref, hyp = tmp_path / "ref.tsv", tmp_path / "hyp.tsv"
    ref.write_text(f"short\thello\nhuge\t{text}\n", encoding="utf-8")
    hyp.write_text(f"short\thello\nhuge\t{text}\n", encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = cli("score", ref, hyp, "-o", out, "--unit", "char", "--no-nsw")
    err = err.strip()
    assert code == 2, err
    assert err.splitlines() == [err] and err.startswith("error: utterance 'huge': 1,000,000 ")
    assert f"more than {MAX_CELLS:,}" in err and not out.exists()


def test_the_bound_is_one_constant_and_leaves_long_form_pairs_alone() -> None:
    assert ORC_MAX_CELLS is MAX_CELLS
    check_pair(30_000, 30_000)  # a 3-hour session's words (tests/scoring/test_long.py)
    check_pair(113_000, 113_000)  # about two hours of speech, in characters
    with pytest.raises(PairTooLong, match="too long to align"):
        check_pair(1_000_000, 1_000_000)
    with pytest.raises(PairTooLong):
        levenshtein([6] * 1_000_000, [7] * 1_000_000)  # the speaker assignment's distance too
