"""The language of a cell: which tag the model program and the scorer get, or why it is refused.

A dataset's language is the BCP-47 tag of its `dataset.yaml` (`language:`, `en` when absent).
It goes to the scorer as written, and to the model as the card's matching tag (see
`asrbench.modelcard.language_match`: `fr-CA` data on a card listing `fr` runs as `fr`):

- the card's first language is its default (what the program does with no setting), so an
  English cell of an English-first card gets no setting and keeps its cache key;
- any other language sets `ASRBENCH_LANGUAGE=<card tag>` for the program, and, for a card whose
  `settings` hold exactly one `*_LANGUAGE` knob (the API cards' `DEEPGRAM_LANGUAGE`, ...), that
  knob too. Both are runtime env, so they are recorded in run.json and in the cache key. A value
  the user set with `--env` wins (e.g. `ASRBENCH_LANGUAGE=auto`);
- a card whose `languages` lack the dataset's, or a dataset whose `LANGUAGE` column names another
  language than its `dataset.yaml`, is refused before any model runs, unless `--force`: then
  the program runs in its default language and the result is marked (`forced_language`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asrbench.benchmark.errors import BenchmarkError
from asrbench.dataset import Dataset
from asrbench.errors import InputError
from asrbench.modelcard import Model, Tag, language_match
from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.results.records import RunLanguage

LANGUAGE_ENV = "ASRBENCH_LANGUAGE"
LANGUAGE_COLUMN = "LANGUAGE"


class LanguageError(BenchmarkError, InputError):
    """A model asked to run on a language its card does not list (exit 2: fix the input)."""


@dataclass(frozen=True)
class LanguagePlan:
    """What a cell does about language: the tags, what the program is given, and whether the
    run was forced past a mismatch."""

    dataset: str  # the dataset's tag (dataset.yaml); the scorer gets it as written
    card: tuple[str, ...]  # the card's languages
    model_tag: str | None  # the card's tag for the data; None: the card lacks it
    forced: bool = False  # run with --force despite a mismatch
    env: Mapping[str, str] = field(default_factory=dict)  # set for the program by the platform
    mixed: tuple[str, ...] = ()  # other languages named by the LANGUAGE column

    def record(self) -> RunLanguage:
        """run.json's `language` section."""
        return RunLanguage(
            dataset=self.dataset,
            card=list(self.card),
            model=self.model_tag,
            forced=self.forced,
            env=dict(self.env),
            mixed=list(self.mixed),
        )


def language_setting(settings: Mapping[str, Any]) -> str | None:
    """The card's own language knob: its one `settings` key ending in `_LANGUAGE`, if any."""
    knobs = [k for k in settings if k.endswith("_LANGUAGE")]
    return knobs[0] if len(knobs) == 1 else None


def other_languages(ds: Dataset) -> dict[str, list[str]]:
    """LANGUAGE-column value -> IDs of the utterances whose language differs from the
    dataset's (an empty cell counts as the dataset's)."""
    want = Tag.parse(ds.language).language
    out: dict[str, list[str]] = {}
    for u in ds.utterances:
        value = (u.extra.get(LANGUAGE_COLUMN) or "").strip()
        if value and Tag.parse(value).language != want:
            out.setdefault(value, []).append(u.id)
    return out


def plan_language(
    mdl: Model, ds: Dataset, *, force: bool = False, user_env: Mapping[str, str] | None = None
) -> LanguagePlan:
    """The cell's LanguagePlan; LanguageError (naming the card, its languages and the
    dataset's) when the card lacks the dataset's language or the dataset mixes languages,
    unless `force`."""
    card = tuple(mdl.card.languages)
    tag = language_match(ds.language, list(card))
    mixed = other_languages(ds)
    problems = []
    if tag is None:
        problems.append(
            f"model {mdl.id} ({mdl.card_path}) lists languages {', '.join(card)}; dataset "
            f"{ds.id} is in {ds.language} ({ds.root / 'dataset.yaml'})"
        )
    if mixed:
        first = next(iter(mixed.values()))[0]
        problems.append(
            f"dataset {ds.id} is declared {ds.language} in dataset.yaml, but its "
            f"{LANGUAGE_COLUMN} column names {', '.join(sorted(mixed))} (e.g. utterance "
            f"{first}); a run gives one language to the model and the scorer: split the "
            "dataset into one folder per language"
        )
    if problems and not force:
        raise LanguageError(
            "; ".join(problems) + ". Nothing was run. Pick a model whose card lists the "
            "language (ops/models shows each card's), or pass --force to run anyway (the "
            "program runs in its default language, the result is marked forced_language)"
        )
    return LanguagePlan(
        dataset=ds.language,
        card=card,
        model_tag=tag,
        forced=bool(problems),
        env=_program_env(mdl, tag, user_env or {}),
        mixed=tuple(sorted(mixed)),
    )


def _program_env(mdl: Model, tag: str | None, user_env: Mapping[str, str]) -> dict[str, str]:
    """The settings that tell the program the data's language; none for the card's default."""
    if tag is None or tag == mdl.card.languages[0]:
        return {}
    env = {LANGUAGE_ENV: tag}
    knob = language_setting(mdl.card.settings)
    if knob:
        env[knob] = tag
    return {k: v for k, v in env.items() if k not in user_env}


def check_grid(
    models: Sequence[str | Path], datasets: Sequence[str | Path], force: bool = False
) -> None:
    """Every model x dataset cell's language checked (`plan_language`) before a campaign
    derives or runs anything; a model or dataset that cannot be resolved is left to fail
    with its own message where it is used."""
    try:
        mdls = [resolve_model(m) for m in models]
        dss = [resolve_dataset(d, check_audio=False) for d in datasets]
    except InputError:
        return
    for ds in dss:
        for mdl in mdls:
            plan_language(mdl, ds, force=force)
