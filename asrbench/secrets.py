"""Secret values never leave the process in clear: one redactor for everything we write or print.

A model card declares its secrets by name (`secrets: [OPENAI_API_KEY]`); the runner passes
their values, from the host environment, to that model alone. Whatever comes back from the
model (hypotheses, failure reasons, logs) and whatever the platform then writes or prints
(failed.tsv, utterances.jsonl, summary.json, run.json, console, exception messages) goes
through `Redactor.redact`, which replaces every declared value, and the common encodings of
it that echo back in HTTP error bodies (URL-encoded, Base64 of `user:value`), with
`[REDACTED:NAME]`.
"""

from __future__ import annotations

import base64
import math
import os
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

MIN_LENGTH = 4  # shorter values would redact ordinary words; such secrets are not worth much
# A declared secret's value must look like a credential: at least this long and this many bits
# of (Shannon) information, so that finding it in a log can only mean it leaked, never that a
# word (`ever`) happened to match. Weaker values are refused before a run (`weak_secrets`).
MIN_SECRET_CHARS = 8
MIN_SECRET_BITS = 24.0


@dataclass(frozen=True)
class Redactor:
    """Replaces secret values (and their common encodings) in text."""

    values: dict[str, str] = field(default_factory=dict)  # value -> name

    @classmethod
    def for_names(cls, names: Iterable[str], env: Mapping[str, str] | None = None) -> Redactor:
        """A redactor for the values the named variables hold in `env` (default: os.environ)."""
        env = os.environ if env is None else env
        values: dict[str, str] = {}
        for name in names:
            value = env.get(name, "")
            if len(value) < MIN_LENGTH:
                continue
            for form in _forms(value):
                values.setdefault(form, name)
        return cls(values)

    def __bool__(self) -> bool:
        return bool(self.values)

    def redact(self, text: str) -> str:
        if not self.values or not text:
            return text
        for value in sorted(self.values, key=len, reverse=True):  # longest first
            if value in text:
                text = text.replace(value, f"[REDACTED:{self.values[value]}]")
        return text

    def names_in(self, text: str) -> list[str]:
        """The names of the secrets whose value (or an encoding of it) occurs in `text`."""
        if not self.values or not text:
            return []
        return sorted({name for value, name in self.values.items() if value in text})

    def redact_bytes(self, data: bytes) -> bytes:
        if not self.values:
            return data
        return self.redact(data.decode("utf-8", errors="replace")).encode("utf-8")

    def merged(self, other: Redactor) -> Redactor:
        return Redactor({**other.values, **self.values})


def _forms(value: str) -> list[str]:
    """The value and the encodings in which servers and clients echo it back."""
    forms = [value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)]
    raw = value.encode("utf-8")
    forms.append(base64.b64encode(raw).decode())
    forms += [base64.b64encode(f"{u}:{value}".encode()).decode() for u in ("", "apikey", "api")]
    return [f for f in dict.fromkeys(forms) if len(f) >= MIN_LENGTH]


def for_models(models: Iterable[object], env: Mapping[str, str] | None = None) -> Redactor:
    """The redactor for every secret any of `models` (Model objects) declares."""
    names = {s for m in models for s in getattr(getattr(m, "card", None), "secrets", [])}
    return Redactor.for_names(sorted(names), env)


def weakness(value: str) -> str | None:
    """Why `value` is too weak to be treated as a secret, or None."""
    if len(value) < MIN_SECRET_CHARS:
        return f"{len(value)} characters, fewer than {MIN_SECRET_CHARS}"
    counts = [value.count(c) for c in set(value)]
    bits = -sum(n * math.log2(n / len(value)) for n in counts)
    if bits < MIN_SECRET_BITS:
        return f"about {bits:.0f} bits of information, fewer than {MIN_SECRET_BITS:.0f}"
    return None


def weak_secrets(
    models: Iterable[object], env: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """(model ID, secret NAME, why) for each declared secret whose value is set but too weak
    to be one (`weakness`); the value itself is never returned."""
    env = os.environ if env is None else env
    out = []
    for m in models:
        card = getattr(m, "card", None)
        for name in getattr(card, "secrets", []):
            value = env.get(name, "")
            why = weakness(value) if value else None
            if why:
                out.append((str(getattr(m, "id", "?")), name, why))
    return out


def unset_secrets(
    models: Iterable[object], env: Mapping[str, str] | None = None
) -> list[tuple[str, list[str]]]:
    """(model ID, its declared secret NAMES) for each model that declares secrets but gets none
    of them from `env` (default: os.environ): it has no credential at all. Only none set
    counts: cards list alternatives (an API key or an access token) and optional ones (a
    session token), so one missing name alone says nothing."""
    env = os.environ if env is None else env
    out = []
    for m in models:
        names = list(getattr(getattr(m, "card", None), "secrets", []))
        if names and not any(env.get(n) for n in names):
            out.append((str(getattr(m, "id", "?")), names))
    return out
