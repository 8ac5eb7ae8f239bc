"""An ID that is neither a folder, nor under models/ or datasets/, nor in the zoo: one line that
names it, where it was looked for and how to list the IDs; never "rerun to resume", which only
helps an interrupted transfer."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (("benchmark", "-m", "no_such_model", "-d", "mini_en"), "model 'no_such_model'"),
        (("benchmark", "-m", "pocketsphinx_en", "-d", "no_such_set"), "dataset 'no_such_set'"),
        (
            ("robustness", "-m", "no_such_model", "-d", "mini_en", "-g", "gaussian_noise:1"),
            "model 'no_such_model'",
        ),
    ],
)
def test_an_unknown_id_is_one_line_naming_it(cli, tmp_path, args, what) -> None:
    code, _, err = cli(*args, "--runner", "local", "--results", tmp_path / "r")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and what in lines[0], err
    assert "check the ID" in lines[0] and "rerun" not in err
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("summary.json"))
