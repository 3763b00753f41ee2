"""The analyzer, evaluated: its level against the oracle level of each question.

With ``oracle: true`` an experiment runs each profile the analyzer drives also at every fixed
level. The *oracle level* of a question is the level whose disclosure holds all its gold
evidence at the fewest context tokens (ties go to the lower level); a question no level fully
answers has none (it is *unreachable*). The section reports how often the analyzer picks the
oracle level, how often its pick holds all the evidence at no more tokens than the oracle's,
where it spends more or finds less, a confusion table, and the recall and tokens of the
analyzer's choices against every fixed level and against a perfect chooser (the oracle level,
or on unreachable questions the level with the best recall, then the fewest tokens), overall
and per category.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from analyzers import DisclosureLevel
from disclosure.evaluation.experiment import ProfileSpec
from disclosure.evaluation.metrics import QuestionRecord, Summary, breakdown, summarize
from disclosure.evaluation.runner import RunResult
from disclosure.evaluation.sections import Section, Table, fmt, fmt_int, share

NONE = "none"


def oracle_level(records: Mapping[DisclosureLevel, QuestionRecord]) -> DisclosureLevel | None:
    """The cheapest level (fewest context tokens, then the lower level) whose record holds all
    the gold evidence; None when none does or the question has no gold evidence."""
    hits = [(r.context_tokens, level) for level, r in records.items() if r.hit]
    return min(hits)[1] if hits else None


def best_level(records: Mapping[DisclosureLevel, QuestionRecord]) -> DisclosureLevel:
    """The oracle level when there is one, else the best recall at the fewest tokens."""
    found = oracle_level(records)
    if found is not None:
        return found
    return min(records, key=lambda lv: (-(records[lv].recall or 0.0), records[lv].context_tokens))


def oracle_section(run: RunResult) -> Section | None:
    """The section, or None when the experiment asks for no oracle."""
    runs = run.experiment.oracle_runs()
    if not runs:
        return None
    section = Section("analyzer_oracle", data={})
    section.blocks.append(("h2", "Analyzer against the oracle level"))
    section.blocks.append(("p", _NOTE))
    for spec, fixed in runs:
        data, tables = _evaluate(run, spec, fixed)
        section.data[spec.name] = data
        section.blocks.append(("p", _headline(spec.name, data)))
        section.blocks += [("table", t) for t in tables]
    return section


def _evaluate(
    run: RunResult, spec: ProfileSpec, fixed: Sequence[ProfileSpec]
) -> tuple[dict[str, Any], list[Table]]:
    analyzer = [r for r in run.by_system[spec.name] if r.scored]
    per_level = {
        DisclosureLevel.parse(str(f.level)): {r.question_id: r for r in run.by_system[f.name]}
        for f in fixed
    }
    counts = _counts(analyzer, per_level)
    chosen = []
    for record in analyzer:
        options = _at(per_level, record.question_id)
        chosen.append(replace(options[best_level(options)], system="oracle"))
    systems: dict[str, list[QuestionRecord]] = {f"analyzer ({spec.name})": analyzer}
    systems["oracle level"] = chosen
    for f in fixed:
        systems[f"{f.level}"] = [r for r in run.by_system[f.name] if r.scored]
    summaries = {name: summarize(records) for name, records in systems.items()}
    categories = {
        name: breakdown(records, lambda r: r.category or "-") for name, records in systems.items()
    }
    data = counts | {
        "systems": {k: v.to_dict() for k, v in summaries.items()},
        "by_category": {k: {c: s.to_dict() for c, s in v.items()} for k, v in categories.items()},
    }
    tables = [_confusion_table(counts["confusion"]), _systems_table(summaries),
              _category_table(categories)]  # fmt: skip
    return data, tables


def _at(
    per_level: Mapping[DisclosureLevel, Mapping[str, QuestionRecord]], question_id: str
) -> dict[DisclosureLevel, QuestionRecord]:
    return {level: records[question_id] for level, records in per_level.items()}


def _counts(
    analyzer: Sequence[QuestionRecord],
    per_level: Mapping[DisclosureLevel, Mapping[str, QuestionRecord]],
) -> dict[str, Any]:
    """How the analyzer's picks relate to the oracle levels, question by question."""
    exact = as_cheap = over = under = reachable = 0
    confusion: dict[str, dict[str, int]] = {}
    for record in analyzer:
        options = _at(per_level, record.question_id)
        oracle = oracle_level(options)
        row = confusion.setdefault(record.level or NONE, {})
        key = oracle.value if oracle else NONE
        row[key] = row.get(key, 0) + 1
        if oracle is None:
            continue
        reachable += 1
        cheapest = options[oracle].context_tokens
        exact += record.level == oracle.value
        if record.hit and record.context_tokens <= cheapest:
            as_cheap += 1
        elif record.hit:
            over += 1
        else:
            under += 1
    n = len(analyzer)
    return {
        "questions": n,
        "reachable": reachable,
        "unreachable": n - reachable,
        "picks_oracle_level": share(exact, reachable),
        "as_cheap_as_oracle": share(as_cheap, reachable),
        "holds_evidence_at_more_tokens": share(over, reachable),
        "misses_evidence_a_level_holds": share(under, reachable),
        "confusion": confusion,
    }


_NOTE = (
    "Oracle level: the level whose disclosure holds all of a question's gold evidence at the "
    "fewest context tokens (ties: the lower level); unreachable when no level does. Shares are "
    "of the reachable questions. 'oracle level' below is a perfect chooser (on unreachable "
    "questions: the best recall, then the fewest tokens)."
)


def _headline(name: str, data: dict[str, Any]) -> str:
    return (
        f"{name}: {data['questions']} questions with evidence, {data['reachable']} reachable. "
        f"The analyzer picks the oracle level on {_pct(data['picks_oracle_level'])}; its pick "
        f"holds all the evidence at no more tokens than the oracle's on "
        f"{_pct(data['as_cheap_as_oracle'])}, at more tokens on "
        f"{_pct(data['holds_evidence_at_more_tokens'])}, and misses evidence some level holds "
        f"on {_pct(data['misses_evidence_a_level_holds'])}."
    )


def _confusion_table(confusion: dict[str, dict[str, int]]) -> Table:
    columns = [lv.value for lv in DisclosureLevel] + [NONE]
    rows = [
        [f"analyzer: {level}", *[str(confusion[level].get(c, 0)) for c in columns]]
        for level in [*columns]
        if level in confusion
    ]
    return Table(["", *[f"oracle: {c}" for c in columns]], rows)


def _systems_table(summaries: Mapping[str, Summary]) -> Table:
    header = ["choice", "recall", "hit rate", "tokens mean", "p95", "compression"]
    rows = [
        [name, fmt(s.recall), fmt(s.hit_rate), fmt_int(s.tokens_mean), fmt_int(s.tokens_p95),
         fmt(s.compression, 1) + "x"]
        for name, s in summaries.items()
    ]  # fmt: skip
    return Table(header, rows)


def _category_table(categories: Mapping[str, Mapping[str, Summary]]) -> Table:
    names = sorted({c for per in categories.values() for c in per})
    rows = [[choice, *[_cell(per.get(c)) for c in names]] for choice, per in categories.items()]
    return Table(["choice (recall / tokens)", *names], rows)


def _cell(summary: Summary | None) -> str:
    return "-" if summary is None else f"{fmt(summary.recall)} / {fmt_int(summary.tokens_mean)}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
