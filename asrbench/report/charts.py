"""Plotly figures as plain data (traces and layout); the page's script draws them.

Every series differs by marker symbol and line dash as well as by colour (Okabe-Ito, safe for
colour-blind readers), every chart has axis titles and a legend or labelled axis, and every
interval is drawn as an error bar. Values are percentages rounded to 0.01 so that the pages are
compact and stable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from scoring.metrics import Interval

COLOURS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
SYMBOLS = [
    "circle",
    "square",
    "diamond",
    "triangle-up",
    "x",
    "cross",
    "triangle-down",
    "star",
    "hexagon",
    "pentagon",
    "star-square",
    "hourglass",
]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


@overload
def pct(x: float) -> float: ...
@overload
def pct(x: None) -> None: ...
@overload
def pct(x: float | None) -> float | None: ...
def pct(x: float | None) -> float | None:
    return None if x is None else round(100.0 * x, 2)


def ci_pair(ci: Interval | None) -> list[float] | None:
    """An interval as the [low, high] of an error bar; None where it has no bounds."""
    if ci is None or ci.low is None or ci.high is None:
        return None
    return [ci.low, ci.high]


def style(i: int, lines: bool = False) -> dict[str, Any]:
    s: dict[str, Any] = {
        "marker": {
            "symbol": SYMBOLS[i % len(SYMBOLS)],
            "size": 9,
            "color": COLOURS[i % len(COLOURS)],
        }
    }
    if lines:
        s["line"] = {
            "dash": DASHES[i % len(DASHES)],
            "color": COLOURS[i % len(COLOURS)],
            "width": 2,
        }
    return s


def _errors(values: list[float | None], cis: list[list[float] | None]) -> dict[str, Any]:
    plus: list[float | None] = []
    minus: list[float | None] = []
    for v, ci in zip(values, cis, strict=True):
        if v is None or not ci or ci[0] is None:
            plus.append(None)
            minus.append(None)
        else:
            plus.append(round(max(pct(ci[1]) - v, 0.0), 2))
            minus.append(round(max(v - pct(ci[0]), 0.0), 2))
    return {
        "type": "data",
        "symmetric": False,
        "array": plus,
        "arrayminus": minus,
        "visible": True,
        "thickness": 1.5,
        "width": 4,
    }


def layout(x_title: str, y_title: str, height: int = 380, **extra: Any) -> dict[str, Any]:
    out = {
        "height": height,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 70},
        "xaxis": {"title": {"text": x_title}, "automargin": True, "zeroline": False},
        "yaxis": {"title": {"text": y_title}, "automargin": True, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.25},
        "hovermode": "closest",
        "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 13},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "#fafafa",
    }
    out.update(extra)
    return out


def ter_by_dataset(
    models: list[str],
    datasets: list[str],
    values: dict[tuple[str, str], tuple[float | None, list[float] | None]],
    name: str = "TER",
) -> dict[str, Any]:
    """Dot-and-whisker: one series per model, datasets on x, TER % with its CI."""
    data = []
    for i, m in enumerate(models):
        ys = [pct(values.get((m, d), (None, None))[0]) for d in datasets]
        cis = [values.get((m, d), (None, None))[1] for d in datasets]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": m,
                "x": datasets,
                "y": ys,
                "error_y": _errors(ys, cis),
                **style(i),
                "hovertemplate": f"{m}<br>%{{x}}: %{{y:.2f}} %<extra></extra>",
            }
        )
    return {
        "data": data,
        "layout": layout("dataset", f"{name} % (95 % CI)", scattermode="group", scattergap=0.4),
    }


def ranked(
    models: list[str], values: list[float | None], cis: list[list[float] | None], name: str = "TER"
) -> dict[str, Any]:
    """Horizontal dots with CIs, best at the top; one series per model."""
    data = []
    for i, (m, v, ci) in enumerate(zip(models, values, cis, strict=True)):
        x = pct(v)
        err = _errors([x], [ci])
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": m,
                "y": [m],
                "x": [x],
                "error_x": err,
                **style(i),
                "hovertemplate": f"{m}: %{{x:.2f}} %<extra></extra>",
            }
        )
    lay = layout(
        f"{name} % (95 % bootstrap CI)",
        "",
        height=max(220, 60 + 36 * len(models)),
        showlegend=False,
    )
    lay["yaxis"] = {"autorange": "reversed", "automargin": True, "type": "category"}
    lay["xaxis"]["rangemode"] = "tozero"
    return {"data": data, "layout": lay}


def error_breakdown(sub: int, dele: int, ins: int, n_ref: int) -> dict[str, Any]:
    """Counts of each error type, labelled with their share of the reference words."""
    counts = [sub, dele, ins]
    labels = [f"{c} ({100.0 * c / n_ref:.1f} % of ref words)" if n_ref else str(c) for c in counts]
    data = [
        {
            "type": "bar",
            "name": "errors",
            "x": ["substitutions", "deletions", "insertions"],
            "y": counts,
            "text": labels,
            "textposition": "outside",
            "cliponaxis": False,
            "marker": {
                "color": ["#D55E00", "#0072B2", "#009E73"],
                "pattern": {"shape": ["/", ".", "x"]},
            },
            "hovertemplate": "%{x}: %{y}<extra></extra>",
        }
    ]
    return {"data": data, "layout": layout("error type", "count", height=320, showlegend=False)}


def lines(
    series: dict[str, list[tuple[Any, float | None, list[float] | None]]],
    x_title: str,
    y_title: str,
    tickvals: list[Any] | None = None,
    ticktext: list[str] | None = None,
    reverse_x: bool = False,
) -> dict[str, Any]:
    """One line per series (name -> [(x, rate, ci)]), rates shown in %, CIs as error bars."""
    data = []
    for i, (name, pts) in enumerate(series.items()):
        ys = [pct(p[1]) for p in pts]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": [p[0] for p in pts],
                "y": ys,
                "error_y": _errors(ys, [p[2] for p in pts]),
                **style(i, lines=True),
                "hovertemplate": f"{name}<br>%{{x}}: %{{y:.2f}} %<extra></extra>",
            }
        )
    lay = layout(x_title, y_title)
    if tickvals is not None:
        lay["xaxis"].update({"tickmode": "array", "tickvals": tickvals, "ticktext": ticktext})
    if reverse_x:
        lay["xaxis"]["autorange"] = "reversed"
    return {"data": data, "layout": lay}


def groups(
    models: list[str],
    group_names: list[str],
    values: dict[tuple[str, str], tuple[float | None, list[float] | None]],
    y_title: str,
) -> dict[str, Any]:
    """Per-group rates with CIs, one series per model (fairness)."""
    data = []
    for i, m in enumerate(models):
        ys = [pct(values.get((m, g), (None, None))[0]) for g in group_names]
        cis = [values.get((m, g), (None, None))[1] for g in group_names]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": m,
                "x": group_names,
                "y": ys,
                "error_y": _errors(ys, cis),
                **style(i),
                "hovertemplate": f"{m}<br>%{{x}}: %{{y:.2f}} %<extra></extra>",
            }
        )
    return {"data": data, "layout": layout("group", y_title, scattermode="group", scattergap=0.4)}
