"""The adaptive budget, evaluated: the same profile with budget learning on and off.

An experiment lists a profile with ``adaptive: learn`` (it learns from a simulated reader's
replies, ``reader: cite-gold``) beside the same profile and reader with ``adaptive: start``
(every budget stays at its start, ``default x (0.5 + complexity)``) and/or ``adaptive: ceiling``
(every budget is the level's ``max_tokens``). Each learning system is paired with each such
system; the section reports the tokens saved and the evidence recall lost, against the target
(at least :data:`TARGET_TOKEN_CUT` fewer tokens for at most :data:`TARGET_RECALL_POINTS` points
of recall), with paired bootstrap intervals, per level, and by the question's position in its
conversation (how fast the budget learns).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from disclosure.evaluation.experiment import Experiment, ProfileSpec
from disclosure.evaluation.metrics import QuestionRecord, summarize
from disclosure.evaluation.runner import RunResult
from disclosure.evaluation.sections import Section, Table, fmt, fmt_int
from disclosure.evaluation.stats import compare

TARGET_TOKEN_CUT = 0.20
TARGET_RECALL_POINTS = 1.0
POSITIONS = ((1, 10), (11, 30), (31, 60), (61, 100), (101, None))
FACTORS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def adaptive_pairs(experiment: Experiment) -> list[tuple[ProfileSpec, ProfileSpec]]:
    """(non-learning, learning) specs of the same profile, reader, level and budget."""

    def key(spec: ProfileSpec) -> tuple[Any, ...]:
        return (spec.profile, spec.reader, spec.level, spec.budget)

    specs = experiment.profiles
    return [
        (off, on)
        for on in specs
        if on.adaptive == "learn"
        for off in specs
        if off.adaptive in ("start", "ceiling") and key(off) == key(on)
    ]


def adaptive_section(run: RunResult) -> Section | None:
    """The section, or None when the experiment pairs no learning system."""
    pairs = adaptive_pairs(run.experiment)
    if not pairs:
        return None
    data = [_pair(run, off, on) for off, on in pairs]
    section = Section("adaptive_budget", data={"pairs": data})
    section.blocks += [
        ("h2", "Adaptive budget: learning on against off"),
        ("p", _note(run)),
        ("table", _pairs_table(data)),
    ]
    frontiers = {
        off.name: fixed_factor_frontier(run.by_system[off.name])
        for off, _ in pairs
        if off.adaptive == "start"
    }
    for label, frontier in frontiers.items():
        section.data.setdefault("frontier", {})[label] = frontier
        section.blocks += [
            ("p", _frontier_note(label, frontier)),
            ("table", _frontier_table(frontier)),
        ]
    for pair in data:
        section.blocks += [
            ("p", f"{pair['on']} against {pair['off']}, per level and by question position:"),
            ("table", _levels_table(pair)),
            ("table", _positions_table(pair)),
        ]
    return section


def positions(records: Sequence[QuestionRecord]) -> list[int]:
    """Each record's 1-based position among its conversation's questions (run order)."""
    seen: dict[str, int] = {}
    out = []
    for record in records:
        seen[record.conversation_id] = seen.get(record.conversation_id, 0) + 1
        out.append(seen[record.conversation_id])
    return out


def fixed_factor_frontier(
    records: Sequence[QuestionRecord], factors: Sequence[float] = FACTORS
) -> list[dict[str, float]]:
    """What every budget scaled by one fixed factor would have cost and kept, estimated from a
    run at the start budgets: a gold item stays when it ended within ``factor x budget`` in
    packing order (``found_depths``; one shown only inside another item stays only at factor
    1), and a context takes ``min(its tokens, factor x budget)``. The best any budget that
    does not look at the query can do with one factor: the target's feasibility."""
    scored = [r for r in records if r.scored]
    base_tokens = fmean(r.context_tokens for r in records)
    base_recall = fmean(r.recall or 0.0 for r in scored) if scored else 0.0
    out = []
    for factor in factors:
        tokens = fmean(min(r.context_tokens, factor * r.result_budget) for r in records)
        recall = fmean(_kept(r, factor) for r in scored) if scored else 0.0
        out.append(
            {
                "factor": factor,
                "tokens": tokens,
                "token_cut": 1 - tokens / base_tokens if base_tokens else 0.0,
                "recall": recall,
                "recall_points_lost": (base_recall - recall) * 100,
            }
        )
    return out


def _kept(record: QuestionRecord, factor: float) -> float:
    limit = factor * record.result_budget
    depths = record.found_depths or (None,) * len(record.found)
    kept = sum(1 for d in depths if (d is None and factor >= 1) or (d is not None and d <= limit))
    return kept / len(record.gold)


def _frontier_note(label: str, frontier: list[dict[str, float]]) -> str:
    within = [f for f in frontier if f["recall_points_lost"] <= TARGET_RECALL_POINTS]
    best = max(within, key=lambda f: f["token_cut"]) if within else None
    told = (
        f"the most a fixed factor saves within {TARGET_RECALL_POINTS:g} point is "
        f"{best['token_cut']:.1%} (x{best['factor']:.1f})"
        if best
        else "no fixed factor stays within the recall target"
    )
    return (
        f"Fixed-factor frontier, estimated from {label}'s packing positions (a budget that "
        f"does not look at the query, scaled by one factor): {told}."
    )


def _frontier_table(frontier: list[dict[str, float]]) -> Table:
    header = ["factor", "tokens (est.)", "fewer tokens", "recall (est.)", "points lost"]
    rows = [
        [f"x{f['factor']:.1f}", fmt_int(f["tokens"]), _pct(f["token_cut"]), fmt(f["recall"]),
         fmt(f["recall_points_lost"], 2)]
        for f in frontier
    ]  # fmt: skip
    return Table(header, rows)


def _pair(run: RunResult, off: ProfileSpec, on: ProfileSpec) -> dict[str, Any]:
    off_records, on_records = run.by_system[off.name], run.by_system[on.name]
    a, b = summarize(off_records), summarize(on_records)
    boot = run.experiment.bootstrap
    diff = compare(
        off_records, on_records, resamples=boot.resamples, confidence=boot.confidence,
        unit=boot.unit, seed=run.experiment.seed,
    )  # fmt: skip
    cut = 1 - b.tokens_mean / a.tokens_mean if a.tokens_mean else None
    lost = (a.recall - b.recall) * 100 if a.recall is not None and b.recall is not None else None
    met = (
        cut is not None
        and lost is not None
        and cut >= TARGET_TOKEN_CUT
        and lost <= TARGET_RECALL_POINTS
    )
    return {
        "off": off.name,
        "on": on.name,
        "off_mode": off.adaptive,
        "tokens_off": a.tokens_mean,
        "tokens_on": b.tokens_mean,
        "token_cut": cut,
        "recall_off": a.recall,
        "recall_on": b.recall,
        "recall_points_lost": lost,
        "hit_rate_off": a.hit_rate,
        "hit_rate_on": b.hit_rate,
        "target_met": met,
        "comparison": diff.to_dict(),
        "by_level": _by(off_records, on_records, [r.level or "-" for r in on_records]),
        "by_position": _by(off_records, on_records, [_bucket(p) for p in positions(on_records)]),
    }


def _by(
    off: Sequence[QuestionRecord], on: Sequence[QuestionRecord], keys: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Budgets, tokens and recall of both systems per group of questions (keyed by ``on``)."""
    key_of = {r.question_id: k for r, k in zip(on, keys, strict=True)}
    groups: dict[str, dict[str, list[QuestionRecord]]] = {}
    for side, records in (("off", off), ("on", on)):
        for record in records:
            group = groups.setdefault(key_of.get(record.question_id, "-"), {"off": [], "on": []})
            group[side].append(record)
    return {name: _group(group) for name, group in groups.items()}


def _group(group: dict[str, list[QuestionRecord]]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(group["on"])}
    for side, records in group.items():
        recalls = [r.recall for r in records if r.recall is not None]
        out[f"budget_{side}"] = fmean(r.result_budget for r in records) if records else None
        out[f"tokens_{side}"] = fmean(r.context_tokens for r in records) if records else None
        out[f"recall_{side}"] = fmean(recalls) if recalls else None
    return out


def _bucket(position: int) -> str:
    for low, high in POSITIONS:
        if high is None or position <= high:
            return f"{low}+" if high is None else f"{low}-{high}"
    raise AssertionError("unreachable")  # pragma: no cover


def _note(run: RunResult) -> str:
    boot = run.experiment.bootstrap
    return (
        f"Target: at least {TARGET_TOKEN_CUT:.0%} fewer tokens for at most "
        f"{TARGET_RECALL_POINTS:g} point of evidence recall lost. Both systems run the same "
        f"profile and simulated reader over each conversation's questions in order; off keeps "
        f"the budget at its start (start) or the level ceiling (ceiling). Intervals: "
        f"{boot.confidence:.0%} paired bootstrap, on minus off."
    )


def _pairs_table(pairs: list[dict[str, Any]]) -> Table:
    header = ["learning", "against", "tokens off", "tokens on", "fewer tokens",
              "recall off", "recall on", "points lost", "Δ recall [CI]", "Δ tokens [CI]",
              "target met"]  # fmt: skip
    rows = []
    for p in pairs:
        diff = p["comparison"]
        rows.append(
            [p["on"], p["off"], fmt_int(p["tokens_off"]), fmt_int(p["tokens_on"]),
             _pct(p["token_cut"]), fmt(p["recall_off"]), fmt(p["recall_on"]),
             fmt(p["recall_points_lost"], 2), _interval(diff["recall_diff"], 3),
             _interval(diff["tokens_diff"], 0), "yes" if p["target_met"] else "no"]
        )  # fmt: skip
    return Table(header, rows)


def _levels_table(pair: dict[str, Any]) -> Table:
    return _groups_table("level", pair["by_level"])


def _positions_table(pair: dict[str, Any]) -> Table:
    order = [_bucket(low) for low, _ in POSITIONS]
    groups = {k: pair["by_position"][k] for k in order if k in pair["by_position"]}
    return _groups_table("question #", groups)


def _groups_table(name: str, groups: dict[str, dict[str, Any]]) -> Table:
    header = [name, "questions", "budget off", "budget on", "tokens off", "tokens on",
              "recall off", "recall on"]  # fmt: skip
    rows = [
        [key, str(g["questions"]), fmt_int(g["budget_off"]), fmt_int(g["budget_on"]),
         fmt_int(g["tokens_off"]), fmt_int(g["tokens_on"]), fmt(g["recall_off"]),
         fmt(g["recall_on"])]
        for key, g in groups.items()
    ]  # fmt: skip
    return Table(header, rows)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _interval(data: dict[str, float] | None, digits: int) -> str:
    if not data:
        return "-"
    return f"{data['estimate']:+.{digits}f} [{data['low']:+.{digits}f}, {data['high']:+.{digits}f}]"
