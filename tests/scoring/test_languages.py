"""The language registry (scoring/languages.py) and the script steps (scoring/normalize/script.py):
tags resolve to profiles, malformed tags are refused, unknown ones fall back to the neutral steps,
and each step does what its docstring says on the characters it exists for."""

from __future__ import annotations

import pytest

from scoring import Scorer, ScorerConfig
from scoring.errors import ScoringError
from scoring.languages import nsw_languages, resolve
from scoring.normalize.script import Diacritics, Elision, Fold, Geresh


@pytest.mark.parametrize(
    ("tag", "canonical", "language", "script", "unit", "known"),
    [
        ("es", "es", "es", "Latn", "word", True),
        ("es-MX", "es-MX", "es", "Latn", "word", True),
        ("pt_br", "pt-BR", "pt", "Latn", "word", True),  # POSIX separator and case
        ("ZH-hans", "zh-Hans", "zh", "Hans", "mixed", True),
        ("sr-Latn", "sr-Latn", "sr", "Latn", "word", True),  # the tag's script wins
        ("sr", "sr", "sr", "Cyrl", "word", True),
        ("es-419", "es-419", "es", "Latn", "word", True),
        ("ja", "ja", "ja", "Jpan", "char", True),
        ("th-TH", "th-TH", "th", "Thai", "char", True),
        ("my", "my", "my", "Mymr", "char", True),
        ("ko", "ko", "ko", "Kore", "word", True),  # Korean separates words by spaces
        ("qaa", "qaa", "qaa", None, "word", False),  # private-use language: neutral steps
        ("xyz-Thai", "xyz-Thai", "xyz", "Thai", "char", False),  # unknown, unspaced script
        ("de-CH-1996", "de-CH-1996", "de", "Latn", "word", True),  # variant
    ],
)
def test_tags_resolve(tag, canonical, language, script, unit, known) -> None:
    p = resolve(tag)
    assert (p.tag, p.language, p.script, p.unit, p.known) == (
        canonical,
        language,
        script,
        unit,
        known,
    )


@pytest.mark.parametrize("tag", ["", "e", "english", "en-", "en--US", "fr-CA-", "123", "en US"])
def test_malformed_tags_are_refused(tag: str) -> None:
    with pytest.raises(ScoringError, match="not a BCP-47 tag"):
        ScorerConfig(lang=tag, nsw=False)


def test_profiles_conventions() -> None:
    assert resolve("tr").case == resolve("az").case == "turkic"
    assert resolve("de").case == "fold"
    assert resolve("en").case == resolve("zh").case == "lower"  # as before the registry
    assert resolve("fr").apostrophe == resolve("it").apostrophe == "elision"
    assert resolve("en").apostrophe == resolve("es").apostrophe == "keep"
    assert "l" in resolve("fr-CA").elisions and "dell" in resolve("it").elisions
    assert resolve("es").elisions == ()
    assert resolve("en").legacy and resolve("zh-Hant").legacy and not resolve("fr").legacy
    # NSW grammars: the NSW step declares its languages; English always has one.
    assert "en" in nsw_languages() and resolve("en").nsw
    assert resolve("qaa").nsw is False


def test_data_files_per_language() -> None:
    """English and Chinese keep their curated files; other languages get the neutral markers
    and their own fillers where a list exists."""
    en, zh, fr, el = (ScorerConfig(lang=x, nsw=False) for x in ("en", "zh", "fr-CA", "el"))
    assert en.data_file("alternatives").name == "alternatives_en.txt"
    assert zh.data_file("interjections").name == "fillers_zh.txt"
    assert fr.data_file("interjections").name == "interjections_fr.txt"
    assert fr.data_file("uk_us") is None and el.data_file("interjections") is None
    assert fr.data_file("nonspeech_markers").name == el.data_file("nonspeech_markers").name


@pytest.mark.parametrize("lang", ["fr", "es", "de", "it", "pt", "ru"])
def test_filler_lists_hold_no_word_and_work(lang: str) -> None:
    """Each list's entries are single lower-case tokens as ITJ sees them (after CASE and PUNC),
    none of them a meaningful interjection named in the file's header; a filler is dropped
    from both sides."""
    from scoring.normalize.itj import load_wordlist

    cfg = ScorerConfig(lang=lang, nsw=False, bootstrap=0)
    words = load_wordlist(cfg.data_file("interjections"))
    scorer = Scorer(cfg)
    for w in words:
        assert scorer.pipeline.text(w) == w  # already as CASE and PUNC leave it
    assert not words & {"ah", "oh", "eh", "ben", "bon", "este", "é", "ну", "а"}
    filler = sorted(words)[0]
    assert scorer.normalize(f"{filler} ok") == ["ok"]


def test_pipelines_per_language() -> None:
    """The steps this registry decides, in pipeline order (other steps left out)."""
    mine = ("INVISIBLE", "UNICODE", "NONSPEECH", "FW", "CASE", "DIACRITICS", "ELISION", "GERESH")
    mine += ("PUNC", "ITJ", "UK-US")

    def steps(lang: str, **kw) -> list[str]:
        names = Scorer(ScorerConfig(lang=lang, nsw=False, bootstrap=0, **kw)).pipeline.names
        return [n for n in names if n in mine]

    neutral = ["INVISIBLE", "UNICODE", "NONSPEECH", "CASE", "PUNC"]
    assert steps("en") == neutral + ["ITJ", "UK-US"]
    assert steps("zh") == ["INVISIBLE", "UNICODE", "NONSPEECH", "FW", "CASE", "PUNC", "ITJ"]
    assert steps("el") == steps("qaa") == neutral
    assert steps("es") == neutral + ["ITJ"]
    assert steps("fr") == neutral[:4] + ["ELISION", "PUNC", "ITJ"]
    assert steps("he") == neutral[:4] + ["GERESH", "PUNC"]
    assert steps("de", diacritics="strip") == neutral[:4] + ["DIACRITICS", "PUNC", "ITJ"]


def test_config_records_language_and_diacritics() -> None:
    """English and Chinese configurations are as before (their hashes unchanged); other
    languages record their profile; `diacritics` is recorded when not the default."""
    en = Scorer(ScorerConfig(nsw=False, bootstrap=0)).config_dict()
    assert "language" not in en and "diacritics" not in en
    fr = Scorer(ScorerConfig(lang="fr-CA", nsw=False, bootstrap=0, diacritics="strip"))
    cfg = fr.config_dict()
    assert cfg["lang"] == "fr-CA" and cfg["diacritics"] == "strip"
    assert cfg["language"]["language"] == "fr" and cfg["language"]["apostrophe"] == "elision"
    with pytest.raises(ScoringError, match="diacritics"):
        ScorerConfig(diacritics="remove")


def test_fold_is_right_where_casefold_and_lower_are_not() -> None:
    assert "İSTANBUL".lower() == "i\u0307stanbul"  # lower() leaves a stray combining dot
    assert Fold(turkic=True)("İSTANBUL IRMAK") == "istanbul ırmak"
    assert Fold()("IRMAK") == "irmak"  # outside Turkish and Azeri, I is i
    assert Fold()("STRASSE Straße ẞ") == "strasse strasse ss"
    assert Fold()("ΟΔΟΣ οδος") == "οδοσ οδοσ"
    assert Fold()("ΐ") == "\u0390"  # casefold decomposes it; Fold composes again (NFC)


def test_elision() -> None:
    fr = Elision(resolve("fr").elisions)
    assert fr("l'homme qu'il jusqu'à aujourd'hui") == "l' homme qu' il jusqu' à aujourd'hui"
    assert fr("L’Homme") == "L' Homme"  # typographic apostrophe, any case
    it = Elision(resolve("it").elisions)
    assert it("dell'anno all'utente un'amica") == "dell' anno all' utente un' amica"
    assert it("l'") == "l'"  # nothing after it: not an elision


def test_geresh() -> None:
    assert Geresh()('צה״ל צה"ל ג׳ירפה') == "צהל צהל גירפה"
    assert Geresh()('"שלום"') == '"שלום"'  # quotes around a word are PUNC's to remove


def test_diacritics_strip_only_optional_marks() -> None:
    strip = Diacritics()
    assert strip("Café Ærø Łódź") == "Cafe Ærø Łodz"  # ø, ł, Æ do not decompose: kept
    assert strip("ёлка йод Ё") == "елка йод Е"  # й is a letter of its own
    assert strip("ποιός") == "ποιος"
    assert strip("كَتَبَ") == "كتب"
    assert strip("שָׁלוֹם") == "שלום"
    for text in ("हिन्दी", "ไม่", "வீட்டுக்கு", "ខ្ញុំ"):  # vowel signs, viramas, tone marks
        assert strip(text) == text


def test_punc_treats_marks_as_word_characters_outside_english() -> None:
    """हिंदी-भाषी ends its first half in a vowel sign (ी, category Mc): for Hindi PUNC's hyphen
    modes see a hyphen between two words; the English pipeline's PUNC (unchanged) does not."""
    word = "हिंदी-भाषी"

    def tokens(lang: str, hyphen: str) -> list[str]:
        cfg = ScorerConfig(lang=lang, nsw=False, bootstrap=0, hyphen=hyphen)
        return Scorer(cfg).normalize(word)

    assert tokens("hi", "keep") == [word]
    assert tokens("hi", "join") == ["हिंदीभाषी"]
    assert tokens("hi", "space") == ["हिंदी", "भाषी"]
    assert tokens("en", "keep") == ["हिंदी", "भाषी"]  # as before: `re`'s \w holds no marks


def test_fillers_still_match_with_diacritics_stripped() -> None:
    """German `äh` is `ah` once DIACRITICS has run: ITJ's list is stripped alike."""
    scorer = Scorer(ScorerConfig(lang="de", nsw=False, bootstrap=0, diacritics="strip"))
    assert scorer.normalize("Äh, schön") == ["schon"]


@pytest.mark.parametrize("lang", ["fr", "tr", "he", "el", "hi"])
def test_batch_equals_one_text_at_a_time(lang: str) -> None:
    """The script steps are batchable (Pipeline.batch joins texts by newlines): same tokens."""
    texts = ["L'homme d'État", "İSTANBUL'DA", 'צה"ל\nהודיע', "ΟΔΟΣ ποιός;", "हिंदी-भाषी।", ""]
    scorer = Scorer(ScorerConfig(lang=lang, nsw=False, bootstrap=0, diacritics="strip"))
    assert scorer.pipeline.batch(texts) == [scorer.pipeline(t) for t in texts]
