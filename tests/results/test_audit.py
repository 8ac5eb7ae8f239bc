"""The reference audit (issue 39, item 2): independent models that agree with each other and all
disagree with the reference make the reference suspect.

Real cells: a four-utterance dataset cut from mini_en's audio, whose reference of `LJ001-0002`
is wrong (another sentence), benchmarked with the local runner through stand-in model programs
that answer from a table: `tiny_a` and `tiny_a_cpp` declare the same weight file (one voter, as
whisper_tiny_en and whispercpp_tiny_en), `other_b` other weights. Then `ops/audit`,
`ops/leaderboard` and summary.json are read as a user would.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from asrbench.results import audit, leaderboard
from asrbench.results.store import scan
from asrbench.settings import REPO_ROOT
from tests.benchmark.conftest import make_program_model

TRUE = {
    "LJ001-0001": "Printing, in the only sense with which we are at present concerned, differs "
    "from most if not from all the arts and crafts represented in the Exhibition",
    "LJ001-0002": "in being comparatively modern.",
    "LJ001-0004": "produced the block books, which were the immediate predecessors of the true "
    "printed book,",
    "LJ001-0005": "the invention of movable metal letters in the middle of the fifteenth century "
    "may justly be considered as the invention of the art of printing.",
}
WRONG = "and it is worth mention in passing that as an example of fine typography"
BAD = "LJ001-0002"
PROGRAM = """import json, sys
from pathlib import Path

table = json.loads({table!r})
with open(Path(sys.argv[2]) / "hyp.tsv", "a") as hyp:
    for line in Path(sys.argv[1]).read_text().splitlines():
        uid = line.partition("\\t")[0]
        if uid:
            hyp.write(uid + "\\t" + table[uid] + "\\n")
"""
WEIGHTS_A = "a" * 64


def _dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny_audit"
    (folder / "audio").mkdir(parents=True)
    rows = ["ID\tAUDIO\tDURATION\tTEXT"]
    src = REPO_ROOT / "datasets" / "mini_en"
    durations = {
        line.split("\t")[0]: line.split("\t")[2]
        for line in (src / "metadata.tsv").read_text().splitlines()[1:]
    }
    for uid, text in TRUE.items():
        shutil.copy(src / "audio" / f"{uid}.wav", folder / "audio" / f"{uid}.wav")
        rows.append(f"{uid}\taudio/{uid}.wav\t{durations[uid]}\t{WRONG if uid == BAD else text}")
    (folder / "metadata.tsv").write_text("\n".join(rows) + "\n")
    (folder / "dataset.yaml").write_text(
        "id: tiny_audit\nname: audit test\nlanguage: en\nsample_rate: 16000\n"
        "description: four mini_en utterances, one reference wrong\nlicence: public domain\n"
    )
    return folder


def _model(root: Path, model_id: str, weights: str, hyps: dict[str, str]) -> Path:
    card = f"weights:\n  source: test\n  sha256:\n    model.bin: {weights}\n"
    return make_program_model(root, model_id, PROGRAM.format(table=json.dumps(hyps)), card)


@pytest.fixture
def setup(tmp_path: Path, cli) -> dict:
    ds = _dataset(tmp_path)
    models = tmp_path / "models"
    # both tiny builds make the same slip on LJ001-0001 and hear LJ001-0002 right
    tiny = dict(TRUE, **{"LJ001-0001": TRUE["LJ001-0001"].replace("concerned", "concerns")})
    other = dict(TRUE, **{"LJ001-0004": "produced the block books which were the predecessors"})
    found = {
        "tiny_a": _model(models, "tiny_a", WEIGHTS_A, tiny),
        "tiny_a_cpp": _model(models, "tiny_a_cpp", WEIGHTS_A, tiny),
        "other_b": _model(models, "other_b", "b" * 64, other),
    }
    return {"ds": ds, "models": found, "results": tmp_path / "r", "cache": tmp_path / "c"}


def _bench(cli, s: dict, *models: str) -> None:
    for m in models:
        code, _, err = cli(
            "benchmark", "-m", s["models"][m], "-d", s["ds"], "--runner", "local",
            "--results", s["results"], "--cache", s["cache"], "--no-progress",
        )  # fmt: skip
        assert code == 0, err


def test_models_sharing_weights_are_one_voter_and_one_voter_cannot_audit(cli, setup) -> None:
    _bench(cli, setup, "tiny_a", "tiny_a_cpp")
    code, out, err = cli("audit", "-d", "tiny_audit", "--results", setup["results"])
    assert code == 2, out + err
    line = err.strip().splitlines()[-1]
    assert line.startswith("audit of tiny_audit cannot run: it needs results of at least 2 ")
    assert "has 1 (tiny_a+tiny_a_cpp)" in line and "ops/benchmark -d tiny_audit" in line
    assert "Traceback" not in err
    assert not (setup["results"] / "audit").exists()


def test_the_wrong_reference_is_flagged_with_its_evidence(cli, setup) -> None:
    _bench(cli, setup, "tiny_a", "tiny_a_cpp", "other_b")
    code, out, err = cli("audit", "-d", "tiny_audit", "--results", setup["results"])
    assert code == 0, err
    assert out.startswith("tiny_audit: 1 suspect reference(s) (voters: other_b, tiny_a+tiny_a_cpp;")
    rows = [ln for ln in out.splitlines() if ln.startswith("| LJ")]
    assert len(rows) == 1 and rows[0].startswith(f"| {BAD} | other_b, tiny_a |")
    record = audit.read_audit(setup["results"], "tiny_audit")
    assert record is not None and record.suspect_ids == [BAD]
    (s,) = record.suspects
    assert s["ref"] == WRONG and s["mutual_mter"] == 0.0
    assert s["agreeing"] == {"other_b": TRUE[BAD], "tiny_a": TRUE[BAD]}
    # every audited model's error against the reference, members of one voter included
    assert set(s["ref_mter"]) == {"other_b", "tiny_a", "tiny_a_cpp"}
    assert min(s["ref_mter"].values()) >= audit.DEFAULT_REF_MIN
    # LJ001-0001: two tiny builds agree on a slip, but they are one voter, and other_b is right
    assert "LJ001-0001" not in record.suspect_ids
    # the block in every cell's summary.json, with the TER without the suspect
    for m in ("tiny_a", "tiny_a_cpp", "other_b"):
        summary = json.loads((setup["results"] / m / "tiny_audit" / "summary.json").read_text())
        block = summary["audit"]
        assert block["format"] == "asrbench-audit-v1" and block["n_suspects"] == 1
        assert [x["id"] for x in block["suspects"]] == [BAD]
        m_all = summary["metrics"]
        without = block["without_suspects"]
        assert without["n_utts"] == m_all["n_utts"] - 1
        assert without["ter"] < m_all["ter"]
        assert without["ci"]["low"] <= without["ter"] <= without["ci"]["high"]


def test_thresholds_are_options_and_an_agreeing_slip_needs_both_rules(cli, setup) -> None:
    _bench(cli, setup, "tiny_a", "other_b")
    # a reference-distance floor above what the wrong reference reaches flags nothing
    code, out, _ = cli("audit", "-d", "tiny_audit", "--results", setup["results"], "--ref-min", "1")
    assert code == 0 and out.startswith("tiny_audit: 0 suspect reference(s)")
    code, _, err = cli("audit", "-d", "tiny_audit", "--results", setup["results"], "--ref-min", "2")
    assert code == 2 and "between 0 and 1" in err


def test_leaderboard_marks_and_can_exclude_the_suspects(cli, setup) -> None:
    _bench(cli, setup, "tiny_a", "other_b")
    assert cli("audit", "-d", "tiny_audit", "--results", setup["results"])[0] == 0
    board = leaderboard.build(setup["results"], reps=0)
    cell = board["cells"]["tiny_a"]["tiny_audit"]
    assert cell["audit"]["n_suspects"] == 1 and cell["audit"]["current"] is True
    assert board["audit"]["tiny_audit"]["suspects"] == [BAD]
    code, out, _ = cli("leaderboard", "--results", setup["results"], "--reps", "0")
    assert code == 0
    row = next(ln for ln in out.splitlines() if ln.startswith("| tiny_a |"))
    assert "!1" in row
    assert "`!N`: N references of the dataset are suspect" in out
    full_ter = cell["ter"]
    code, out, _ = cli(
        "leaderboard", "--results", setup["results"], "--reps", "0", "--exclude-suspects"
    )
    assert code == 0
    stored = json.loads((setup["results"] / "leaderboard.json").read_text())
    ex = stored["cells"]["tiny_a"]["tiny_audit"]
    assert stored["exclude_suspects"] is True
    assert ex["n_utts"] == 3 and ex["ter"] < full_ter
    cells = scan(setup["results"]).cells
    assert ex["ter"] == pytest.approx(
        cells[("tiny_a", "tiny_audit")].summary.audit["without_suspects"]["ter"]
    )
    assert "suspect references left out" in out


def test_a_rerun_keeps_the_audit_and_a_new_model_makes_it_stale(cli, setup) -> None:
    _bench(cli, setup, "tiny_a", "other_b")
    assert cli("audit", "-d", "tiny_audit", "--results", setup["results"])[0] == 0
    # a benchmark rerun rewrites tiny_a's summary.json without the block (same result key)
    _bench(cli, setup, "tiny_a")
    summary = json.loads((setup["results"] / "tiny_a" / "tiny_audit" / "summary.json").read_text())
    assert "audit" not in summary
    board = leaderboard.build(setup["results"], reps=0, exclude_suspects=True)
    # the dataset's suspect is still left out of every cell: they stay comparable
    assert board["audit"]["tiny_audit"]["current"] is True
    assert {board["cells"][m]["tiny_audit"]["n_utts"] for m in ("tiny_a", "other_b")} == {3}
    # a model benchmarked after the audit: the audit is stale, and says how to refresh it
    _bench(cli, setup, "tiny_a_cpp")
    board = leaderboard.build(setup["results"], reps=0)
    assert board["audit"]["tiny_audit"]["current"] is False
    assert "stale: rerun ops/audit -d tiny_audit" in leaderboard.to_markdown(board)


def test_the_shipped_cards_group_the_two_tiny_en_runtimes_into_one_voter() -> None:
    import yaml

    names = ("whisper_tiny_en", "whispercpp_tiny_en", "whisper_base", "moonshine_base_en")
    cards = {
        m: yaml.safe_load((REPO_ROOT / "models" / m / "model.yaml").read_text()) for m in names
    }
    ter = {"whisper_tiny_en": 0.11, "whispercpp_tiny_en": 0.10, "whisper_base": 0.09}
    voters = audit.group_voters(cards, ter)
    assert [v.models for v in voters] == [
        ("moonshine_base_en",),
        ("whisper_base",),
        ("whisper_tiny_en", "whispercpp_tiny_en"),
    ]
    # the group speaks through its member with the lowest TER
    assert voters[2].speaker == "whispercpp_tiny_en"
    # --voters family: one voter per card family as well (tiny.en joins base through `whisper`)
    by_family = audit.group_voters(cards, ter, "family")
    assert [v.models for v in by_family] == [
        ("moonshine_base_en",),
        ("whisper_base", "whisper_tiny_en", "whispercpp_tiny_en"),
    ]
    assert by_family[1].speaker == "whisper_base"
    with pytest.raises(audit.InputError, match="--voters must be one of weights, family"):
        audit.group_voters(cards, ter, "nonsense")


def test_a_reference_free_dataset_is_named_as_such(cli, setup) -> None:
    ds = setup["ds"]
    rows = (ds / "metadata.tsv").read_text().splitlines()
    (ds / "metadata.tsv").write_text(
        "\n".join([rows[0]] + ["\t".join(r.split("\t")[:3]) + "\t" for r in rows[1:]]) + "\n"
    )
    with (ds / "dataset.yaml").open("a") as f:
        f.write("reference_free: true\n")
    _bench(cli, setup, "tiny_a", "other_b")
    code, _, err = cli("audit", "-d", "tiny_audit", "--results", setup["results"])
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        "audit of tiny_audit cannot run: the dataset has no reference text (reference-free), "
        "so there is no reference to audit"
    )
