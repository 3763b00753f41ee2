"""The report's plots, as PNG bytes: recall against tokens, recall per category, latency.

matplotlib is optional (the ``eval`` extra) and imported only here, only when a plot is drawn.
Figures are built on :class:`matplotlib.figure.Figure` directly (the Agg canvas), never through
pyplot, so no global backend is switched and no window opens.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from disclosure.evaluation.baselines import BASELINE_PREFIX
from tiers.errors import ExperimentError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from disclosure.evaluation.metrics import Summary

_DPI = 110


def _figure(width: float, height: float) -> Figure:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ExperimentError(
            "the report's plots need matplotlib: pip install 'tiered-disclosure[eval]' "
            "(or leave the plots out with --no-plots)"
        ) from None
    return Figure(figsize=(width, height), dpi=_DPI, layout="constrained")


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _family(label: str) -> str:
    """``baseline:bm25@1000`` -> ``baseline:bm25``; profiles are their own family."""
    return label.split("@", 1)[0] if label.startswith(BASELINE_PREFIX) else label


def recall_vs_tokens(summaries: Mapping[str, Summary]) -> bytes:
    """Evidence recall against mean context tokens; each baseline a curve over its budgets."""
    figure = _figure(7.5, 4.8)
    axes = figure.add_subplot()
    families: dict[str, list[tuple[float, float]]] = {}
    for label, summary in summaries.items():
        if summary.recall is not None:
            families.setdefault(_family(label), []).append((summary.tokens_mean, summary.recall))
    for family, points in families.items():
        points.sort()
        xs, ys = zip(*points, strict=True)
        is_baseline = family.startswith(BASELINE_PREFIX)
        axes.plot(
            xs, ys, marker="o" if is_baseline else "*", markersize=6 if is_baseline else 14,
            linestyle="-" if is_baseline and len(points) > 1 else "none", label=family,
        )  # fmt: skip
    for label, summary in summaries.items():
        if "@" in label and summary.recall is not None:  # the budget (or fixed level) beside it
            axes.annotate(
                label.split("@", 1)[1], (summary.tokens_mean, summary.recall),
                textcoords="offset points", xytext=(4, -10), fontsize="x-small",
            )  # fmt: skip
    axes.set_xscale("log")
    axes.set_xlabel("mean context tokens (log scale)")
    axes.set_ylabel("evidence recall")
    axes.set_ylim(0, 1.02)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small", loc="lower right")
    axes.set_title("Evidence recall against context size")
    return _png(figure)


def per_category(by_category: Mapping[str, Mapping[str, Summary]]) -> bytes:
    """Grouped bars: recall per question category, one bar per system."""
    figure = _figure(max(7.5, 1.2 + 0.35 * len(by_category) * _categories(by_category)), 4.8)
    axes = figure.add_subplot()
    categories = sorted({c for per in by_category.values() for c in per})
    width = 0.8 / max(len(by_category), 1)
    for i, (label, per) in enumerate(by_category.items()):
        values = [per[c].recall or 0.0 if c in per else 0.0 for c in categories]
        offsets = [x - 0.4 + width * (i + 0.5) for x in range(len(categories))]
        axes.bar(offsets, values, width=width, label=label)
    axes.set_xticks(range(len(categories)), categories)
    axes.set_ylabel("evidence recall")
    axes.set_ylim(0, 1.02)
    axes.grid(True, axis="y", alpha=0.3)
    axes.legend(fontsize="x-small", ncols=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes.set_title("Evidence recall per question category")
    return _png(figure)


def _categories(by_category: Mapping[str, Mapping[str, Any]]) -> int:
    return len({c for per in by_category.values() for c in per})


def latency(latencies: Mapping[str, Sequence[float]]) -> bytes:
    """The distribution of ``disclose`` latency per system (box plot, log scale)."""
    labels = list(latencies)
    figure = _figure(7.5, 1.2 + 0.35 * len(labels))
    axes = figure.add_subplot()
    data = [[max(v, 1e-3) for v in latencies[label]] for label in labels]
    axes.boxplot(data, orientation="horizontal", tick_labels=labels, showfliers=True)
    axes.set_xscale("log")
    axes.set_xlabel("disclose latency (ms, log scale)")
    axes.invert_yaxis()
    axes.grid(True, axis="x", which="both", alpha=0.3)
    axes.set_title("Latency of disclose")
    return _png(figure)
