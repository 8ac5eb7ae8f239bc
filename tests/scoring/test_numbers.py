"""The value of a run of number words (scoring/numbers.py), as the number metrics read it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from scoring.numbers import value


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("thirty", 30),
        ("thirteen", 13),
        ("twenty twenty", 2020),
        ("two thousand twenty", 2020),
        ("two thousand and twenty", 2020),
        ("nineteen oh five", 1905),
        ("two zero", 20),
        ("one hundred twenty three", 123),
        ("one million two hundred thousand", 1_200_000),
        ("three point five", Decimal("3.5")),
        ("third", 3),
        ("2020", 2020),
        ("1,000", 1000),
        ("$5", 5),
    ],
)
def test_readings(words: str, expected: int | Decimal) -> None:
    assert value(words.split()) == expected


def test_words_that_are_no_number() -> None:
    assert value("thirty dollars".split()) is None
    assert value([]) is None
    # a signed written token among groups (an fstalign-preset hypothesis's "-3") is no one number
    assert value(["5", "-3"]) is None and value(["twenty", "-5"]) is None


def test_exponents_and_special_values_are_no_number() -> None:
    # Decimal() reads all of these; as hypothesis tokens they gave 45000 for "4 5e3", a NaN
    # that raised when compared, and an overflow for a huge exponent
    assert value(["4", "5e3"]) is None
    assert value(["nan5", "3"]) is None and value(["snan1"]) is None
    assert value(["1e999999999", "5"]) is None
    assert value(["1_000"]) is None
    assert value(["-3"]) == -3 and value(["2.50"]) == Decimal("2.50")
    assert value([".5"]) == Decimal(".5")
