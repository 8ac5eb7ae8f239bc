"""Issue 30 item 1 and low items: an ID from a dataset.yaml (or a summary) never becomes a path
outside its folder; the validator names control characters and repeated columns by line; the
leaderboard's Markdown carries no raw HTML from a name."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT
from tests.factories import make_model

OPS = REPO_ROOT / "ops"
HOSTILE = "../../somewhere/victim"


def small_copy(
    mini_en: Path, dest: Path, n: int = 3, card_id: str | None = None, rows: list[str] | None = None
) -> Path:
    """The first n utterances of mini_en in `dest`; `card_id` replaces dataset.yaml's `id`."""
    lines = (mini_en / "metadata.tsv").read_text().splitlines()
    head, body = lines[0], rows if rows is not None else lines[1 : n + 1]
    dest.mkdir(parents=True)
    (dest / "audio").mkdir()
    for r in lines[1 : n + 1]:
        rel = r.split("\t")[1]
        shutil.copy(mini_en / rel, dest / rel)
    (dest / "metadata.tsv").write_text("\n".join([head, *body]) + "\n")
    card = f"id: {card_id!r}\n" if card_id is not None else "id: mini_en\n"
    (dest / "dataset.yaml").write_text(card + "language: en\nsample_rate: 16000\n")
    return dest


def fake_model(root: Path, model_id: str = "fake_r30") -> Path:
    """A model folder whose program needs no package: one text for every utterance."""
    return make_model(
        root,
        model_id,
        "import sys\nfrom pathlib import Path\n"
        "out = Path(sys.argv[2]); out.mkdir(parents=True, exist_ok=True)\n"
        "with open(out / 'hyp.tsv', 'a') as f:\n"
        "    for line in Path(sys.argv[1]).read_text().splitlines():\n"
        "        f.write(line.partition('\\t')[0] + '\\tin being comparatively modern\\n')\n",
        files={"Dockerfile": "FROM scratch\n"},
    )


def victim(tmp_path: Path) -> Path:
    folder = tmp_path / "somewhere" / "victim"
    folder.mkdir(parents=True)
    (folder / "precious.txt").write_text("do not lose me")
    return folder


def _ops(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(OPS / args[0]), *map(str, args[1:])],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def test_validate_refuses_a_dataset_yaml_id_that_is_a_path(cli, mini_en, tmp_path):
    ds = small_copy(mini_en, tmp_path / "a" / "b" / "ds", card_id=HOSTILE)
    code, out, err = cli("validate", "--no-audio", ds)
    assert code == 2 and "ok" not in out
    assert "[bad-dataset-id]" in err and repr(HOSTILE) in err and "dataset.yaml" in err
    # the loader (what benchmark, perturb and the importers use) refuses the same
    from asrbench.dataset import DatasetError, load_dataset

    with pytest.raises(DatasetError, match="bad-dataset-id"):
        load_dataset(ds)


def test_a_folder_name_that_cannot_be_an_id_needs_an_id_in_the_card(cli, mini_en, tmp_path):
    ds = small_copy(mini_en, tmp_path / "my data")
    (ds / "dataset.yaml").write_text("language: en\nsample_rate: 16000\n")
    code, _, err = cli("validate", "--no-audio", ds)
    assert code == 2 and "add `id: NAME` to dataset.yaml" in err
    (ds / "dataset.yaml").write_text("id: my_data\nlanguage: en\nsample_rate: 16000\n")
    assert cli("validate", "--no-audio", ds)[0] == 0


def test_benchmark_refuses_a_hostile_dataset_id_and_deletes_nothing(mini_en, tmp_path):
    target = victim(tmp_path)
    ds = small_copy(mini_en, tmp_path / "a" / "b" / "ds", card_id=HOSTILE)
    results = tmp_path / "r"  # r/<model>/../../somewhere/victim is the victim
    model = fake_model(tmp_path / "models")
    before = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    p = _ops(
        "benchmark",
        "-m",
        model,
        "-d",
        ds,
        "--runner",
        "local",
        "--results",
        results,
        "--no-progress",
        env={"ASRBENCH_CACHE": str(tmp_path / "c")},
    )
    assert p.returncode == 2, p.stderr
    assert "bad-dataset-id" in p.stderr and "Traceback" not in p.stderr
    assert (target / "precious.txt").read_text() == "do not lose me"
    assert sorted(target.iterdir()) == [target / "precious.txt"]
    assert not results.exists() or not any(results.rglob("summary.json"))
    after = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    assert not {a for a in after - before if a.parts[0] not in ("c", "r")}


def test_perturb_refuses_a_hostile_parent_id_and_writes_nothing_outside(mini_en, tmp_path):
    cache = tmp_path / "c"
    # <cache>/perturb/datasets/<id>__... with id ../../../../somewhere/victim is the victim
    target = victim(tmp_path)
    ds = small_copy(mini_en, tmp_path / "ds", card_id="../../../../somewhere/victim")
    before = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    p = _ops("perturb", "-d", ds, "-p", "gsm", env={"ASRBENCH_CACHE": str(cache)})
    assert p.returncode == 2, p.stderr
    assert "bad-dataset-id" in p.stderr and "Traceback" not in p.stderr
    assert sorted(target.iterdir()) == [target / "precious.txt"]
    after = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    assert not {a for a in after - before if a.parts[0] != "c"}
    # a derived folder whose name cannot be an ID is refused too (it would be the derived ID)
    good = small_copy(mini_en, tmp_path / "good", card_id="good")
    p = _ops(
        "perturb",
        "-d",
        good,
        "-p",
        "gsm",
        "--out",
        tmp_path / "out dir",
        env={"ASRBENCH_CACHE": str(cache)},
    )
    assert p.returncode == 2 and "--out" in p.stderr and not (tmp_path / "out dir").exists()


def test_results_layout_keeps_every_cell_under_the_results_root(tmp_path):
    """The last line of defence: whatever a summary says, the cell stays under the root."""
    from asrbench.errors import InputError
    from asrbench.results import layout

    root = tmp_path / "r"
    with pytest.raises(InputError, match="dataset ID"):
        layout.reported_dir(root, "m", "../../x")
    with pytest.raises(InputError, match="model ID"):
        layout.reported_dir(root, "..", "x")
    # a symlink inside the results root that points outside it
    outside = victim(tmp_path)
    (root / "m").mkdir(parents=True)
    (root / "m" / "d").symlink_to(outside)
    with pytest.raises(InputError, match="not inside"):
        layout.reported_dir(root, "m", "d")
    assert layout.reported_dir(root, "m", "mini_en") == root / "m" / "mini_en"


def test_two_columns_of_the_same_name_are_an_error_naming_them(cli, mini_en, tmp_path):
    lines = (mini_en / "metadata.tsv").read_text().splitlines()[:4]
    rows = [f"{r}\tX" for r in lines[1:]]
    ds = small_copy(mini_en, tmp_path / "ds", rows=rows)
    (ds / "metadata.tsv").write_text("\n".join([lines[0] + "\tSPEAKER", *rows]) + "\n")
    code, _, err = cli("validate", "--no-audio", ds)
    assert code == 2
    assert "metadata.tsv:1: error: [header] column 'SPEAKER' appears twice (columns 5 and 9)" in err


@pytest.mark.parametrize("char, name", [("\x00", "U+0000"), ("\x1b", "U+001B"), ("\x7f", "U+007F")])
def test_control_characters_in_text_are_an_error_naming_the_line(
    cli, mini_en, tmp_path, char, name
):
    lines = (mini_en / "metadata.tsv").read_text().splitlines()[1:4]
    cols = lines[1].split("\t")
    cols[3] = f"in being {char}[31mcomparatively modern"
    lines[1] = "\t".join(cols)
    ds = small_copy(mini_en, tmp_path / "ds", rows=lines)
    code, _, err = cli("validate", "--no-audio", ds)
    assert code == 2
    assert (
        f"metadata.tsv:3: error: [control-character] column TEXT holds the control "
        f"character {name} at character 10" in err
    )


def test_leaderboard_markdown_escapes_html_from_names(tmp_path):
    from asrbench.results import leaderboard
    from asrbench.results.summary import Selection, Summary, write_summary
    from scoring.metrics import Metrics

    met = Metrics(
        unit="word",
        n_utts=2,
        n_ref=10,
        n_hyp=10,
        cor=9,
        sub=1,
        ins=0,
        dele=0,
        n_err_utts=1,
        mter_den=10,
        n_missing=0,
        n_empty_ref=0,
    )
    name = "<img src=x onerror=alert(1)>|x"
    write_summary(
        tmp_path / "m" / name / "summary.json",
        Summary(
            producer="benchmark",
            result_key="sha256:k",
            metrics=met,
            selection=Selection(2, 2, "ids"),
            scorer={"config_hash": "sha256:s"},
            model="<b>m</b>",
            dataset=name,
            dataset_hash="sha256:d",
        ),
    )
    (tmp_path / "m" / "<script>").mkdir()
    (tmp_path / "m" / "<script>" / "summary.json").write_text("{")
    md = leaderboard.to_markdown(leaderboard.build(tmp_path))
    assert "<img" not in md and "<b>" not in md and "<script>" not in md
    assert "&lt;img src=x onerror=alert(1)&gt;&#124;x" in md and "&lt;b&gt;m&lt;/b&gt;" in md
    assert "&lt;script&gt;" in md
