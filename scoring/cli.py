"""`ops/score`: score a hypothesis file against a reference file and write every report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from scoring.errors import ScoringError
from scoring.io import read_transcripts
from scoring.scorer import Scorer, ScorerConfig
from scoring.stats import paired_bootstrap

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def main(
    ref: Path = typer.Argument(..., help="reference transcripts (tsv, kaldi, trn, jsonl)"),
    hyp: Path = typer.Argument(..., help="hypothesis transcripts"),
    out: Path = typer.Option(Path("score_out"), "--out", "-o", help="output folder"),
    ref_format: str = typer.Option("auto", help="tsv | kaldi | trn | jsonl | auto"),
    hyp_format: str = typer.Option("auto", help="tsv | kaldi | trn | jsonl | auto"),
    lang: str = typer.Option("en", help="en (word level) or zh (character level)"),
    case: bool = typer.Option(True, help="CASE step"),
    punc: bool = typer.Option(True, help="PUNC step"),
    itj: bool = typer.Option(True, help="ITJ step"),
    ukus: bool = typer.Option(True, help="UK-US step"),
    nsw: bool = typer.Option(True, help="NSW step (nemo-text-processing)"),
    dae: bool = typer.Option(True, help="DAE alternatives on the hypothesis"),
    alternatives: str = typer.Option(None, help="alternatives file (default: curated list)"),
    bootstrap: int = typer.Option(1000, help="bootstrap replicates for confidence intervals"),
    against: Path = typer.Option(None, help="a second hypothesis file: paired bootstrap test"),
) -> None:
    """Score HYP against REF; write JSONL, alignment, summary.json, table, pra and sys to OUT."""
    try:
        cfg = ScorerConfig(
            lang=lang,
            case=case,
            punc=punc,
            itj=itj,
            ukus=ukus,
            nsw=nsw,
            dae=dae,
            alternatives=alternatives,
            bootstrap=bootstrap,
        )
        scorer = Scorer(cfg)
        refs = read_transcripts(ref, ref_format)
        result = scorer.score(refs, read_transcripts(hyp, hyp_format))
        result.write(out)
        sys.stdout.write((out / "table.txt").read_text(encoding="utf-8"))
        if against is not None:
            other = scorer.score(refs, read_transcripts(against, hyp_format))
            test = paired_bootstrap(
                [u.errors for u in result.utterances],
                [u.errors for u in other.utterances],
                [u.n_ref for u in result.utterances],
                reps=bootstrap,
                seed=cfg.seed,
            )
            (out / "paired_test.json").write_text(json.dumps(test, indent=2, sort_keys=True) + "\n")
            print(
                f"paired bootstrap: delta TER {100 * test['delta_ter']:+.2f} points, "
                f"p = {test['p_value']:.4f}"
            )
    except ScoringError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None


if __name__ == "__main__":
    app()
