"""A real results tree for the report's tests, made by the platform itself, and a browser.

Two stand-in recognisers run through the real benchmark (local runner, real scorer, the
platform's writers) on the embedded `mini_en` dataset, then through `ops/robustness` (a small
white-noise grid on three utterances, derived audio and STOI/PESQ/DNSMOS computed for real) and
`ops/fairness` (per-gender accuracy). The stand-ins are small programs that need no model: they
read the audio (stdlib `wave`) and write the reference text back, changed in known ways, so that
the numbers in the site can be checked exactly:

- `planted`: the reference text, except that in LJ001-0002 ("in being comparatively modern.")
  "modern" becomes "modem": one planted substitution; noise makes it drop words.
- `sloppy`: lower case without punctuation (what CASE and PUNC undo), "apologised" for
  "apologized" (UK-US),
  a filler "um" in every fifth utterance, and the last word of every third utterance missing.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from asrbench.settings import REPO_ROOT
from tests import factories
from tests.conftest import own_cache, require
from tests.report.browser import chromium_path

MINI_EN = REPO_ROOT / "datasets" / "mini_en"
PLANTED_ID = "LJ001-0002"
ROBUSTNESS_UTTS = "LJ001-0001,LJ001-0002,LJ001-0003"

PROGRAM = textwrap.dedent(r'''
    """Stand-in recogniser for the report tests: references back, changed in known ways."""
    import sys
    import wave
    from array import array
    from pathlib import Path

    wav_list, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)

    def roughness(path):
        # mean |x[n] - x[n-1]| / mean |x[n]|: about 0.1-0.3 for speech at 16 kHz, ~1.4 for
        # white noise; so it grows with added white noise (a crude, deterministic SNR probe).
        with wave.open(path) as w:
            x = array("h", w.readframes(w.getnframes()))
        if len(x) < 2:
            return 0.0
        a = sum(abs(v) for v in x) or 1
        d = sum(abs(x[i] - x[i - 1]) for i in range(1, len(x)))
        return d / a

    with open(out / "hyp.tsv", "a") as hyp, open(out / "timing.tsv", "a") as timing:
        for n, line in enumerate(Path(wav_list).read_text().splitlines()):
            uid, _, path = line.partition("\t")
            text = TEXTS[uid]
            words = text.split()
            if MODE == "planted":
                if uid == "LJ001-0002":
                    text = text.replace("modern", "modem")
                words = text.split()
                drop = int(max(0.0, roughness(path) - 0.35) * 8)
                words = words[: max(0, len(words) - drop)]
            else:
                words = "".join(c for c in text.lower()
                                if c.isalnum() or c.isspace() or c == "'").split()
                words = ["apologised" if w == "apologized" else w for w in words]
                if n % 5 == 0:
                    words.insert(1, "um")
                if n % 3 == 0 and words:
                    words.pop()
            hyp.write(f"{uid}\t{' '.join(words)}\n")
            timing.write(f"{uid}\t{0.01 * (1 + n % 4):.4f}\t1.000\n")
            hyp.flush()
''')


def _texts() -> dict[str, str]:
    lines = (MINI_EN / "metadata.tsv").read_text(encoding="utf-8").splitlines()
    head = lines[0].split("\t")
    rows = [dict(zip(head, line.split("\t"), strict=False)) for line in lines[1:] if line]
    return {r["ID"]: r["TEXT"] for r in rows}


STAND_IN_ARCHITECTURE = "none (writes the reference back, changed in known ways)"


def make_model(root: Path, model_id: str, mode: str, **card: Any) -> Path:
    """The stand-in recogniser in `mode`; `card` adds card fields (tests/factories.py)."""
    return factories.make_model(
        root,
        model_id,
        f"MODE = {mode!r}\nTEXTS = {_texts()!r}\n" + PROGRAM,
        name=f"Stand-in recogniser ({mode})",
        type="open-source",
        architecture=STAND_IN_ARCHITECTURE,
        **card,
    )


@pytest.fixture(scope="session")
def results_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results/ with two models on mini_en, a robustness grid and a fairness run."""
    from asrbench.cli import main

    base = tmp_path_factory.mktemp("report-results")
    models = base / "models"
    make_model(models, "planted", "planted")
    make_model(models, "sloppy", "sloppy")
    (models / "README.md").write_text("stand-in recognisers of tests/report\n")
    root = base / "results"
    common = ["--results", str(root), "--runner", "local"]
    # The models are found by ID in their own folder (fairness names its output by model ID).
    # A cache of its own, so the derived datasets of this small grid never replace the
    # checkout's (a subset of a dataset is derived under the same folder name); NSW's grammars
    # and results are shared with the checkout's cache (compiling them takes minutes).
    cache = own_cache(base / "cache")
    env = {"ASRBENCH_MODELS_DIR": str(models), "ASRBENCH_CACHE": str(cache)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        assert (
            main(
                [
                    "benchmark",
                    "-m",
                    "planted",
                    "-m",
                    "sloppy",
                    "-d",
                    "mini_en",
                    "--no-progress",
                    *common,
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    "robustness",
                    "-m",
                    "planted",
                    "-m",
                    "sloppy",
                    "-d",
                    "mini_en",
                    "-g",
                    "gaussian_noise:2;gaussian_noise:4",
                    "--utts",
                    ROBUSTNESS_UTTS,
                    "--normaliser",
                    "stoi",
                    "-j",
                    "1",
                    *common,
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    "fairness",
                    "-m",
                    "planted",
                    "-m",
                    "sloppy",
                    "-d",
                    "mini_en",
                    "--by",
                    "GENDER",
                    "--min-speakers",
                    "1",
                    "--min-utts",
                    "1",
                    "-q",
                    *common,
                ]
            )
            == 0
        )
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return root


@pytest.fixture(scope="session")
def site(results_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The multi-page site built from the tree."""
    from asrbench.report import ReportOptions, build_site

    out = tmp_path_factory.mktemp("report-site") / "site"
    built = build_site(ReportOptions(results=results_tree, out=out))
    assert built.problems == []
    return out


@pytest.fixture(scope="session")
def single_site(results_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from asrbench.report import ReportOptions, build_site

    out = tmp_path_factory.mktemp("report-single") / "report.html"
    build_site(ReportOptions(results=results_tree, out=out, single_file=True))
    return out


@pytest.fixture(scope="session")
def summaries(results_tree: Path) -> dict[str, dict]:
    """model -> its mini_en summary.json, as stored."""
    return {
        m: json.loads((results_tree / m / "mini_en" / "summary.json").read_text())
        for m in ("planted", "sloppy")
    }


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright, network blocked; a failure in CI if missing."""
    try:
        import playwright  # noqa: F401

        have_pw = True
    except ImportError:
        have_pw = False
    require(
        "browser",
        have_pw and chromium_path() is not None,
        "needs the `chromium` Debian package and playwright (asrbench[report])",
    )
    from tests.report.browser import open_browser

    with open_browser() as (ctx, events):
        yield ctx, events


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def open_page(ctx, where: Path | str):
    """A new page of the browser context at a file (a site page) or URL, loaded."""
    page = ctx.new_page()
    page.goto(where.as_uri() if isinstance(where, Path) else where)
    page.wait_for_load_state("load")
    return page


def benchmark_cells(base: Path, models: list[str], dataset: str) -> Path:
    """`ops/benchmark` of each model on `dataset` (local runner, NSW off) into base/results,
    with a cache of the test's own (`own_cache`) for the runs' duration: the results root."""
    from asrbench.cli import main
    from tests.conftest import own_cache

    root = base / "results"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ASRBENCH_CACHE", str(own_cache(base / "cache")))
        for model in models:
            args = ["benchmark", "-m", model, "-d", dataset, "--runner", "local"]
            args += ["--score-opt", "nsw=false", "--no-progress", "--results", str(root)]
            assert main([*args, "--cache", str(base / "hyps")]) == 0
    return root
