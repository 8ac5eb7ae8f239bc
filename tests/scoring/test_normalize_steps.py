"""The normaliser as one ordered registry of named steps, its presets, and the one parser of
scorer options behind ops/score's flags, `--score-opt` and a request file's `options.scorer`."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from asrbench.benchmark.request import RequestError, RequestOptions
from asrbench.scorers import get_scorer, scorer_identity
from scoring import Scorer, ScorerConfig
from scoring.errors import ScoringError
from scoring.normalize.steps import BY_NAME, LADDER, PRESETS, STEPS
from scoring.options import OPTIONS, parse_options, preset_options

# Config hashes of these (language, options) as computed before the registry existed (issue 40):
# walking the registry builds the very same scorer, so every stored result stays comparable.
PINNED: list[tuple[str, dict[str, Any], str]] = [
    ("en", {}, "bba0d4664f8b61f8cb1a78bed40e90d4bf7de0bfbe17377338c2496cace2f1a8"),
    ("en", {"dae": False}, "db16ed7cda26292fc4b003bf96f8fb7c57776d882b00983054d4ba15141ea606"),
    ("en", {"nsw": False}, "a1f10d8b010e235479ebd9a58b372be1580e805a26e11bc6fc6dca11151e4c2e"),
    (
        "en",
        {"case": False, "dae": False, "itj": False, "nsw": False, "punc": False, "ukus": False},
        "31df169831d2d618394c3c29c65f15b0ca2824195556348c47ab8cf91743a47c",
    ),
    (
        "en",
        {"align": "sclite", "nsw": False},
        "0b1d1d99a716f908b7b4ce0ce74e7de90c8e3efdbb9cf3df9f9b6e825f740054",
    ),
    (
        "en",
        {"bootstrap": 0, "unicode_form": "NFKC"},
        "534e88ae5f8abdec57a505c493ec7fca8ad7c6cbbd2d315a79fec0fdc372518b",
    ),
    (
        "en",
        {"alternations": False, "fragments": True, "nsw": False, "optional": False},
        "ebcdec3f3c619f516329c38bab5df2c14028b4ef2f018d1f3610a5991cfb9017",
    ),
    (
        "en",
        {"nsw": False, "unit": "char"},
        "8c512a2ffc437c1927649b5d802752d58db4c61be5733d43e03929506f95de0e",
    ),
    (
        "fr",
        {"diacritics": "strip", "nsw": False},
        "9690db447632395fead99a313d07e913489ae8987859382cf0eed9805db1b741",
    ),
    ("zh", {"nsw": False}, "4801b4eca338a6d4b846bdf0e1634d7e7f9c5ade214fb1df24a3ce2b91b546b8"),
    (
        "de",
        {"compounds": False, "nsw": False},
        "7936c07dea30a543757b61679131de566b5ac8cbfba7874419a584a25c9c6fdd",
    ),
]


@pytest.mark.parametrize(("lang", "options", "expected"), PINNED)
def test_config_hashes_stay_those_of_before(
    lang: str, options: dict[str, Any], expected: str
) -> None:
    sid = scorer_identity(get_scorer(lang, options), options)
    assert sid.config_hash == f"sha256:{expected}"


def _names(cfg: ScorerConfig) -> list[str]:
    steps = Scorer(cfg).config_dict()["steps"]
    return [s.split("-num2words")[0] for s in steps]  # NSW's num2words variant is NSW


@pytest.mark.parametrize(
    "cfg",
    [
        ScorerConfig(nsw=False, bootstrap=0),
        ScorerConfig(nsw=False, fragments=True, bootstrap=0),
        ScorerConfig(lang="fr", nsw=False, diacritics="strip", bootstrap=0),
        ScorerConfig(lang="he", nsw=False, bootstrap=0),
        ScorerConfig(lang="zh", nsw=False, bootstrap=0),
        ScorerConfig(lang="de", nsw=False, bootstrap=0),
    ],
    ids=["en", "en-fragments", "fr-diacritics", "he", "zh", "de"],
)
def test_the_pipeline_runs_the_registry_in_its_order(cfg: ScorerConfig) -> None:
    order = [s.name for s in STEPS]
    names = _names(cfg)
    assert names, names
    assert all(n in BY_NAME for n in names), names
    assert [order.index(n) for n in names] == sorted(order.index(n) for n in names), names


def test_a_switched_off_step_leaves_the_pipeline() -> None:
    for step in STEPS:
        if step.option is None or step.stage == "dae" or step.option == "fragments":
            continue
        kw: dict[str, Any] = {"nsw": False, "bootstrap": 0, step.option: step.off}
        names = _names(ScorerConfig(**kw))
        assert step.name not in names, (step.name, names)


def test_every_scorer_config_field_is_one_option() -> None:
    settable = [f for f in fields(ScorerConfig) if f.name not in ("lang", "cache_dir")]
    assert [f.name for f in settable] == list(OPTIONS)
    for f in settable:
        assert OPTIONS[f.name].default == f.default, f.name
    for step in STEPS:
        assert step.option is None or step.option in OPTIONS, step.name


def test_the_ablation_ladder_switches_every_boolean_step() -> None:
    switches = {
        s.name
        for s in STEPS
        if s.option is not None
        and OPTIONS[s.option].kind is bool
        and OPTIONS[s.option].default is not None
    }
    assert sorted(LADDER) == sorted(switches)
    assert LADDER[:5] == ("CASE", "PUNC", "ITJ", "UK-US", "NSW")  # SpeechColab's Table VII
    assert LADDER[-1] == "DAE"


def test_presets_are_step_lists_expanded_to_the_options_they_stand_for() -> None:
    assert preset_options("default") == {}
    assert preset_options("no-dae") == {"dae": False}
    sclite = preset_options("sclite")
    assert sclite == {"nsw": False, "itj": False, "ukus": False, "dae": False, "align": "sclite"}
    raw = preset_options("raw")
    assert set(raw.values()) == {False} and "DAE" not in PRESETS["raw"]
    # the preset is the scorer of its options: the same config hash
    for name in ("default", "no-dae"):
        a = scorer_identity(get_scorer("en", parse_options({"preset": name})))
        b = scorer_identity(get_scorer("en", preset_options(name)))
        assert a.config_hash == b.config_hash
    # an option given beside a preset wins
    assert parse_options({"preset": "raw", "case": "true"})["case"] is True
    assert _names(ScorerConfig(bootstrap=0, **raw)) == []


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"dae": "maybe"}, "--score-opt dae='maybe': give true or false"),
        ({"dae": 1}, "--score-opt dae=1: give true or false"),
        ({"bootstrap": "1e3"}, "--score-opt bootstrap='1e3': give a whole number"),
        ({"confidence": "inf"}, "--score-opt confidence=inf: not a finite number"),
        ({"nonsense": "1"}, "--score-opt nonsense: unknown scorer option; known: preset, unit"),
        ({"preset": "nist"}, "--score-opt preset='nist': give one of default, no-dae"),
        ({"lang": "de"}, "comes from the dataset's language"),
    ],
)
def test_one_parser_refuses_with_one_message(given: dict[str, Any], message: str) -> None:
    with pytest.raises(ScoringError) as exc:
        parse_options(given)
    assert message in str(exc.value)


def test_text_values_are_read_as_their_option_s_type() -> None:
    got = parse_options(
        {"dae": "False", "bootstrap": "10", "confidence": "1", "unit": "char", "alternatives": ""}
    )
    want = {"dae": False, "bootstrap": 10, "confidence": 1.0, "unit": "char", "alternatives": ""}
    assert got == want
    assert type(got["confidence"]) is float
    assert parse_options(got) == got  # typed values pass as they are


def _files(tmp_path: Path) -> tuple[Path, Path]:
    ref, hyp = tmp_path / "ref.tsv", tmp_path / "hyp.tsv"
    ref.write_text("a\tthe colour of money\nb\tuh hello there\n", encoding="utf-8")
    hyp.write_text("a\tthe color of honey\nb\thello their\n", encoding="utf-8")
    return ref, hyp


def _scorer_block(cli: Any, tmp_path: Path, name: str, *flags: str) -> dict[str, Any]:
    ref, hyp = _files(tmp_path)
    out = tmp_path / name
    code, _, err = cli("score", ref, hyp, "-o", out, "--bootstrap", "0", *flags)
    assert code == 0, err
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))["scorer"]


def test_ops_score_preset_is_its_flags(cli: Any, tmp_path: Path) -> None:
    spelled = _scorer_block(cli, tmp_path, "a", "--no-nsw", "--no-itj", "--no-ukus", "--no-dae")
    spelled_sclite = _scorer_block(
        cli, tmp_path, "b", "--no-nsw", "--no-itj", "--no-ukus", "--no-dae", "--align", "sclite"
    )
    assert _scorer_block(cli, tmp_path, "c", "--preset", "sclite") == spelled_sclite
    # a flag beside the preset wins: the sclite steps without the exact aligner
    assert _scorer_block(cli, tmp_path, "d", "--preset", "sclite", "--align", "minimal") == spelled


def test_ops_score_takes_score_opt_as_its_flags(cli: Any, tmp_path: Path) -> None:
    """`--score-opt` spells every option on ops/score too, with the identity of the flag."""
    assert _scorer_block(cli, tmp_path, "a", "--score-opt", "dae=false") == _scorer_block(
        cli, tmp_path, "b", "--no-dae"
    )
    # an option with no flag of its own
    hyphen = _scorer_block(cli, tmp_path, "c", "--score-opt", "hyphen=join")
    assert hyphen["options"]["hyphen"] == "join"


def test_ops_score_and_score_opt_refuse_a_preset_alike(cli: Any, tmp_path: Path) -> None:
    ref, hyp = _files(tmp_path)
    code, _, err = cli("score", ref, hyp, "-o", tmp_path / "o", "--preset", "nist")
    assert code == 2 and "ops/score preset='nist': give one of default, no-dae" in err, err
    code, _, err = cli("benchmark", "-m", "no_such_model", "--score-opt", "preset=nist")
    assert code == 2 and "--score-opt preset='nist': give one of default, no-dae" in err, err
    assert len(err.strip().splitlines()) == 1


def test_a_request_file_s_scorer_options_go_through_the_same_parser(tmp_path: Path) -> None:
    path = tmp_path / "request.yaml"
    opts = RequestOptions.from_file({"scorer": {"preset": "no-dae", "nsw": False}}, path)
    assert dict(opts.scorer) == {"dae": False, "nsw": False}
    with pytest.raises(RequestError, match=r"options.scorer dae='maybe': give true or false"):
        RequestOptions.from_file({"scorer": {"dae": "maybe"}}, path)
