"""The package rules docs/ARCHITECTURE.md shows, checked against the code."""

from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
from pathlib import Path

from asrbench.settings import REPO_ROOT

spec = importlib.util.spec_from_file_location(
    "import_graph", REPO_ROOT / "scripts" / "import_graph.py"
)
import_graph = importlib.util.module_from_spec(spec)
sys.modules["import_graph"] = import_graph
spec.loader.exec_module(import_graph)


def test_the_picture_in_the_docs_is_current() -> None:
    doc = (REPO_ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    start = doc.index(import_graph.BEGIN)
    end = doc.index(import_graph.END) + len(import_graph.END)
    assert doc[start:end] == import_graph.generated_section(), (
        "docs/ARCHITECTURE.md is stale: run `make architecture`"
    )


def test_no_import_cycle_at_all() -> None:
    """Imports inside functions counted: no cycle between modules, none between packages."""
    edges = import_graph.graph()
    assert import_graph.cycles(edges) == [], "break it by moving code down, see ARCHITECTURE.md"
    assert import_graph.cycles(import_graph.package_edges(edges)) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")


def test_the_graph_sees_imports_inside_functions(tmp_path: Path) -> None:
    """A cycle closed by an import inside a function is a cycle; TYPE_CHECKING is not an edge."""
    _write(
        tmp_path,
        {
            "asrbench/__init__.py": "",
            "asrbench/low.py": """
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from asrbench.typed import T
                def f():
                    from asrbench import high
                    return high
            """,
            "asrbench/high.py": "from asrbench.low import f\n",
            "asrbench/typed.py": "import asrbench.low\n",
            "asrbench/cli/__init__.py": "",
            "asrbench/cli/cmd.py": """
                class C:
                    from asrbench.low import f
                def run():
                    import asrbench.high
            """,
        },
    )
    imports = import_graph.scan(tmp_path, ["asrbench"])
    got = {(i.source, i.target, i.in_function, i.lazy) for i in imports}
    assert got == {
        ("asrbench.low", "asrbench.high", True, False),
        ("asrbench.high", "asrbench.low", False, False),
        ("asrbench.typed", "asrbench.low", False, False),
        ("asrbench.cli.cmd", "asrbench.low", False, False),
        ("asrbench.cli.cmd", "asrbench.high", True, True),
    }
    assert import_graph.cycles(import_graph.graph(tmp_path, ["asrbench"])) == [
        ["asrbench.high", "asrbench.low"]
    ]
    counts = import_graph.counts(imports)
    assert counts == {"total": 5, "load_time": 3, "in_functions": 2, "lazy": 1}


def test_scoring_imports_nothing_from_asrbench() -> None:
    """Anywhere in scoring/, at load time or inside functions."""
    for path in (REPO_ROOT / "scoring").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n == "asrbench" or n.startswith("asrbench.") for n in names), path


def test_ops_scripts_are_thin_aliases_of_the_cli() -> None:
    from asrbench.cli import COMMANDS

    scripts = sorted(p.name for p in (REPO_ROOT / "ops").iterdir() if not p.name.startswith("_"))
    assert scripts == sorted(COMMANDS)
    for name in scripts:
        body = (REPO_ROOT / "ops" / name).read_text()
        assert f'--as-alias "$0" {name} "$@"' in body, name
        assert len(body.splitlines()) == 2, name


def test_no_asrbench_variable_is_read_outside_settings() -> None:
    import re

    pattern = re.compile(r"environ(\.get)?\s*[\[(]\s*f?[\"']ASRBENCH_")
    offenders = [
        p.relative_to(REPO_ROOT).as_posix()
        for p in Path(REPO_ROOT / "asrbench").rglob("*.py")
        if p.name != "settings.py" and pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_every_setting_is_documented() -> None:
    from asrbench.settings import VARIABLES

    doc = (REPO_ROOT / "docs" / "SETTINGS.md").read_text(encoding="utf-8")
    assert all(f"`ASRBENCH_{name}`" in doc for name in VARIABLES)


# --- Issue 40 item 4 (helper H): one home for audio, bootstrap draws and seeded draws. ---------


def _sources() -> list[tuple[str, str]]:
    """(path relative to the repo, text) of every module of asrbench/ and scoring/."""
    return [
        (p.relative_to(REPO_ROOT).as_posix(), p.read_text(encoding="utf-8"))
        for root in ("asrbench", "scoring")
        for p in sorted((REPO_ROOT / root).rglob("*.py"))
    ]


def _imported(text: str) -> set[str]:
    """Top-level names of every module imported, at load time or inside functions."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


def test_audio_is_decoded_resampled_and_written_in_asrbench_audio_only() -> None:
    """soundfile, soxr and the stdlib `wave` are imported by asrbench/audio.py alone: streaming
    and serving read stored PCM through `audio.wav_pcm`, everything else decodes, resamples
    and writes through its other functions."""
    offenders = [
        (path, sorted(names))
        for path, text in _sources()
        if path != "asrbench/audio.py"
        and (names := _imported(text) & {"soundfile", "soxr", "wave"})
    ]
    assert offenders == []


def test_bootstrap_draws_live_in_scoring_stats() -> None:
    """Every bootstrap replicate is drawn by scoring.stats (`resample_indices`,
    `resample_group_counts`): no other module draws `.multinomial(` or indices with
    `.integers(0, n, size=(reps, n))`."""
    import re

    draw = re.compile(r"\.multinomial\(|\.integers\(\s*0\s*,.*\bsize=\(")
    offenders = [p for p, text in _sources() if p != "scoring/stats.py" and draw.search(text)]
    assert offenders == []


def _unseeded_draws(text: str) -> int:
    """Calls of `default_rng(...)` or `random.Random(...)` whose seed is not `derive_seed(...)`."""
    n = 0
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name not in ("default_rng", "Random"):
            continue
        arg = node.args[0] if node.args else None
        seeded = isinstance(arg, ast.Call) and getattr(arg.func, "id", "") == "derive_seed"
        n += not seeded
    return n


def test_random_generators_are_seeded_through_derive_seed() -> None:
    """A generator is seeded by `identity.derive_seed(...)`, so a seed means the same draws
    everywhere it is used; the exceptions are listed with their reason."""
    allowed = {
        # scoring imports nothing from asrbench; its default_rng(seed) draws exactly what
        # default_rng(derive_seed(seed)) does (identity.derive_seed, tests/test_seeds.py)
        "scoring/stats.py": 2,
        # the --max-utts sampler of ops/stream, which issue 40 item 1 replaces by the one sampler
        "asrbench/streaming/run.py": 1,
    }
    found = {p: n for p, text in _sources() if (n := _unseeded_draws(text))}
    assert found == allowed
