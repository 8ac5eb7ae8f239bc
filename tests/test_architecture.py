"""The package rules docs/ARCHITECTURE.md shows, checked against the code."""

from __future__ import annotations

import ast
import functools
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


# ---- Issue 40 item 4 (helper I): one home for staged writes and for path containment ----------

# A write that could leave half a file behind goes through asrbench/fsio (atomic_write_*,
# atomic_file, atomic_link, stage_dir + replace_dir). What else may write or rename directly, and
# why: none of these is a result a reader could catch half-written. Appends ("a" modes: logs,
# journals, lock files) are append-only by design and not counted.
_WRITES_ALLOWED = {
    "asrbench/fsio.py": "the home itself",
    "asrbench/benchmark/cell.py": "a write probe, removed at once",
    "asrbench/executors/worker.py": "a write probe and the work folder's .owner PID marker",
    "asrbench/images/build.py": "the Docker build context, in a scratch folder",
    "asrbench/importers/common.py": "wav_writer writes into a stage_dir folder",
    "asrbench/importers/download.py": "extracts a zip's members into the import's scratch folder",
    "asrbench/resumable.py": "resumable downloads: a .part file renamed when verified",
    "asrbench/importers/recipes/base.py": "a recipe's scratch folder",
    "asrbench/report/build.py": "moves a file written whole into its stage_dir into place",
    "asrbench/report/site.py": "writes pages into the stage_dir folder build.py moves in whole",
    "asrbench/runners/local.py": "first-wins placement of a content-addressed source folder; "
    "the install log",
    "asrbench/serve/audio.py": "an upload in a request's scratch folder",
    "asrbench/serve/warm.py": "the warm server's scratch folder and in-memory WAV",
    "asrbench/testing/raylocal.py": "test fixture (a local Ray cluster)",
    "asrbench/testing/seaweed.py": "test fixture (a local S3 server)",
}
_WRITE_CALLS = {
    ".write_text",
    ".write_bytes",
    "json.dump",
    "os.replace",
    "os.rename",
    "tempfile.mkdtemp",
    "tempfile.NamedTemporaryFile",
}


def _call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        base = f.value.id if isinstance(f.value, ast.Name) else ""
        return f"{base}.{f.attr}" if base in ("os", "json", "tempfile") else f".{f.attr}"
    return ""


def _writes(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name in _WRITE_CALLS:
            found.append(f"{node.lineno}: {name}")
        elif name == "open":
            modes = node.args[1:2] + [k.value for k in node.keywords if k.arg == "mode"]
            mode = modes[0].value if modes and isinstance(modes[0], ast.Constant) else ""
            if isinstance(mode, str) and set(mode) & set("wx"):
                found.append(f"{node.lineno}: open({mode!r})")
    return found


@functools.cache
def _root_modules(root: str) -> tuple[tuple[str, str, ast.Module], ...]:
    """(path relative to the repo, text, tree) of every module under `root`, in path order:
    read and parsed once for all the checks below (the whole file takes ~1 min otherwise)."""
    out = []
    for p in sorted((REPO_ROOT / root).rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        out.append((p.relative_to(REPO_ROOT).as_posix(), text, ast.parse(text)))
    return tuple(out)


def _modules(*roots: str) -> tuple[tuple[str, str, ast.Module], ...]:
    """`_root_modules` of each root, in the roots' order."""
    return tuple(m for root in roots for m in _root_modules(root))


def _sources() -> list[tuple[str, ast.Module]]:
    return [(rel, tree) for rel, _, tree in _modules("asrbench")]


def test_staged_writes_go_through_fsio() -> None:
    offenders = {
        rel: found
        for rel, tree in _sources()
        if rel not in _WRITES_ALLOWED and (found := _writes(tree))
    }
    assert offenders == {}, "write through asrbench.fsio (atomic_write_text, atomic_file, ...)"


def test_write_check_sees_a_bypass() -> None:
    tree = ast.parse('p.write_text("x")\nopen(p, "w")\nopen(p, mode="wb")\nopen(p, "ab")\n')
    assert [w.split(": ")[1] for w in _writes(tree)] == [".write_text", "open('w')", "open('wb')"]


# Whether a path lies inside a root is decided by asrbench.ids.contained alone (the root itself
# is not inside). fsio only asks which named file of an OSError lies in a folder, for a message.
_CONTAINMENT_ALLOWED = {"asrbench/ids.py", "asrbench/fsio.py"}


def _containment_tests(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if (
            isinstance(node, ast.Compare)
            and any(isinstance(c, ast.Attribute) and c.attr == "parents" for c in node.comparators)
        )
        or (isinstance(node, ast.Attribute) and node.attr in ("is_relative_to", "commonpath"))
    ]


def test_path_containment_has_one_home() -> None:
    offenders = {
        rel: lines
        for rel, tree in _sources()
        if rel not in _CONTAINMENT_ALLOWED and (lines := _containment_tests(tree))
    }
    assert offenders == {}, "use asrbench.ids.contained / inside"


# The utterances.jsonl record has one serialiser (asrbench/results/reports.py: the scored record,
# the unscored one and the secret flag) and one writer (`write_utterances`); hyp.timed.jsonl has
# one reader and writer (asrbench/results/timed.py, whose `TIMED_FILE` names it everywhere else).
_RECORD_HOMES = {
    "utterances.jsonl": "asrbench/results/reports.py",
    "hyp.timed.jsonl": "asrbench/results/timed.py",
}
_RAW_WRITERS = {"atomic_write_text", "atomic_write_bytes", "atomic_write_json", "atomic_file"}


def _writes_of(tree: ast.AST, name: str) -> list[int]:
    """Lines where `name` is written by a generic writer rather than by its home's writer."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (_call_name(node) in _RAW_WRITERS or _call_name(node) in (".write_text", "open"))
        and any(
            isinstance(c, ast.Constant) and c.value == name for a in node.args for c in ast.walk(a)
        )
    ]


def test_result_records_have_one_serialiser() -> None:
    sources = _sources()
    for name, home in _RECORD_HOMES.items():
        writers = {rel: lines for rel, tree in sources if (lines := _writes_of(tree, name))}
        assert writers == {}, f"write {name} through {home}"
    timed_literal = [
        rel
        for rel, tree in sources
        if any(isinstance(c, ast.Constant) and c.value == "hyp.timed.jsonl" for c in ast.walk(tree))
    ]
    assert timed_literal == ["asrbench/results/timed.py"], "use results.timed.TIMED_FILE"
    serialisers = [
        rel
        for rel, tree in sources
        if rel != "asrbench/results/reports.py"
        and any(isinstance(c, ast.Constant) and c.value == "secret_in_hyp" for c in ast.walk(tree))
    ]
    assert serialisers == [], "the utterances.jsonl record is asrbench/results/reports.py's"


# "Segments" meant three things; the VAD/windows result is `RecordingSpans`, the speaker turn
# `scoring.segments.Segment`: no class may take the ambiguous plural again.
def test_no_type_is_called_plain_segments() -> None:
    sources = _sources() + [
        (p.relative_to(REPO_ROOT).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted((REPO_ROOT / "scoring").rglob("*.py"))
    ]
    named = [
        rel
        for rel, tree in sources
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name == "Segments"
    ]
    assert named == []


# ---- issue 40, item 3: one metric protocol -------------------------------------------------
# Counts pool through `scoring.metrics.Counts` and become `Metrics` through
# `Metrics.from_counts`; corpus rates are registered in `scoring.metrics.RATES`, session
# metrics in `scoring.meeting.SESSION_METRICS`.


def _package_sources() -> list[tuple[str, ast.Module]]:
    return [(rel, tree) for rel, _, tree in _modules("asrbench", "scoring")]


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


# --- Issue 40 item 4 (helper H): one home for audio, bootstrap draws and seeded draws. ---------


def _source_texts() -> list[tuple[str, str]]:
    """(path relative to the repo, text) of every module of asrbench/ and scoring/."""
    return [(rel, text) for rel, text, _ in _modules("asrbench", "scoring")]


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
        for path, text in _source_texts()
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
    offenders = [p for p, text in _source_texts() if p != "scoring/stats.py" and draw.search(text)]
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
    }
    found = {p: n for p, text in _source_texts() if (n := _unseeded_draws(text))}
    assert found == allowed


# Draws of a subset that are not a selection of utterances by count and seed (issue 40).
NOT_AN_UTTERANCE_SAMPLE = {
    "asrbench/perturb/aequevox.py": "which chunks of one utterance's audio a perturbation drops",
    "asrbench/fairness/localiser.py": "the seeded discovery/validation halves of each speaker",
    "asrbench/importers/meeting_overlap.py": "the speakers and turns of a composed session",
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
    for rel, tree in _sources():
        if rel == "asrbench/dataset.py" or rel in NOT_AN_UTTERANCE_SAMPLE:
            continue
        if found := _own_draws(tree):
            offenders[rel] = found
    assert offenders == {}, "select with asrbench.dataset.sample_utterances"


def test_the_sampler_check_sees_the_old_ways() -> None:
    old_stream = "import random\nkeep = random.Random(0).sample(range(9), 5)\n"
    old_campaign = "ids = [u.id for u in ds.utterances[:5]]\n"
    assert len(_own_draws(ast.parse(old_stream))) == 2
    assert _own_draws(ast.parse(old_campaign)) == ["line 1: a slice of .utterances"]
    assert _own_draws(ast.parse("utt = ds.utterances[3]\n")) == []


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
    for rel, tree in _sources():
        for func, attr in _probes(tree):
            if func == "hasattr" and rel not in _HASATTR_ALLOWED:
                offenders.append(f"{rel}: hasattr(..., {attr!r})")
            elif func == "getattr" and attr in methods:
                offenders.append(f"{rel}: getattr(..., {attr!r}): declare it on Runner")
    assert offenders == []
    assert {"identity", "image_tag", "start_worker"} <= methods


# ---- end of issue 40 item 6 block --------------------------------------------------------------


# ---- Issue 40 item 4 rest (helper H): resumable downloads, timed transcripts --------------------
# One home for resumable downloads.
# A download that can be interrupted and resumed writes its `<name>.part` (and, filled by chunk,
# its `<name>.done` journal) through asrbench/resumable.py alone, which also verifies it before
# the one rename. The transports stay with their callers: the recipes' HTTP/file:// fetch
# (asrbench/importers/download.py) and the zoo's S3 ranges and thread pool (asrbench/zoo/pull.py).
_RESUMABLE_HOME = "asrbench/resumable.py"
_PARTIAL_SUFFIXES = (".part", ".done")
_PARTIAL_CALLS = {"os.pwrite", "os.ftruncate"}  # writing a chunk in place, sizing a part


def _partial_downloads(tree: ast.AST) -> list[str]:
    """Lines naming a partial-download file (a `.part`/`.done` suffix joined to a name in code,
    not in a docstring) or writing into a file by offset."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and node.value in _PARTIAL_SUFFIXES
        ):
            found.append(f"{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Call) and _call_name(node) in _PARTIAL_CALLS:
            found.append(f"{node.lineno}: {_call_name(node)}")
    return found


def test_resumable_downloads_have_one_home() -> None:
    offenders = {
        rel: found
        for rel, tree in _sources()
        if rel != _RESUMABLE_HOME and (found := _partial_downloads(tree))
    }
    assert offenders == {}, "fetch through asrbench.resumable (InOrderPart, ChunkedPart)"
    assert _partial_downloads(ast.parse((REPO_ROOT / _RESUMABLE_HOME).read_text()))


def test_resumable_check_sees_a_bypass() -> None:
    tree = ast.parse(
        '"""Writes x.part."""\n'
        'part = folder / f"{name}.part"\n'
        'done = name + ".done"\n'
        "os.pwrite(fd, data, 0)\n"
        "os.ftruncate(fd, 9)\n"
    )
    assert sorted(w.split(": ")[0] for w in _partial_downloads(tree)) == ["2", "3", "4", "5"]


# Timed transcripts have one data model, `scoring.segments` (`Segment`, `TimedWord`), one reader
# per format and names that tell the readers apart: `scoring.timed.read_timed` (STM, CTM, SegLST,
# RTTM by extension) and `asrbench.results.timed.read_hyp_timed` (a model's hyp.timed.jsonl),
# with their writers `asrbench.longform.segments.write_timed` and `write_hyp_timed`. A
# hyp.timed.jsonl record becomes the model's types in `results.timed.as_transcript` alone.
_TIMED_WORD_MAKERS = {"asrbench/results/timed.py"}  # besides scoring/, whose readers make them


def _timed_functions() -> dict[str, list[str]]:
    """Every module defining each function whose name reads or writes something timed."""
    out: dict[str, list[str]] = {}
    for rel, _, tree in _modules("asrbench", "scoring"):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef)
                and node.name.startswith(("read_", "write_"))
                and "timed" in node.name
            ):
                out.setdefault(node.name, []).append(rel)
    return out


def test_timed_transcripts_have_one_reader_per_format_and_distinct_names() -> None:
    defined = _timed_functions()
    assert defined["read_timed"] == ["scoring/timed.py"]
    assert {name: homes for name, homes in defined.items() if len(homes) > 1} == {}
    makers = [
        rel
        for rel, _, tree in _modules("asrbench")
        if rel not in _TIMED_WORD_MAKERS
        and any(isinstance(n, ast.Call) and _call_name(n) == "TimedWord" for n in ast.walk(tree))
    ]
    assert makers == [], "read a hyp.timed.jsonl record with asrbench.results.timed.as_transcript"


# A segment is a timed stretch of transcript (`scoring.segments.Segment`); cutting audio is
# segmentation (`asrbench/segmentation/`) and its pieces are spans. User-facing names stay
# (`--segment`, `max_segment_s`), so only exact identifiers are refused.
_SEGMENT_NAMES = {"segment", "segments", "Segment", "Segments"}


def _identifiers(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
    return out


def test_segmentation_names_spans_not_segments() -> None:
    old = [rel for rel, _, _ in _modules("asrbench") if rel.startswith("asrbench/segment/")]
    assert old == [], "the package is asrbench/segmentation"
    named = {
        rel: sorted(found)
        for rel, _, tree in _modules("asrbench")
        if rel.startswith("asrbench/segmentation/")
        and (found := _identifiers(tree) & _SEGMENT_NAMES)
    }
    assert named == {}, "a piece of cut audio is a Span (RecordingSpans), not a segment"
    assert _identifiers(
        ast.parse("def f(segments): return Segment(x.segment)")
    ) >= _SEGMENT_NAMES - {"Segments"}


# ---- end of issue 40 item 4 rest (helper H) ---------------------------------------------------


# ---- issue 40 item 3 (helper E): the normaliser's steps and the scorer's options ------------
# The steps and their order live in `scoring/normalize/steps.py` (STEPS, PRESETS, LADDER); the
# scorer's options in `scoring/options.py` (OPTIONS, and `parse_options`, the one parser behind
# ops/score's flags, --score-opt and a request file's options.scorer).
_STEP_HOMES = {"scoring/normalize/steps.py", "scoring/options.py"}


def _step_lists(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines of literals (dict, tuple, list, set) naming three or more steps or step switches:
    a step list kept by hand."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Dict, ast.Tuple, ast.List, ast.Set)):
            elts = list(node.keys if isinstance(node, ast.Dict) else node.elts)
            # one level down too: a list of (label, switch, name) rows is a step list
            elts += [x for e in elts if isinstance(e, (ast.Tuple, ast.List)) for x in e.elts]
            hits = {e.value for e in elts if isinstance(e, ast.Constant) and e.value in names}
            if len(hits) >= 3:
                found.append(node.lineno)
    return found


def _step_names() -> set[str]:
    from scoring.normalize.steps import STEPS

    return {s.name for s in STEPS} | {s.option for s in STEPS if s.option}


def test_step_lists_live_in_the_registry() -> None:
    """No module lists the normaliser's steps (or their switches) itself: it reads
    scoring.normalize.steps (ops/score's options, the ablation's ladder did before issue 40)."""
    names = _step_names()
    offenders = [
        f"{rel}:{line}"
        for rel, tree in _package_sources()
        if rel not in _STEP_HOMES
        for line in _step_lists(tree, names)
    ]
    assert offenders == [], "read the steps from scoring.normalize.steps (STEPS, PRESETS, LADDER)"


def test_the_step_list_check_sees_a_list_by_hand() -> None:
    text = 'pair = ("case", "punc")\nLADDER = ["CASE", "PUNC", "ITJ"]\n'
    text += 'opts = {"nsw": 1, "dae": 0, "itj": 1}\n'
    text += 'rows = [("+CASE", "case", "CASE"), ("+PUNC", "punc", "PUNC")]'
    assert _step_lists(ast.parse(text), _step_names()) == [2, 3, 4]


def test_score_options_have_one_parser() -> None:
    """`--score-opt` values reach the scorer through scoring.options.parse_options only: no
    other coercion (typed_pairs, typed_value) is called on them, and the platform builds a
    ScorerConfig in asrbench/scorers.py alone (which parses what it is given)."""
    offenders = []
    for rel, tree in _package_sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node).lstrip(".")
            args = [a for a in ast.walk(node) if isinstance(a, ast.Constant)]
            if name in ("typed_pairs", "typed_value") and any(
                a.value == "--score-opt" for a in args
            ):
                offenders.append(f"{rel}:{node.lineno}: {name}")
            if (
                name == "ScorerConfig"
                and rel.startswith("asrbench/")
                and rel != "asrbench/scorers.py"
            ):
                offenders.append(f"{rel}:{node.lineno}: ScorerConfig")
    assert offenders == [], "parse scorer options with scoring.options.parse_options"


# ---- end of issue 40 item 3 (helper E) block ----------------------------------------------------

# ---- issue 40 item 1 (helper B): one container spec for batch, serve and stream -------------
# A model container's isolation and resources (capabilities, privileges, memory, CPUs, GPUs)
# are spelled in asrbench/runners/container.py alone; batch and serve render its spec as the
# Docker SDK's arguments, the stream as a `docker run` command line. Image builds are not model
# containers (images/build.py's `network_mode` is the build's network) and are not checked.
_CONTAINER_HOME = "asrbench/runners/container.py"
_SPEC_KEYWORDS = {"cap_drop", "security_opt", "mem_limit", "nano_cpus", "device_requests"}
_SPEC_WORDS = {"--cap-drop", "--security-opt", "no-new-privileges", "--memory", "run"}


def _own_container_spec(tree: ast.AST) -> list[str]:
    """Where a module spells a container's settings itself: an SDK keyword of the spec, or a
    `docker run` command line (the list literal starting "docker", "run")."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in _SPEC_KEYWORDS:
            found.append(f"line {node.value.lineno}: {node.arg}=")
        elif isinstance(node, ast.Constant) and node.value in _SPEC_WORDS - {"run"}:
            found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, ast.List) and [
            e.value for e in node.elts[:2] if isinstance(e, ast.Constant)
        ] == ["docker", "run"]:
            found.append(f"line {node.lineno}: a docker run command line")
    return found


def test_model_containers_have_one_spec() -> None:
    offenders = {}
    for rel, tree in _sources():
        if rel != _CONTAINER_HOME and (found := _own_container_spec(tree)):
            offenders[rel] = found
    assert offenders == {}, f"build model containers with {_CONTAINER_HOME}::container_spec"


def test_the_container_check_sees_the_old_ways() -> None:
    old_stream = 'cmd = ["docker", "run", "-i", "--memory", m, "--cap-drop", "ALL"]\n'
    old_batch = 'kw = dict(mem_limit=m, cap_drop=["ALL"], security_opt=["no-new-privileges"])\n'
    assert len(_own_container_spec(ast.parse(old_stream))) == 3
    assert len(_own_container_spec(ast.parse(old_batch))) == 4


# ---- end of issue 40 item 1 (helper B) block ---------------------------------------------------

# ---- issue 40 item 5: the report renders stored records only --------------------------------
# The scorer ablation and the long-form timelines are computed when the benchmark writes the
# cell (asrbench/results/derived.py) and stored beside it (ablation.json, timeline.json); the
# report draws them. So asrbench/report imports neither the scorer (asrbench.scorers, anything
# of scoring: aligner, normaliser, session scorers), nor the code that derives the records, nor
# the dataset and segment readers.
REPORT_MAY_NOT_IMPORT = (
    "scoring",
    "asrbench.scorers",
    "asrbench.results.derived",
    "asrbench.longform",
    "asrbench.dataset",
)
REPORT_IMPORTS_ALLOWED = {
    # the audio players play the audio the cell was scored on: the dataset is loaded to find
    # its files, checked against the stored content hash; nothing is scored or drawn from it
    ("asrbench/report/audio.py", "asrbench.dataset"),
}
# (module, function) of the report that may name run.json's dataset folder
REPORT_DATASET_FOLDER_ALLOWED = {
    ("asrbench/report/pages.py", "_audio_key"),  # the folder handed to audio.py's players
    ("asrbench/report/pages.py", "_dataset"),  # shown as text on the dataset page
}


def _report_reaches(tree: ast.AST) -> list[str]:
    """'line N: module' for each import (at load time or inside a function) of a module the
    report may not import. Imports under `if TYPE_CHECKING:` are types only (nothing runs):
    the report may name a stored record's types."""
    typing_only = {
        id(n)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for n in ast.walk(block)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        for name in names:
            if any(name == m or name.startswith(m + ".") for m in REPORT_MAY_NOT_IMPORT):
                found.append(f"line {node.lineno}: {name}")
    return found


def _dataset_folder_uses(tree: ast.Module) -> list[str]:
    """The top-level functions that read `.dataset_folder` (run.json's dataset folder)."""
    return sorted(
        {
            fn.name
            for fn in tree.body
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(fn)
            if isinstance(node, ast.Attribute) and node.attr == "dataset_folder"
        }
    )


def test_the_report_renders_stored_records_only() -> None:
    offenders = {}
    for rel, tree in _sources():
        if not rel.startswith("asrbench/report/"):
            continue
        found = [
            f
            for f in _report_reaches(tree)
            if (rel, f.split(": ")[1]) not in REPORT_IMPORTS_ALLOWED
        ]
        found += [
            f"{fn}() opens run.json's dataset folder"
            for fn in _dataset_folder_uses(tree)
            if (rel, fn) not in REPORT_DATASET_FOLDER_ALLOWED
        ]
        if found:
            offenders[rel] = found
    assert offenders == {}, "compute at finish (asrbench/results/derived.py), store, render"


def test_the_report_check_sees_the_old_ways() -> None:
    old_ablation = "def ablate():\n    from asrbench.scorers import get_scorer\n"
    old_longform = (
        "from scoring.hallucination import ref_words\n"
        "def segments_of(cell):\n"
        "    from asrbench.longform.segments import segments_file\n"
        "    return segments_file(cell.run.dataset_folder, {})\n"
    )
    assert _report_reaches(ast.parse(old_ablation)) == ["line 2: asrbench.scorers"]
    assert _report_reaches(ast.parse(old_longform)) == [
        "line 1: scoring.hallucination",
        "line 3: asrbench.longform.segments",
    ]
    assert _dataset_folder_uses(ast.parse(old_longform)) == ["segments_of"]
    assert _report_reaches(ast.parse("from asrbench.results.records import BACKFILL\n")) == []


# ---- end of issue 40 item 5 block --------------------------------------------------------------

# ---- issue 40 item 2: one session scorer, one cell hypothesis as sessions ---------------------
# cpWER, tcpWER, ORC-WER and session WER over timed segments are scored by scoring/meeting.py
# alone; its entry points are called only by the commands that score sessions:
_SESSION_SCORER_CALLERS = {
    "asrbench/cli/score.py": {"score_sessions"},  # ops/score --metric: the metric the user names
    "asrbench/benchmark/sessions.py": {"score_supported"},  # a long-form cell: what it supports
    # the report's speaker timelines: each recording's cpWER, from the inputs the cell's session
    # metrics use (their sum is checked equal to them in tests/report/test_speaker_report.py)
    "asrbench/results/speaker_view.py": {"score_sessions"},
}
# A cell's hypothesis becomes session segments in one function (results/timed.py), called by
# the benchmark's session metrics and by ops/export of a cell, so the two cannot disagree:
_HYP_SEGMENTS_CALLERS = {
    "asrbench/benchmark/sessions.py",
    "asrbench/importers/export.py",
    "asrbench/results/speaker_view.py",  # the speaker timelines (see above)
}


def _calls_and_imports(tree: ast.AST) -> set[str]:
    """Names called (as `f(...)` or `x.f(...)`) or imported by name in a module."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.id if isinstance(f, ast.Name) else getattr(f, "attr", ""))
        elif isinstance(node, ast.ImportFrom):
            out |= {a.name for a in node.names}
    return out


def test_sessions_are_scored_by_scoring_meeting_only() -> None:
    entry_points = {"score_sessions", "score_supported"}
    offenders = []
    for rel, tree in _package_sources():
        if rel == "scoring/meeting.py":
            continue
        names = _calls_and_imports(tree)
        used = names & entry_points
        if used - _SESSION_SCORER_CALLERS.get(rel, set()):
            offenders.append(f"{rel}: {sorted(used)}")
        if "linear_sum_assignment" in names:  # the speaker assignment is cpWER's and tcpWER's
            offenders.append(f"{rel}: linear_sum_assignment")
        if "hyp_segments" in names and rel not in _HYP_SEGMENTS_CALLERS | {
            "asrbench/results/timed.py"
        }:
            offenders.append(f"{rel}: hyp_segments")
    assert offenders == [], "score sessions through scoring.meeting (see the allow-lists)"


def test_session_scorer_check_sees_a_bypass() -> None:
    tree = ast.parse(
        "from scoring.meeting import score_sessions\n"
        "from scipy.optimize import linear_sum_assignment\n"
        "def f(s, r, h):\n    return score_sessions(s, r, h, 'x')\n"
    )
    names = _calls_and_imports(tree)
    assert {"score_sessions", "linear_sum_assignment"} <= names


# ---- end of issue 40 item 2 block --------------------------------------------------------------


# ---- issue 40 item 6 (helper G): typed inside ---------------------------------------------------
# mypy checks all of asrbench and scoring (`make typecheck`): the list in pyproject.toml names the
# two packages, not a selection of their modules that a new module could stay out of.
def test_mypy_checks_all_of_asrbench_and_scoring() -> None:
    import tomllib

    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["files"] == ["asrbench", "scoring"]


# run.json's sections are typed records; the objects left as mappings are so on purpose:
_RUN_MAPPINGS = {
    "packages",  # name -> version: the set of packages is data, not a schema
    "executor",  # Executor.describe(): each executor names what it ran on (a Ray address, ...)
    "scorer",  # the scorer identity summary.json carries too, and its whole configuration
    "shards",  # one row per shard run, as the executor reports it
}


def test_run_json_sections_are_typed() -> None:
    import dataclasses

    from asrbench.results.records import RunRecord

    untyped = {
        f.name for f in dataclasses.fields(RunRecord) if "dict[" in str(f.type)
    } - _RUN_MAPPINGS
    assert untyped == set(), "give these run.json sections a typed record (results/records.py)"


# A stored number that may be NaN becomes JSON null in one place (fairness.stats.finite_or_none)
def test_fairness_numbers_reach_json_through_one_helper() -> None:
    homes = [
        rel
        for rel, tree in _sources()
        if "float(x) if x is not None and np.isfinite(x) else None" in ast.unparse(tree)
    ]
    assert homes == ["asrbench/fairness/stats.py"]


# ---- end of issue 40 item 6 (helper G) block ----------------------------------------------------

# ---- issue 40 item 7 (helper D): one home for a test's own cache ------------------------------
# A test that points ASRBENCH_CACHE at a folder of its own gets it from tests/conftest.py's
# own_cache, which links the checkout's compiled NSW grammars (45-130 s a language to compile)
# and virtualenvs into it. The hand-made versions of it drifted (one linked the grammars only).
_OWN_CACHE_ALLOWED = {
    "tests/conftest.py",  # own_cache itself
    # the grammar-build script's own test: it needs a cache with no NSW readings copied in
    "tests/scoring/test_grammar_build.py",
    "tests/test_architecture.py",  # this check names what it looks for
}


def test_a_tests_own_cache_is_made_by_own_cache() -> None:
    offenders = [
        rel
        for rel, text, _ in _modules("tests")
        if rel not in _OWN_CACHE_ALLOWED and "nemo_tn" in text and "symlink_to(" in text
    ]
    assert offenders == [], "make a test's cache with tests.conftest.own_cache"


# ---- end of issue 40 item 7 (helper D) block ---------------------------------------------------

# ---- issue 40 item 7 (helper C): the test tree mirrors the packages; one fake-model factory ---
# Tests are named for their subject, never for the review round that asked for them, and a
# test of asrbench/<package> lives in tests/<package>/. Fake models and their cards are made by
# tests/factories.py: a card written by hand is allowed only where it is broken or odd on
# purpose, or is a user's own edit, each named here with why.
TESTS = REPO_ROOT / "tests"
_HAND_WRITTEN_CARDS = {
    "tests/images/test_render.py::card_error",  # cards broken on purpose: load_model's errors
    "tests/images/test_render.py::test_bad_card_is_one_error_line_from_the_cli",  # "16 kHz"
    "tests/images/test_cuda_variant.py::test_card_checks_its_cuda_variant",  # bad cuda blocks
    "tests/models/test_contract.py::test_ops_models_reports_a_broken_card",  # missing fields
    # bad max_input_s values
    "tests/segment/test_segmentation.py::test_card_limit_is_checked_where_the_card_enters",
    # a comment a user added to the card ops/models wrote, which must survive byte for byte
    "tests/models/test_runtime_transformers.py::test_a_name_as_model_spec_finds_or_writes_its_card",
}
# Tests outside tests/serve/ that reach asrbench.serve for another package's subject.
_SERVE_ELSEWHERE = {
    "tests/streaming/test_stream_timeout.py",  # streaming's StreamTimeout, met by a live session
}


def _test_sources(needle: str) -> list[tuple[str, ast.Module]]:
    """Every Python file of tests/ but the model programs and data under fixtures/ and golden/
    whose text holds `needle` (a file that never names what a check looks for cannot break
    it, and is not walked)."""
    return [
        (rel, tree)
        for rel, text, tree in _modules("tests")
        if not rel.startswith(("tests/fixtures/", "tests/golden/")) and needle in text
    ]


def _mentions_card(node: ast.AST, names: set[str]) -> bool:
    return any(
        (isinstance(n, ast.Constant) and n.value == "model.yaml")
        or (isinstance(n, ast.Name) and n.id in names)
        for n in ast.walk(node)
    )


def _opened_for_writing(call: ast.Call) -> bool:
    modes = [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "mode")]
    return any(isinstance(m, ast.Constant) and set(str(m.value)) & set("wax") for m in modes)


def _card_writes(tree: ast.Module) -> list[tuple[str, int]]:
    """(enclosing function, line) of each write to a model.yaml: `.write_text` on a path that
    names it (directly or through a variable bound to one), or `open(..., "w"/"a")` of one."""
    names = {
        t.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _mentions_card(node.value, set())
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "write_text":
            target = func.value
        elif isinstance(func, ast.Name) and func.id == "open" and _opened_for_writing(node):
            target = node.args[0] if node.args else node
        else:
            continue
        if _mentions_card(target, names):
            lines.append(node.lineno)
    functions = [
        (n.lineno, n.end_lineno or n.lineno, n.name)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]

    def enclosing(line: int) -> str:
        around = [(end - start, name) for start, end, name in functions if start <= line <= end]
        return min(around)[1] if around else "<module>"

    return [(enclosing(line), line) for line in lines]


def _named_after_a_round(name: str) -> bool:
    """test_r30_serve.py, test_r38_x.py: `test_r`, digits, `_`."""
    rest = name.removeprefix("test_r")
    round_, sep, _ = rest.partition("_")
    return rest != name and bool(sep) and round_.isdigit()


def test_no_test_file_is_named_after_a_review_round() -> None:
    named = [p.relative_to(REPO_ROOT).as_posix() for p in TESTS.rglob("test_r*.py")]
    assert [p for p in named if _named_after_a_round(Path(p).name)] == [], (
        "name a test file for its subject (tests/<package>/test_<what>.py)"
    )
    assert _named_after_a_round("test_r30_serve.py")
    assert not _named_after_a_round("test_runners.py") and not _named_after_a_round("test_r.py")


def test_serve_tests_live_in_tests_serve() -> None:
    elsewhere = []
    for rel, tree in _test_sources("asrbench.serve"):
        if rel.startswith("tests/serve/") or rel in _SERVE_ELSEWHERE:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "asrbench.serve"
            ):
                elsewhere.append(f"{rel}: line {node.lineno}")
    assert elsewhere == [], "ops/serve's tests go in tests/serve/"


def test_fake_model_cards_are_made_by_the_factory() -> None:
    hand_written = []
    for rel, tree in _test_sources("model.yaml"):
        if rel == "tests/factories.py":
            continue
        for function, line in _card_writes(tree):
            if f"{rel}::{function}" not in _HAND_WRITTEN_CARDS:
                hand_written.append(f"{rel}::{function} (line {line})")
    assert hand_written == [], "make the model with tests/factories.py (make_model, write_card)"


def test_the_card_check_sees_the_hand_written_ways() -> None:
    direct = 'def f(d):\n    (d / "model.yaml").write_text("id: x\\n")\n'
    bound = 'def g(d):\n    card = d / "model.yaml"\n    card.write_text(t)\n'
    appended = 'def h(d):\n    with open(d / "model.yaml", "a") as c:\n        c.write("x")\n'
    assert _card_writes(ast.parse(direct)) == [("f", 2)]
    assert _card_writes(ast.parse(bound)) == [("g", 3)]
    assert _card_writes(ast.parse(appended)) == [("h", 2)]
    assert _card_writes(ast.parse('t = (d / "model.yaml").read_text()\n')) == []


# ---- end of issue 40 item 7 (helper C) block ----------------------------------------------
