"""One build of the static site: its options, the results read once, links between pages,
rendering with Jinja2 into a staging folder, and writing the pages (or one document).

`build.build_site` drives a build (the layout of the output is described there); `pages`
computes each page's content with the helpers here.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from asrbench.errors import InputError
from asrbench.identity import bytes_sha256
from asrbench.report.collect import Cell, Results
from asrbench.results.leaderboard import is_longform, segmentation, segmentation_text

HERE = Path(__file__).resolve().parent
MARKER = ".asrbench-report"
RAW_FILES = (
    "summary.json",
    "run.json",
    "utterances.jsonl",
    "hyp.raw.tsv",
    "failed.tsv",
    "timing.tsv",
    "cost.tsv",
)


class VendorError(InputError):
    """The vendored chart library does not match its recorded checksum."""


@dataclass
class ReportOptions:
    """What `ops/report` was asked for."""

    results: Path
    out: Path
    models: list[str] | None = None
    datasets: list[str] | None = None
    single_file: bool = False
    audio: str | None = None  # copy | link | embed | none; default copy (embed in one file)
    audio_max_bytes: int = 2_000_000
    level: float = 0.95
    reps: int = 1000
    ablation: bool = True
    page_size: int = 25
    jobs: int = 2  # worker processes for the per-dataset ranking and ablation


def vendor_js() -> str:
    """The chart library's text, after checking its SHA-256 against vendor.json."""
    meta = json.loads((HERE / "vendor" / "vendor.json").read_text())["plotly"]
    data = (HERE / "vendor" / meta["file"]).read_bytes()
    got = bytes_sha256(data)
    if got != meta["sha256"]:
        raise VendorError(
            f"{HERE / 'vendor' / meta['file']}: SHA-256 {got} does not match "
            f"vendor.json ({meta['sha256']}); restore it with "
            "asrbench/report/vendor/fetch.sh"
        )
    return data.decode("utf-8")


def json_script(obj: Any) -> str:
    """JSON for a `<script type="application/json">` element (no `<`, `>`, `&` in it)."""
    text = json.dumps(
        obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def safe_name(text: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in text)
    return out.strip(".") or "_"


def _fmt_pct(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{100.0 * x:.{digits}f}"


def _fmt_ci(ci: Any) -> str:
    if ci is None or getattr(ci, "low", None) is None:
        return ""
    return f"[{100.0 * ci.low:.2f}, {100.0 * ci.high:.2f}]"


def _num(x: Any, fmt: str = "{:.3f}") -> str:
    return "-" if x is None else fmt.format(x)


class Site:
    """One build: the results read once, each page rendered into a staging folder."""

    def __init__(self, opts: ReportOptions, results: Results, stage: Path) -> None:
        import jinja2

        self.o = opts
        self.r = results
        self.stage = stage  # where files are written; the site's final place is below
        self.single = opts.single_file
        self.target, self.final_dir = targets(opts)
        self.audio_mode = opts.audio or ("embed" if self.single else "copy")
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(HERE / "templates")),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        self.env.filters.update(pct=_fmt_pct, ci=_fmt_ci, num=_num, quote=shlex.join)
        self.pages: list[tuple[str, str, str]] = []  # (path, title, html section)
        self.notes: list[str] = []
        self.audio_store: dict[str, str] = {}
        self.ablations: dict[tuple[str, str], Any] = {}
        # (model, dataset) -> why its stored ablation is not shown (missing, unreadable)
        self.ablation_notes: dict[tuple[str, str], str] = {}
        self.rankings: dict[str, Any] = {}
        self.mean: Any = None  # results.ranking.MeanRanks over every dataset of the site

    # ---------------------------------------------------------------- links
    def url(self, here: str, target: str, anchor: str | None = None) -> str:
        """A link from page `here` to page `target` (both relative to the site root)."""
        if self.single:
            return "#/" + quote(target) + (f"#{anchor}" if anchor else "")
        rel = os.path.relpath(target, os.path.dirname(here) or ".")
        return quote(rel) + (f"#{anchor}" if anchor else "")

    def root_prefix(self, here: str) -> str:
        depth = here.count("/")
        return "../" * depth

    def raw_link(self, here: str, path: Path) -> str:
        """A link to a stored file, relative to the page (the results stay where they are)."""
        base = self.final_dir if self.single else self.final_dir / os.path.dirname(here)
        return quote(os.path.relpath(Path(path).resolve(), base.resolve()))

    @staticmethod
    def cell_page(model: str, dataset: str) -> str:
        return f"cell/{safe_name(model)}/{safe_name(dataset)}.html"

    @staticmethod
    def dataset_page(dataset: str) -> str:
        return f"dataset/{safe_name(dataset)}.html"

    @staticmethod
    def model_page(model: str) -> str:
        return f"model/{safe_name(model)}.html"

    # ---------------------------------------------------------------- rendering
    def render(
        self, path: str, template: str, title: str, data: dict[str, Any] | None = None, **ctx: Any
    ) -> None:
        tpl = self.env.get_template(template)
        pid = "p" + bytes_sha256(path.encode())[:8]
        section = tpl.render(
            here=path,
            title=title,
            single=self.single,
            site=self,
            r=self.r,
            pid=pid,
            page_data=json_script(data or {}),
            url=lambda target, anchor=None: self.url(path, target, anchor),
            uid=(lambda name: f"{pid}-{name}") if self.single else (lambda name: name),
            **ctx,
        )
        self.pages.append((path, title, section))

    def nav(self) -> list[tuple[str, str]]:
        items = [("index.html", "Leaderboard")]
        if self.ablations:
            items.append(("ablation.html", "Scorer ablation"))
        if self.r.robustness:
            items.append(("robustness.html", "Robustness"))
        if self.r.fairness:
            items.append(("fairness.html", "Fairness"))
        if self.r.streaming:
            items.append(("streaming.html", "Streaming"))
        return items

    def write(self) -> None:
        """Wrap the sections into pages (or one document) and write them."""
        out = self.stage
        css = (HERE / "static" / "report.css").read_text()
        js = (HERE / "static" / "report.js").read_text()
        plotly = vendor_js()
        layout = self.env.get_template("layout.html.j2")
        nav = self.nav()
        if self.single:
            html = layout.render(
                single=True,
                title="asrbench report",
                nav=nav,
                css=css,
                js=js,
                plotly=plotly.replace("</script", "<\\/script"),
                sections=[(p, t, s) for p, t, s in sorted(self.pages)],
                audio_store=json_script(self.audio_store),
                url=lambda target, anchor=None: self.url("index.html", target, anchor),
                root="",
                here="index.html",
            )
            assert self.target is not None  # `targets` names the file of a single-file report
            _write(out / self.target.name, html)
            return
        _write(out / "assets" / "report.css", css)
        _write(out / "assets" / "report.js", js)
        _write(out / "assets" / "plotly-basic.min.js", plotly)
        _write(out / "assets" / "LICENSE.plotly", (HERE / "vendor" / "LICENSE.plotly").read_text())
        for path, title, section in self.pages:
            html = layout.render(
                single=False,
                title=title,
                nav=nav,
                sections=[(path, title, section)],
                root=self.root_prefix(path),
                here=path,
                url=lambda target, anchor=None, _p=path: self.url(_p, target, anchor),
            )
            _write(out / path, html)
        _write(out / MARKER, "asrbench report folder: ops/report may replace it whole\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _cell_numbers(cell: Cell) -> dict[str, Any]:
    """The numbers a table row shows for one cell."""
    s = cell.summary
    m = s.metrics
    t = s.timing or {}
    lat = t.get("latency_s") or {}
    card = cell.card
    return {
        "ter": m.ter if m else None,
        "ter_ci": m.ter_ci if m else None,
        "mter": m.mter if m else None,
        "mter_ci": m.mter_ci if m else None,
        "ser": m.ser if m else None,
        "sub": m.sub if m else None,
        "ins": m.ins if m else None,
        "del": m.dele if m else None,
        "n_ref": m.n_ref if m else None,
        "n_utts": s.selection.n_utts,
        "n_dataset_utts": s.selection.n_dataset_utts,
        "coverage": m.coverage if m else None,
        "n_failed": s.n_failed,
        "n_missing": m.n_missing if m else None,
        "rtf": t.get("rtf"),
        "p50": lat.get("p50"),
        "p90": lat.get("p90"),
        "cost": cell.cost_usd(),
        "api": str(card.get("type", "")).endswith("api") or bool(card.get("network")),
        "runner": s.runner,
        "kind": cell.kind,
        "others": cell.others,
        "name": m.name if m else "TER",
        "reference_free": m is None,
        "longform": is_longform(cell),
        "segmentation": segmentation_text(segmentation(cell)) if is_longform(cell) else None,
    }


def _provenance(site: Site, here: str, cell: Cell) -> dict[str, Any]:
    run = cell.run
    model = run.model if run else None
    ds = run.dataset if run else None
    sc = run.scorer if run else {}
    cfg = dict(sc.get("config") or {})
    files = cfg.pop("data_files", {}) or {}
    cfg.pop("cache_dir", None)
    return {
        "run_missing": run is None,
        "dataset_id": cell.dataset,
        "dataset_hash": cell.summary.dataset_hash,
        "dataset_folder": ds.folder if ds else None,
        "dataset_n": ds.n_utts if ds else None,
        "derived_from": {
            k: v for k, v in (cell.derived_from or {}).items() if not isinstance(v, dict | list)
        },
        "model_id": cell.model,
        "model_identity": cell.summary.model_identity,
        "image": model.image if model else None,
        "runner": cell.summary.runner,
        "source_hash": model.source_hash if model else None,
        "card": {
            k: v
            for k, v in sorted((model.card if model else {}).items())
            if not isinstance(v, dict | list) and v not in (None, "")
        },
        "scorer_code": cell.summary.scorer.get("code"),
        "scorer_config_hash": cell.summary.scorer.get("config_hash"),
        "scorer_steps": cell.summary.scorer.get("steps") or [],
        "scorer_options": {k: v for k, v in sorted(cfg.items()) if not isinstance(v, dict)},
        "scorer_files": {k: v.get("sha256") for k, v in sorted(files.items())},
        "user_options": run.scorer_options if run else {},
        "command": run.command if run else None,
        "git": run.git.to_dict() if run else {},
        "packages": run.packages if run else {},
        "times": run.times.to_dict() if run else {},
        "result_key": cell.summary.result_key,
        "hyps_key": cell.summary.hyps_key,
        "folder": str(cell.folder),
        "raw": [
            (name, site.raw_link(here, cell.folder / name))
            for name in RAW_FILES
            if (cell.folder / name).is_file()
        ],
    }


def targets(opts: ReportOptions) -> tuple[Path | None, Path]:
    """(the single file, or None; the folder the site lives in)."""
    out = Path(opts.out)
    if opts.single_file:
        target = out if out.suffix == ".html" else out / "index.html"
        return target, target.parent
    return None, out
