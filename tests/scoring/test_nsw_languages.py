"""NSW per language: nemo's grammar where it builds, num2words elsewhere, none otherwise.

Only the French grammar is compiled in `make test` (about 50 s on a fresh machine, then cached in
the checkout's cache folder like the English one); the other nemo languages are `full`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring import Scorer, ScorerConfig
from scoring.dae import read_rules
from scoring.errors import ScoringError
from scoring.normalize.nsw import (
    NEMO_LANGUAGES,
    NUM2WORDS_LANGUAGES,
    Nsw,
    Num2Words,
    nsw_backend,
    nsw_step,
)

DATA = Path(__file__).resolve().parents[2] / "scoring" / "data"


def _counts(scorer: Scorer, ref: str, hyp: str) -> tuple[int, int, int]:
    u = scorer.score({"u": ref}, {"u": hyp}).utterances[0]
    return u.sub, u.ins, u.dele


def _scorer(lang: str, cache_dir: Path, **opts) -> Scorer:
    return Scorer(ScorerConfig(lang=lang, cache_dir=str(cache_dir), bootstrap=0, **opts))


def test_backends_follow_the_installed_packages() -> None:
    import num2words
    from nemo_text_processing.text_normalization import normalize

    nemo_dir = Path(normalize.__file__).parent
    assert all((nemo_dir / lang).is_dir() for lang in NEMO_LANGUAGES)
    assert set(NUM2WORDS_LANGUAGES) <= set(num2words.CONVERTER_CLASSES)
    assert not set(NEMO_LANGUAGES) & set(NUM2WORDS_LANGUAGES)
    assert [nsw_backend(t) for t in ("en", "fr-CA", "es_MX", "ru", "pl", "zh", "sw")] == [
        "nemo",
        "nemo",
        "nemo",
        "num2words",
        "num2words",
        None,
        None,
    ]


def test_steps_are_built_and_recorded(tmp_path: Path) -> None:
    assert isinstance(nsw_step("en", tmp_path), Nsw)
    assert isinstance(nsw_step("ru", None), Num2Words)  # num2words needs no cache
    assert nsw_step("sw", None) is None
    steps = {
        lang: Scorer(ScorerConfig(lang=lang, cache_dir=str(tmp_path))).config_dict()["steps"]
        for lang in ("fr", "ru", "sw")
    }
    assert "NSW" in steps["fr"]
    assert "NSW-num2words" in steps["ru"]
    assert not [s for s in steps["sw"] if s.startswith("NSW")]  # Swahili: none, and no error


def test_russian_digits_match_spelled_numbers(cache_dir: Path) -> None:
    # the example: `Нажмите 1` / `Нажмите один`
    ru = _scorer("ru", cache_dir)
    assert _counts(ru, "Нажмите 1", "Нажмите один") == (0, 0, 0)
    assert _counts(ru, "Нажмите 2, затем 10 000", "нажмите два затем десять тысяч") == (0, 0, 0)
    assert _counts(ru, "Нажмите 1", "Нажмите два") == (1, 0, 0)  # a wrong number stays wrong
    assert _counts(_scorer("ru", cache_dir, nsw=False), "Нажмите 1", "Нажмите один") == (1, 0, 0)


def test_num2words_reads_decimals_and_groups_in_the_language() -> None:
    pl = Num2Words("pl")
    assert pl("Mam 22 lata i 3,5 kg") == "Mam dwadzieścia dwa lata i trzy przecinek pięć kg"
    assert pl("10 000 zł") == "dziesięć tysięcy zł"
    assert pl("bez liczb") == "bez liczb"


@pytest.fixture(scope="module")
def fr(cache_dir: Path) -> Scorer:
    return _scorer("fr", cache_dir)


def test_french_digits_are_spelled_in_french(fr: Scorer) -> None:
    assert _counts(
        fr, "Pour effacer ce message, appuyez sur 7.", "pour effacer ce message appuyez sur sept"
    ) == (0, 0, 0)
    # never in English
    assert _counts(fr, "appuyez sur 7", "appuyez sur seven") == (1, 0, 0)
    # hyphenated number words: PUNC splits the hyphen on both sides (`vingt-deux` = `vingt deux`)
    assert _counts(fr, "le 22 mai", "le vingt-deux mai") == (0, 0, 0)
    assert _counts(fr, "le 22 mai", "le vingt deux mai") == (0, 0, 0)
    assert _counts(fr, "15 %", "quinze pour cent") == (0, 0, 0)
    # nemo writes every 1 as `un`; the speaker says `une` before a feminine noun
    # (alternatives_fr.txt: `une > un`), and a wrong gender the other way stays wrong
    assert _counts(fr, "appuyez 1 fois", "appuyez une fois") == (0, 0, 0)
    assert _counts(fr, "appuyez une fois", "appuyez un fois") == (1, 0, 0)


def test_directed_rules_read_one_way_only(tmp_path: Path) -> None:
    rules = tmp_path / "alternatives.txt"
    rules.write_text("# a directed rule, then a plain one\nuna > un\nok|okay\n", encoding="utf-8")
    assert read_rules(rules) == [(2, ["una", "un"], True), (3, ["ok", "okay"], False)]
    es = Scorer(ScorerConfig(lang="es", nsw=False, bootstrap=0, alternatives=str(rules)))
    assert _counts(es, "pulse un", "pulse una") == (0, 0, 0)  # the form NSW cannot choose
    assert _counts(es, "una plataforma", "un plataforma") == (1, 0, 0)  # a wrong gender
    assert _counts(es, "ok gracias", "okay gracias") == _counts(es, "okay", "ok") == (0, 0, 0)
    bad = tmp_path / "bad.txt"
    bad.write_text("a > b > c\n", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"bad.txt:1: .*exactly two"):
        read_rules(bad)


@pytest.mark.full
@pytest.mark.parametrize("lang", [x for x in NEMO_LANGUAGES if x not in ("en", "fr")])
def test_every_nemo_grammar_builds_and_reads_digits(lang: str, cache_dir: Path) -> None:
    # the spoken form of `2` in each language, as nemo writes it
    two = {
        "ar": "اثنان", "de": "zwei", "es": "dos", "hi": "दो", "hu": "kettő", "hy": "երկու",
        "it": "due", "ja": "二", "ko": "이", "pt": "dois", "sv": "två", "vi": "hai",
    }[lang]  # fmt: skip
    scorer = _scorer(lang, cache_dir)
    assert _counts(scorer, "2", two) == (0, 0, 0)
    assert sum(_counts(scorer, "2", "two")) > 0  # never read in English


@pytest.mark.full
def test_spanish_digits_never_in_english(cache_dir: Path) -> None:
    es = _scorer("es", cache_dir)
    assert _counts(es, "Pulse 1 para continuar", "pulse uno para continuar") == (0, 0, 0)
    assert _counts(es, "Pulse 1 para continuar", "pulse one para continuar") == (1, 0, 0)
    # DAE (alternatives_es.txt): nemo reads a lone `1` as `un`; `uno` is the same number
    assert _counts(es, "Marque 21", "marque veintiuno") == (0, 0, 0)


@pytest.mark.parametrize("path", sorted(DATA.glob("alternatives_*.txt")), ids=lambda p: p.name)
def test_alternatives_files_parse(path: Path) -> None:
    rules = read_rules(path)
    assert rules  # every file holds at least one rule, each of two or more forms
    assert all(len(forms) >= 2 for _, forms, _ in rules)
    # each language's list loads with its scorer (its forms normalised like the text)
    lang = path.stem.split("_", 1)[1]
    scorer = Scorer(ScorerConfig(lang=lang, nsw=False, bootstrap=0))
    assert scorer.alternatives is not None and len(scorer.alternatives) == len(rules)


@pytest.mark.full
def test_a_text_nemo_cannot_read_goes_to_num2words(cache_dir: Path) -> None:
    # nemo's Vietnamese grammar has no path through `$3` (pynini FstOpError)
    step = nsw_step("vi", cache_dir)
    assert isinstance(step, Nsw)
    assert step("giá $3") == "giá $ba"
    assert step.failures == 1


@pytest.mark.full
def test_german_groups_and_compounds(cache_dir: Path) -> None:
    de = _scorer("de", cache_dir)
    # `10 000` is one number (nemo alone reads `zehn null null null`); nemo writes
    # `zehn tausend`, the model `zehntausend`: COMPOUNDS joins them
    assert _counts(de, "10 000 Euro", "zehntausend Euro") == (0, 0, 0)
    assert _counts(de, "Drücken Sie 22", "drücken sie zweiundzwanzig") == (0, 0, 0)
    assert _counts(de, "1 Minute", "eine Minute") == (0, 0, 0)  # alternatives_de.txt
