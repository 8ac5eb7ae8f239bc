"""`asrbench import` (ops/import): Kaldi, NeMo or folder+table datasets into the dataset format."""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.importers.common import write_dataset

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Import Kaldi, NeMo or folder+table datasets into the dataset format.")

IdOpt = typer.Option(..., "--id", help="dataset ID (also the default folder datasets/ID)")
OutOpt = typer.Option(None, "--out", help="output folder (default datasets/ID)")
RateOpt = typer.Option(16000, "--rate", help="sample rate of the converted audio")
LangOpt = typer.Option("en", "--language")
LicOpt = typer.Option("unknown", "--licence", help="licence of the source data")
ForceOpt = typer.Option(False, "--force", help="replace an existing output folder")


def _out(out: Path | None, dataset_id: str) -> Path:
    from asrbench.resolve import local_dir

    return out or local_dir("dataset", dataset_id)


def _run(items, out: Path, dataset_id: str, rate: int, language: str, licence: str,  # noqa: ANN001
         source: str, force: bool) -> None:
    from asrbench.dataset import load_dataset

    path = write_dataset(out, items, dataset_id=dataset_id, rate=rate, language=language,
                         licence=licence, source=source, force=force)
    ds = load_dataset(path)
    typer.echo(f"imported {len(ds)} utterances ({ds.total_duration / 3600:.2f} h) into {path}")


@app.command()
def kaldi(data_dir: Path, dataset_id: str = IdOpt, out: Path = OutOpt, rate: int = RateOpt,
          language: str = LangOpt, licence: str = LicOpt, force: bool = ForceOpt,
          allow_pipes: bool = typer.Option(False, "--allow-pipes",
                                           help="run piped wav.scp commands (no shell)"),
          path_base: Path = typer.Option(None, "--path-base",
                                         help="folder relative wav.scp paths start from")) -> None:
    """A Kaldi data dir (wav.scp, text, utt2spk, spk2gender, segments)."""
    from asrbench.importers.kaldi import import_kaldi

    _run(import_kaldi(data_dir, allow_pipes, path_base), _out(out, dataset_id), dataset_id,
         rate, language, licence, f"Kaldi data dir {data_dir.name}", force)


@app.command()
def nemo(manifest: Path, dataset_id: str = IdOpt, out: Path = OutOpt, rate: int = RateOpt,
         language: str = LangOpt, licence: str = LicOpt, force: bool = ForceOpt) -> None:
    """A NeMo JSONL manifest (audio_filepath, text, duration, offset)."""
    from asrbench.importers.nemo import import_nemo

    _run(import_nemo(manifest), _out(out, dataset_id), dataset_id, rate, language, licence,
         f"NeMo manifest {manifest.name}", force)


@app.command()
def folder(audio_dir: Path, table: Path, dataset_id: str = IdOpt, out: Path = OutOpt,
           rate: int = RateOpt, language: str = LangOpt, licence: str = LicOpt,
           force: bool = ForceOpt) -> None:
    """A folder of audio plus a transcript table (TSV, or CSV by extension)."""
    from asrbench.importers.folder import import_folder

    _run(import_folder(audio_dir, table), _out(out, dataset_id), dataset_id, rate, language,
         licence, f"folder {audio_dir.name} with {table.name}", force)

