"""Build the static site: read the results, compute what each page shows, render with Jinja2.

Multi-page (default): `index.html` (leaderboard), `dataset/<d>.html`, `model/<m>.html`,
`cell/<m>/<d>.html`, `ablation.html`, `robustness.html` + one page per robustness.json,
`fairness.html` (only when fairness.json files exist), `assets/` (CSS, the page script and the
vendored chart library) and `audio/`. Single file (`single_file=True`): the same pages as
sections of one HTML document with everything inlined, switched by the URL fragment.

The output is a function of the stored files and the options: no clock, no random, sorted
everything, paths relative to the site; the folder is built beside the target and moved into
place whole. `site` holds one build's state and rendering, `pages` each page's content; this
module drives both.
"""

from __future__ import annotations

import gc
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from asrbench.errors import InputError
from asrbench.fsio import replace_dir, stage_dir
from asrbench.report import pages
from asrbench.report.audio import MODES
from asrbench.report.collect import collect
from asrbench.report.site import MARKER, ReportOptions, Site, targets, vendor_js


@dataclass
class Built:
    """What was written and what could not be used."""

    out: Path
    pages: list[str]
    problems: list[str]
    notes: list[str] = field(default_factory=list)


def build_site(opts: ReportOptions) -> Built:
    """Read the results under `opts.results` and write the site to `opts.out`."""
    if opts.audio is not None and opts.audio not in MODES:
        raise InputError(f"--audio {opts.audio!r}: use one of {', '.join(MODES)}")
    if opts.audio == "embed" and not opts.single_file:
        raise InputError("--audio embed is for --single-file; use copy, link or none")
    if not 0.5 <= opts.level < 1:
        raise InputError(f"--level {opts.level}: use a confidence level such as 0.95")
    if not Path(opts.results).is_dir():
        raise InputError(
            f"--results {opts.results}: no such folder; run ops/benchmark first, "
            "or point --results at a results root"
        )
    vendor_js()  # fail before any work if the chart library was altered
    target, final_dir = targets(opts)
    if target is None:
        _check_target(final_dir)
    results = collect(Path(opts.results), opts.models, opts.datasets)
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = stage_dir(final_dir)
    # The build holds millions of small acyclic objects (utterance records, alignments): the
    # cyclic garbage collector would rescan all of them many times over (as in Scorer.score).
    enabled = gc.isenabled()
    gc.disable()
    try:
        site = Site(opts, results, stage)
        pages.build_all(site)
        site.write()
        if target is not None:
            final_dir.mkdir(parents=True, exist_ok=True)
            os.replace(stage / target.name, target)  # a whole staged file: one rename
            if site.audio_mode == "copy" and (stage / "audio").is_dir():
                replace_dir(stage / "audio", final_dir / "audio")
        else:
            replace_dir(stage, final_dir)
    finally:
        if enabled:
            gc.enable()
        shutil.rmtree(stage, ignore_errors=True)
    return Built(target or final_dir, [p for p, _, _ in site.pages], results.problems, site.notes)


def _check_target(folder: Path) -> None:
    """Refuse to replace a folder that is not an earlier report (it would be deleted)."""
    if not folder.exists():
        return
    if not folder.is_dir():
        raise InputError(f"-o {folder}: exists and is not a folder")
    if any(folder.iterdir()) and not (folder / MARKER).exists():
        raise InputError(
            f"-o {folder}: not empty and not an earlier report (no {MARKER}); "
            "choose another folder, the report replaces its output whole"
        )
