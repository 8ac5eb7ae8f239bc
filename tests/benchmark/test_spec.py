"""The job spec: a request file's options under the command line's flags, checked where read."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from asrbench.benchmark import JobSpec
from asrbench.benchmark.errors import RequestError
from asrbench.benchmark.request import RequestOptions, load_request
from asrbench.errors import InputError


def _request(tmp_path: Path, options: str) -> Path:
    path = tmp_path / "request.yaml"
    path.write_text(f"models: [m1, m2]\ndatasets: [mini_en]\noptions: {options}\n")
    return path


def test_flags_win_over_the_file_and_defaults_fill_the_rest(tmp_path: Path) -> None:
    req = load_request(
        _request(
            tmp_path,
            "{jobs: 2, max_utts: 5, seed: 1, runner: local, results: out, utt_timeout_s: 30, "
            "cpus: 2, gpus: 1, memory: 4g, scorer: {nsw: false, punc: true}, "
            'env: {A: "file", B: "file"}}',
        )
    )
    assert req.models == ("m1", "m2") and req.cells()[1] == ("m2", "mini_en")
    flags = RequestOptions(seed=7, timeout_s=60.0, scorer={"punc": False}, env={"B": "flag"})
    spec = JobSpec.build(req.options, flags, progress=False, command=["ops/benchmark", "-x"])
    assert (spec.jobs, spec.max_utts, spec.seed, spec.runner) == (2, 5, 7, "local")
    assert spec.results_root == Path("out") and spec.cache_root is None
    assert (spec.utt_timeout_s, spec.timeout_s, spec.cpus, spec.gpus) == (30.0, 60.0, 2, "1")
    assert spec.memory == "4g" and spec.progress is False and not spec.replace
    # env and scorer options merge key by key, the flag's value winning
    assert dict(spec.env) == {"A": "file", "B": "flag"}
    assert dict(spec.scorer_options) == {"nsw": False, "punc": False}
    assert spec.command == ("ops/benchmark", "-x")
    # nothing set anywhere: the defaults, the same as JobSpec()
    assert JobSpec.build(RequestOptions(), RequestOptions()) == JobSpec()
    assert JobSpec().timeout_s == 3600.0 and JobSpec().jobs == 1


def test_the_spec_is_frozen_and_owns_its_mappings() -> None:
    env = {"X": "1"}
    spec = JobSpec(env=env, scorer_options={"nsw": False})
    env["Y"] = "2"  # the caller's dict is copied, not shared
    assert dict(spec.env) == {"X": "1"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.jobs = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        spec.env["Z"] = "3"  # type: ignore[index]
    assert dataclasses.replace(spec, jobs=3).jobs == 3
    opts = spec.run_options()
    opts.env["Y"] = "2"  # the runner's copy may change per model; the spec does not
    assert dict(spec.env) == {"X": "1"}


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ("{jobs: 0}", "options.jobs 0"),
        ("{jobs: two}", "options.jobs 'two'"),
        ("{max_utts: 2.5}", "options.max_utts 2.5"),
        ("{seed: -1}", "options.seed -1"),
        ("{utt_timeout_s: .nan}", "options.utt_timeout_s nan"),
        ("{timeout_s: -1}", "options.timeout_s -1"),
        ("{cpus: yes}", "options.cpus True"),
        ("{gpus: some}", "options.gpus 'some'"),
        ("{runner: [docker]}", "options.runner ['docker']"),
        ("{scorer: nsw}", "options.scorer 'nsw'"),
        ("{scorer: {nsw: [1]}}", "options.scorer nsw: [1]"),
        ("{env: [A=1]}", "options.env ['A=1']"),
        ("{env: {PORT: 8000}}", "options.env.PORT: 8000 is not a text"),
        ("{env: {BAD-NAME: x}}", "options.env 'BAD-NAME': not an environment variable name"),
        ("{env: {A: null}}", "options.env.A: None is not a text"),
        ("{jobz: 2}", "unknown option(s) ['jobz']"),
        ("[jobs, 2]", "options must be a mapping"),
    ],
)
def test_a_bad_request_line_is_named_with_the_file_and_key(
    tmp_path: Path, options: str, named: str
) -> None:
    path = _request(tmp_path, options)
    with pytest.raises(RequestError) as err:
        load_request(path)
    assert str(err.value).startswith(f"request {path}: ") and named in str(err.value), err.value
    assert err.value.exit_code == 2  # an input error: fix the file and rerun


def test_env_in_a_request_file_reaches_the_program_settings(tmp_path: Path) -> None:
    req = load_request(_request(tmp_path, '{env: {OPENAI_BASE_URL: "http://127.0.0.1:8000/v1"}}'))
    spec = JobSpec.build(req.options, RequestOptions())
    assert spec.run_options().env == {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}
    # an empty key (`jobs:`) is not set, so the default applies
    empty = load_request(_request(tmp_path, "{jobs: , env: }"))
    assert empty.options == RequestOptions()


def test_a_spec_made_in_python_is_checked_too() -> None:
    with pytest.raises(InputError, match="--jobs 0: give at least 1"):
        JobSpec(jobs=0)
    with pytest.raises(InputError, match="timeout_s inf: give a number of seconds above 0"):
        JobSpec(timeout_s=float("inf"))
    with pytest.raises(InputError, match="env 'A B': not an environment variable name"):
        JobSpec(env={"A B": "x"})


def test_the_cli_reads_env_from_a_request_and_refuses_a_bad_one(tmp_path: Path, cli) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("models: [m]\ndatasets: [mini_en]\noptions: {env: {LEVEL: 3}}\n")
    code, _, err = cli("benchmark", "--request", bad)
    assert code == 2 and f"request {bad}: options.env.LEVEL: 3 is not a text" in err, err
    code, _, err = cli("benchmark", "-m", "m", "--env", "1X=y")
    assert code == 2 and "--env '1X': not an environment variable name" in err, err


def test_run_json_records_the_spec_as_before(fake_models, tmp_path: Path) -> None:
    """The spec is carried through prepare, run and finish: run.json's options and the cache
    key's runtime are what the flags and the file said, under the same names as before."""
    from asrbench.benchmark import run_benchmark

    spec = JobSpec(
        runner="local",
        results_root=tmp_path / "r",
        cache_root=tmp_path / "c",
        progress=False,
        max_utts=3,
        seed=2,
        utt_timeout_s=30,
        env={"FAKE_SETTING": "on"},
        scorer_options={"nsw": False},
        command=("ops/benchmark", "--test"),
    )
    cell = run_benchmark(fake_models("fake_spec"), "mini_en", spec)
    run = json.loads((cell.out_dir / "run.json").read_text())
    assert run["command"] == ["ops/benchmark", "--test"]
    opts = run["options"]
    assert {k: opts[k] for k in ("jobs", "max_utts", "seed", "utt_timeout_s", "scorer")} == {
        "jobs": 1,
        "max_utts": 3,
        "seed": 2,
        "utt_timeout_s": 30,
        "scorer": {"nsw": False},
    }
    assert opts["run"]["env"] == {"ASRBENCH_UTT_TIMEOUT": "30", "FAKE_SETTING": "on"}
    assert run["cache"]["inputs"]["runtime"]["env"] == opts["run"]["env"]
    assert cell.summary.selection.max_utts == 3 and cell.summary.scorer["options"] == {"nsw": False}


def test_the_request_file_in_the_docs_is_a_valid_request(tmp_path: Path) -> None:
    from asrbench.settings import REPO_ROOT

    doc = (REPO_ROOT / "docs" / "BENCHMARK.md").read_text().split("## Request files")[1]
    example = doc.split("```yaml\n")[1].split("```")[0]
    path = tmp_path / "request.yaml"
    path.write_text(example)
    req = load_request(path)
    spec = JobSpec.build(req.options, RequestOptions())
    assert req.models and req.datasets and spec.env and spec.scorer_options


def test_run_matrix_returns_or_raises_errors_and_follows_the_cells(monkeypatch) -> None:
    """One entry point for the command (every cell, errors returned) and the campaigns (the
    first error raised, the later cells not started)."""
    from asrbench.benchmark import run as run_mod
    from asrbench.benchmark.errors import BenchmarkError

    ran: list[tuple[str, JobSpec]] = []

    def stand_in(model, dataset, spec=None, *, executor=None):
        ran.append((model, spec))
        if model == "bad":
            raise BenchmarkError(f"model {model} on {dataset}: broken")
        return f"{model} x {dataset}"

    monkeypatch.setattr(run_mod, "run_benchmark", stand_in)
    spec = JobSpec(runner="local", jobs=2)
    cells = [("a", "d"), ("bad", "d"), ("c", "d")]
    events: list[str] = []
    outcomes = run_mod.run_matrix(
        cells,
        spec,
        on_start=lambda i: events.append(f"start {i}"),
        on_result=lambda i, o: events.append(f"end {i}"),
    )
    assert outcomes[0] == "a x d" and outcomes[2] == "c x d"
    assert isinstance(outcomes[1], BenchmarkError)
    assert events == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
    assert all(s is spec for _, s in ran)  # the one spec reaches every cell unchanged
    ran.clear()
    with pytest.raises(BenchmarkError, match="model bad on d: broken"):
        run_mod.run_matrix(cells, spec, raise_errors=True)
    assert [m for m, _ in ran] == ["a", "bad"]  # one at a time: the cell after it never starts
    assert run_mod.run_matrix([("a", "d")], spec, raise_errors=True) == ["a x d"]
