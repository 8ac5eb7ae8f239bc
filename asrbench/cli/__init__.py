"""The `asrbench` command: one typer app whose subcommands the `ops/*` scripts alias.

Each subcommand lives in `asrbench/cli/<module>.py` and exposes `app` (a typer app). Modules are
imported only when their command runs, so `asrbench score` starts without loading Docker, boto3
or the perturbation bank. Errors derived from `AsrbenchError` (and the scorer's `ScoringError`)
are printed as one `error: ...` line and mapped to exit codes by `asrbench.errors`.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from typer.core import TyperGroup

# name -> (module under asrbench.cli, one-line help shown by `asrbench --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "benchmark": ("benchmark", "Run models on datasets (sharded, cached, resumable), score them."),
    "leaderboard": ("leaderboard", "Model x dataset table from stored results."),
    "audit": ("audit", "Flag references that independent models agree are wrong."),
    "score": ("score", "Score hypothesis transcripts against references."),
    "validate": ("validate", "Report every problem in dataset folders."),
    "import": ("import_", "Import test sets by recipe, or Kaldi/NeMo/lhotse/HF/CSV datasets."),
    "export": ("export", "Export a dataset as Kaldi, NeMo or lhotse manifests."),
    "build": ("build", "Build model images (no registry needed)."),
    "models": ("models", "Model cards as a table."),
    "serve": ("serve", "Serve a model as an OpenAI-compatible endpoint."),
    "push": ("push", "Publish a dataset or model to a zoo remote."),
    "pull": ("pull", "Fetch a dataset or model from a zoo remote."),
    "zoo": ("zoo", "Inspect zoo remotes: list, show, verify [--repair]."),
    "perturb": ("perturb", "Derive a perturbed dataset (robustness bank)."),
    "robustness": ("robustness", "Run models over a perturbation grid: WER, WERD, NWERD."),
    "fairness": ("fairness", "Per-group accuracy, robustness disparity, differential testing."),
    "report": ("report", "Static HTML report site (leaderboard to utterance) from stored results."),
    "stream": ("stream", "Stream a dataset through a model in real time: latency metrics, CIs."),
}
ALIAS_FLAG = "--as-alias"  # `ops/X` scripts: `asrbench --as-alias "$0" X ARGS...`


def load_command(name: str) -> Any:
    """The (typer-vendored) click command behind subcommand `name` (imports its module)."""
    import typer.main

    module = importlib.import_module(f"asrbench.cli.{COMMANDS[name][0]}")
    cmd = typer.main.get_command(module.app)
    cmd.name = name
    _house_rules(cmd)
    return cmd


def _house_rules(cmd: Any) -> None:
    """What every subcommand (and its own subcommands) gets, whatever its module says.

    Help is printed as written: with rich markup on (typer's default when rich is installed),
    `[noise]` in a help text is read as a markup tag and vanishes ("drop <beep>, , ...").
    And no number option accepts nan or infinity: such a value is refused as it is parsed,
    before anything runs, with a one-line error naming the option.
    """
    cmd.rich_markup_mode = None
    for param in cmd.params:
        if getattr(getattr(param, "type_descriptor", None), "annotation", None) is float:
            param.callback = _finite(param, param.callback)
    for sub in getattr(cmd, "commands", {}).values():
        _house_rules(sub)


def _finite(param: Any, inner: Any) -> Any:
    """A parameter callback refusing nan and infinity, then calling `inner` (if any)."""
    import math

    label = max(param.opts, key=len) if param.opts else param.name

    def check(ctx: Any, p: Any, value: Any) -> Any:
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, float) and not math.isfinite(v):
                from asrbench.errors import InputError

                default = f" (default {param.default})" if param.default is not None else ""
                raise InputError(f"{label} {v}: not a finite number; give a number{default}")
        return inner(ctx, p, value) if inner is not None else value

    return check


class LazyGroup(TyperGroup):
    """A command group that imports a subcommand's module only when that subcommand runs."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def get_help_option(self, ctx: Any) -> Any:
        # `asrbench score ...` parses the group's options first: its --help, coerced by
        # typer, would import pydantic (~0.1 s) before any command runs
        from asrbench.cli.coercion import lean

        return lean(super().get_help_option(ctx))

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # The one-line help of each command without importing every command module.
        with formatter.section("Commands"):
            formatter.write_dl([(n, h) for n, (_, h) in COMMANDS.items()])


HELP = (
    "asrbench: reproducible ASR evaluation. Every command is also under ops/ "
    "(ops/benchmark = asrbench benchmark); `asrbench COMMAND --help` for its options."
)
cli = LazyGroup(
    name="asrbench",
    help=HELP,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _stacks_on_sigusr1() -> None:
    """`kill -USR1 PID` makes a running command print every thread's stack to stderr and go
    on: what a job that seems stuck is waiting for (docs/RELIABILITY.md)."""
    import faulthandler
    import signal

    if not hasattr(signal, "SIGUSR1"):
        return
    try:
        faulthandler.register(signal.SIGUSR1, file=sys.stderr.fileno(), all_threads=True)
    except (AttributeError, OSError, ValueError):
        pass  # stderr is not a file (the CLI called in-process, output captured): no stacks


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `asrbench` and of every `ops/*` alias; returns the exit code."""
    _stacks_on_sigusr1()
    if argv is None and _runs_only(("score",), sys.argv[1:]) and "numpy" not in sys.modules:
        # Scoring multiplies no floats (its bootstrap products are integer ones), but OpenBLAS
        # starts a worker thread per core as numpy loads (with the scorer, once the command
        # runs), which busy-waits 0.05-0.15 s of CPU on another core:
        # one thread, in a process that runs only `score`. Anyone's own setting wins; other
        # commands keep the default (their model programs inherit the environment).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from typer._click.exceptions import ClickException
    from typer.exceptions import Abort, Exit

    from asrbench.errors import EXIT_INPUT, EXIT_INTERRUPTED, exit_code_for

    args = list(sys.argv[1:] if argv is None else argv)
    prog = "asrbench"
    command: Any = cli
    if len(args) >= 3 and args[0] == ALIAS_FLAG:
        # `ops/benchmark ...`: run the subcommand directly so usage reads `ops/benchmark [...]`,
        # whatever path the script was typed as (`../main/ops/import`, an absolute one).
        prog = f"ops/{args[2]}"
        command, args = load_command(args[2]), args[3:]
    try:
        result = command.main(args=args, prog_name=prog, standalone_mode=False)
    except Exit as exc:
        return exc.exit_code
    except ClickException as exc:
        exc.show()
        return EXIT_INPUT if exc.exit_code == 2 else exc.exit_code
    except (Abort, KeyboardInterrupt):
        print(
            "\ninterrupted; work done so far is kept, rerun the same command to continue",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except Exception as exc:
        code = exit_code_for(exc)
        if not _is_user_error(exc):
            raise
        print(f"error: {_redacted(str(exc))}", file=sys.stderr)
        return code
    return result if isinstance(result, int) else 0


def _runs_only(names: tuple[str, ...], args: list[str]) -> bool:
    """Whether these command-line arguments run one of `names` (`ops/X ...` or `asrbench X`)."""
    if args[:1] == [ALIAS_FLAG]:
        return args[2:3] != [] and args[2] in names
    return args[:1] != [] and args[0] in names


def _is_user_error(exc: BaseException) -> bool:
    from asrbench.errors import AsrbenchError

    if isinstance(exc, AsrbenchError):
        return True
    from scoring.errors import ScoringError

    return isinstance(exc, ScoringError)


def _redacted(text: str) -> str:
    """Safety net: no declared secret of any known model reaches the console in an error."""
    from asrbench.errors import AsrbenchError
    from asrbench.modelcard import load_all
    from asrbench.secrets import for_models
    from asrbench.settings import settings

    try:
        models, _ = load_all(settings().models_dir)
    except (AsrbenchError, OSError):  # cards unreadable: the specific redactions already ran
        return text
    return for_models(models).redact(text)
