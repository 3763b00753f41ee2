"""The runner and the reports, in process, on the tiny experiment (cheap baselines only)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, ClassVar

import pytest

import disclosure
from disclosure.core.result import DisclosureResult
from disclosure.evaluation import (
    Dataset,
    Experiment,
    Question,
    System,
    build_report,
    experiment_systems,
    load_dataset,
    load_experiment,
    run_experiment,
    write_report,
)
from disclosure.evaluation.baselines import BM25, Recency
from disclosure.evaluation.experiment import ProfileSpec
from disclosure.evaluation.report import render_html, render_markdown
from disclosure.evaluation.runner import controller_class, profile_system
from tiers.errors import ExperimentError

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "configs" / "ab" / "tiny.yaml"
LATENCY_KEYS = {"latency_ms", "latency_p50_ms", "latency_p95_ms"}


@pytest.fixture(scope="module")
def experiment() -> Experiment:
    return load_experiment(TINY)


@pytest.fixture(scope="module")
def dataset(experiment: Experiment) -> Dataset:
    return load_dataset(experiment.dataset, seed=experiment.seed)


def without_latency(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: without_latency(v) for k, v in data.items() if k not in LATENCY_KEYS}
    if isinstance(data, list):
        return [without_latency(v) for v in data]
    return data


def test_every_system_answers_every_selected_question(
    experiment: Experiment, dataset: Dataset
) -> None:
    """6 systems x 12 questions (categories 1-4 of the fixture), in system then dataset order."""
    systems = experiment_systems(experiment)
    assert [s.label for s in systems] == experiment.system_labels()
    run = run_experiment(experiment, dataset, systems, progress=False)
    assert len(dataset.questions) == 12
    assert len(run.records) == 6 * 12
    assert [r.question_id for r in run.by_system["baseline:bm25@40"]] == [
        q.id for q in dataset.questions
    ]
    assert run.violations == []
    full = run.by_system["baseline:full"]
    assert all(r.recall == 1.0 for r in full if r.scored)
    profile = run.by_system["long-memory"]
    assert all(r.level is None for r in run.records if r.system != "long-memory")  # baselines
    assert all(r.level in {"minimal", "standard", "detailed", "comprehensive"} for r in profile)


def test_results_are_deterministic_for_a_fixed_seed(
    experiment: Experiment, dataset: Dataset
) -> None:
    """Two runs give identical reports except latency and the run's own metadata."""
    reports = []
    for _ in range(2):
        run = run_experiment(experiment, dataset, experiment_systems(experiment), progress=False)
        data = build_report(run, with_plots=False).to_dict()
        data.pop("run")
        reports.append(without_latency(data))
    assert reports[0] == reports[1]
    assert reports[0]["comparisons"][0]["recall_diff"] is not None


class Remembering(Recency):
    """A real recency baseline that remembers where it was built and what it was told."""

    made: ClassVar[list[Path]] = []
    replies: ClassVar[list[str]] = []

    def feedback(self, result: DisclosureResult, reply: str) -> None:
        Remembering.replies.append(reply)


def test_profiles_get_a_fresh_data_directory_per_conversation_and_feedback(
    experiment: Experiment, dataset: Dataset, tmp_path: Path
) -> None:
    """A profile-kind system is built once per conversation in its own directory; the reader's
    replies go back through feedback; observers see every question."""

    def factory(data_dir: Path) -> Remembering:
        assert data_dir.is_dir() and not any(data_dir.iterdir())
        Remembering.made.append(data_dir)
        return Remembering()

    def reader(question: Question, result: DisclosureResult) -> str | None:
        return f"answer to {question.id}" if question.scored else None

    seen: list[str] = []
    system = System("mine", "profile", factory, budget=60, reader=reader)
    run_experiment(
        experiment, dataset, [system], work_dir=tmp_path, progress=False,
        observers=[lambda s, q, r, rec: seen.append(rec.question_id)],
    )  # fmt: skip
    assert len(Remembering.made) == 2 and len(set(Remembering.made)) == 2
    assert all(tmp_path in p.parents for p in Remembering.made)
    assert Remembering.replies == [f"answer to {q.id}" for q in dataset.questions if q.scored]
    assert seen == [q.id for q in dataset.questions]


def test_profiles_run_on_the_disclosure_controller() -> None:
    """A profile system is driven by disclosure.DisclosureController."""
    system = profile_system(ProfileSpec(profile="default"))
    assert system.kind == "profile"
    assert controller_class() is disclosure.DisclosureController


def test_shared_learning_keeps_one_budget_history_for_the_run(
    experiment: Experiment, dataset: Dataset, tmp_path: Path
) -> None:
    """``shared_learning``: every conversation's feedback goes to one usage file beside the
    conversations' data dirs, so later conversations learn from earlier ones; without it each
    conversation keeps its own."""

    def replies(path: Path) -> int:
        with closing(sqlite3.connect(path)) as db:
            return int(db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    counts: dict[bool, list[int]] = {}
    for shared in (False, True):
        spec = ProfileSpec(
            profile="default", reader="cite-gold", adaptive="learn", shared_learning=shared
        )
        work = tmp_path / str(shared)
        run_experiment(experiment, dataset, [profile_system(spec)], work_dir=work, progress=False)
        (system_dir,) = work.glob("*/default*")  # <work>/<run>/<system>/<conversation>
        conversations = sorted(p for p in system_dir.iterdir() if p.is_dir())
        assert len(conversations) == 2
        owned = [c / "usage.sqlite3" for c in conversations if (c / "usage.sqlite3").exists()]
        assert (system_dir / "usage.sqlite3").exists() is shared
        assert len(owned) == (0 if shared else 2)
        counts[shared] = (
            [replies(system_dir / "usage.sqlite3")] if shared else [replies(p) for p in owned]
        )
    assert all(n > 0 for n in counts[False])
    assert counts[True] == [sum(counts[False])]


class Overspender(BM25):
    """A BM25 baseline that claims one token more than its budget: a broken discloser."""

    def disclose(self, query: str, *, budget: int | None = None, **kwargs: Any) -> DisclosureResult:
        result = super().disclose(query, budget=budget, **kwargs)
        return result.model_copy(update={"tokens_used": result.budget + 1})


def test_budget_violations_are_counted_and_shown_loudly(
    experiment: Experiment, dataset: Dataset, tmp_path: Path
) -> None:
    """A system over budget: counted per system, listed in JSON, a banner in markdown and HTML."""
    systems: Sequence[System] = [
        System("good", "baseline", lambda _: BM25(), budget=60),
        System("bad", "baseline", lambda _: Overspender(), budget=60),
    ]
    run = run_experiment(experiment, dataset, systems, progress=False)
    report = build_report(run, with_plots=False)
    assert report.systems["bad"].summary.violations == 12
    assert report.systems["good"].summary.violations == 0
    data = report.to_dict()
    assert len(data["violations"]) == 12 and data["violations"][0]["system"] == "bad"
    assert "> **BUDGET VIOLATIONS: 12 results over budget." in render_markdown(report)
    assert '<p class="warn">BUDGET VIOLATIONS: 12' in render_html(report)


def test_reports_are_written_with_plots_tables_and_records(
    experiment: Experiment, dataset: Dataset, tmp_path: Path
) -> None:
    """results.json, records.jsonl, report.md with PNGs beside it, and a self-contained HTML."""
    run = run_experiment(experiment, dataset, experiment_systems(experiment), progress=False)
    paths = write_report(build_report(run), tmp_path)
    for name in ("recall_vs_tokens", "per_category", "latency"):
        assert (tmp_path / f"{name}.png").read_bytes().startswith(b"\x89PNG")
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert data["reference"] == "baseline:bm25@80"
    assert set(data["systems"]) == set(experiment.system_labels())
    assert data["systems"]["baseline:full"]["summary"]["compression"] == pytest.approx(1.0)
    assert "multi-hop" in data["systems"]["baseline:bm25@80"]["by_category"]
    assert any("D:11:26" in issue for issue in data["dataset"]["issues"])
    lines = paths["records"].read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(run.records)
    assert {"recall", "hit", "precision", "context_tokens"} <= set(json.loads(lines[0]))
    markdown = paths["markdown"].read_text(encoding="utf-8")
    assert "## Paired comparison against baseline:bm25@80" in markdown
    assert "![recall_vs_tokens](recall_vs_tokens.png)" in markdown
    page = paths["html"].read_text(encoding="utf-8")
    assert page.count('src="data:image/png;base64,') == 3
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing outside the page


def test_no_questions_is_an_error(experiment: Experiment, dataset: Dataset) -> None:
    """A selection that leaves no question refuses to run."""
    empty = dataset.select(categories=["no-such-category"])
    with pytest.raises(ExperimentError, match="no questions"):
        run_experiment(experiment, empty, experiment_systems(experiment), progress=False)
