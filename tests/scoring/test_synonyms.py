"""The fstalign preset compares tokens as written with fstalign's hyphen synonyms
(scoring/synonyms.py, `hyphen=synonym`): planted cases whose counts are fstalign v1.13.0's on
the same texts (`fstalign wer --ref r.txt --hyp h.txt`, run when these were written)."""

from __future__ import annotations

import json
from pathlib import Path

from scoring import Scorer, ScorerConfig
from scoring.nlp import Piece, pieces_text
from scoring.normalize.alternation import SYN_CLOSE, SYN_OPEN
from scoring.options import preset_options
from scoring.synonyms import rule, synonym_pieces, synonym_text

# (reference, hypothesis) -> (errors, |ref|) as fstalign counts them; a substitution sits
# mid-sentence: fstalign scores a last-word substitution as a deletion and an insertion
FSTALIGN = {
    ("listen only mode", "listen-only mode"): (0, 2),  # the hypothesis's word, as one
    ("long-term growth", "long term growth"): (0, 3),  # the reference's word, as parts
    ("re-imaging stores", "reimaging stores"): (1, 2),  # one substitution, not two
    # a synonym path only where all of it matches: a substitution and an insertion
    ("x long-term y", "x long turn y"): (2, 3),
    ("a dose-limiting b", "a those limiting b"): (2, 3),
    ("the- the store", "the the store"): (0, 3),  # a cut-off reads as its stem
    ("we the- the store", "we th the store"): (1, 4),  # ...and only as it
    ("a long term plan", "a long-term plan"): (0, 3),
    ("Good morning, Colour. ok", "good morning colour ok"): (2, 4),  # as written, lower-cased
    ("we grew 1% in", "we grew 1 in"): (1, 4),
    ("sales of 1,300 in", "sales of 1300 in"): (1, 4),
    ("we ' grew", "we grew"): (1, 3),  # a token of punctuation alone is a word
    ("the colour is", "the color is"): (1, 3),  # no British-to-American spelling
}
# A synonym is all or nothing where the hypothesis holds its words elsewhere in the stretch:
# matched, or not taken (fstalign v1.13.0's counts, `fstalign wer`, checked for these)
ALL_OR_NOTHING = {
    # its parts: never substituted ("four" for "forward") ...
    (
        "forward-looking statements a forward-looking b c",
        "forward looking statements a four looking b c",
    ): (2, 7),
    # ... nor with a word inserted between them ...
    ("book-value x we have book-value a b", "book value x we have book of value a b"): (3, 8),
    ("mid-single x a b mid-single digits c", "mid single x a b in single digits c"): (2, 8),
    # ... nor the hypothesis's joined word substituted for the reference's parts
    ("x book value y a book value z", "x book-value y a book-valued z"): (2, 7),
    # matched, the synonym is taken as before: |ref| its words
    (
        "forward-looking statements a forward-looking b c",
        "forward looking statements a forward looking b c",
    ): (0, 8),
}


def test_the_rules_follow_fstalign() -> None:
    assert rule("listen-only") == ("listen", "only")
    assert rule("the-") == ("the",)  # the first hyphen last: a cut-off
    assert rule("-ing") == ("ing",)
    assert rule("re--th-") == ("re", "th")  # a first hyphen inside: split, empty parts out
    assert rule("word") is None and rule("-") is None and rule("and/or-") is None


def _syn(words: str) -> str:
    return f"{SYN_OPEN} {words} {SYN_CLOSE}"  # a synonym's words: all or nothing


def test_the_synonyms_become_alternations() -> None:
    listen = f"{{ listen only / {_syn('listen-only')} }} mode"
    assert synonym_text("listen only mode", "listen-only") == listen
    long_term = f"{{ long-term / {_syn('long term')} }} growth"
    assert synonym_text("long-term growth", "long term") == long_term
    assert synonym_text("dose-limiting x", "those limiting") == "dose-limiting x"  # no match
    assert synonym_text("{ a / b } x-y", "") == "{ a / b } x-y"  # marked up already: as it is
    # inside an entity's readings too; its written reading first; an empty reading kept
    entity = Piece(0, 1, ("forty five", "45"), null=True)
    (out,) = synonym_pieces([entity], ["forty-five"], written=["45"])
    assert pieces_text([out]) == f"{{ 45 / forty five / @ / {_syn('forty-five')} }}"
    # the written reading leads the text (ties) but not the branches the chunker anchors on
    assert out.branches[0] == "forty five" and out.branches[out.lead] == "45"


def _preset_counts(cli, tmp_path: Path, pairs: dict) -> list[tuple[int, int]]:
    """(errors, |ref|) of each (reference, hypothesis) pair with `--preset fstalign`."""
    ref, hyp = tmp_path / "ref.tsv", tmp_path / "hyp.tsv"
    ref.write_text("".join(f"u{i}\t{r}\n" for i, (r, _) in enumerate(pairs)))
    hyp.write_text("".join(f"u{i}\t{h}\n" for i, (_, h) in enumerate(pairs)))
    code, _, err = cli(
        "score", ref, hyp, "--preset", "fstalign", "--bootstrap", "0", "-o", tmp_path
    )
    assert code == 0, err
    lines = (tmp_path / "utterances.jsonl").read_text().splitlines()
    return [(u["sub"] + u["del"] + u["ins"], u["n_ref"]) for u in map(json.loads, lines)]


def test_the_fstalign_preset_counts_as_fstalign(cli, tmp_path: Path) -> None:
    assert preset_options("fstalign")["hyphen"] == "synonym"
    assert preset_options("fstalign")["punc"] is False
    assert _preset_counts(cli, tmp_path, FSTALIGN) == list(FSTALIGN.values())
    ref, hyp = tmp_path / "ref.tsv", tmp_path / "hyp.tsv"
    # the platform's default is unchanged: punctuation and hyphens forgiven
    code, _, err = cli("score", ref, hyp, "--bootstrap", "0", "--no-nsw", "-o", tmp_path / "d")
    lines = (tmp_path / "d" / "utterances.jsonl").read_text().splitlines()
    assert [json.loads(x)["sub"] for x in lines][9:11] == [0, 0]  # "1%", "1,300"


def test_a_synonym_is_matched_or_not_taken(cli, tmp_path: Path) -> None:
    assert _preset_counts(cli, tmp_path, ALL_OR_NOTHING) == list(ALL_OR_NOTHING.values())
    # `hyphen=synonym` with the default aligner (`_net_table`): the same rule
    refs = {f"u{i}": r for i, (r, _) in enumerate(ALL_OR_NOTHING)}
    hyps = {f"u{i}": h for i, (_, h) in enumerate(ALL_OR_NOTHING)}
    result = Scorer(ScorerConfig(hyphen="synonym", punc=False)).score(refs, hyps)
    got = [(u.sub + u.dele + u.ins, len(u.ref)) for u in result.utterances]
    assert got == list(ALL_OR_NOTHING.values())


NLP_HEAD = "token|speaker|ts|endTs|punctuation|case|tags|wer_tags\n"
REF = NLP_HEAD + (
    "press|0||||LC|[]|[]\n*|0||||LC|['0:FALLBACK']|[]\none|0||||LC|[]|[]\n"
    "grew|0||||LC|[]|[]\n1%|0||||LC|['1:PERCENT']|['1']\nin|0||||LC|[]|[]\n"
    "q4|0||||LC|[]|[]\n"
)
NORM = {
    "0": {"class": "FALLBACK", "candidates": [{"verbalization": []}]},
    "1": {"class": "PERCENT", "candidates": [{"verbalization": ["one", "percent"]}]},
}
TAGS = {"1": {"entity_type": "PERCENT"}}


def _nlp_counts(cli, tmp_path: Path, hyp_rows: str, *flags: str) -> tuple[int, int, int, int]:
    (tmp_path / "r.nlp").write_text(REF)
    (tmp_path / "r.norm.json").write_text(json.dumps(NORM))
    (tmp_path / "r.wer_tag.json").write_text(json.dumps(TAGS))
    (tmp_path / "h.nlp").write_text("token|speaker|ts|endTs|punctuation|case|tags\n" + hyp_rows)
    out = tmp_path / f"o{len(list(tmp_path.iterdir()))}"
    code, _, err = cli(
        "score", tmp_path / "r.nlp", tmp_path / "h.nlp", "--norm", tmp_path / "r.norm.json",
        "--wer-tags", tmp_path / "r.wer_tag.json", "--bootstrap", "0", *flags, "-o", out,
    )  # fmt: skip
    assert code == 0, err
    u = json.loads((out / "utterances.jsonl").read_text())
    return u["sub"], u["del"], u["ins"], u["n_ref"]


def test_nlp_tokens_are_compared_as_written(cli, tmp_path: Path) -> None:
    # fstalign v1.13.0 on these files (--ref-json, --wer-sidecar): 1 substitution ("1%" / "1"),
    # |ref| 6: the punctuation column's "%" is not part of the hypothesis's token, the "*"
    # whose only reading is empty costs nothing, "Q4," is "q4"
    rows = "press|1|||||\none|1|||||\ngrew|1|||||\n1|1|||%||\nin|1|||||\nQ4|1|||,||\n"
    assert _nlp_counts(cli, tmp_path, rows, "--preset", "fstalign") == (1, 0, 0, 6)
    # the platform's default (NSW aside): PUNC forgives "1%"
    assert _nlp_counts(cli, tmp_path, rows, "--no-nsw")[0] == 0
