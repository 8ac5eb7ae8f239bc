"""Issue 39 item 5: the first NSW use of a language builds nemo's grammars (2-160 s) and says so
on stderr while it builds; with the grammars cached, nothing is said."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring.normalize.nsw import Nsw, grammars_cached

# The files nemo-text-processing writes for English, and for Hindi (whose verbalizer file is
# written under English's name, so it must not count as English's grammar).
EN_FILES = (
    "en_tn_True_deterministic_cased__tokenize.far",
    "en_tn_True_deterministic_verbalizer.far",
    "en_tn_post_processing.far",
)
HI_FILES = (
    "hi_tn_True_deterministic_cased__tokenize.far",
    "en_tn_True_deterministic_verbalizer.far",
    "hi_tn_post_processing.far",
)


def _folder(tmp_path: Path, names: tuple[str, ...]) -> Path:
    far = tmp_path / "nemo_tn"
    far.mkdir(parents=True)
    for name in names:
        (far / name).write_bytes(b"far")
    return far


def test_grammars_cached_reads_the_folder(tmp_path: Path) -> None:
    assert not grammars_cached(tmp_path / "absent", "en")
    assert not grammars_cached(_folder(tmp_path / "empty", ()), "en")
    assert grammars_cached(_folder(tmp_path / "en", EN_FILES), "en")
    hindi = _folder(tmp_path / "hi", HI_FILES)
    assert grammars_cached(hindi, "hi") and not grammars_cached(hindi, "en")
    # Japanese's tagger grammar is written under zh's name
    japanese = _folder(tmp_path / "ja", ("zh_tn_True_deterministic__tokenize.far",))
    assert grammars_cached(japanese, "ja")


def test_the_build_is_announced_once_then_the_cache_is_silent(tmp_path: Path, capfd) -> None:
    """A real build of the quickest grammar (Japanese, about 2 s), then a warm load."""
    pytest.importorskip("nemo_text_processing")
    capfd.readouterr()
    first = Nsw(tmp_path, "ja")
    first("3")
    err = capfd.readouterr().err
    lines = [ln for ln in err.splitlines() if "building the NSW grammars" in ln]
    assert lines == [
        f"building the NSW grammars for ja (first use, up to about 3 min; cached in "
        f"{tmp_path / 'nemo_tn'})"
    ], err
    assert grammars_cached(tmp_path / "nemo_tn", "ja")

    warm = Nsw(tmp_path, "ja")
    warm.normalizer()
    assert "building the NSW grammars" not in capfd.readouterr().err
