"""Reports of a run: JSON for machines, per-question JSONL, markdown and self-contained HTML.

:func:`build_report` turns a :class:`~disclosure.evaluation.runner.RunResult` into plain data
(summaries per system, per category and per level; paired comparisons against the reference;
violations; the dataset's repair log). :func:`write_report` writes, into one directory,
``results.json``, ``records.jsonl``, ``report.md`` (plots as PNG files next to it) and
``report.html`` (plots embedded as base64). Everything but the ``run`` section and the latency
figures is identical for a fixed seed.
"""

from __future__ import annotations

import base64
import html
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from disclosure._version import __version__
from disclosure.evaluation import plots
from disclosure.evaluation.adaptive import adaptive_section
from disclosure.evaluation.metrics import Summary, breakdown, summarize
from disclosure.evaluation.oracle import oracle_section
from disclosure.evaluation.runner import RunResult
from disclosure.evaluation.sections import Block, Section, Table
from disclosure.evaluation.stats import Comparison, Interval, compare

DEFINITIONS = {
    "evidence recall": "share of a question's gold turns whose full text (whitespace collapsed) "
    "is in the disclosed context; mean over questions with gold evidence",
    "hit rate": "share of those questions whose gold turns are all in the context",
    "precision": "share of the result's items (disclosed memories, any layer) that are gold; "
    "mean over questions with gold evidence and at least one item",
    "tokens": "exact token count of the disclosed text",
    "compression": "mean full-conversation tokens / mean context tokens",
    "violations": "results whose tokens_used or text tokens exceed the budget (must be zero)",
    "comparison": "system minus reference on the same questions; percentile bootstrap interval; "
    "McNemar: exact two-sided test on the questions only one of the two fully hits",
}


@dataclass
class SystemReport:
    label: str
    kind: str
    budget: int | None
    level: str | None
    summary: Summary
    by_category: dict[str, Summary]
    by_level: dict[str, Summary]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "budget": self.budget,
            "level": self.level,
            "summary": self.summary.to_dict(),
            "by_category": {k: v.to_dict() for k, v in self.by_category.items()},
            "by_level": {k: v.to_dict() for k, v in self.by_level.items()},
        }


@dataclass
class Report:
    run: RunResult
    systems: dict[str, SystemReport]
    comparisons: list[Comparison]
    reference: str
    plots: dict[str, bytes] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        run = self.run
        dataset = run.dataset
        return {
            "experiment": run.experiment.model_dump(mode="json"),
            "dataset": {
                "name": dataset.name,
                "conversations": len({q.conversation_id for q in dataset.questions}),
                "questions": len(dataset.questions),
                "scored": len(dataset.scored_questions),
                "categories": dict(Counter(q.category or "-" for q in dataset.questions)),
                "full_tokens": run.full_tokens,
                "issues": [str(i) for i in dataset.issues],
            },
            "definitions": DEFINITIONS,
            "reference": self.reference,
            "systems": {label: s.to_dict() for label, s in self.systems.items()},
            "comparisons": [c.to_dict() for c in self.comparisons],
            **{section.key: section.data for section in self.sections},
            "violations": [
                {"system": r.system, "question": r.question_id, "violation": r.violation}
                for r in run.violations
            ],
            "run": {
                "version": __version__,
                "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "duration_s": round(run.duration_s, 2),
            },
        }


def build_report(run: RunResult, *, with_plots: bool = True) -> Report:
    """Summaries, comparisons against the reference, and (optionally) the plots."""
    systems = {}
    for system in run.systems:
        records = run.by_system[system.label]
        systems[system.label] = SystemReport(
            label=system.label,
            kind=system.kind,
            budget=system.budget,
            level=system.level.value if system.level else None,
            summary=summarize(records),
            by_category=breakdown(records, lambda r: r.category or "uncategorised"),
            by_level=breakdown(records, lambda r: r.level),
        )
    reference = run.experiment.reference or run.labels[0]
    if reference not in run.by_system:
        reference = run.labels[0]  # the named reference was left out (e.g. --baselines-only)
    boot = run.experiment.bootstrap
    comparisons = [
        compare(
            run.by_system[reference],
            run.by_system[label],
            resamples=boot.resamples,
            confidence=boot.confidence,
            unit=boot.unit,
            seed=run.experiment.seed,
        )
        for label in run.labels
        if label != reference
    ]
    sections = [s for s in (adaptive_section(run), oracle_section(run)) if s is not None]
    report = Report(run, systems, comparisons, reference, sections=sections)
    if with_plots:
        report.plots = _plots(report)
    return report


def _plots(report: Report) -> dict[str, bytes]:
    summaries = {label: s.summary for label, s in report.systems.items()}
    return {
        "recall_vs_tokens": plots.recall_vs_tokens(summaries),
        "per_category": plots.per_category({k: s.by_category for k, s in report.systems.items()}),
        "latency": plots.latency(
            {label: [r.latency_ms for r in report.run.by_system[label]] for label in report.systems}
        ),
    }


def write_report(report: Report, out: Path) -> dict[str, Path]:
    """Write every report file into ``out``; returns what was written, by kind."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json", "records": out / "records.jsonl"}
    paths["json"].write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    with paths["records"].open("w", encoding="utf-8") as handle:
        for record in report.run.records:
            handle.write(json.dumps(record.to_dict()) + "\n")
    images = {}
    for name, png in report.plots.items():
        images[name] = out / f"{name}.png"
        images[name].write_bytes(png)
    paths["markdown"] = out / "report.md"
    paths["markdown"].write_text(render_markdown(report), encoding="utf-8")
    paths["html"] = out / "report.html"
    paths["html"].write_text(render_html(report), encoding="utf-8")
    return paths | {f"plot:{name}": path for name, path in images.items()}


# -- a small document model, rendered to markdown and to HTML -----------------------------------


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _i(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _ci(interval: Interval | None, digits: int = 3, signed: bool = True) -> str:
    if interval is None:
        return "-"
    sign = "+" if signed else ""
    return (
        f"{interval.estimate:{sign}.{digits}f} "
        f"[{interval.low:{sign}.{digits}f}, {interval.high:{sign}.{digits}f}]"
    )


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _blocks(report: Report) -> list[Block]:
    run, experiment = report.run, report.run.experiment
    dataset = run.dataset
    blocks: list[Block] = [("h1", f"Evaluation: {experiment.name}")]
    if experiment.description:
        blocks.append(("p", experiment.description))
    blocks.append(
        (
            "p",
            f"Dataset {dataset.name}: {len(dataset.questions)} questions "
            f"({len(dataset.scored_questions)} with gold evidence) over "
            f"{len(run.full_tokens)} conversations; seed {experiment.seed}; "
            f"tokens counted with {experiment.encoding}; reference: {report.reference}.",
        )
    )
    violations = run.violations
    if violations:
        shown = "; ".join(f"{r.system} {r.question_id}: {r.violation}" for r in violations[:10])
        blocks.append(
            ("warn", f"BUDGET VIOLATIONS: {len(violations)} results over budget. {shown}")
        )
    else:
        blocks.append(("p", "Budget violations: 0."))
    blocks += [("h2", "Systems"), ("table", _systems_table(report))]
    if report.comparisons:
        blocks += [("h2", f"Paired comparison against {report.reference}")]
        blocks += [("p", _comparison_note(report)), ("table", _comparison_table(report))]
    blocks += [("h2", "Evidence recall per category"), ("table", _category_table(report))]
    blocks += [
        ("h2", "Per category: recall / all evidence present / mean tokens"),
        ("table", _spend_table(report)),
    ]
    level_table = _level_table(report)
    if level_table.rows:
        blocks += [("h2", "Chosen levels (profiles)"), ("table", level_table)]
    for section in report.sections:
        blocks += section.blocks
    if report.plots:
        blocks += [("h2", "Plots")] + [("img", name) for name in report.plots]
    blocks += [("h2", "Definitions")]
    blocks += [("p", f"{name}: {text}.") for name, text in DEFINITIONS.items()]
    blocks += _issue_blocks(report)
    return blocks


def _systems_table(report: Report) -> Table:
    header = ["system", "recall", "hit rate", "precision", "tokens mean", "p50", "p95",
              "compression", "latency p50 ms", "p95 ms", "violations"]  # fmt: skip
    rows = []
    for label, system in report.systems.items():
        s = system.summary
        rows.append(
            [label, _f(s.recall), _f(s.hit_rate), _f(s.precision), _i(s.tokens_mean),
             _i(s.tokens_p50), _i(s.tokens_p95), _f(s.compression, 1) + "x",
             _f(s.latency_p50_ms, 2), _f(s.latency_p95_ms, 2), str(s.violations)]
        )  # fmt: skip
    return Table(header, rows)


def _comparison_note(report: Report) -> str:
    boot = report.run.experiment.bootstrap
    return (
        f"Differences are system minus {report.reference}, with {boot.confidence:.0%} percentile "
        f"bootstrap intervals ({boot.resamples} resamples of {boot.unit}, seed "
        f"{report.run.experiment.seed}). McNemar: exact two-sided p-value on the questions "
        f"fully hit by only one of the two (ref only / system only)."
    )


def _comparison_table(report: Report) -> Table:
    header = ["system", "Δ recall [CI]", "Δ hit rate [CI]", "McNemar p (ref only / system only)",
              "Δ tokens [CI]"]  # fmt: skip
    rows = [
        [c.system, _ci(c.recall_diff), _ci(c.hit_rate_diff),
         f"{_p(c.mcnemar_p)} ({c.ref_only_hits} / {c.system_only_hits})", _ci(c.tokens_diff, 0)]
        for c in report.comparisons
    ]  # fmt: skip
    return Table(header, rows)


def _category_table(report: Report) -> Table:
    categories = sorted({c for s in report.systems.values() for c in s.by_category})
    rows = []
    for label, system in report.systems.items():
        cells = [_f(system.by_category[c].recall) if c in system.by_category else "-"
                 for c in categories]  # fmt: skip
        rows.append([label, *cells])
    return Table(["system", *categories], rows)


def _spend_table(report: Report) -> Table:
    """What each kind of question spends and gets: recall, hit rate and mean context tokens."""
    categories = sorted({c for s in report.systems.values() for c in s.by_category})
    rows = []
    for label, system in report.systems.items():
        cells = []
        for c in categories:
            s = system.by_category.get(c)
            cells.append("-" if s is None else f"{_f(s.recall)} / {_f(s.hit_rate)} / "
                         f"{_i(s.tokens_mean)}")  # fmt: skip
        rows.append([label, *cells])
    return Table(["system", *categories], rows)


def _level_table(report: Report) -> Table:
    rows = []
    for label, system in report.systems.items():
        for level, s in system.by_level.items():
            rows.append([label, level, str(s.questions), _f(s.recall), _i(s.tokens_mean)])
    return Table(["system", "level", "questions", "recall", "tokens mean"], rows)


def _issue_blocks(report: Report) -> list[Block]:
    issues = report.run.dataset.issues
    if not issues:
        return [("h2", "Dataset repairs"), ("p", "None: the data needed no repair.")]
    counts = Counter(i.kind for i in issues)
    summary = ", ".join(f"{kind}: {n}" for kind, n in sorted(counts.items()))
    rows = [[i.where, i.kind, i.detail] for i in issues]
    return [
        ("h2", "Dataset repairs"),
        ("p", summary),
        ("table", Table(["where", "kind", "detail"], rows)),
    ]


def render_markdown(report: Report) -> str:
    """The report as markdown; plots are linked as ``<name>.png`` next to it."""
    renderers: dict[str, Callable[[Any], str]] = {
        "h1": lambda t: f"# {t}",
        "h2": lambda t: f"## {t}",
        "p": str,
        "warn": lambda t: f"> **{t}**",
        "img": lambda name: f"![{name}]({name}.png)",
        "table": _markdown_table,
    }
    return "\n\n".join(renderers[kind](value) for kind, value in _blocks(report)) + "\n"


def _markdown_table(table: Table) -> str:
    def row(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    lines = [row(table.header), "|" + "---|" * len(table.header)]
    return "\n".join(lines + [row(r) for r in table.rows])


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
    "table{border-collapse:collapse;margin:1em 0;font-size:14px}"
    "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}"
    "th:first-child,td:first-child{text-align:left}"
    ".warn{background:#fdd;border:3px solid #c00;padding:1em;font-weight:bold;font-size:18px}"
    "img{max-width:100%}"
)


def render_html(report: Report) -> str:
    """The report as one self-contained HTML page (plots embedded as base64 PNG)."""
    e = html.escape
    renderers: dict[str, Callable[[Any], str]] = {
        "h1": lambda t: f"<h1>{e(t)}</h1>",
        "h2": lambda t: f"<h2>{e(t)}</h2>",
        "p": lambda t: f"<p>{e(t)}</p>",
        "warn": lambda t: f'<p class="warn">{e(t)}</p>',
        "img": lambda name: (
            f'<img alt="{e(name)}" src="data:image/png;base64,'
            f'{base64.b64encode(report.plots[name]).decode("ascii")}">'
        ),
        "table": _html_table,
    }
    body = "\n".join(renderers[kind](value) for kind, value in _blocks(report))
    title = e(f"Evaluation: {report.run.experiment.name}")
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_CSS}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def _html_table(table: Table) -> str:
    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in table.header)
    rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in table.rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
