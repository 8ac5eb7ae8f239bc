"""Formatting metrics (scoring/formatting.py, `ops/score --formatting`) and the `fstalign`
preset: planted punctuation and casing errors counted exactly, fstalign's conventions one by one."""

from __future__ import annotations

import json
from pathlib import Path

from asrbench.results.summary import read_summary
from scoring.formatting import formatting_counts, words_of
from scoring.options import preset_options


def _tsv(path: Path, rows: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}\t{v}\n" for k, v in rows.items()), encoding="utf-8")
    return path


def test_each_mark_follows_the_word_before_it() -> None:
    words = words_of('He said: "don\'t" -- long-term, 3.5% ok?! ...')
    assert [w.text for w in words] == ["He", "said", "don't", "long-term", "3.5", "ok"]
    assert [sorted(w.marks) for w in words] == [
        [],
        ['"', ":"],
        ['"', "-"],
        [","],
        ["%"],
        ["!", ".", "?"],
    ]


def test_a_missing_comma_is_one_miss() -> None:
    c = formatting_counts({"u": "Yes, we did."}, {"u": "yes we did."})
    assert c.marks[","].hits == 0 and c.marks[","].misses == 1 and c.marks[","].false_alarms == 0
    assert c.marks[","].recall == 0.0 and c.marks[","].precision is None
    assert c.marks["."].hits == 1 and c.marks["."].f1 == 1.0
    # `Yes` / `yes`: a correct word written in another case
    assert (c.case_errors, c.case_pairs) == (1, 3)


def test_a_wrong_question_mark_is_a_false_alarm_and_a_miss() -> None:
    c = formatting_counts({"u": "It is Monday."}, {"u": "It is Monday?"})
    assert c.marks["?"] == type(c.marks["?"])(hits=0, false_alarms=1, misses=0)
    assert c.marks["."].misses == 1 and c.marks["."].false_alarms == 0
    assert (c.case_errors, c.case_pairs) == (0, 3)


def test_a_casing_error_counts_over_correct_words_only() -> None:
    # `IBM` / `Ibm` is a casing error; `Sold` / `bought` is a substitution, not counted
    c = formatting_counts({"u": "IBM Sold shares"}, {"u": "Ibm bought shares"})
    assert (c.case_errors, c.case_pairs) == (1, 2)
    assert c.case_error_rate == 0.5


def test_deleted_and_inserted_words_carry_their_marks() -> None:
    c = formatting_counts({"u": "well, fine.", "v": "no."}, {"u": "fine. okay!"})
    assert c.marks[","].misses == 1  # `well,` deleted
    assert c.marks["!"].false_alarms == 1  # `okay!` inserted
    assert c.marks["."].hits == 1 and c.marks["."].misses == 1  # `v` has no hypothesis


def test_ops_score_formatting_writes_the_counts_and_the_formatted_wer(cli, tmp_path) -> None:
    ref = _tsv(tmp_path / "ref.tsv", {"a": "Yes, it is Monday.", "b": "We sold IBM shares."})
    hyp = _tsv(tmp_path / "hyp.tsv", {"a": "yes it is Monday?", "b": "We sold IBM shares."})
    out = tmp_path / "out"
    code, stdout, err = cli("score", ref, hyp, "-o", out, "--bootstrap", "0", "--formatting")
    assert code == 0, err
    f = json.loads((out / "summary.json").read_text())["formatting"]
    assert f["format"] == "asrbench-formatting-v1"
    assert f["punctuation"][","] == {
        "hits": 0,
        "false_alarms": 0,
        "misses": 1,
        "precision": None,
        "recall": 0.0,
        "f1": 0.0,
    }
    assert (f["punctuation"]["?"]["false_alarms"], f["punctuation"]["."]["hits"]) == (1, 1)
    assert (f["case_errors"], f["case_pairs"]) == (1, 8)
    # no normalisation: `Yes,`/`yes` and `Monday.`/`Monday?` are two substitutions
    assert f["formatted_wer"] == {
        "rate": 2 / 8,
        "errors": 2,
        "n_ref": 8,
        "sub": 2,
        "del": 0,
        "ins": 0,
    }
    assert "formatted WER (no normalisation): 25.00% (2/8)" in stdout
    # the normalised WER is untouched, and the summary's reader keeps the key
    assert json.loads((out / "summary.json").read_text())["metrics"]["errors"] == 0
    assert read_summary(out / "summary.json").formatting == f


def test_formatting_is_refused_in_session_mode(cli, tmp_path) -> None:
    ref = _tsv(tmp_path / "ref.tsv", {"a": "x"})
    code, _, err = cli("score", ref, ref, "--metric", "wer", "--formatting")
    assert code == 2 and "--formatting" in err and len(err.strip().splitlines()) == 1


def _wer(cli, tmp_path: Path, ref: str, hyp: str, *flags: str) -> tuple[int, int]:
    out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
    r = _tsv(tmp_path / "r.tsv", {"u": ref})
    h = _tsv(tmp_path / "h.tsv", {"u": hyp})
    code, _, err = cli("score", r, h, "-o", out, "--bootstrap", "0", "--no-nsw", *flags)
    assert code == 0, err
    m = json.loads((out / "summary.json").read_text())["metrics"]
    return m["errors"], m["n_ref"]


def test_the_fstalign_preset_keeps_fillers_and_tags_and_lets_hyphen_parts_match(
    cli, tmp_path
) -> None:
    assert preset_options("fstalign")["hyphen"] == "synonym"  # tests/scoring/test_synonyms.py
    # fillers: dropped by ITJ by default, reference words for fstalign
    assert _wer(cli, tmp_path, "uh we grew", "we grew") == (0, 2)
    assert _wer(cli, tmp_path, "uh we grew", "we grew", "--preset", "fstalign") == (1, 3)
    # a tag is a word nobody says: removed by NONSPEECH, a deletion for fstalign
    assert _wer(cli, tmp_path, "we <inaudible> grew", "we grew") == (0, 2)
    assert _wer(cli, tmp_path, "we <inaudible> grew", "we grew", "--preset", "fstalign") == (1, 3)
    # a hyphenated word matches its parts (fstalign's synonyms: Rev writes "listen only"
    # where a system writes "listen-only"); |ref| counts the reading matched
    fst = ("--preset", "fstalign")
    assert _wer(cli, tmp_path, "listen only mode", "listen-only mode", *fst) == (0, 2)
    assert _wer(cli, tmp_path, "long-term growth", "long term growth", *fst) == (0, 3)
    # case-insensitive, tokens as written (punctuation is part of a plain text's word), no
    # British-to-American spelling
    assert _wer(cli, tmp_path, "Good Colour ok", "good colour ok", *fst) == (0, 3)
    assert _wer(cli, tmp_path, "Good morning, Colour. ok", "good morning colour ok", *fst) == (
        2,
        4,
    )
    assert _wer(cli, tmp_path, "the colour", "the color", *fst) == (1, 2)
