"""Issue 30, low items: every help text is printed as written; no number option takes nan.

`ops/score --help` read "drop <beep>, , ..." because rich markup took `[noise]` for a tag. The
fix is central (`asrbench.cli.load_command`), so this renders `--help` of every subcommand in
`asrbench.cli.COMMANDS` (and of their own subcommands) and looks for each parameter's help
text, whitespace aside (lines wrap), in what was printed. `--tau nan` (ops/fairness) was
accepted: every float option of every subcommand now refuses nan and infinity with one line,
exit 2.
"""

from __future__ import annotations

from typing import Any

import pytest

from asrbench.cli import COMMANDS, load_command, main


def _commands() -> list[tuple[list[str], Any]]:
    """(argv path, click command) of every subcommand and nested subcommand."""
    out = []

    def walk(path: list[str], cmd: Any) -> None:
        out.append((path, cmd))
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk([*path, name], sub)

    for name in COMMANDS:
        walk([name], load_command(name))
    return out


COMMAND_PATHS = [(path, cmd) for path, cmd in _commands()]


def _flat(text: str) -> str:
    # Without any whitespace: the help formatter wraps lines at spaces and after hyphens.
    return "".join(text.split())


@pytest.mark.parametrize(
    ("path", "cmd"), COMMAND_PATHS, ids=[" ".join(p) for p, _ in COMMAND_PATHS]
)
def test_help_prints_every_help_text_intact(
    path: list[str], cmd: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--as-alias", f"ops/{path[0]}", *path, "--help"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    flat = _flat(printed)
    texts = [p.help for p in cmd.params if getattr(p, "help", None)]
    if cmd.help:
        texts.append(cmd.help.split("\n\n")[0])
    for text in texts:
        assert _flat(text) in flat, f"{' '.join(path)} --help lost: {text!r}\n{printed}"


def test_score_help_keeps_bracketed_markers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--as-alias", "ops/score", "score", "--help"]) == 0
    assert _flat("drop <beep>, [noise], ...") in _flat(capsys.readouterr().out)


FLOAT_OPTIONS = [
    (path, max(p.opts, key=len))
    for path, cmd in COMMAND_PATHS
    for p in cmd.params
    if getattr(getattr(p, "type_descriptor", None), "annotation", None) is float and p.opts
]


def test_there_are_float_options_to_check() -> None:
    assert (["fairness"], "--tau") in FLOAT_OPTIONS


@pytest.mark.parametrize(
    ("path", "option"), FLOAT_OPTIONS, ids=[f"{' '.join(p)} {o}" for p, o in FLOAT_OPTIONS]
)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_float_options_refuse_nan_and_infinity(
    path: list[str], option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The option comes first on the line, so it is checked before any missing argument.
    code = main(["--as-alias", f"ops/{path[0]}", *path, option, value])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.splitlines() == [err] and err.startswith(f"error: {option} {float(value)}")
    assert "finite" in err
