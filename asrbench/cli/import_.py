"""`asrbench import` (ops/import): standard test sets by recipe, and Kaldi, NeMo, lhotse,
Hugging Face, Common Voice, CSV/JSONL or folder+table datasets, into the dataset format."""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.importers.common import build_dataset

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Import test sets (recipes) and datasets in other toolkits' formats.",
)

IdOpt = typer.Option(..., "--id", help="dataset ID (also the default folder datasets/ID)")
OutOpt = typer.Option(None, "--out", help="output folder (default datasets/ID)")
RateOpt = typer.Option(16000, "--rate", help="sample rate of the converted audio")
LangOpt = typer.Option("en", "--language")
LicOpt = typer.Option("unknown", "--licence", help="licence of the source data")
ForceOpt = typer.Option(False, "--force", help="replace an existing output folder")
FreeOpt = typer.Option(
    False,
    "--reference-free",
    help="the data has no transcripts: declare the dataset reference-free",
)
RootOpt = typer.Option(
    None, "--audio-root", help="folder the audio must lie in (default: the manifest's folder)"
)


def _out(out: Path | None, dataset_id: str) -> Path:
    from asrbench.dataset import check_dataset_id
    from asrbench.entries import local_dir

    check_dataset_id(dataset_id)
    return out or local_dir("dataset", dataset_id)


def _report(path: Path) -> None:
    from asrbench.dataset import load_dataset

    ds = load_dataset(path)
    warnings = [p for p in ds.problems if p.severity == "warning"]
    for p in warnings[:10]:
        typer.echo(str(p), err=True)
    if len(warnings) > 10:
        typer.echo(f"... and {len(warnings) - 10} more warnings (ops/validate {path})", err=True)
    rows = "recordings" if ds.longform else "utterances"
    typer.echo(f"imported {len(ds)} {rows} ({ds.total_duration / 3600:.2f} h) into {path}")


def _run(
    items,
    out: Path | None,
    dataset_id: str,
    rate: int,
    language: str,
    licence: str,
    source: str,
    force: bool,
    reference_free: bool = False,
) -> None:
    path = build_dataset(
        _out(out, dataset_id),
        items,
        dataset_id=dataset_id,
        rate=rate,
        language=language,
        licence=licence,
        source=source,
        force=force,
        reference_free=reference_free,
    )
    _report(path)


@app.command()
def kaldi(
    data_dir: Path,
    dataset_id: str = IdOpt,
    out: Path = OutOpt,
    rate: int = RateOpt,
    language: str = LangOpt,
    licence: str = LicOpt,
    force: bool = ForceOpt,
    reference_free: bool = FreeOpt,
    allow_pipes: bool = typer.Option(
        False, "--allow-pipes", help="run piped wav.scp commands (no shell)"
    ),
    path_base: Path = typer.Option(
        None, "--path-base", help="folder relative wav.scp paths start from"
    ),
) -> None:
    """A Kaldi data dir (wav.scp, text, utt2spk, spk2gender, segments)."""
    from asrbench.importers.kaldi import import_kaldi

    _run(
        import_kaldi(data_dir, allow_pipes, path_base),
        out,
        dataset_id,
        rate,
        language,
        licence,
        f"Kaldi data dir {data_dir.name}",
        force,
        reference_free,
    )


@app.command()
def nemo(
    manifest: Path,
    dataset_id: str = IdOpt,
    out: Path = OutOpt,
    rate: int = RateOpt,
    language: str = LangOpt,
    licence: str = LicOpt,
    force: bool = ForceOpt,
    reference_free: bool = FreeOpt,
    audio_root: Path = RootOpt,
) -> None:
    """A NeMo JSONL manifest (audio_filepath, text, duration, offset)."""
    from asrbench.importers.nemo import import_nemo

    _run(
        import_nemo(manifest, audio_root),
        out,
        dataset_id,
        rate,
        language,
        licence,
        f"NeMo manifest {manifest.name}",
        force,
        reference_free,
    )


@app.command()
def folder(
    audio_dir: Path,
    table: Path,
    dataset_id: str = IdOpt,
    out: Path = OutOpt,
    rate: int = RateOpt,
    language: str = LangOpt,
    licence: str = LicOpt,
    force: bool = ForceOpt,
) -> None:
    """A folder of audio plus a transcript table (TSV, or CSV by extension)."""
    from asrbench.importers.folder import import_folder

    _run(
        import_folder(audio_dir, table),
        out,
        dataset_id,
        rate,
        language,
        licence,
        f"folder {audio_dir.name} with {table.name}",
        force,
    )


@app.command()
def manifest(
    path: Path,
    dataset_id: str = IdOpt,
    out: Path = OutOpt,
    rate: int = RateOpt,
    language: str = LangOpt,
    licence: str = LicOpt,
    force: bool = ForceOpt,
    reference_free: bool = FreeOpt,
    audio_root: Path = RootOpt,
    mapping: list[str] = typer.Option(
        [],
        "--map",
        help="FIELD=COLUMN (audio, text, "
        "id, speaker, gender, accent, language, start, "
        "end, duration); repeat",
    ),
) -> None:
    """A CSV, TSV or JSON Lines manifest with a column mapping."""
    from asrbench.importers.manifest import import_manifest, parse_mapping

    _run(
        import_manifest(path, parse_mapping(mapping), audio_root, reference_free),
        out,
        dataset_id,
        rate,
        language,
        licence,
        f"manifest {path.name}",
        force,
        reference_free,
    )


@app.command()
def hf(
    path: Path,
    dataset_id: str = IdOpt,
    out: Path = OutOpt,
    rate: int = RateOpt,
    language: str = LangOpt,
    licence: str = LicOpt,
    force: bool = ForceOpt,
    reference_free: bool = FreeOpt,
    split: str = typer.Option(None, "--split", help="one split (default: all of them)"),
    audio_column: str = typer.Option("audio", "--audio-column"),
    text_column: str = typer.Option(None, "--text-column"),
    id_column: str = typer.Option(None, "--id-column"),
) -> None:
    """A Hugging Face dataset saved on disk (save_to_disk folder or parquet files)."""
    from asrbench.importers.hf import import_hf

    _run(
        import_hf(path, split, audio_column, text_column, id_column, reference_free),
        out,
        dataset_id,
        rate,
        language,
        licence,
        f"Hugging Face dataset {path.name}",
        force,
        reference_free,
    )


@app.command()
def lhotse(
    dataset_id: str = IdOpt,
    out: Path = OutOpt,
    rate: int = RateOpt,
    language: str = LangOpt,
    licence: str = LicOpt,
    force: bool = ForceOpt,
    audio_root: Path = RootOpt,
    recordings: Path = typer.Option(None, "--recordings"),
    supervisions: Path = typer.Option(None, "--supervisions"),
    cuts: Path = typer.Option(None, "--cuts"),
    longform: bool = typer.Option(
        False,
        "--longform",
        help="whole recordings with their supervisions as segments (a long-form dataset)",
    ),
) -> None:
    """lhotse manifests: --recordings + --supervisions, or --cuts. No text at all: the dataset
    is declared reference-free. --longform keeps each recording whole (one row per recording)
    and its supervisions as the segment references."""
    from asrbench.importers.lhotse_io import all_text_missing, import_lhotse, longform_lhotse

    if longform:
        if recordings is None or supervisions is None:
            raise typer.BadParameter("--longform needs --recordings and --supervisions")
        source = longform_lhotse(recordings, supervisions, audio_root)
        card = {"language": language, "licence": licence}
        _run_longform(source, out, dataset_id, rate, card, force)
        return
    free = all_text_missing(supervisions, cuts)
    name = (cuts or supervisions or recordings or Path("?")).name
    _run(
        import_lhotse(recordings, supervisions, cuts, audio_root),
        out,
        dataset_id,
        rate,
        language,
        licence,
        f"lhotse manifests {name}",
        force,
        free,
    )


@app.command("longform")
def longform_cmd(
    dataset_id: str = IdOpt,
    segments: Path = typer.Option(
        ..., "--segments", help="reference segments: .stm, .seglst.json (or .json), .rttm"
    ),
    audio_dir: Path = typer.Option(
        None, "--audio-dir", help="folder of <session_id>.<ext> recordings (default: beside)"
    ),
    fmt: str = typer.Option(None, "--format", help="stm, seglst or rttm (default: extension)"),
    out: Path = OutOpt,
    rate: int = RateOpt,
    language: str = LangOpt,
    licence: str = LicOpt,
    force: bool = ForceOpt,
) -> None:
    """Long-form recordings with segment references (STM, SegLST, or RTTM for speaker turns
    only, which makes the dataset reference-free): one row per recording, segments checked
    against the audio, kept in segments.seglst.json."""
    from asrbench.importers.longform import from_timed

    source = from_timed(segments, audio_dir or segments.parent, fmt)
    card = {"language": language, "licence": licence}
    _run_longform(source, out, dataset_id, rate, card, force)


@app.command("earnings-nlp")
def earnings_nlp(
    source: Path = typer.Option(
        ..., "--from", help="a checkout of revdotcom/speech-datasets (or its extracted archive)"
    ),
    corpus: str = typer.Option("earnings21", "--corpus", help="earnings21 or earnings22"),
    out: Path = typer.Option(None, "--out", help="output folder (default datasets/CORPUS-nlp)"),
    systems: bool = typer.Option(
        False, "--systems", help="also the published system outputs (Earnings-21's seven)"
    ),
    force: bool = ForceOpt,
) -> None:
    """Earnings-21/22 as fstalign scores them (text only): NLP references, normalisation and
    wer_tags sidecars (and system outputs), for ops/score; the audio is the earnings21 and
    earnings22 recipes' (online)."""
    from asrbench.importers.earnings_nlp import import_earnings_nlp

    dest = out or _out(None, f"{corpus}-nlp")
    got = import_earnings_nlp(source, corpus, dest, systems=systems, force=force)
    for line in got["warnings"]:
        typer.echo(f"warning: {line}", err=True)
    more = f", outputs of {len(got['systems'])} systems" if got["systems"] else ""
    typer.echo(
        f"imported {got['calls']} calls ({got['normalizations']} normalisation and "
        f"{got['wer_tags']} wer_tags sidecars{more}) into {dest}"
    )


def _run_longform(source, out: Path | None, dataset_id: str, rate: int, meta: dict, force: bool):
    from asrbench.dataset import load_dataset
    from asrbench.importers.longform import build_longform

    path = build_longform(
        _out(out, dataset_id),
        source,
        dataset_id=dataset_id,
        rate=rate,
        force=force,
        meta=meta,
    )
    ds = load_dataset(path)
    typer.echo(
        f"imported {len(ds)} recordings ({ds.total_duration / 3600:.2f} h, "
        f"{len(ds.segments)} segments) into {path}"
    )


def _recipe_command(name: str) -> None:
    from asrbench.importers.recipes import RECIPES

    recipe = RECIPES[name]
    default_lang = recipe.languages[0]

    def command(
        dataset_id: str = typer.Option(
            None,
            "--id",
            help=f"dataset ID (default {name}, with the language for multilingual sets)",
        ),
        source: str = typer.Option(
            None,
            "--from",
            help="a mirror (URL or folder with the "
            "official paths), the archive, or an extracted copy",
        ),
        language: str = typer.Option(default_lang, "--language"),
        split: str = typer.Option(recipe.splits[0], "--split"),
        checksum: list[str] = typer.Option(
            [], "--checksum", help="ARCHIVE=sha256:HEX for a re-packed mirror; repeat"
        ),
        out: Path = OutOpt,
        rate: int = RateOpt,
        force: bool = ForceOpt,
        longform: bool = typer.Option(
            False,
            "--longform",
            help="whole sessions with their segments (meeting recipes: ami-ihm-test, "
            "earnings21/22, gigaspeech-test)",
        ),
    ) -> None:
        from asrbench.importers.recipes import RecipeOptions, run_recipe

        did = dataset_id or (f"{name}-{language}" if recipe.multilingual else name)
        if split != recipe.splits[0] and not dataset_id:
            did = f"{did}-{split}"
        run = _longform_recipe(name) if longform else run_recipe
        path = run(
            recipe,
            _out(out, did),
            dataset_id=did,
            source=source,
            options=RecipeOptions(language=language, split=split),
            checksums=checksum,
            rate=rate,
            force=force,
        )
        _report(path)

    extra = f" Needs --from: {recipe.needs_from}." if recipe.needs_from else ""
    notes = f" {recipe.notes}." if recipe.notes else ""
    command.__doc__ = f"Recipe: {recipe.title} ({recipe.licence}).{notes}{extra}"
    app.command(name=name)(command)


def _longform_recipe(name: str):
    """The long-form runner of a meeting recipe (asrbench.importers.longform)."""
    from asrbench.importers.longform import run_longform_recipe
    from asrbench.importers.recipes.meetings import LONGFORM_RECIPES

    if name not in LONGFORM_RECIPES:
        raise typer.BadParameter(
            f"{name} has no long-form version; --longform works for "
            f"{', '.join(sorted(LONGFORM_RECIPES))}"
        )
    return run_longform_recipe


def _register_recipes() -> None:
    from asrbench.importers.recipes import RECIPES

    for name in RECIPES:
        _recipe_command(name)


_register_recipes()
