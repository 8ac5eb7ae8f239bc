"""Option values coerced without typer's per-option pydantic TypeAdapter.

typer 0.29 builds a pydantic TypeAdapter for an option the first time it coerces a value
(pydantic's import included, ~0.1 s). The plain options (paths, strings, numbers, flags, a
list of strings) need none of it: `lean(param)` gives such a parameter a coercion of its own
with the same values and messages. `ops/score`'s options and the command group's --help take
it; other commands keep typer's own.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

_PLAIN = (int, float, str, bool, Path, list[str])


@cache
def _plain_coercion() -> Any:
    """The coercion class (a typer `RuntimeParam`), or None when typer's internals differ
    (then typer's own coercion runs: slower, the same values)."""
    try:
        from dataclasses import dataclass

        from typer._click.exceptions import BadParameter
        from typer._coercion import RuntimeParam
    except ImportError:  # pragma: no cover - another typer
        return None

    @dataclass(frozen=True)
    class Plain(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            kind = self.annotation
            if kind is int or kind is float:  # (--collar: nan and inf refused by the house rule)
                try:
                    return kind(value)
                except (TypeError, ValueError):
                    name = "integer" if kind is int else "float"
                    raise BadParameter(
                        f"{value!r} is not a valid {name}.", ctx=ctx, param=param
                    ) from None
            if kind is Path:
                return Path(value)
            if kind == list[str]:  # a repeatable option (--score-opt): every value given
                return [str(v) for v in value]
            if kind is str or kind is bool:
                return value if isinstance(value, kind) else kind(value)
            raise BadParameter(f"{value!r}: unsupported option type", ctx=ctx, param=param)

    return Plain


def lean(param: Any) -> Any:
    """`param` (a typer parameter, or None) with the plain coercion when its type is a plain
    one and typer has not built its own yet; returned as given otherwise."""
    plain = _plain_coercion()
    desc = getattr(param, "type_descriptor", None)
    if (
        plain is not None
        and desc is not None
        and getattr(param, "_runtime_param", 0) is None
        and not desc.file_annotation
        and desc.annotation in _PLAIN
    ):
        param._runtime_param = plain(parameter_info=desc.parameter_info, annotation=desc.annotation)
    return param
