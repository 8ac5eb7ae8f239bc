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


# ---- issue 40, item 3: one metric protocol -------------------------------------------------
# Counts pool through `scoring.metrics.Counts` and become `Metrics` through
# `Metrics.from_counts`; corpus rates are registered in `scoring.metrics.RATES`, session
# metrics in `scoring.meeting.SESSION_METRICS`.


def _package_sources() -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(REPO_ROOT).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for pkg in ("asrbench", "scoring")
        for p in sorted((REPO_ROOT / pkg).rglob("*.py"))
    ]


def test_metrics_are_built_from_counts_in_one_place() -> None:
    """`Metrics(...)` with counts filled by hand only in scoring/metrics.py: everyone else
    pools `Counts` and calls `Metrics.from_counts` (or reads `Metrics.from_dict`)."""
    offenders = [
        f"{rel}:{node.lineno}"
        for rel, tree in _package_sources()
        if rel != "scoring/metrics.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        if node.func.id == "Metrics"
    ]
    assert offenders == [], "pool with Counts and build with Metrics.from_counts"


def test_session_metric_names_live_in_their_registry() -> None:
    """A session metric is named in `SESSION_METRICS` (scoring/meeting.py), nowhere else."""
    from scoring.meeting import SESSION_METRICS

    names = set(SESSION_METRICS) - {"wer"}  # "wer" is also an ordinary word in other modules
    offenders = [
        f"{rel}:{node.lineno}"
        for rel, tree in _package_sources()
        if rel != "scoring/meeting.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert offenders == [], "look the metric up in scoring.meeting.SESSION_METRICS"
