"""The A/B/n runner: every system answers every selected question of every conversation.

A *system* is something that discloses: a profile (through ``DisclosureController``) or a
baseline, with an optional fixed budget and level. For each system and conversation the runner
makes a fresh :class:`Discloser` in its own data directory, ingests the conversation, then asks
the conversation's questions in dataset order with ``now`` set to when they are asked, scoring
each result (:func:`~disclosure.evaluation.metrics.score_result`).

Hooks for the evaluations that need more than one pass:

* ``System.reader``: a simulated reader; its reply to each result goes back through
  ``feedback`` before the next question (the adaptive-budget evaluation).
* ``observers``: called with (system, question, result, record) after each question, e.g. to
  keep results for the analyzer's oracle-level evaluation, which runs a profile at each fixed
  level as separate systems (``ProfileSpec.level``) and compares against the analyzer's pick.
"""

from __future__ import annotations

import logging
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from analyzers import DisclosureLevel
from disclosure.core.profiles import Profile, load_profile
from disclosure.core.result import DisclosureResult
from disclosure.evaluation.baselines import (
    BASELINE_PREFIX,
    make_baseline,
    render_conversation,
)
from disclosure.evaluation.dataset import Conversation, Dataset, Question
from disclosure.evaluation.embedding import DocumentVectorCache
from disclosure.evaluation.experiment import AdaptiveMode, Experiment, ProfileSpec
from disclosure.evaluation.metrics import QuestionRecord, score_result
from disclosure.evaluation.reader import Reader, get_reader
from formatters.tokens import TokenCounter, get_token_counter
from tiers.base import Embedder
from tiers.errors import ExperimentError
from tiers.memory import Memory

log = logging.getLogger(__name__)


@runtime_checkable
class Discloser(Protocol):
    """What the runner drives: the calls of ``DisclosureController`` it needs, and no more."""

    def ingest(self, memories: Sequence[Memory]) -> object: ...

    def disclose(
        self,
        query: str,
        *,
        history: Sequence[Any] = (),
        now: datetime | None = None,
        level: DisclosureLevel | None = None,
        budget: int | None = None,
    ) -> DisclosureResult: ...

    def feedback(self, result: DisclosureResult, reply: str) -> object: ...

    def close(self) -> None: ...


DiscloserFactory = Callable[[Path], Discloser]
Observer = Callable[["System", Question, DisclosureResult, QuestionRecord], None]


@dataclass(frozen=True)
class System:
    """One column of the comparison: a label, how to build it, and what to ask it with."""

    label: str
    kind: Literal["profile", "baseline"]
    factory: DiscloserFactory
    budget: int | None = None
    level: DisclosureLevel | None = None
    reader: Reader | None = None


@dataclass(frozen=True)
class RunResult:
    """Everything a report needs: the experiment, the questions asked, and one record each."""

    experiment: Experiment
    dataset: Dataset
    systems: tuple[System, ...]
    records: tuple[QuestionRecord, ...]
    full_tokens: dict[str, int]
    duration_s: float = 0.0
    by_system: dict[str, list[QuestionRecord]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        grouped: dict[str, list[QuestionRecord]] = {s.label: [] for s in self.systems}
        for record in self.records:
            grouped[record.system].append(record)
        object.__setattr__(self, "by_system", grouped)

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.systems]

    @property
    def violations(self) -> list[QuestionRecord]:
        return [r for r in self.records if r.violation is not None]


# -- systems ------------------------------------------------------------------------------------


def controller_class() -> Any:
    """``DisclosureController`` (imported on first use: it loads the tiers' engines)."""
    from disclosure.core.controller import DisclosureController

    return DisclosureController


def profile_system(spec: ProfileSpec, *, embedder: Embedder | None = None) -> System:
    """A profile, run through a fresh ``DisclosureController`` per conversation (with
    ``embedder`` in place of the profile's own, if given)."""
    profile = with_adaptive(load_profile(spec.profile), spec.adaptive)  # fail now on a typo
    if spec.shared_learning:  # data dirs are <run>/<system>/<conversation>: one file per system
        learning = profile.budget.learning.model_copy(update={"path": "../usage.sqlite3"})
        budget = profile.budget.model_copy(update={"learning": learning})
        profile = profile.model_copy(update={"budget": budget})
    cls = controller_class()
    # the evaluation's vector cache remembers memories' facets too
    facets = embedder.facets if isinstance(embedder, DocumentVectorCache) else None

    def factory(data_dir: Path) -> Discloser:
        made = cls.from_profile(profile, data_dir=data_dir, embedder=embedder, facets=facets)
        return made  # type: ignore[no-any-return]

    reader = get_reader(spec.reader) if spec.reader else None
    return System(
        spec.name, "profile", factory, budget=spec.budget, level=spec.level, reader=reader
    )


def with_adaptive(profile: Profile, mode: AdaptiveMode | None) -> Profile:
    """``profile`` with its budget learning (``learn``), kept at the start (``start``: learning
    off, the level's own cut-off) or at the level ceilings (``ceiling``)."""
    if mode is None:
        return profile
    budget = profile.budget
    if mode == "ceiling":
        budget = budget.model_copy(update={"adaptive": False})
    elif mode == "start":
        off = budget.learning.model_copy(update={"enabled": False})
        budget = budget.model_copy(update={"adaptive": True, "learning": off})
    else:
        budget = budget.model_copy(update={"adaptive": True})
    return profile.model_copy(update={"budget": budget})


def baseline_systems(
    name: str,
    budgets: Sequence[int],
    *,
    counter: TokenCounter | None = None,
    embedder: Embedder | None = None,
) -> list[System]:
    """One system per budget (``baseline:full`` is unbudgeted: one system)."""

    def factory(_: Path) -> Discloser:
        return make_baseline(name, counter=counter, embedder=embedder)

    label = make_baseline(name).label
    if label == f"{BASELINE_PREFIX}full":
        return [System(label, "baseline", factory)]
    return [System(f"{label}@{b}", "baseline", factory, budget=b) for b in budgets]


def experiment_systems(
    experiment: Experiment, *, baselines_only: bool = False, embedder: Embedder | None = None
) -> list[System]:
    """The experiment's systems in report order: profiles, then baselines by budget."""
    counter = get_token_counter(experiment.encoding)
    specs = [] if baselines_only else experiment.profile_specs()
    systems = [profile_system(p, embedder=embedder) for p in specs]
    for name in experiment.baselines:
        systems.extend(
            baseline_systems(name, experiment.budgets, counter=counter, embedder=embedder)
        )
    if not systems:
        raise ExperimentError("nothing to evaluate: the experiment names no baselines")
    return systems


# -- running ------------------------------------------------------------------------------------


def run_experiment(
    experiment: Experiment,
    dataset: Dataset,
    systems: Sequence[System],
    *,
    work_dir: Path | None = None,
    progress: bool | None = None,
    observers: Sequence[Observer] = (),
    cache: DocumentVectorCache | None = None,
) -> RunResult:
    """Ask every system every question of ``dataset``; ``progress=None`` shows a bar on a TTY.

    ``cache``: the vectors of ingested turns are reused from it (each ingest runs inside its
    ``documents()``; the baselines at a profile's mean tokens embed with it too)."""
    documents = cache.documents if cache is not None else nullcontext
    if not dataset.questions:
        raise ExperimentError("no questions to ask (check the categories and the dataset)")
    labels = [s.label for s in systems]
    if len(set(labels)) != len(labels):
        raise ExperimentError(f"two systems share a label: {labels}")
    counter = get_token_counter(experiment.encoding)
    conversations = [c for c in dataset.conversations if dataset.questions_of(c.id)]
    full_tokens = {c.id: counter(render_conversation(c.memories)) for c in conversations}
    started = time.perf_counter()
    records: list[QuestionRecord] = []
    with (
        _work_area(work_dir) as root,
        _progress(len(systems) * len(dataset.questions), progress) as bar,
    ):

        def run(system: System) -> None:
            bar.set_description(system.label)
            for conversation in conversations:
                data_dir = root / _slug(system.label) / _slug(conversation.id)
                records.extend(
                    _run_conversation(
                        system, conversation, dataset.questions_of(conversation.id),
                        data_dir=data_dir, counter=counter,
                        full_tokens=full_tokens[conversation.id], observers=observers, bar=bar,
                        documents=documents,
                    )
                )  # fmt: skip

        for system in systems:
            run(system)
        matched = _matched_systems(experiment, systems, records, counter, cache)
        bar.total += len(matched) * len(dataset.questions)
        for system in matched:
            run(system)
    return RunResult(
        experiment=experiment,
        dataset=dataset,
        systems=(*systems, *matched),
        records=tuple(records),
        full_tokens=full_tokens,
        duration_s=time.perf_counter() - started,
    )


def _matched_systems(
    experiment: Experiment,
    systems: Sequence[System],
    records: Sequence[QuestionRecord],
    counter: TokenCounter,
    embedder: Embedder | None = None,
) -> list[System]:
    """``match_tokens``: the budgeted baselines at that profile's mean context tokens."""
    target = experiment.match_tokens
    if target is None or target not in {s.label for s in systems}:
        return []
    tokens = [r.context_tokens for r in records if r.system == target]
    budget = max(round(sum(tokens) / len(tokens)), 1)
    matched = []
    for name in experiment.baselines:
        if name == "full":
            continue
        (system,) = baseline_systems(name, [budget], counter=counter, embedder=embedder)
        matched.append(replace(system, label=f"{BASELINE_PREFIX}{name}@{target}"))
    return matched


def _run_conversation(
    system: System,
    conversation: Conversation,
    questions: Sequence[Question],
    *,
    data_dir: Path,
    counter: TokenCounter,
    full_tokens: int,
    observers: Sequence[Observer],
    bar: Any,
    documents: Callable[[], AbstractContextManager[None]],
) -> list[QuestionRecord]:
    if system.kind == "profile":
        data_dir.mkdir(parents=True, exist_ok=True)
    discloser = system.factory(data_dir)
    records = []
    try:
        with documents():
            discloser.ingest(conversation.memories)
        _settle(discloser)
        _consolidate_if_served(discloser)
        for question in questions:
            started = time.perf_counter()
            result = discloser.disclose(
                question.text, now=conversation.now, level=system.level, budget=system.budget
            )
            latency_ms = (time.perf_counter() - started) * 1000
            record = score_result(
                system=system.label,
                question=question,
                result=result,
                contents=conversation.contents,
                count_tokens=counter,
                full_tokens=full_tokens,
                latency_ms=latency_ms,
                budget=system.budget,
                record_level=system.kind == "profile",
            )
            if record.violation:
                log.error(
                    "%s on %s: budget violation: %s", system.label, question.id, record.violation
                )
            if system.reader is not None and (reply := system.reader(question, result)) is not None:
                discloser.feedback(result, reply)
            for observer in observers:
                observer(system, question, result, record)
            records.append(record)
            bar.update(1)
    finally:
        discloser.close()
    return records


@contextmanager
def _work_area(work_dir: Path | None) -> Iterator[Path]:
    if work_dir is not None:  # kept for inspection; a new run directory keeps every run fresh
        work_dir.mkdir(parents=True, exist_ok=True)
        yield Path(tempfile.mkdtemp(prefix="run-", dir=work_dir))
        return
    with tempfile.TemporaryDirectory(prefix="disclosure-eval-") as tmp:
        yield Path(tmp)


@contextmanager
def _progress(total: int, enabled: bool | None) -> Iterator[Any]:
    from tqdm import tqdm

    bar = tqdm(total=total, unit="q", disable=None if enabled is None else not enabled)
    try:
        yield bar
    finally:
        bar.close()


def _slug(text: str) -> str:
    return re.sub(r"[^\w.-]+", "_", text).strip("_") or "x"


def _settle(discloser: Discloser) -> None:
    """A profile's background indexing (the gathering index's facets) done before the
    questions, as a running service would have done it by then."""
    settle = getattr(discloser, "settle", None)
    if callable(settle):
        settle()


def _consolidate_if_served(discloser: Discloser) -> None:
    """A profile that serves consolidated summaries gets them built before the questions, from
    what left the working set, as a running service would have by then."""
    profile = getattr(discloser, "profile", None)
    consolidation = getattr(profile, "consolidation", None)
    if consolidation is not None and consolidation.serve.enabled:
        discloser.consolidate()  # type: ignore[attr-defined]
