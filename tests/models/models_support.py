"""Helpers for the zoo's model tests (importable: pytest puts this folder on sys.path)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from asrbench.settings import REPO_ROOT


def _load_require() -> Callable[[str, bool, str], None]:
    """tests/conftest.py's `require`; loaded by path because `tests` is not a package."""
    spec = importlib.util.spec_from_file_location(
        "_asrbench_root_conftest_models", REPO_ROOT / "tests" / "conftest.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.require


require = _load_require()
