"""`asrbench audit` (ops/audit): the reference audit of stored results. Where independent models
(different weights) agree with each other and all disagree with the reference, the reference is
suspect (docs/SCORING.md, "Reference audit"). Prints one line per suspect, writes
`<results>/audit/<dataset>/audit.json` and the `audit` block of each audited cell's summary.json."""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.cli.options import ResultsOpt
from asrbench.errors import EXIT_INPUT

app = typer.Typer(add_completion=False, help=__doc__)


def _show(record: object, written: list[Path]) -> None:
    """One line per suspect: ID, the agreeing models, their mutual mTER, the reference."""
    from asrbench.results.audit import AuditRecord
    from asrbench.table import markdown

    assert isinstance(record, AuditRecord)
    voters = ", ".join(v["name"] for v in record.voters)
    typer.echo(
        f"{record.dataset}: {len(record.suspects)} suspect reference(s) "
        f"(voters: {voters}; ref_min {record.thresholds['ref_min']}, "
        f"agree_max {record.thresholds['agree_max']})"
    )
    rows = [
        {
            "id": s["id"],
            "agreeing": ", ".join(s["agreeing"]),
            "mutual mTER": f"{s['mutual_mter']:.2f}",
            "mTER vs ref": ", ".join(f"{m} {r:.2f}" for m, r in sorted(s["ref_mter"].items())),
            "reference": s["ref"],
            "hypothesis": next(iter(s["agreeing"].values()), ""),
        }
        for s in record.suspects
    ]
    if rows:
        typer.echo(markdown(rows, list(rows[0]), fmt=str))
    for m, why in sorted(record.left_out.items()):
        typer.echo(f"  {m} did not vote: {why}")
    typer.echo("written: " + ", ".join(str(p) for p in written), err=True)


@app.command()
def audit_cmd(
    dataset: list[str] = typer.Option(
        None, "-d", "--dataset", help="dataset ID (repeatable; default: every dataset in results)"
    ),
    results: Path = ResultsOpt,
    ref_min: float = typer.Option(
        None,
        "--ref-min",
        help="flag only where every voter's mTER against the reference is at least this "
        "(default 0.2)",
    ),
    agree_max: float = typer.Option(
        None,
        "--agree-max",
        help="and at least two voters are within this mTER of each other (default 0.2)",
    ),
    voters: str = typer.Option(
        "weights",
        "--voters",
        help="one voter per set of weights (weights), or per card family too (family: "
        "whisper_tiny_en and whisper_base vote once)",
    ),
) -> None:
    """Flag references that independent models agree are wrong; write the evidence."""
    from asrbench.results import audit
    from asrbench.results.store import scan
    from asrbench.settings import settings

    root = Path(results) if results else settings().results
    th = audit.Thresholds(
        audit.DEFAULT_REF_MIN if ref_min is None else ref_min,
        audit.DEFAULT_AGREE_MAX if agree_max is None else agree_max,
        voters,
    )
    names = list(dataset or scan(root).datasets)
    if not names:
        typer.echo(f"error: no results under {root}; run ops/benchmark first", err=True)
        raise typer.Exit(EXIT_INPUT)
    unavailable = 0
    for name in names:
        try:
            record = audit.audit_dataset(root, name, th)
        except audit.AuditUnavailable as exc:
            typer.echo(str(exc), err=True)
            unavailable += 1
            continue
        _show(record, audit.write_audit(root, record))
    if unavailable:
        raise typer.Exit(EXIT_INPUT)
