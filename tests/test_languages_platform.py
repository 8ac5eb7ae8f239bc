"""The dataset's language reaches the model and the scorer (issue 24, items 1 and 6).

Stand-in model programs (local runner, no packages) write back the language settings they were
given, so what reaches the program is observed, not assumed; one real run of whisper_base on
mini_fr goes through Docker. The cross-language robustness campaign runs for real on a tiny grid
with a stand-in whose words depend on the audio (so WERD differs between conditions).
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

from asrbench.benchmark.cache import cache_key
from asrbench.benchmark.language import LanguageError, check_grid, plan_language
from asrbench.benchmark.request import JobSpec
from asrbench.benchmark.run import run_benchmark
from asrbench.dataset import load_dataset
from asrbench.modelcard import language_match, load_model
from asrbench.perturb.robustness import LanguageSample, language_disparity
from asrbench.results.records import RobustnessRecord, RunRecord, read_record
from asrbench.results.summary import read_summary
from asrbench.settings import REPO_ROOT
from tests.conftest import own_cache, require
from tests.factories import make_model

MINI_FR = REPO_ROOT / "datasets" / "mini_fr"
MINI_EN = REPO_ROOT / "datasets" / "mini_en"

# Writes back every language setting it got, and a marker that it ran.
ECHO = textwrap.dedent(r"""
    import os, sys
    from pathlib import Path

    wav_list, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    Path("@MARKER@").touch()
    said = os.environ.get("ASRBENCH_LANGUAGE", "default") + " " + os.environ.get("X_LANGUAGE", "-")
    with open(out / "hyp.tsv", "a") as hyp:
        for line in Path(wav_list).read_text().splitlines():
            hyp.write(line.partition("\t")[0] + "\t" + said + "\n")
""")

# Says as many words as the audio is loud: noise changes the count, so the WER moves.
LOUDNESS = textwrap.dedent(r"""
    import sys, wave, array, math
    from pathlib import Path

    wav_list, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "hyp.tsv", "a") as hyp:
        for line in Path(wav_list).read_text().splitlines():
            uid, _, path = line.partition("\t")
            with wave.open(path) as w:
                pcm = array.array("h", w.readframes(w.getnframes()))
            rms = math.sqrt(sum(x * x for x in pcm[::16]) / max(1, len(pcm[::16]))) / 32768
            hyp.write(uid + "\t" + " ".join(["oui"] * (1 + int(rms * 200) % 7)) + "\n")
""")


def stand_in(root: Path, model_id: str, languages: str, program: str, extra: str = "") -> Path:
    """A stand-in model around `program`; `languages` as the card spells it (`[en, fr]`)."""
    return make_model(
        root,
        model_id,
        program,
        name=f"Stand-in {model_id}",
        languages=yaml.safe_load(languages),
        program="prog.py",
        extra=extra,
    )


def small_copy(src: Path, dest: Path, n: int, language: str, column: str | None = None) -> Path:
    """The first `n` utterances of a dataset, its language set to `language`; `column` adds a
    LANGUAGE column with that value on the first utterance."""
    ds = load_dataset(src)
    meta = {k: v for k, v in ds.meta.items() if k not in ("id",)} | {"language": language}
    rows = ["\t".join([*ds.columns, *(["LANGUAGE"] if column else [])])]
    for i, u in enumerate(ds.utterances[:n]):
        cells = u.cells(ds.columns) + ([column if i == 0 else language] if column else [])
        rows.append("\t".join(cells))
        (dest / "audio").mkdir(parents=True, exist_ok=True)
        shutil.copy(src / u.audio, dest / u.audio)
    (dest / "metadata.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (dest / "dataset.yaml").write_text(json.dumps(meta), encoding="utf-8")
    return dest


def spec(tmp_path: Path, **kw) -> JobSpec:
    return JobSpec(
        runner="local",
        results_root=tmp_path / "results",
        cache_root=tmp_path / "cache",
        progress=False,
        scorer_options={"nsw": False},
        **kw,
    )


@pytest.fixture
def marker(tmp_path) -> Path:
    """A file the ECHO program touches when it runs (its folder's name keeps sources apart)."""
    return tmp_path / "program-ran"


def echo(marker: Path) -> str:
    return ECHO.replace("@MARKER@", str(marker))


def test_tags_match_on_language_and_script_not_region():
    assert language_match("fr-CA", ["en", "fr"]) == "fr"
    assert language_match("zh-Hans", ["zh"]) == "zh"
    assert language_match("pt", ["es", "en"]) is None
    assert language_match("zh-Hans", ["zh-Hant"]) is None  # the script differs
    assert language_match("en-GB", ["en-US", "en-GB"]) == "en-GB"  # the closest region
    assert language_match("fr", ["en-US", "fr-FR", "fr-CA"]) == "fr-FR"  # card order breaks ties
    assert language_match("EN_us", ["en"]) == "en"


def test_english_only_card_is_refused_before_it_runs(tmp_path, marker, cli):
    model = stand_in(tmp_path / "models", "echo_en", "[en]", echo(marker))
    with pytest.raises(LanguageError) as err:
        run_benchmark(model, MINI_FR, spec(tmp_path, max_utts=2))
    msg = str(err.value)
    assert "echo_en" in msg and "languages en" in msg and "in fr" in msg and "--force" in msg
    assert not marker.exists() and not list((tmp_path / "results").rglob("*.json"))
    code, _, stderr = cli("benchmark", "-m", model, "-d", MINI_FR, "--runner", "local")
    assert code == 2 and "lists languages en" in stderr and not marker.exists()


def test_forced_run_is_marked_and_runs_the_default_language(tmp_path, marker):
    model = stand_in(tmp_path / "models", "echo_en", "[en]", echo(marker))
    res = run_benchmark(model, MINI_FR, spec(tmp_path, max_utts=2, force_language=True))
    assert marker.exists()
    summary = read_summary(res.out_dir / "summary.json")
    run = read_record(res.out_dir / "run.json", RunRecord.from_dict)
    assert summary.forced_language and run.forced_language
    assert run.language.env == {} and run.language.model is None
    assert "forced" in res.line()
    hyps = [json.loads(x)["hyp"] for x in (res.out_dir / "utterances.jsonl").open()]
    assert hyps == ["default -", "default -"]  # no language setting: the program's default


def test_language_reaches_program_scorer_and_provenance(tmp_path, marker):
    model = stand_in(tmp_path / "models", "echo_multi", "[en, fr]", echo(marker))
    res = run_benchmark(model, MINI_FR, spec(tmp_path, max_utts=2))
    run = read_record(res.out_dir / "run.json", RunRecord.from_dict)
    summary = read_summary(res.out_dir / "summary.json")
    assert [json.loads(x)["hyp"] for x in (res.out_dir / "utterances.jsonl").open()] == [
        "fr -",
        "fr -",
    ]
    assert run.language.env == {"ASRBENCH_LANGUAGE": "fr"} and not run.forced_language
    assert run.cache.inputs["runtime"]["env"] == {"ASRBENCH_LANGUAGE": "fr"}
    assert summary.scorer["lang"] == "fr" and run.scorer["lang"] == "fr"
    assert "forced_language" not in json.loads((res.out_dir / "summary.json").read_text())


def test_english_cell_keeps_its_cache_key(tmp_path, marker):
    model = stand_in(tmp_path / "models", "echo_multi", "[en, fr]", echo(marker))
    res = run_benchmark(model, MINI_EN, spec(tmp_path, max_utts=1))
    run = read_record(res.out_dir / "run.json", RunRecord.from_dict)
    inputs = run.cache.inputs
    # the key as it was before languages were passed: no setting for the card's default
    assert (
        run.cache.key == cache_key(inputs["model"], inputs["dataset"], {"env": {}, "gpus": None})[0]
    )
    assert json.loads((res.out_dir / "utterances.jsonl").read_text())["hyp"] == "default -"


def test_api_card_language_knob_and_user_override(tmp_path):
    knob = "settings:\n  X_LANGUAGE: en-US\n"
    mdl = load_model(
        stand_in(tmp_path / "m", "api", "[en-US, fr-FR, fr-CA]", echo(tmp_path / "ran"), knob)
    )
    ds = load_dataset(small_copy(MINI_FR, tmp_path / "d", 1, "fr-CA"))
    assert plan_language(mdl, ds).env == {"ASRBENCH_LANGUAGE": "fr-CA", "X_LANGUAGE": "fr-CA"}
    user = {"ASRBENCH_LANGUAGE": "auto"}
    assert plan_language(mdl, ds, user_env=user).env == {"X_LANGUAGE": "fr-CA"}


def test_mixed_language_column_is_refused_unless_forced(tmp_path):
    mdl = load_model(stand_in(tmp_path / "m", "multi", "[en, fr]", echo(tmp_path / "ran")))
    ds = load_dataset(small_copy(MINI_FR, tmp_path / "d", 2, "fr", column="en"))
    with pytest.raises(LanguageError, match="LANGUAGE column names en"):
        plan_language(mdl, ds)
    plan = plan_language(mdl, ds, force=True)
    assert plan.forced and plan.mixed == ("en",) and plan.env == {"ASRBENCH_LANGUAGE": "fr"}
    with pytest.raises(LanguageError):
        check_grid([str(tmp_path / "m" / "multi")], [str(tmp_path / "d")])


def test_every_card_default_language_is_its_first():
    """The platform sets nothing for a card's first language, so the program's own default
    (its `*_LANGUAGE` setting, Whisper's decoding.language) must be that language."""
    from asrbench.benchmark.language import language_setting
    from asrbench.modelcard import load_all

    models, problems = load_all(REPO_ROOT / "models")
    assert not problems
    for m in models:
        knob = language_setting(m.card.settings)
        default = (
            m.card.settings[knob] if knob else m.card.extra.get("decoding", {}).get("language")
        )
        assert default in (None, m.card.languages[0]), m.id


def test_language_disparity_by_hand():
    # language a: 2 utterances of 5 words; clean 1+0 errors, noisy 2+1 -> WERD (3-1)/10 = 0.2
    # language b: 1 utterance of 4 words; clean 0, noisy 0 -> WERD 0
    a = LanguageSample(
        "da", "fr", {"clean": {"u1": (1, 5), "u2": (0, 5)}, "n": {"u1": (2, 5), "u2": (1, 5)}}
    )
    b = LanguageSample("db", "en", {"clean": {"v": (0, 4)}, "n": {"v": (0, 4)}})
    per_lang, between = language_disparity("m", [a, b], ["n"], seed=0, n_boot=200)
    assert [r["werd"] for r in per_lang] == pytest.approx([0.2, 0.2, 0.0, 0.0])
    assert [r["condition"] for r in per_lang] == ["n", "mean", "n", "mean"]
    diff = between[0]
    assert diff["werd_diff"] == pytest.approx(0.2)
    # resampling a's two utterances: WERD is 0.2 whatever is drawn (each adds 1 error)
    assert diff["ci_low"] == pytest.approx(0.2) and diff["ci_high"] == pytest.approx(0.2)


def test_cross_language_robustness_for_real(tmp_path, monkeypatch):
    """Two languages, one perturbation, three utterances each, through ops/robustness."""
    from asrbench.campaign.robustness import RobustnessOptions, cell_counts, run_languages
    from asrbench.perturb.robustness import to_markdown

    # own_cache: the checkout's NSW grammars (a fresh cache compiled en's and fr's: 64 s)
    monkeypatch.setenv("ASRBENCH_CACHE", str(own_cache(tmp_path / "acache")))
    model = stand_in(tmp_path / "models", "loud", "[en, fr]", LOUDNESS)
    opts = RobustnessOptions(
        seed=0, runner="local", jobs=1, normaliser="none", utts=3, results_root=tmp_path / "r"
    )
    rec = run_languages([str(model)], ["mini_en", "mini_fr"], ["gaussian_noise:4"], opts)
    again = RobustnessRecord.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert again.languages == rec.languages and again.language_disparity
    assert {(r["dataset"], r["language"]) for r in rec.rows} == {
        ("mini_en", "en"),
        ("mini_fr", "fr"),
    }
    by = {(r["language"], r["condition"]): r for r in rec.languages}
    for row in rec.rows:  # the per-language WERD agrees with the table's, from other files
        assert by[(row["language"], row["condition"])]["werd"] == pytest.approx(row["werd"])
    for lang in ("en", "fr"):
        r = by[(lang, "gaussian_noise:4")]
        assert r["ci_low"] <= r["werd"] <= r["ci_high"] and r["n_utts"] == 3
    d = rec.language_disparity[0]
    assert d["werd_diff"] == pytest.approx(by[("en", "mean")]["werd"] - by[("fr", "mean")]["werd"])
    fr_cells = [c for c in rec.cells if c["language"] == "fr"]
    assert all(len(cell_counts(Path(c["folder"]))) == 3 for c in fr_cells)
    assert "Between languages" in to_markdown(rec)
    assert np.isfinite([d["ci_low"], d["ci_high"]]).all()


def test_whisper_base_on_mini_fr_in_docker(tmp_path):
    """The real multilingual model, told the dataset's language by the platform."""
    from asrbench.images.engine import engine_available

    require("docker", engine_available(), "no Docker Engine")
    res = run_benchmark(
        "whisper_base",
        "mini_fr",
        JobSpec(
            runner="docker",
            results_root=tmp_path / "results",
            cache_root=tmp_path / "cache",
            max_utts=1,
            progress=False,
            scorer_options={"nsw": False},
        ),
    )
    run = read_record(res.out_dir / "run.json", RunRecord.from_dict)
    assert run.language.env == {"ASRBENCH_LANGUAGE": "fr"}
    assert res.summary.scorer["lang"] == "fr"
    assert res.metrics is not None and res.metrics.ter is not None and res.metrics.ter < 0.5


def test_ops_models_shows_each_cards_languages(cli):
    code, out, _ = cli("models")
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.count("|") > 5}
    assert code == 0 and "languages" in rows["id"]
    assert "en,fr,es" in rows["whisper_base"] and "fr-FR" in rows["aws_transcribe_en"]
    assert "| en |" in rows["whisper_tiny_en"]


def test_campaigns_refuse_before_deriving(tmp_path, cli):
    from asrbench.campaign.robustness import RobustnessOptions, plan_grid

    opts = RobustnessOptions(runner="local", normaliser="none", results_root=tmp_path / "r")
    with pytest.raises(LanguageError, match="whisper_tiny_en"):
        plan_grid(["whisper_tiny_en"], "mini_fr", ["gaussian_noise:4"], opts)
    forced = RobustnessOptions(runner="local", normaliser="none", force_language=True)
    assert plan_grid(["whisper_tiny_en"], "mini_fr", [], forced).campaign.job.force_language
    code, _, err = cli("fairness", "-m", "whisper_tiny_en", "-d", "mini_fr", "--by", "GENDER")
    assert code == 2 and "lists languages en" in err
    assert not (tmp_path / "r").exists()


def test_fairness_force_reaches_the_cells_job_and_only_then_its_options(tmp_path):
    from asrbench.benchmark.language import check_grid
    from asrbench.fairness.pipeline import FairnessOptions, plan

    check_grid(["whisper_tiny_en"], ["mini_fr"], True)  # forced: no refusal
    with pytest.raises(LanguageError, match="whisper_tiny_en"):
        check_grid(["whisper_tiny_en"], ["mini_fr"])
    forced = FairnessOptions(
        by="GENDER", force_language=True, runner="local", specs=("gaussian_noise:3",)
    )
    # (mini_fr has one speaker: the job is checked on a set with groups)
    p = plan(["whisper_tiny_en"], "ls_gender", forced, results_root=tmp_path / "r")
    assert p.campaign.job.force_language and forced.to_dict()["force_language"] is True
    assert "force_language" not in FairnessOptions(by="GENDER").to_dict()
