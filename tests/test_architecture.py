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


# Draws of a subset that are not a selection of utterances by count and seed (issue 40).
NOT_AN_UTTERANCE_SAMPLE = {
    "asrbench/perturb/aequevox.py": "which chunks of one utterance's audio a perturbation drops",
    "asrbench/fairness/localiser.py": "the seeded discovery/validation halves of each speaker",
}
DRAWS = {"sample", "choice", "choices", "shuffle", "permutation"}


def _own_draws(tree: ast.AST) -> list[str]:
    """The places a module draws or cuts a subset itself: the stdlib random module, a
    `.sample/.choice/.shuffle/.permutation` call, or a slice of some `.utterances`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "random" for a in node.names):
            found.append(f"line {node.lineno}: import random")
        elif isinstance(node, ast.ImportFrom) and node.module == "random":
            found.append(f"line {node.lineno}: from random import")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in DRAWS
        ):
            found.append(f"line {node.lineno}: .{node.func.attr}(")
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Slice)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "utterances"
        ):
            found.append(f"line {node.lineno}: a slice of .utterances")
    return found


def test_only_the_one_sampler_selects_utterances() -> None:
    """`--max-utts N --seed S` picks utterances in one place (`dataset.sample_utterances`);
    streaming's `random.Random` and the campaigns' first N made three answers to one request."""
    offenders = {}
    for path in sorted((REPO_ROOT / "asrbench").rglob("*.py")):
        rel = path.relative_to(REPO_ROOT).as_posix()
        if rel == "asrbench/dataset.py" or rel in NOT_AN_UTTERANCE_SAMPLE:
            continue
        if found := _own_draws(ast.parse(path.read_text(encoding="utf-8"))):
            offenders[rel] = found
    assert offenders == {}, "select with asrbench.dataset.sample_utterances"


def test_the_sampler_check_sees_the_old_ways() -> None:
    old_stream = "import random\nkeep = random.Random(0).sample(range(9), 5)\n"
    old_campaign = "ids = [u.id for u in ds.utterances[:5]]\n"
    assert len(_own_draws(ast.parse(old_stream))) == 2
    assert _own_draws(ast.parse(old_campaign)) == ["line 1: a slice of .utterances"]
    assert _own_draws(ast.parse("utt = ds.utterances[3]\n")) == []
