r"""Normalisation's compiled parts (`scoring/_fast.pyx`) against the Python they replace where
the extension is not built. A batch's tokens (`split_lines`, used by `Pipeline.batch` for
ASCII text) against `str.split` and `dict.setdefault`: the same lines of the same tokens, one
string object per distinct token, `same` filled in the same order. PUNC's blanket removal on
ASCII text (`ascii_punct`) against `regex`'s `\p{P}+`. On seeded random text of every ASCII
whitespace, control characters, quotes and backslashes; non-ASCII text left to Python."""

from __future__ import annotations

import random

import pytest

from scoring import normalize
from scoring.normalize import Case, Itj, Pipeline, Punc, UkUs
from scoring.normalize import punc as punc_module
from scoring.scorer import DATA

_fast = normalize._fast
pytestmark = pytest.mark.skipif(
    _fast is None, reason="scoring/_fast.pyx not built (pip install -e ., make ext)"
)

# str.split()'s ASCII whitespace, the line break, other control characters, quotes
ALPHABET = "ab c\n\t\x0b\x0c\r\x1c\x1d\x1e\x1f \x00\x01\x7fx'\"\\"


def _python(text: str, same: dict[str, str]) -> list[list[str]]:
    keep = same.setdefault
    return [list(map(keep, t, t)) for t in map(str.split, text.split("\n"))]


def test_split_lines_equals_str_split() -> None:
    rng = random.Random(0)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(60))) for _ in range(3000)]
    # a table grown many times: thousands of distinct tokens
    texts.append("\n".join(f"w{rng.randrange(10**5)} x{rng.randrange(9)}" for _ in range(5000)))
    for text in texts:
        same_py: dict[str, str] = {"b": "b"}
        same_c: dict[str, str] = {"b": "b"}
        lines = _fast.split_lines(text, same_c)
        assert lines == _python(text, same_py)
        assert list(same_c) == list(same_py)
        assert all(tok is same_c[tok] for line in lines for tok in line)


def test_split_lines_leaves_other_text_to_python() -> None:
    assert _fast.split_lines("café au lait", {}) is None
    assert _fast.split_lines("", {}) == [[]]


def test_pipeline_batch_with_and_without_compiled_split(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(1)
    words = ["The", "colour,", "um", "Don't", "a\tb", "x\x1fy", '"q"', "back\\slash", "naïve"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randrange(8))) for _ in range(300)]
    ascii_texts = [t for t in texts if t.isascii()]

    def pipe() -> Pipeline:
        return Pipeline(
            [Case(), Punc()], [Itj(DATA / "interjections.txt"), UkUs(DATA / "uk_us.tsv")]
        )

    for batch in (texts, ascii_texts):
        compiled = pipe().batch(batch)
        monkeypatch.setattr(normalize, "_fast", None)
        assert compiled == pipe().batch(batch) == [pipe()(t) for t in batch]
        monkeypatch.setattr(normalize, "_fast", _fast)


def test_ascii_punct_equals_the_pattern() -> None:
    pattern = punc_module._PUNCT
    for c in range(128):  # every ASCII character alone and in a run
        for text in (chr(c), f"a{chr(c) * 3}b"):
            assert _fast.ascii_punct(text) == pattern.sub(" ", text), hex(c)
    rng = random.Random(2)
    for _ in range(3000):
        text = "".join(chr(rng.randrange(128)) for _ in range(rng.randrange(40)))
        assert _fast.ascii_punct(text) == pattern.sub(" ", text)
    assert _fast.ascii_punct("«a»") is None


def test_punc_with_and_without_compiled_removal(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    words = ["Don't", "3.5", "1,000", "story-teller", "a--b", "(x)", "\x01", "q?!", "end."]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randrange(8))) for _ in range(300)]
    for hyphen in ("space", "keep", "join"):
        compiled = [Punc(hyphen).strip(t) for t in texts]
        monkeypatch.setattr(punc_module, "_fast", None)
        assert compiled == [Punc(hyphen).strip(t) for t in texts]
        monkeypatch.setattr(punc_module, "_fast", _fast)
