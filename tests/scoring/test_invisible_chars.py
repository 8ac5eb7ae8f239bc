"""Issue 30 item 6: what a reader cannot see is not a word and not an error.

Decomposed `café` against composed, a zero-width space, a right-to-left mark and a terminal colour
code were each scored as errors (TER 0.25 to 2.5). INVISIBLE and UNICODE (NFC or NFKC) remove
them, as named, recorded, switchable steps, through the library and through `ops/score`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT
from scoring import Scorer, ScorerConfig

OPS_SCORE = REPO_ROOT / "ops" / "score"
REF = {"cafe": "café au lait", "zwsp": "hello world", "rlm": "hello world", "ansi": "the red house"}
# The same words, as a screen shows them, with invisible differences.
HYP = {
    "cafe": "cafe\u0301 au lait",
    "zwsp": "hel\u200blo\u200b world",
    "rlm": "\u200fhello world\u200e",
    "ansi": "the \x1b[31mred\x1b[0m house",
}


def _tsv(path: Path, texts: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}\t{v}\n" for k, v in texts.items()), encoding="utf-8")
    return path


def _plain(**kw: object) -> Scorer:
    return Scorer(ScorerConfig(nsw=False, itj=False, ukus=False, dae=False, bootstrap=0, **kw))


@pytest.mark.parametrize("key", list(REF))
def test_invisible_differences_are_not_errors(key: str) -> None:
    result = _plain().score({key: REF[key]}, {key: HYP[key]})
    u = result.utterances[0]
    assert (u.errors, u.ref, u.hyp) == (0, REF[key].split(), REF[key].split())


def test_the_steps_are_named_recorded_and_switchable() -> None:
    on = _plain()
    assert on.pipeline.names[:2] == ["INVISIBLE", "UNICODE"]
    cfg = on.config_dict()
    assert (cfg["invisible"], cfg["unicode"], cfg["unicode_form"]) == (True, True, "NFC")
    assert cfg["steps"][:2] == ["INVISIBLE", "UNICODE"]
    off = _plain(invisible=False, unicode=False)
    assert "INVISIBLE" not in off.pipeline.names and "UNICODE" not in off.pipeline.names
    errors = {k: off.score({k: REF[k]}, {k: HYP[k]}).utterances[0].errors for k in REF}
    assert all(errors.values()), errors  # off: the old behaviour, each one an error
    nfkc = _plain(unicode_form="NFKC")
    assert nfkc.pipeline.names[:2] == ["INVISIBLE", "UNICODE"]
    assert nfkc.config_dict()["unicode_form"] == "NFKC"


def test_nfkc_is_a_choice() -> None:
    # ligature fi, full-width A (a full-width digit is a digit: NFC too reads it as its value)
    ref, hyp = {"a": "fine a"}, {"a": "\ufb01ne \uff21"}
    assert _plain().score(ref, hyp).metrics.errors == 2
    assert _plain(unicode_form="NFKC").score(ref, hyp).metrics.errors == 0


def test_bad_unicode_form_is_an_input_error() -> None:
    from scoring.errors import ScoringError

    with pytest.raises(ScoringError, match="unicode_form.*NFD"):
        ScorerConfig(unicode_form="NFD")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # ZWNJ inside a Persian word is spelling: "mi-khaham" (I want) keeps it
        (
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        ),
        # ZWJ in a Devanagari conjunct (ka + virama + ZWJ: half form) is kept
        ("\u0915\u094d\u200d\u0937", "\u0915\u094d\u200d\u0937"),
        # beside a space, inside a Latin word, or an emoji sequence: joins nothing, removed
        ("\u200chello \u200dworld\u200c", "hello world"),
        ("hel\u200dlo", "hello"),
        ("\U0001f468\u200d\U0001f469", "\U0001f468\U0001f469"),
        # controls, bidi embeddings, isolates, BOM, soft hyphen; tab and newline stay
        (
            "a\x00b\x7fc\x85d\u202aé\u202c\u2066x\u2069\ufeff co\u00adop\tz\ny",
            "abc\x85déx coop\tz\ny",
        ),
        # escape sequences go whole: CSI with parameters, OSC (a hyperlink), a two-byte escape
        (
            "\x1b[1;38;5;208mbold\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b(Bend",
            "bold link end",
        ),
        # a combining mark stays on its letter; nothing here splits a word
        ("cafe\u0301s na\u0308ive", "cafe\u0301s na\u0308ive"),
    ],
)
def test_invisible_step(text: str, expected: str) -> None:
    from scoring.normalize import Invisible

    assert Invisible()(text) == expected


def test_combining_marks_never_split_a_word() -> None:
    # NFC composes where a composed letter exists; where none does, the mark stays attached.
    text = "q\u0301uick s\u0323\u0307ort e\u0301"
    tokens = _plain().normalize(text)
    assert tokens == ["q\u0301uick", "\u1e69ort", "\u00e9"]
    assert _plain(unicode=False).normalize(text) == text.split()


def test_batch_is_the_same_as_one_text_at_a_time() -> None:
    from scoring.normalize import Invisible, Pipeline, UnicodeForm

    texts = [
        *HYP.values(),
        "plain ascii",
        "line\nbreak\u200b",
        "\u0645\u06cc\u200c\u062e",
        "e\u0301\ne\u0301",
        "\x1b]unterminated osc",
        "lone escape \x1b",
        "",
    ]
    pipe = Pipeline([Invisible(), UnicodeForm("NFC")])
    assert pipe.batch(texts) == [pipe(t) for t in texts]
    for step in (Invisible(), UnicodeForm("NFC"), UnicodeForm("NFKC")):
        assert step.batch(texts) == [step(t) for t in texts]
        joined = step("\n".join(texts))  # newline-safe: joined texts give the same lines
        assert joined.split("\n") == [step(t) for t in "\n".join(texts).split("\n")]


def _score(ref: Path, hyp: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(OPS_SCORE), str(ref), str(hyp), "-o", str(out), "--bootstrap", "0", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_ops_score_scores_the_visible_text(tmp_path: Path) -> None:
    # With NSW on, as a user runs it: the colour code is not read as "thirty one m".
    ref, hyp = _tsv(tmp_path / "ref.tsv", REF), _tsv(tmp_path / "hyp.tsv", HYP)
    proc = _score(ref, hyp, tmp_path / "on")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "on" / "summary.json").read_text())
    assert summary["metrics"]["errors"] == 0 and summary["metrics"]["ter"] == 0
    assert summary["scorer"]["steps"][:2] == ["INVISIBLE", "UNICODE"]
    rows = [
        json.loads(x) for x in (tmp_path / "on" / "utterances.jsonl").read_text().split("\n") if x
    ]
    assert all(r["sub"] + r["ins"] + r["del"] == 0 for r in rows), rows
    # Switched off like any other step: the old errors, a different scorer identity.
    proc = _score(ref, hyp, tmp_path / "off", "--no-invisible", "--no-unicode")
    assert proc.returncode == 0, proc.stderr
    off = json.loads((tmp_path / "off" / "summary.json").read_text())
    assert off["metrics"]["errors"] >= 4
    assert off["scorer"]["options"]["invisible"] is False
    assert "INVISIBLE" not in off["scorer"]["steps"] and "UNICODE" not in off["scorer"]["steps"]
    assert off["scorer"]["config_hash"] != summary["scorer"]["config_hash"]
    proc = _score(ref, hyp, tmp_path / "kc", "--unicode-form", "NFKC")
    assert proc.returncode == 0, proc.stderr
    kc = json.loads((tmp_path / "kc" / "summary.json").read_text())
    assert kc["scorer"]["options"]["unicode_form"] == "NFKC"
    assert kc["scorer"]["steps"][:2] == ["INVISIBLE", "UNICODE"]
    assert kc["scorer"]["config_hash"] != summary["scorer"]["config_hash"]
    proc = _score(ref, hyp, tmp_path / "bad", "--unicode-form", "NFD")
    assert proc.returncode == 2 and "NFD" in proc.stderr and "Traceback" not in proc.stderr


def test_quick_check_covers_every_character_the_step_removes() -> None:
    # INVISIBLE skips texts its quick check finds clean: that check must know every character.
    import re

    from scoring.normalize import invisible

    pattern = re.compile(f"[{invisible._CONTROL}{invisible._FORMAT}\u200c\u200d]")
    found = {chr(c) for c in range(0x110000) if pattern.match(chr(c))}
    assert found == set(invisible._ASCII_CONTROLS) | set(invisible._OTHERS)
    assert all(not invisible._untouched(f"a{c}b") for c in found)
