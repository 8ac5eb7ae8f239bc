"""Building the site: determinism, bad input, the vendored library, the statistics it shows."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from asrbench.report import ReportOptions, build_site
from asrbench.report.collect import collect
from asrbench.report.site import HERE, vendor_js
from asrbench.results.ranking import rank_dataset
from tests.report.conftest import copy_tree


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_inputs_give_a_byte_identical_site(results_tree: Path, tmp_path: Path) -> None:
    # audio re-encoded too (every file above 1 kB): ffmpeg with bit-exact flags
    a = build_site(
        ReportOptions(results=results_tree, out=tmp_path / "a" / "site", audio_max_bytes=1000)
    ).out
    ta = _tree_bytes(a)
    assert any(k.endswith(".ogg") for k in ta)
    # Rebuilt in one process into the same folder, which holds a stray file: the same bytes,
    # and the folder replaced whole. (Two builds, not three: each takes 10-15 s here.)
    (a / "stray.html").write_text("not from this build")
    b = build_site(ReportOptions(results=results_tree, out=a, audio_max_bytes=1000, jobs=1)).out
    tb = _tree_bytes(b)
    assert ta.keys() == tb.keys()
    assert [k for k in ta if ta[k] != tb[k]] == []


def test_the_site_uses_the_vendored_checksummed_library(site: Path) -> None:
    meta = json.loads((HERE / "vendor" / "vendor.json").read_text())["plotly"]
    data = (site / "assets" / "plotly-basic.min.js").read_bytes()
    assert hashlib.sha256(data).hexdigest() == meta["sha256"]
    assert meta["npm_integrity"].startswith("sha512-") and meta["version"]
    assert vendor_js().encode() == data


def test_bad_inputs_are_named_and_the_rest_is_built(
    results_tree: Path, tmp_path: Path, cli
) -> None:
    root = copy_tree(results_tree, tmp_path / "results")
    truncated = root / "sloppy" / "mini_en" / "summary.json"
    truncated.write_text(truncated.read_text()[:200])

    def cell(model: str, prefix: str) -> Path:  # robustness cells of a subset: <name>__u3-<key>
        (one,) = (root / model).glob(prefix + "*")
        return one

    noisy2, noisy4, clean = (
        cell("planted", "mini_en__gaussian_noise-2__s0"),
        cell("planted", "mini_en__gaussian_noise-4__s0"),
        cell("sloppy", "mini_en__clean__s0"),
    )
    no_run = noisy2 / "run.json"
    no_run.unlink()
    older = noisy4 / "summary.json"
    old = json.loads(older.read_text())
    old["format"] = "asrbench-summary-v1"
    older.write_text(json.dumps(old))
    bad_lines = clean / "utterances.jsonl"
    lines = bad_lines.read_text().splitlines()
    bad_lines.write_text("\n".join(lines[:1] + [lines[1][:40]] + lines[2:]) + "\n")
    rob = next((root / "robustness").rglob("robustness.json"))
    rob.write_text(rob.read_text()[:100])

    out = tmp_path / "site"
    code, stdout, stderr = cli("report", "--results", root, "-o", out)
    assert code == 0, stderr
    assert "problem" in stdout + stderr or "problem" in stderr
    problems = build_site(ReportOptions(results=root, out=tmp_path / "site2")).problems
    text = "\n".join(problems)
    assert f"{truncated}: not valid JSON" in text
    assert f"{no_run}: missing" in text
    assert f"{older}: written by an older asrbench (asrbench-summary-v1)" in text
    assert f"{bad_lines}:2: not valid JSON" in text
    assert f"{rob}: not valid JSON" in text
    for p in (truncated, no_run, older, bad_lines, rob):
        assert str(p) in stderr  # the CLI names every file too
    # the rest is built: the planted cell, the index with the problems and the reason
    index = (out / "index.html").read_text()
    assert "Problems (5)" in index
    assert "unreadable summary.json" in index
    assert (out / "cell" / "planted" / "mini_en.html").is_file()
    assert not (out / "cell" / "sloppy" / "mini_en.html").exists()
    # the cell without run.json is shown, its provenance says why it is incomplete
    page = (out / "cell" / "planted" / f"{noisy2.name}.html").read_text()
    assert "run.json is missing or unreadable" in page
    # the cell with a broken utterances.jsonl names the file and line on its page
    page = (out / "cell" / "sloppy" / f"{clean.name}.html").read_text()
    assert f"{bad_lines}:2: not valid JSON" in page
    # --strict turns problems into exit status 1, the site is still written
    code, _, _ = cli("report", "--results", root, "-o", out, "--strict", "-q")
    assert code == 1 and (out / "index.html").is_file()


def test_fairness_page_is_omitted_when_there_is_none(results_tree: Path, tmp_path: Path) -> None:
    root = copy_tree(results_tree, tmp_path / "results")
    import shutil

    shutil.rmtree(root / "fairness")
    out = build_site(ReportOptions(results=root, out=tmp_path / "site", audio="none")).out
    assert not (out / "fairness.html").exists()
    assert "fairness.html" not in (out / "index.html").read_text()


def test_refuses_to_replace_a_folder_that_is_not_a_report(
    results_tree: Path, tmp_path: Path
) -> None:
    from asrbench.errors import InputError

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="not an earlier report"):
        build_site(ReportOptions(results=results_tree, out=tmp_path / "mine"))
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_ablation_reproduces_the_stored_counts(results_tree: Path) -> None:
    """The ladder the benchmark stored in each cell's ablation.json (results/derived.py), as
    the report reads it: its last step is the cell's own counts."""
    from asrbench.report.ablation import stored_dataset

    r = collect(results_tree, datasets=["mini_en"])
    cells = [c for c in r.cells.values() if c.dataset == "mini_en"]
    abl, missing = stored_dataset(cells)
    assert set(abl) == {"planted", "sloppy"} and missing == {}
    for a in abl.values():
        assert a.matches_stored, a.note
        stages = [x["stage"] for x in a.rows]
        extra = ("+NONSPEECH", "+OPTIONAL", "+INVISIBLE", "+UNICODE", "+ALTERNATION", "+FRAGMENT")
        assert [x for x in stages if not x.startswith(extra)] == [
            "raw",
            "+CASE",
            "+PUNC",
            "+ITJ",
            "+UK-US",
            "+NSW",
            "+DAE",
        ]
    sloppy = {x["stage"]: x for x in abl["sloppy"].rows}
    assert sloppy["raw"]["ter"] > sloppy["+CASE"]["ter"] > sloppy["+PUNC"]["ter"]
    assert sloppy["+UK-US"]["ter"] < sloppy["+ITJ"]["ter"]  # "apologised" -> "apologized"
    # the planted model only differs by one word: every step leaves it one substitution
    assert {x["sub"] for x in abl["planted"].rows if x["applied"] and x["stage"] != "raw"} == {1}
    assert "PUNC" in abl["sloppy"].applied["LJ001-0001"]


def _site_bytes(root: Path, out: Path) -> dict[str, bytes]:
    return _tree_bytes(build_site(ReportOptions(results=root, out=out, audio="none")).out)


def test_a_cell_stored_before_its_ablation_says_how_to_backfill_it(
    results_tree: Path, tmp_path: Path, cli
) -> None:
    """The report renders stored records only: a cell without ablation.json (written by an
    older asrbench) gets a one-line note naming `ops/report --backfill`, nothing is re-scored;
    the backfill writes the same bytes the benchmark stored, and the site is the same again."""
    root = copy_tree(results_tree, tmp_path / "results")
    stored = {p: p.read_bytes() for p in sorted(root.rglob("ablation.json"))}
    # the main datasets' cells store it; the robustness grid's derived datasets do not
    assert {(p.parent.parent.name, p.parent.name) for p in stored} == {
        ("planted", "mini_en"),
        ("sloppy", "mini_en"),
    }
    before = _site_bytes(root, tmp_path / "before")
    for p in stored:
        p.unlink()
    older = _site_bytes(root, tmp_path / "older")
    assert "ablation.html" not in older
    page = older["cell/sloppy/mini_en.html"].decode()
    note = f"{root / 'sloppy' / 'mini_en' / 'ablation.json'}: missing"
    assert note in page and "run `ops/report --backfill`" in page
    assert "ablation-cell" not in page  # no ladder: nothing was re-scored
    code, out, err = cli("report", "--results", root, "--backfill", "-o", tmp_path / "s", "-q")
    assert code == 0, err
    assert {p: p.read_bytes() for p in sorted(root.rglob("ablation.json"))} == stored
    assert _site_bytes(root, tmp_path / "after") == before


def _fake_cell(model: str, errs: list[int], n_ref: list[int]):
    from asrbench.report.collect import Cell
    from asrbench.results.summary import Selection, Summary
    from scoring.metrics import Metrics

    m = Metrics(
        unit="word",
        n_utts=len(errs),
        n_ref=sum(n_ref),
        n_hyp=sum(n_ref),
        cor=sum(n_ref) - sum(errs),
        sub=sum(errs),
        ins=0,
        dele=0,
        n_err_utts=sum(e > 0 for e in errs),
        mter_den=sum(n_ref),
        n_missing=0,
        n_empty_ref=0,
    )
    s = Summary(
        producer="benchmark",
        result_key=f"sha256:{model}",
        metrics=m,
        selection=Selection(len(errs), len(errs), "ids"),
        scorer={},
        model=model,
        dataset="d",
        dataset_hash="sha256:d",
    )
    c = Cell(model, "d", Path("."), "reported", s, {})
    c._utts = [
        {"id": f"u{i}", "sub": e, "ins": 0, "del": 0, "n_ref": n}
        for i, (e, n) in enumerate(zip(errs, n_ref, strict=True))
    ]
    return c


def test_rank_groups_share_a_range_when_the_difference_is_not_significant() -> None:
    rng = np.random.default_rng(0)
    n_ref = [20] * 400
    base = rng.binomial(20, 0.10, 400).tolist()
    # b: the same utterances with a zero-mean jitter of one word here and there
    jitter = rng.choice([-1, 0, 0, 0, 1], 400)
    close = np.clip(np.array(base) + jitter, 0, 20).tolist()
    worse = rng.binomial(20, 0.25, 400).tolist()
    r = rank_dataset(
        [
            _fake_cell("a", base, n_ref),
            _fake_cell("b", close, n_ref),
            _fake_cell("c", worse, n_ref),
        ],
        reps=1000,
    )
    assert sorted(r.order[:2]) == ["a", "b"] and r.order[2] == "c"
    assert r.group == {"a": "1-2", "b": "1-2", "c": "3"}
    assert not r.pairs["a"]["b"]["significant"] and r.pairs["a"]["c"]["significant"]
    assert r.pairs["b"]["a"]["delta_ter"] == -r.pairs["a"]["b"]["delta_ter"]


def test_linked_audio_resolves_to_the_dataset_files(results_tree: Path, tmp_path: Path) -> None:
    out = build_site(ReportOptions(results=results_tree, out=tmp_path / "site", audio="link")).out
    assert not (out / "audio").exists()
    page = out / "cell" / "planted" / "mini_en.html"
    text = page.read_text()
    tag = '<script type="application/json" class="page-data">'
    start = text.index(tag) + len(tag)
    data = json.loads(text[start : text.index("</script>", start)])
    hrefs = [u["a"] for u in data["utts"]]
    assert len(hrefs) == 35 and all(hrefs)
    for h in hrefs:
        target = (page.parent / data["audioRoot"] / h).resolve()
        assert target.is_file() and target.parent.parent.name == "mini_en"


def test_a_model_named_but_never_run_says_not_run(results_tree: Path, tmp_path: Path) -> None:
    out = build_site(
        ReportOptions(
            results=results_tree,
            out=tmp_path / "site",
            audio="none",
            models=["planted", "ghost"],
            datasets=["mini_en"],
            ablation=False,
        )
    ).out
    index = (out / "index.html").read_text()
    row = index[index.index('data-model="ghost"') :]
    row = row[: row.index("</tr>")]
    assert "not run" in row
    assert 'data-model="sloppy"' not in index


def test_reference_free_records_need_no_alignment(tmp_path: Path) -> None:
    from asrbench.report.cellview import utterance_rows
    from asrbench.report.collect import ReportInputError, read_utterances

    f = tmp_path / "utterances.jsonl"
    f.write_text('{"duration": 2.4, "failed": null, "hyp": "while they won\'t", "id": "u1"}\n')
    recs = read_utterances(f, scored=False)
    with pytest.raises(ReportInputError, match=r"utterances.jsonl:1: not an utterance record"):
        read_utterances(f, scored=True)
    row = utterance_rows(None, recs, {}, {})[0]  # type: ignore[arg-type]
    assert row["ops"] is None and row["hyp"] == "while they won't" and row["e"] == 0


def test_robustness_flags_a_model_near_the_ceiling(tmp_path: Path) -> None:
    """pocketsphinx on telephone speech: a smaller mean WERD than Whisper's only because it
    starts at 68 % WER. The view flags it and gives the share of headroom lost."""
    from asrbench.report.robustness import view
    from asrbench.results.records import RobustnessRecord

    rows = []
    for model, clean, wers in (
        ("pocketsphinx", 0.68, [0.80, 0.876]),
        ("whisper_tiny", 0.05, [0.20, 0.373]),
    ):
        for sev, w in zip((2, 4), wers, strict=True):
            rows.append(
                {
                    "model": model,
                    "condition": f"gaussian_noise:{sev}",
                    "wer_clean": clean,
                    "wer": w,
                    "werd": w - clean,
                    "nwerd": None,
                    "difficulty": None,
                    "perturbation": "gaussian_noise",
                    "severity": sev,
                }
            )
    data = RobustnessRecord.from_dict(
        {"dataset": "tel", "seed": 0, "normaliser": "none", "rows": rows}
    )
    v = view(tmp_path / "robustness" / "tel" / "g" / "robustness.json", data, {})
    s = {x["model"]: x for x in v["summary"]}
    assert s["pocketsphinx"]["mean_werd"] == pytest.approx(0.158)
    assert s["whisper_tiny"]["mean_werd"] == pytest.approx(0.2365)
    assert s["pocketsphinx"]["ceiling"] and not s["whisper_tiny"]["ceiling"]
    # relative to what was left to lose, pocketsphinx lost more
    assert s["pocketsphinx"]["headroom_lost"] > s["whisper_tiny"]["headroom_lost"]
    assert [p[0] for p in v["curves"]["gaussian_noise"]["pocketsphinx"]] == [0, 2, 4]
    aurora = {r["model"]: r for r in v["aurora_rows"]}
    assert aurora["pocketsphinx"]["wer"] == {"20": 0.80, "0": 0.876}
    assert aurora["pocketsphinx"]["avg_0_20"] is None  # 15, 10, 5 dB missing


def test_every_record_the_platform_wrote_reads_back_whole(results_tree: Path) -> None:
    """run.json, robustness.json and fairness.json of a real tree, through their typed
    records: every key and value comes back; robustness.md is the record's view."""
    from asrbench.perturb.robustness import to_markdown
    from asrbench.results.records import (
        FairnessRecord,
        RobustnessRecord,
        RunRecord,
        read_record,
    )

    for name, from_dict in (
        ("run.json", RunRecord.from_dict),
        ("robustness.json", RobustnessRecord.from_dict),
        ("fairness.json", FairnessRecord.from_dict),
    ):
        paths = sorted(results_tree.rglob(name))
        assert paths, name
        for path in paths:
            assert read_record(path, from_dict).to_dict() == json.loads(path.read_text()), path
    for path in results_tree.rglob("robustness.json"):
        rec = read_record(path, RobustnessRecord.from_dict)
        assert rec.version == 2 and rec.provenance is not None and rec.cells
        assert to_markdown(rec) == (path.parent / "robustness.md").read_text()
