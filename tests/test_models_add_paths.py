"""`ops/models add` and the usage line (issue 38): a name or `--id` too long for a folder, or
a file as `--root`, is one line with status 2 (it was an OSError traceback); usage names the
command, not the path it was typed as. The real CLI, in-process and as `ops/*` subprocesses."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def test_models_add_with_a_name_or_id_too_long_for_a_folder_is_one_line(
    cli, tmp_path: Path
) -> None:
    root = tmp_path / "models"
    for args in (["hf:org/" + "n" * 300], ["hf:org/name", "--id", "a" * 300]):
        code, out, err = cli("models", "add", *args, "--root", root)
        assert code == 2, (args, out, err)
        assert err.startswith("error: ") and "Traceback" not in err, err
        assert "at most 128" in err and "--id" in err, err
    assert not root.exists() or not list(root.iterdir())


def test_models_add_with_a_file_as_root_is_one_line(cli, tmp_path: Path) -> None:
    a_file = tmp_path / "models.txt"
    a_file.write_text("not a folder\n")
    code, out, err = cli("models", "add", "hf:org/name", "--root", a_file)
    assert code == 2, (out, err)
    assert err.startswith("error: ") and "Traceback" not in err and "--root" in err, err
    assert a_file.read_text() == "not a folder\n"
    for root in (a_file, tmp_path / "nosuch"):  # the listing too
        code, out, err = cli("models", "--root", root)
        assert code == 2 and err.startswith(f"error: --root {root}: not a folder"), (out, err)


def test_usage_names_the_command_not_the_path_it_was_typed_as(
    repo_root: Path, tmp_path: Path
) -> None:
    """`../main/ops/import --nope` printed `Usage: ../main/ops/import ...`."""
    for cwd, typed in (
        (tmp_path, str(repo_root / "ops" / "import")),
        (repo_root.parent, os.path.join(repo_root.name, "ops", "import")),
    ):
        p = subprocess.run([typed, "--nope"], cwd=cwd, capture_output=True, text=True, timeout=120)
        assert p.returncode == 2, p.stderr
        assert "Usage: ops/import " in p.stderr, p.stderr
