"""A/B experiment files (``configs/ab/*.yaml``): which systems, which data, budgets and seed.

Validated strictly, like profiles: an unknown key or a bad value fails with one message naming
the file, the path inside it and the reason (``x.yaml: dataset -> format: Input should be ...``).
A relative ``dataset.path`` is taken relative to the experiment file. With no path, a LoCoMo
experiment reads ``$DISCLOSURE_LOCOMO`` if set, else ``../shared/datasets/locomo/locomo_dev.json``
relative to the repository (:func:`default_locomo_path`; the file is licensed non-commercial and
never copied into it); a LongMemEval experiment reads ``$DISCLOSURE_LONGMEMEVAL``, else
``../shared/datasets/longmemeval/lme_s_dev.jsonl.gz``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from analyzers import DisclosureLevel
from disclosure.evaluation.baselines import BASELINE_PREFIX, BASELINES, baseline_name
from disclosure.evaluation.locomo import DEFAULT_CATEGORIES
from disclosure.evaluation.stats import DEFAULT_RESAMPLES
from disclosure.safe_yaml import load_yaml
from tiers.errors import DatasetError, ExperimentError, RegistryError, describe_validation_error

LOCOMO_ENV = "DISCLOSURE_LOCOMO"
LONGMEMEVAL_ENV = "DISCLOSURE_LONGMEMEVAL"
REPOSITORY = Path(__file__).resolve().parents[2]
LOCOMO_RELATIVE = Path("shared", "datasets", "locomo", "locomo_dev.json")
LONGMEMEVAL_RELATIVE = Path("shared", "datasets", "longmemeval", "lme_s_dev.jsonl.gz")
DatasetFormat = Literal["locomo", "longmemeval", "jsonl"]
DATASET_ENV: dict[str, str] = {"locomo": LOCOMO_ENV, "longmemeval": LONGMEMEVAL_ENV}
_DEFAULT_FILES = {"locomo": LOCOMO_RELATIVE, "longmemeval": LONGMEMEVAL_RELATIVE}


def default_dataset_path(relative: Path) -> Path:
    """``../<relative>`` beside the repository, or beside the nearest directory above it that
    has one (a git worktree sits deeper than its main copy)."""
    for parent in REPOSITORY.parents:
        candidate = parent / relative
        if candidate.is_file():
            return candidate
    return REPOSITORY.parent / relative


def default_locomo_path() -> Path:
    """``../shared/datasets/locomo/locomo_dev.json`` beside the repository (or above it)."""
    return default_dataset_path(LOCOMO_RELATIVE)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetSpec(_Strict):
    """Where the questions come from and which of them to ask."""

    format: DatasetFormat = "locomo"
    path: Path | None = None
    categories: Literal["all"] | tuple[int | str, ...] | None = None
    limit_questions: int | None = Field(default=None, gt=0)

    def resolved_path(self) -> Path:
        """The dataset path: as given, else (LoCoMo, LongMemEval) the format's environment
        variable or the copy beside the repository."""
        if self.path is not None:
            return self.path
        if self.format not in _DEFAULT_FILES:
            raise DatasetError(f"dataset -> path: a {self.format} dataset needs a path")
        chosen = os.environ.get(DATASET_ENV[self.format])
        return Path(chosen) if chosen else default_dataset_path(_DEFAULT_FILES[self.format])

    def resolved_categories(self) -> tuple[int | str, ...] | None:
        """The categories asked (None: all): as given, else LoCoMo's 1-4 (jsonl: all)."""
        if self.categories == "all":
            return None
        if self.categories is not None:
            return self.categories
        return DEFAULT_CATEGORIES if self.format == "locomo" else None


AdaptiveMode = Literal["learn", "start", "ceiling"]
ReaderName = Literal["cite-gold"]


class ProfileSpec(_Strict):
    """A profile to evaluate, with optional fixed level and budget (the analyzer's and the
    adaptive budget's choices otherwise).

    ``reader``: a simulated reader whose reply to each disclosure goes back through
    ``feedback`` before the next question (``cite-gold``: cites the disclosed gold evidence;
    see :mod:`disclosure.evaluation.reader`). ``adaptive`` overrides the profile's budget:
    ``learn`` (or ``true``) learns from feedback, ``start`` (or ``false``) keeps every budget at
    its start, ``default x (0.5 + complexity)``, ``ceiling`` uses the level's ``max_tokens``
    (the profile's ``budget.adaptive: false``). ``shared_learning``: one budget history for
    the whole run, so each conversation's replies also teach the conversations after it, as a
    deployment's profile learns from all its users (``budget.learning.path``); by default every
    conversation starts from nothing.
    """

    profile: str = Field(min_length=1)
    label: str | None = None
    level: DisclosureLevel | None = None
    budget: int | None = Field(default=None, gt=0)
    reader: ReaderName | None = None
    adaptive: AdaptiveMode | None = None
    shared_learning: bool = False

    @field_validator("level", mode="before")
    @classmethod
    def _level(cls, value: object) -> object:
        return DisclosureLevel.parse(str(value)) if value is not None else None

    @field_validator("adaptive", mode="before")
    @classmethod
    def _adaptive(cls, value: object) -> object:
        if isinstance(value, bool):
            return "learn" if value else "start"
        return value

    @property
    def name(self) -> str:
        """The label in reports: the given one, else the profile (plus any fixed level/budget,
        adaptive mode and reader)."""
        if self.label:
            return self.label
        base = Path(self.profile).stem if "/" in self.profile else self.profile
        suffix = "".join(
            [
                f"@{self.level.value}" if self.level else "",
                f"@{self.budget}" if self.budget else "",
                f"/{self.adaptive}" if self.adaptive else "",
                f"+{self.reader}" if self.reader else "",
            ]
        )
        return base + suffix

    def at_level(self, level: DisclosureLevel) -> ProfileSpec:
        """This spec at a fixed ``level``, labelled ``<name>@<level>`` (the oracle's runs)."""
        return self.model_copy(update={"level": level, "label": f"{self.name}@{level.value}"})


class BootstrapSpec(_Strict):
    """The paired comparison's bootstrap."""

    resamples: int = Field(default=DEFAULT_RESAMPLES, ge=100)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    unit: Literal["questions", "conversations"] = "questions"


class Experiment(_Strict):
    """One A/B/n experiment: systems, data, budgets, seed, and the reference for comparisons."""

    name: str = Field(default="experiment", min_length=1, pattern=r"^[\w.-]+$")
    description: str = ""
    dataset: DatasetSpec = DatasetSpec()
    profiles: tuple[ProfileSpec, ...] = ()
    baselines: tuple[str, ...] = ()
    budgets: tuple[int, ...] = (1000, 2000)
    seed: int = 0
    reference: str | None = None
    encoding: str = "cl100k_base"
    bootstrap: BootstrapSpec = BootstrapSpec()
    oracle: bool = False
    match_tokens: str | None = None

    @field_validator("profiles", mode="before")
    @classmethod
    def _profile_names(cls, value: object) -> object:
        if isinstance(value, list | tuple):
            return [{"profile": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("baselines", mode="before")
    @classmethod
    def _baseline_names(cls, value: object) -> object:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            names: list[object] = []
            for v in value:
                names.extend(BASELINES if v in ("all", BASELINE_PREFIX + "all") else [v])
            return names
        return value

    @field_validator("baselines")
    @classmethod
    def _known_baselines(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        try:
            return tuple(dict.fromkeys(baseline_name(v) for v in value))
        except RegistryError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("budgets")
    @classmethod
    def _positive_budgets(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(b <= 0 for b in value):
            raise ValueError(f"must be positive token counts, got {list(value)}")
        return tuple(sorted(set(value)))

    @model_validator(mode="after")
    def _consistent(self) -> Experiment:
        if not self.profiles and not self.baselines:
            raise ValueError("name at least one profile or baseline")
        if self.oracle and not self.oracle_runs():
            raise ValueError("oracle: needs a profile without a fixed level or budget")
        profiles = [p.name for p in self.profile_specs()]
        if self.match_tokens is not None and self.match_tokens not in profiles:
            raise ValueError(
                f"match_tokens: {self.match_tokens!r} is none of the profiles "
                f"({', '.join(profiles) or 'none given'})"
            )
        if any(b != "full" for b in self.baselines) and not self.budgets:
            raise ValueError("budgets: the budgeted baselines need at least one budget")
        labels = self.system_labels()
        duplicates = sorted({x for x in labels if labels.count(x) > 1})
        if duplicates:
            raise ValueError(
                f"profiles: two systems share the label {duplicates[0]!r}; give a label"
            )
        if self.reference is not None and self.reference not in labels:
            raise ValueError(f"reference: {self.reference!r} is none of {', '.join(labels)}")
        return self

    def oracle_runs(self) -> list[tuple[ProfileSpec, list[ProfileSpec]]]:
        """With ``oracle``: each profile the analyzer drives (no fixed level or budget), with
        the same profile at every fixed level (the oracle level's candidates)."""
        if not self.oracle:
            return []
        return [
            (spec, [spec.at_level(level) for level in DisclosureLevel])
            for spec in self.profiles
            if spec.level is None and spec.budget is None
        ]

    def profile_specs(self) -> list[ProfileSpec]:
        """Every profile system in run order: the listed ones, then the oracle's fixed levels
        (those not listed already)."""
        specs = list(self.profiles)
        labels = {s.name for s in specs}
        for _, fixed in self.oracle_runs():
            for spec in fixed:
                if spec.name not in labels:
                    labels.add(spec.name)
                    specs.append(spec)
        return specs

    def system_labels(self) -> list[str]:
        """Every system's report label, profiles first, in the order they run."""
        labels = [p.name for p in self.profile_specs()]
        for name in self.baselines:
            if name == "full":
                labels.append(BASELINE_PREFIX + name)
            else:
                labels.extend(f"{BASELINE_PREFIX}{name}@{b}" for b in self.budgets)
        return labels + self.matched_labels()

    def matched_labels(self) -> list[str]:
        """With ``match_tokens``: each budgeted baseline at that profile's mean context tokens,
        labelled ``baseline:<name>@<profile>`` (the budget is known once the profile ran)."""
        if self.match_tokens is None:
            return []
        return [f"{BASELINE_PREFIX}{n}@{self.match_tokens}" for n in self.baselines if n != "full"]

    @property
    def reference_label(self) -> str:
        return self.reference or self.system_labels()[0]


def load_experiment(path: str | Path) -> Experiment:
    """An experiment from a YAML file; relative dataset paths resolve against the file."""
    path = Path(path)
    try:
        data = load_yaml(path) or {}
    except FileNotFoundError:
        raise ExperimentError(f"{path}: no such experiment file") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ExperimentError(f"{path}: {where}{exc.problem or exc}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ExperimentError(f"{path}: cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise ExperimentError(f"{path}: an experiment must be a mapping, not {type(data).__name__}")
    data.setdefault("name", path.stem)
    experiment = validate_experiment(data, where=str(path))
    dataset_path = experiment.dataset.path
    if dataset_path is not None and not dataset_path.expanduser().is_absolute():
        dataset = experiment.dataset.model_copy(update={"path": path.parent / dataset_path})
        experiment = experiment.model_copy(update={"dataset": dataset})
    return experiment


def validate_experiment(data: dict[str, object], *, where: str = "experiment") -> Experiment:
    """An Experiment from a mapping; errors name ``where`` and the path inside it."""
    try:
        return Experiment.model_validate(data)
    except ValidationError as exc:
        raise ExperimentError(f"{where}: {describe_validation_error(exc)}") from None
