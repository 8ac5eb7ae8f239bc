"""The report: a static, self-contained HTML site built from stored results only.

`build_site(ReportOptions(results=..., out=...))` reads `results/` (cells, robustness.json,
fairness.json), computes rankings with significance groups, the scorer ablation and the pages'
content, and writes the site with Jinja2 templates and the vendored, checksummed chart library
(docs/REPORT.md). `ops/report` is its command.
"""

from asrbench.report.build import Built, build_site
from asrbench.report.site import ReportOptions

__all__ = ["Built", "ReportOptions", "build_site"]
