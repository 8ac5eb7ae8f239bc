"""One stored-cell reader, one ranking: `ops/leaderboard` and the HTML report agree.

A results tree is written with the platform's own writer (`write_summary`) and per-utterance
records, with every kind of folder the reader must tell apart: reported cells, a variant of
other dataset content, samples of one selection for several models, an unreadable summary, a
model ranked on fewer datasets than the others, and a reported cell scored on other dataset
content than the rest of its column.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from asrbench.report import ReportOptions, build_site
from asrbench.results import leaderboard
from asrbench.results.ranking import mean_ranks, rank_dataset
from asrbench.results.store import scan
from asrbench.results.summary import Selection, Summary, write_summary
from scoring.metrics import Metrics


def _put(
    root: Path,
    model: str,
    ds: str,
    errs: list[int],
    folder: str = "",
    n_dataset: int | None = None,
    ids: str = "all",
    dhash: str = "sha256:d",
) -> None:
    n_ref = [10] * len(errs)
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
    sel = Selection(len(errs), n_dataset or len(errs), f"sha256:{ids}")
    s = Summary(
        producer="benchmark",
        result_key=f"sha256:{model}{ds}{folder}",
        metrics=m,
        selection=sel,
        scorer={"config_hash": "sha256:s"},
        model=model,
        dataset=ds,
        dataset_hash=dhash,
    )
    cell = root / model / (folder or ds)
    write_summary(cell / "summary.json", s)
    (cell / "utterances.jsonl").write_text(
        "".join(
            json.dumps({"id": f"u{i}", "ops": [], "sub": e, "ins": 0, "del": 0, "n_ref": 10}) + "\n"
            for i, e in enumerate(errs)
        )
    )


def _tree(root: Path) -> Path:
    _put(root, "m1", "d1", [1, 1, 0, 2])  # TER 10 %
    _put(root, "m2", "d1", [3, 2, 2, 1])  # 20 %
    _put(root, "m3", "d1", [1, 0, 2, 1])  # 10 %: ties m1
    _put(root, "m1", "d2", [3, 3, 3, 3])  # 30 %
    _put(root, "m2", "d2", [1, 0, 1, 0])  # 5 %
    # m3 on d2 was scored on other dataset content: shown, never ranked beside m1 and m2
    _put(root, "m3", "d2", [0, 0, 0, 0], dhash="sha256:other")
    # a variant beside m1's reported d1 cell: counted, not shown
    _put(root, "m1", "d1", [9, 9, 9, 9], folder="d1~0123456789ab", dhash="sha256:v")
    # samples of one selection for m1 and m2 on d3 (no full result): ranked side by side;
    # m3's sample of other utterances is not comparable
    _put(root, "m1", "d3", [2, 2], folder="d3~sample-aaaaaaaaaaaa", n_dataset=8, ids="s1")
    _put(root, "m2", "d3", [1, 1], folder="d3~sample-aaaaaaaaaaaa", n_dataset=8, ids="s1")
    _put(root, "m3", "d3", [0, 0], folder="d3~sample-bbbbbbbbbbbb", n_dataset=8, ids="s2")
    bad = root / "m2" / "d4"
    bad.mkdir(parents=True)
    (bad / "summary.json").write_text('{"format": "asrbench-summ')
    return root


def test_one_scan_tells_reported_sample_variant_and_unreadable(tmp_path: Path) -> None:
    found = scan(_tree(tmp_path))
    assert {k: c.kind for k, c in found.cells.items()} == {
        ("m1", "d1"): "reported",
        ("m2", "d1"): "reported",
        ("m3", "d1"): "reported",
        ("m1", "d2"): "reported",
        ("m2", "d2"): "reported",
        ("m3", "d2"): "reported",
        ("m1", "d3"): "sample",
        ("m2", "d3"): "sample",
        ("m3", "d3"): "sample",
    }
    assert found.cells[("m1", "d1")].others == 1 and [c.kind for c in found.hidden] == ["variant"]
    assert found.unreadable == {("m2", "d4"): "unreadable summary.json (see problems)"}
    assert len(found.problems) == 1 and "m2/d4/summary.json" in found.problems[0]


def test_ranking_rules(tmp_path: Path) -> None:
    found = scan(_tree(tmp_path))
    by_ds: dict[str, list] = {}
    for (_, d), c in found.cells.items():
        by_ds.setdefault(d, []).append(c)
    r = {d: rank_dataset(cs) for d, cs in by_ds.items()}
    assert r["d1"].rank == {"m1": 1, "m3": 1, "m2": 3}
    assert r["d2"].rank == {"m2": 1, "m1": 2}
    assert "other dataset content" in r["d2"].not_ranked["m3"]
    assert r["d3"].sample and r["d3"].rank == {"m2": 1, "m1": 2}
    assert "other utterances" in r["d3"].not_ranked["m3"]
    means = mean_ranks(r)
    # m3 is ranked on d1 only: the means are over d1, the dataset every ranked model has
    assert means.datasets == ["d1"] and means.value == {"m1": 1.0, "m2": 3.0, "m3": 1.0}
    assert means.n_ranked == {"m1": 3, "m2": 3, "m3": 1}


class _Matrix(HTMLParser):
    """The report's main leaderboard table: model -> (rank text per column, mean rank)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.mean: dict[str, str] = {}
        self._in_main = False
        self._model: str | None = None
        self._td: list[str] | None = None
        self._rank = False
        self._last_dv = ""

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "table" and a.get("id") == "leaderboard":
            self._in_main = True
        elif self._in_main and tag == "tr" and a.get("data-model"):
            self._model = a["data-model"]
            self.rows[self._model] = []
        elif self._model and tag == "td":
            self._td = []
            self._last_dv = a.get("data-v", "")
        elif self._td is not None and tag == "span" and a.get("class") == "rank":
            self._rank = True

    def handle_data(self, data: str) -> None:
        if self._rank and self._td is not None:
            self._td.append(data.strip())

    def handle_endtag(self, tag: str) -> None:
        if tag == "span":
            self._rank = False
        elif tag == "td" and self._td is not None and self._model:
            self.rows[self._model].append(" ".join(self._td))
            self.mean[self._model] = self._last_dv
            self._td = None
        elif tag == "tr":
            self._model = None
        elif tag == "table":
            self._in_main = False


def test_leaderboard_and_report_give_the_same_ranks_and_mean_ranks(tmp_path: Path) -> None:
    root = _tree(tmp_path / "results")
    board = leaderboard.build(root, reps=200)
    out = build_site(
        ReportOptions(results=root, out=tmp_path / "site", audio="none", ablation=False, reps=200)
    ).out
    page = _Matrix()
    page.feed((out / "index.html").read_text(encoding="utf-8"))
    datasets = board["datasets"]
    assert datasets == ["d1", "d2", "d3"] and sorted(page.rows) == board["models"]
    for m in board["models"]:
        report_ranks = page.rows[m][1 : 1 + len(datasets)]  # after the model's type column
        lb_ranks = [
            f"rank {c['rank']}" if (c := board["cells"][m].get(d)) and c["rank"] is not None else ""
            for d in datasets
        ]
        assert report_ranks == lb_ranks, m
        mean = board["mean_rank"][m]
        assert page.mean[m] == ("" if mean is None else str(mean)), m
    # on d1 (the common dataset) m2's 20 % against 10 % over four utterances is no significant
    # difference: all three share rank 1 (by TER alone m2 would be 3rd)
    assert board["cells"]["m2"]["d1"]["rank"] == 3 and board["cells"]["m2"]["d1"]["group"] == "1-3"
    assert board["mean_rank"] == {"m1": 1.0, "m2": 1.0, "m3": 1.0}


def test_samples_of_one_selection_share_a_folder_name_across_models(tmp_path: Path) -> None:
    """`--max-utts 250 --seed 0` for several models: one key per selection, not per model."""
    from asrbench.results.layout import place

    def sample(model: str, ids: str, options: dict) -> Summary:
        m = Metrics(
            unit="word",
            n_utts=2,
            n_ref=20,
            n_hyp=20,
            cor=18,
            sub=2,
            ins=0,
            dele=0,
            n_err_utts=1,
            mter_den=20,
            n_missing=0,
            n_empty_ref=0,
        )
        return Summary(
            producer="benchmark",
            result_key=f"sha256:{model}{ids}",
            metrics=m,
            selection=Selection(2, 8, f"sha256:{ids}", 2, 0),
            scorer={"config_hash": "sha256:s", "options": options},
            model=model,
            dataset="d",
            dataset_hash="sha256:d",
        )

    a, _ = place(tmp_path, sample("m1", "s1", {}))
    b, _ = place(tmp_path, sample("m2", "s1", {}))
    c, _ = place(tmp_path, sample("m2", "s2", {}))
    d, _ = place(tmp_path, sample("m2", "s1", {"nsw": False}))
    assert a.kind == b.kind == "sample" and a.path.name == b.path.name
    assert a.path.parent.name == "m1" and b.path.parent.name == "m2"
    assert c.path.name != b.path.name and d.path.name != b.path.name
