"""Issue 39 items 3 and 4: a card states the CPU instructions its runtime needs (`cpu:`), and a
model whose needs this CPU lacks is refused before anything is built or run, in one line (exit
2), instead of dying with SIGILL; run.json records the CPU's model and x86-64 level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from asrbench.benchmark.provenance import host_info
from asrbench.host import BASELINE, ISA_LEVELS, cpu_flags, cpu_model, isa_level, missing_flags
from asrbench.modelcard import ModelCardError, load_all, load_model
from asrbench.settings import REPO_ROOT
from tests.benchmark.conftest import make_program_model

ABSENT = "avx10_99"  # valid-looking, and no CPU has it
PROGRAM = """import sys
from pathlib import Path

lines = [ln for ln in Path(sys.argv[1]).read_text().splitlines() if ln]
with open(Path(sys.argv[2]) / "hyp.tsv", "a") as hyp:
    for line in lines:
        hyp.write(line.partition("\\t")[0] + "\\tin being comparatively modern\\n")
"""
V2 = ISA_LEVELS[2][1]
V3 = ISA_LEVELS[1][1] | V2
V4 = ISA_LEVELS[0][1] | V3


def _cpuinfo(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    return path


def test_flags_and_model_are_read_from_cpuinfo(tmp_path: Path) -> None:
    x86 = _cpuinfo(
        tmp_path,
        "processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu sse2 avx2\n\n"
        "processor\t: 1\nmodel name\t: Test CPU 9000\nflags\t\t: fpu sse2 avx2\n",
    )
    assert cpu_flags(x86) == {"fpu", "sse2", "avx2"}
    assert cpu_model(x86) == "Test CPU 9000"
    arm = _cpuinfo(tmp_path, "processor\t: 0\nFeatures\t: fp asimd aes\n")
    assert cpu_flags(arm) == {"fp", "asimd", "aes"}
    assert cpu_flags(tmp_path / "absent") == frozenset()


@pytest.mark.parametrize(
    ("flags", "level"),
    [
        (V4, "x86-64-v4 (avx512)"),
        (V3, "x86-64-v3 (avx2)"),
        (V2, "x86-64-v2"),
        ({"fpu", "sse", "sse2"}, BASELINE),
        # AVX-512 without the v3 set (movbe missing) is not v4, nor v3
        (V4 - {"movbe"}, "x86-64-v2"),
    ],
)
def test_isa_level_follows_the_psabi_levels(flags: set[str], level: str) -> None:
    assert isa_level(flags, machine="x86_64") == level


def test_isa_level_is_unknown_off_x86_or_without_flags() -> None:
    assert isa_level(V4, machine="aarch64") is None
    assert isa_level(set(), machine="x86_64") is None


def test_run_json_host_records_the_cpu_model_and_isa_level() -> None:
    host = host_info()
    assert host["cpu_model"] == cpu_model()
    assert host["isa_level"] == isa_level()
    if cpu_flags() and host["machine"] == "x86_64":
        assert host["isa_level"] is not None


def test_missing_flags_keeps_the_cards_order_and_knows_when_it_cannot_tell() -> None:
    assert missing_flags(["avx512f", "avx2", "avx512bw"], {"avx2"}) == ["avx512f", "avx512bw"]
    assert missing_flags(["avx512f"], set()) == []  # unknown flags (no /proc/cpuinfo): no refusal


@pytest.mark.parametrize("value", ["[AVX2]", "avx2", "['avx 2']", "[1]"])
def test_the_card_field_is_validated(tmp_path: Path, value: str) -> None:
    folder = make_program_model(tmp_path, "bad_cpu", PROGRAM, f"cpu: {value}\n")
    with pytest.raises(ModelCardError, match="field 'cpu"):
        load_model(folder)


def test_every_local_card_states_its_cpu_needs() -> None:
    models, problems = load_all(REPO_ROOT / "models")
    assert not problems
    local = [m for m in models if not m.card.network]
    assert len(local) >= 10
    for m in local:
        raw = yaml.safe_load(m.card_path.read_text(encoding="utf-8"))
        assert "cpu" in raw, f"{m.card_path}: no `cpu:` field"
    by_id = {m.id: m.card.cpu for m in models}
    # libmoonshine.so is compiled for AVX-512 (EVEX-encoded instructions, mask registers)
    assert {"avx512f", "avx512bw", "avx512vl"} <= set(by_id["moonshine_base_en"])
    # CTranslate2 picks its kernels at run time: the x86-64 baseline is enough
    assert by_id["whisper_base"] == by_id["whisper_tiny_en"] == []


def _bench(cli, tmp_path: Path, model: Path) -> tuple[int, str, str]:
    return cli(
        "benchmark", "-m", model, "-d", "mini_en", "--runner", "local", "--results",
        tmp_path / "r", "--cache", tmp_path / "c", "--no-progress", "--max-utts", "2",
    )  # fmt: skip


def _error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_benchmark_refuses_a_model_this_cpu_cannot_run(tmp_path: Path, cli) -> None:
    assert ABSENT not in cpu_flags()
    folder = make_program_model(tmp_path / "models", "needs_more", PROGRAM, f"cpu: [{ABSENT}]\n")
    code, _, err = _bench(cli, tmp_path, folder)
    assert code == 2, err
    line = _error_line(err)
    assert "needs_more" in line and ABSENT in line and "field 'cpu'" in line
    # refused before its virtualenv was made or anything ran
    assert not list(tmp_path.rglob("hyp.tsv"))
    assert not list(tmp_path.rglob("summary.json"))


def test_benchmark_runs_a_model_whose_needs_this_cpu_has(tmp_path: Path, cli) -> None:
    if "sse2" not in cpu_flags():
        pytest.skip("not an x86-64 CPU with /proc/cpuinfo")
    folder = make_program_model(tmp_path / "models", "needs_sse2", PROGRAM, "cpu: [sse2]\n")
    code, _, err = _bench(cli, tmp_path, folder)
    assert code == 0, err
    run = json.loads(next((tmp_path / "r").rglob("run.json")).read_text())
    assert run["host"]["isa_level"] == isa_level()
    assert run["host"]["cpu_model"] == cpu_model()


def test_stream_and_serve_refuse_it_too(tmp_path: Path, cli) -> None:
    folder = make_program_model(
        tmp_path / "models", "needs_more", PROGRAM, f"cpu: [{ABSENT}]\nstreaming: prog.py\n"
    )
    code, _, err = cli(
        "stream", "-m", folder, "-d", "mini_en", "--runner", "local", "--max-utts", "1",
        "--results", tmp_path / "r",
    )  # fmt: skip
    assert code == 2, err
    assert ABSENT in _error_line(err) and "needs_more" in _error_line(err)
    code, _, err = cli("serve", "-m", folder, "--runner", "local", "--port", "0")
    assert code == 2, err
    assert ABSENT in _error_line(err) and "needs_more" in _error_line(err)
