"""The report: a static, self-contained HTML site built from stored results only.

`build_site(Options(results=..., out=...))` reads `results/` (cells, robustness.json,
fairness.json), computes rankings with significance groups, the scorer ablation and the pages'
content, and writes the site with Jinja2 templates and the vendored, checksummed chart library
(docs/REPORT.md). `ops/report` is its command.
"""

from asrbench.report.site import Built, Options, build_site

__all__ = ["Built", "Options", "build_site"]
