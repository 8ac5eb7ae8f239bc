"""The platform's error base and the one mapping from errors to exit codes.

Every error a user can cause or fix derives from `AsrbenchError` and carries a message that names
the file, line, utterance, model or dataset and says what to do. The CLI prints that message (no
traceback) and exits with `exit_code`:

    0    success
    1    the job ran but something failed (a cell, a shard, a download, an engine)
    2    bad input or usage: fix the command line, a file or a setting
    130  interrupted (Ctrl-C); the work done is kept and a rerun resumes
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130


class AsrbenchError(Exception):
    """Base of every error the platform reports to a user."""

    exit_code = EXIT_FAILED


class InputError(AsrbenchError, ValueError):
    """Bad input: a file, an option, a setting. The user fixes it and reruns."""

    exit_code = EXIT_INPUT


class NotFoundError(InputError):
    """A dataset, model or file that does not exist where the user said."""


class InternalError(AsrbenchError):
    """A broken invariant of the platform itself (a bug): the job stops before it writes a
    wrong result, and the message asks for a report."""

    def __init__(self, message: str):
        super().__init__(f"internal error (a bug in asrbench, please report it): {message}")


def exit_code_for(exc: BaseException) -> int:
    """The exit code for an exception reaching the CLI (ScoringError comes from `scoring/`,
    which depends on nothing in asrbench: it is a user's input error)."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, AsrbenchError):
        code = exc.exit_code
        # An error never exits 0, whatever a subclass or instance set exit_code to.
        return code if isinstance(code, int) and code != EXIT_OK else EXIT_FAILED
    # Imported here, not at load time: `scoring` loads numpy and the scorer, which a command
    # that never scores (and every `--help`) should not pay for.
    from scoring.errors import ScoringError

    if isinstance(exc, ScoringError):
        return EXIT_INPUT
    return EXIT_FAILED
