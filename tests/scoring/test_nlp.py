"""Rev's NLP files and sidecars (scoring/nlp.py): reading, writing, and the bad inputs
`ops/score` names in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.errors import ScoringError
from scoring.nlp import (
    NlpToken,
    Piece,
    format_nlp,
    hypothesis_text,
    map_pieces,
    pieces_text,
    read_nlp,
    read_nlp_text,
    read_norm_sidecar,
    reference_pieces,
)

HEADER = "token|speaker|ts|endTs|punctuation|case|tags|wer_tags\n"
REF = HEADER + "we|0||||UC|[]|[]\nmade|0||||LC|[]|[]\n$5|0|||.|LC|['0:MONEY']|['0']\n"
NORM = {"0": {"class": "MONEY", "candidates": [{"verbalization": ["five", "dollars"]}]}}


def _write(tmp_path: Path, ref: str = REF, norm: dict | None = None) -> tuple[Path, Path, Path]:
    (tmp_path / "ref.nlp").write_text(ref, encoding="utf-8")
    (tmp_path / "hyp.nlp").write_text(
        "token|speaker|ts|endTs|punctuation|case|tags\nwe|1|0.1|0.3|||\n", encoding="utf-8"
    )
    (tmp_path / "ref.norm.json").write_text(json.dumps(norm or NORM), encoding="utf-8")
    return tmp_path / "ref.nlp", tmp_path / "hyp.nlp", tmp_path / "ref.norm.json"


def test_read_write_round_trip(tmp_path: Path) -> None:
    ref, hyp, _ = _write(tmp_path)
    tokens = read_nlp(ref)
    assert tokens[2] == NlpToken("$5", "0", None, None, ".", "LC", ("0",), ("MONEY",), ("0",), 4)
    assert format_nlp(tokens) == REF
    timed = read_nlp(hyp)  # a system output: 7 columns, times
    assert (timed[0].ts, timed[0].end_ts, timed[0].wer_tags) == (0.1, 0.3, ())


def test_a_normalisation_sidecar_becomes_an_alternation(tmp_path: Path) -> None:
    ref, _, norm = _write(
        tmp_path,
        norm={
            "0": {
                "class": "MONEY",
                "candidates": [
                    {"verbalization": ["five", "dollars"]},
                    {"verbalization": ["five", "bucks"]},
                ],
            }
        },
    )
    pieces = reference_pieces(read_nlp(ref), read_norm_sidecar(norm))
    # the written tokens are a reading too, last, as fstalign adds them (src/Nlp.cpp)
    assert pieces_text(pieces) == "we made { five dollars / five bucks / $5 }"


def _counts(cli, tmp_path: Path, ref: str, hyp_tokens: list[str], *flags: str) -> tuple:
    """(S, D, I, |ref|) of `ops/score` on one NLP reference with NORM as its sidecar."""
    ref_path, hyp_path, norm = _write(tmp_path, ref)
    rows = "".join(f"{t}|1|||||\n" for t in hyp_tokens)
    hyp_path.write_text("token|speaker|ts|endTs|punctuation|case|tags\n" + rows, encoding="utf-8")
    code, _, err = cli("score", ref_path, hyp_path, "--norm", norm, *flags, "-o", tmp_path / "o")
    assert code == 0, err
    u = json.loads((tmp_path / "o" / "utterances.jsonl").read_text().splitlines()[0])
    return u["sub"], u["del"], u["ins"], u["n_ref"]


def test_the_fstalign_preset_takes_the_sidecar_readings_and_the_written_form(cli, tmp_path):
    # fstalign has no NSW: the hypothesis's "$5" matches the entity as written, "five
    # dollars" its sidecar reading, each counting the reading it matched
    fst = ("--preset", "fstalign")
    assert _counts(cli, tmp_path, REF, ["we", "made", "$5"], *fst) == (0, 0, 0, 3)
    assert _counts(cli, tmp_path, REF, ["we", "made", "five", "dollars"], *fst) == (0, 0, 0, 4)
    # a reading nobody lists is an error: "five bucks" (no NSW turns "$5" into it either)
    assert _counts(cli, tmp_path, REF, ["we", "made", "five", "bucks"], *fst) == (1, 0, 0, 4)


def test_a_line_with_the_wrong_column_count_is_named(cli, tmp_path: Path) -> None:
    ref, hyp, _ = _write(tmp_path, REF + "oops|0|||\n")
    code, _, err = cli("score", ref, hyp, "--out", tmp_path / "out")
    assert code == 2
    assert f"{ref}:5: 5 columns where the header has 8" in err
    assert len(err.strip().splitlines()) == 1


def test_an_unknown_entity_id_is_named(cli, tmp_path: Path) -> None:
    ref, hyp, norm = _write(tmp_path, REF.replace("['0:MONEY']", "['7:MONEY']"))
    code, _, err = cli("score", ref, hyp, "--norm", norm, "--out", tmp_path / "out")
    assert code == 2
    assert f"{ref}:4: entity ID '7' (tags) is not in {norm}" in err
    assert len(err.strip().splitlines()) == 1


def test_a_sidecar_entity_naming_no_token_is_named(cli, tmp_path: Path) -> None:
    extra = {**NORM, "9": {"class": "YEAR", "candidates": [{"verbalization": ["ten"]}]}}
    ref, hyp, norm = _write(tmp_path, norm=extra)
    norm.write_text(json.dumps(extra, indent=2), encoding="utf-8")  # as Rev writes them
    code, _, err = cli("score", ref, hyp, "--norm", norm, "--out", tmp_path / "out")
    assert code == 2
    assert f"{norm}:13: entity '9' names no token of {ref} (tags)" in err  # its key's line
    assert len(err.strip().splitlines()) == 1
    code, _, err = cli(
        "score", ref, hyp, "--norm", norm, "--lenient", "--no-nsw", "--out", tmp_path / "o"
    )
    assert code == 0 and "warning:" in err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert summary["entities"]["warnings"] == [err.split("warning: ", 1)[1].strip()]


def test_wer_tags_without_an_nlp_reference_are_refused(cli, tmp_path: Path) -> None:
    (tmp_path / "r.tsv").write_text("a\thello\n", encoding="utf-8")
    code, _, err = cli("score", tmp_path / "r.tsv", tmp_path / "r.tsv", "--wer-tags", tmp_path)
    assert code == 2 and "not one (give a .nlp file" in err


def test_a_malformed_tags_column_is_named(tmp_path: Path) -> None:
    ref, _, _ = _write(tmp_path, REF.replace("['0:MONEY']", "0:MONEY"))
    with pytest.raises(ScoringError, match=r"ref.nlp:4: the tags column must be a list"):
        read_nlp(ref)


def test_odd_fields_read_as_the_general_reader_reads_them(tmp_path: Path) -> None:
    """Times padded, blank or not a number, lists in ast's forms, a blank line, columns in
    another order: the same tokens and warnings, and a system output's text the same from
    the tokens as from `read_nlp_text`."""
    path = tmp_path / "odd.nlp"
    path.write_text(
        "token|speaker|endTs|ts|case|punctuation|tags\n"
        "We|0| 1.5 |  |UC|,|[ ]\n"
        "\n"
        "sold|0|.|1e1|LC||[\"1:CARDINAL\", '2:YEAR']\n"
        "5|0|2|inf|LC|.|['3 : MONEY']\n",
        encoding="utf-8",
    )
    warnings: list[str] = []
    tokens = read_nlp(path, warnings)
    assert [(t.token, t.ts, t.end_ts, t.punctuation, t.line) for t in tokens] == [
        ("We", None, 1.5, ",", 2),
        ("sold", 10.0, None, "", 4),
        ("5", float("inf"), 2.0, ".", 5),
    ]
    assert [(t.tags, t.tag_classes) for t in tokens] == [
        ((), ()),
        (("1", "2"), ("CARDINAL", "YEAR")),
        (("3",), ("MONEY",)),
    ]
    assert warnings == [f"{path}:4: endTs '.' is not a number of seconds (read as no time)"]
    for punctuation in (True, False):
        again: list[str] = []
        text = read_nlp_text(path, again, punctuation)
        assert text == hypothesis_text(tokens, punctuation)
        assert again == warnings
    with pytest.raises(ScoringError, match=r"odd.nlp:4: endTs '.' is not a number"):
        read_nlp(path)


def test_scored_words_find_their_pieces() -> None:
    pieces = [Piece(0, 1, ("a",)), Piece(1, 2, ("b c", "bc")), Piece(2, 3, ("d",))]
    assert map_pieces(pieces, ["a", "bc", "d"], str.split) == [0, 1, 2]  # the chosen branch
    assert map_pieces(pieces, ["a", "b", "c", "d"], str.split) == [0, 1, 1, 2]
    # normalised in context the words differ: matched by a diff, "x" takes its predecessor's
    assert map_pieces(pieces, ["a", "x", "c", "d"], str.split) == [0, 0, 1, 2]
