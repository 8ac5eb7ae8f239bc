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


# ---- issue 40 item 6: optional runner methods are declared on the Runner interface ----------
# A runner's optional capability (identity without building, its image tag, a kept-running
# worker) is a method of asrbench.runners.base.Runner with a default, never probed by name.
# hasattr is allowed only where the probed object is not ours:
_HASATTR_ALLOWED = {
    "asrbench/cli/__init__.py",  # hasattr(signal, "SIGUSR1"): the platform's signal module
}


def _probes(tree: ast.AST) -> list[tuple[str, str]]:
    """(function, attribute name) of each hasattr/getattr call with a literal attribute name."""
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("hasattr", "getattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
        ):
            out.append((node.func.id, str(node.args[1].value)))
    return out


def test_no_runner_method_is_probed_by_name() -> None:
    from asrbench.runners.base import Runner

    methods = {name for name in dir(Runner) if not name.startswith("__")}
    offenders = []
    for path in sorted((REPO_ROOT / "asrbench").rglob("*.py")):
        rel = path.relative_to(REPO_ROOT).as_posix()
        for func, attr in _probes(ast.parse(path.read_text(encoding="utf-8"))):
            if func == "hasattr" and rel not in _HASATTR_ALLOWED:
                offenders.append(f"{rel}: hasattr(..., {attr!r})")
            elif func == "getattr" and attr in methods:
                offenders.append(f"{rel}: getattr(..., {attr!r}): declare it on Runner")
    assert offenders == []
    assert {"identity", "image_tag", "start_worker"} <= methods


# ---- end of issue 40 item 6 block --------------------------------------------------------------
