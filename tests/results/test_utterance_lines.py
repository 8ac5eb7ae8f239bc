"""`utterance_lines` built in C (scoring/_fast.pyx) against the Python writer (the fallback
where the extension is not built, `reports.COMPILED = False`) and against `json.dumps` of the
record: the same text, character for character, on seeded random utterances whose tokens and
raw texts hold non-ASCII letters, emoji, every control character, quotes and backslashes, with
every edit code, optional reference words, DAE alternatives, empty sides, missing hypotheses,
durations and failure reasons."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from asrbench.results import reports
from asrbench.results.reports import utterance_lines, utterance_record, write_utterances
from scoring.metrics import UtteranceResult

pytestmark = pytest.mark.skipif(
    reports._fast is None, reason="scoring/_fast.pyx not built (pip install -e ., make ext)"
)

# What a token or a raw text is drawn from: ASCII, JSON's escapes (every control character,
# '"', '\\'), DEL (not escaped), Latin, CJK, an emoji (4 UTF-8 bytes), a combining accent
ALPHABET = "abcxyz019 '-" + "".join(map(chr, range(32))) + '"\\\x7f' + "éßЖ我爱😀\u0301"


def _token(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return rng.choice(("the", "a", "cat", "naïve", "我爱", "x" * rng.randrange(1, 30)))
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 20)))


def _utterance(rng: random.Random, uid: str) -> UtteranceResult:
    ref: list[str] = []
    hyp: list[str] = []
    codes = []
    for _ in range(rng.choice((0, 1, 3, 25))):
        op = rng.choice("CCCCSDIOo")
        codes.append(op)
        if op in "CSDO":
            ref.append(_token(rng))
        if op == "C":
            hyp.append(ref[-1])
        elif op in "SIo":
            hyp.append(_token(rng))
    alternatives = [
        (rng.randrange(5), rng.randrange(5, 10), _token(rng), _token(rng))
        for _ in range(rng.choice((0, 0, 1, 3)))
    ]
    optional = [rng.random() < 0.2 for _ in ref] if rng.random() < 0.3 else None
    return UtteranceResult(
        uid, ref, hyp, "".join(codes), rng.random() < 0.1, alternatives, optional=optional
    )


def _corpus(seed: int, n: int) -> tuple[list[UtteranceResult], dict, dict, dict, dict]:
    rng = random.Random(seed)
    utts = [_utterance(rng, f"utt{i}{_token(rng)}") for i in range(n)]
    refs, hyps, durations, failed = {}, {}, {}, {}
    for u in utts:
        # the raw text as scored, or another text (what normalisation changed)
        refs[u.id] = u.ref_norm if rng.random() < 0.5 else _token(rng) + " " + _token(rng)
        if rng.random() < 0.9:
            hyps[u.id] = " ".join(u.hyp) if rng.random() < 0.5 else _token(rng)
        if rng.random() < 0.3:
            durations[u.id] = rng.choice((1, 2.5, 0.1 + 0.2, 1e-7, 12345.678))
        if rng.random() < 0.1:
            failed[u.id] = _token(rng)
    return utts, refs, hyps, durations, failed


def _lines(compiled: bool, monkeypatch: pytest.MonkeyPatch, *args: object) -> list[str]:
    monkeypatch.setattr(reports, "COMPILED", compiled)
    return list(utterance_lines(*args))  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(6))
def test_compiled_lines_equal_python_and_json_dumps(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    utts, refs, hyps, durations, failed = _corpus(seed, 300)
    extra = (durations, failed) if seed % 2 else ()  # ops/score passes neither
    compiled = _lines(True, monkeypatch, utts, refs, hyps, *extra)
    python = _lines(False, monkeypatch, utts, refs, hyps, *extra)
    assert compiled == python
    assert len(compiled) == len(utts)
    for line, u in zip(compiled, utts, strict=True):
        more = (durations.get(u.id), failed.get(u.id)) if extra else ()
        record = utterance_record(u, refs[u.id], hyps.get(u.id), *more)
        assert line == json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"


def test_compiled_lines_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts below, at and above a multiple of the lines a compiled call builds."""
    utts, refs, hyps, _, _ = _corpus(7, 9)
    monkeypatch.setattr(reports, "_COMPILED_LINES", 4)
    for n in (0, 3, 4, 8, 9):
        compiled = _lines(True, monkeypatch, utts[:n], refs, hyps)
        assert compiled == _lines(False, monkeypatch, utts[:n], refs, hyps), n


def test_lone_surrogate_fails_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A text UTF-8 cannot hold: the same lines, and the file's encoding fails as it did."""
    utts, refs, hyps, _, _ = _corpus(8, 5)
    hyps[utts[2].id] = "bad \udc80 text"
    compiled = _lines(True, monkeypatch, utts, refs, hyps)
    assert compiled == _lines(False, monkeypatch, utts, refs, hyps)
    with pytest.raises(UnicodeEncodeError):
        write_utterances(tmp_path / "u.jsonl", iter(compiled))


def test_fields_of_other_types_are_written_by_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens in a tuple, alternatives as lists (as read back from JSON): the same lines."""
    utts, refs, hyps, _, _ = _corpus(9, 6)
    utts[1].ref = tuple(utts[1].ref)  # type: ignore[assignment]
    as_lists = [list(a) for a in utts[3].alternatives] or [[0, 1, "a", "b"]]
    utts[3].alternatives = as_lists  # type: ignore[assignment]
    compiled = _lines(True, monkeypatch, utts, refs, hyps)
    assert compiled == _lines(False, monkeypatch, utts, refs, hyps)
