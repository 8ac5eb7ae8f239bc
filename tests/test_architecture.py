"""The package rules docs/ARCHITECTURE.md shows, checked against the code."""

from __future__ import annotations

import ast
import importlib.util
import sys
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
    assert doc[start:end] == import_graph.generated_section(import_graph.graph()), (
        "docs/ARCHITECTURE.md is stale: run `make architecture`"
    )


def test_no_import_cycle_but_the_perturbation_registry() -> None:
    for comp in import_graph.cycles(import_graph.graph()):
        assert all(m.startswith("asrbench.perturb") for m in comp), comp


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
