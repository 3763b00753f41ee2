"""Profiles: every policy of the library in one validated, YAML-loadable object.

Every profile sits on the library's defaults (the built-in ``default`` profile spells them
out), so a profile names only what differs. A profile may also ``extends:`` another one (a
built-in name, or a path relative to the file) and override only what it names: mappings merge
key by key, lists and scalars replace. Unknown keys, wrong types and impossible values fail at
load with one message naming the file, the path inside it and the reason::

    mine.yaml: levels -> detailed -> max_tokens: Input should be greater than 0 (got 0)
"""

from __future__ import annotations

import importlib.resources
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from analyzers import DisclosureLevel
from analyzers.config import AnalyzerConfig
from disclosure.consolidation.config import ConsolidationConfig
from disclosure.core.pipeline.ranking import FEATURES
from disclosure.core.pipeline.spend import FEATURES as NEED_FEATURES
from disclosure.core.profile_sections import IsolationConfig, MiddlewareConfig, ServiceConfig
from disclosure.safe_yaml import load_yaml
from formatters import FORMATTERS
from formatters.config import CitationConfig, FormattingConfig, TokenConfig
from tiers.config import TiersConfig
from tiers.errors import ProfileError, describe_validation_error

PROFILE_SUFFIXES = (".yaml", ".yml")
_MAX_EXTENDS_DEPTH = 16


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LevelConfig(_Section):
    """What one disclosure level takes from each tier, how it reads, and its token ceiling.

    ``min_score`` drops candidates whose confidence is lower. ``cutoff`` is a score-adaptive
    stop: once ``cutoff_floor`` tokens of candidates are in, candidates whose fused value is
    below ``cutoff`` x the best one's are left out (0: fill the budget).
    """

    hot_items: int = Field(ge=0)
    warm_items: int = Field(ge=0)
    cold_search: bool = False
    cold_items: int = Field(default=3, ge=0)
    formatter: str
    max_tokens: int = Field(gt=0)
    min_score: float = Field(default=0.0, ge=0.0, le=1.0)
    cutoff: float = Field(default=0.0, ge=0.0, lt=1.0)
    cutoff_floor: int = Field(default=0, ge=0)

    @field_validator("formatter")
    @classmethod
    def _known_formatter(cls, value: str) -> str:
        names = FORMATTERS.names()
        if value not in names:
            raise ValueError(f"unknown formatter {value!r}; available: {', '.join(names)}")
        return value


def _default_levels() -> dict[DisclosureLevel, LevelConfig]:
    # Every level searches every tier (the archive's BM25 too, so an exact id or number is
    # found at any level) and shows whole memories; levels differ in how many candidates they
    # weigh and how many tokens they may spend.
    rows = {
        DisclosureLevel.MINIMAL: (3, 50, 50, "full_content", 600),
        DisclosureLevel.STANDARD: (5, 100, 100, "full_content", 2000),
        DisclosureLevel.DETAILED: (5, 100, 100, "full_content", 3000),
        DisclosureLevel.COMPREHENSIVE: (5, 150, 150, "full_with_context", 4000),
    }
    return {
        level: LevelConfig(
            hot_items=hot,
            warm_items=warm,
            cold_search=True,
            cold_items=cold,
            formatter=fmt,
            max_tokens=tokens,
        )
        for level, (hot, warm, cold, fmt, tokens) in rows.items()
    }


class BudgetLearningConfig(_Section):
    """How the adaptive budget learns from feedback (see ``disclosure.core.pipeline.budget``)."""

    enabled: bool = True
    history: int = Field(default=2000, gt=0)
    min_observations: int = Field(default=10, ge=1)
    threshold: float = Field(default=0.014, gt=0.0, lt=1.0)
    l2: float = Field(default=1.0, gt=0.0)
    probe_every: int = Field(default=8, ge=0)
    pool_levels: bool = True
    path: str | None = Field(default=None, min_length=1)


# The spending model's weights (``budget.need.weights``), fitted on two kinds of history and
# checked across them by ``python -m benchmarks.fit_spend``; ``bias`` is the intercept.
# The spending model's weights (``budget.need.weights``), fitted on both dev sets and checked
# across them by ``python -m benchmarks.fit_spend``; ``bias`` is the intercept.
NEED_WEIGHTS: dict[str, float] = {
    "bias": -0.398,
    "share": 0.871,
    "rest": -1.08,
    "budget": 0.639,
    "leader": 0.298,
    "runner_up": -0.145,
    "mass": -0.082,
    "sessions": 0.426,
    "enumeration": -0.527,
    "gathers": -0.31,
    "temporal": 0.295,
    "one_named": 0.137,
    "two_named": -0.566,
    "words": 0.646,
    "enumeration_budget": -0.009,
    "gathers_budget": -0.162,
    "temporal_budget": 0.135,
    "one_named_budget": -0.071,
    "two_named_budget": -0.243,
    "words_budget": -0.072,
    "leader_budget": 0.15,
    "mass_budget": -0.056,
}


def _need_weights() -> dict[str, float]:
    return dict(NEED_WEIGHTS)


class NeedConfig(_Section):
    """Spending by need (``disclosure.core.pipeline.spend``): once the candidates are ranked, a
    fitted model predicts what share of what they can give each budget holds, from the shape of
    their chances and the question's form; the budget is the one with the most predicted share
    less ``price`` per thousand tokens, within the level's ceiling. Applies while the budget has
    not learned a use model from feedback and no budget was given, below the comprehensive level
    and unless the query says how much it wants (an override phrase); off (``enabled: false``),
    and where it does not apply, the budget starts at ``default x (0.5 + complexity)``.
    ``gather_min``: a question that asks for a set or a count ("which cities ...", "how many
    ...") gets at least this many tokens (within the level's ceiling; 0: what the model says),
    for a profile that would rather have all of a gathered answer than the fewest tokens.
    ``reckoning_price``: a question that reckons time across events ("how many days passed
    between ...", "how long had I ...", "in what order ...") is priced at this share of
    ``price`` (1: like any other), since its answer needs every event it reckons with."""

    enabled: bool = True
    price: float = Field(default=0.12, gt=0.0, le=10.0)
    gather_min: int = Field(default=0, ge=0)
    reckoning_price: float = Field(default=0.7, gt=0.0, le=1.0)
    weights: dict[str, float] = Field(default_factory=_need_weights)

    @field_validator("weights")
    @classmethod
    def _known_features(cls, value: dict[str, float]) -> dict[str, float]:
        valid = ("bias", *NEED_FEATURES)
        unknown = sorted(set(value) - set(valid))
        if unknown:
            raise ValueError(f"unknown feature {unknown[0]!r}; valid: {', '.join(sorted(valid))}")
        if not all(math.isfinite(weight) for weight in value.values()):
            raise ValueError("weights must be finite numbers")
        return {name: value.get(name, 0.0) for name in valid}


class BudgetConfig(_Section):
    """Token budget bounds, and the share of the model's context window kept for its reply."""

    default: int = Field(default=1600, gt=0)
    min: int = Field(default=100, gt=0)
    max: int = Field(default=4000, gt=0)
    context_window: int = Field(default=16_384, gt=0)
    reply_share: float = Field(default=0.5, gt=0.0, lt=1.0)
    adaptive: bool = True
    learning: BudgetLearningConfig = BudgetLearningConfig()
    need: NeedConfig = NeedConfig()

    @model_validator(mode="after")
    def _ordered(self) -> BudgetConfig:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        if not self.min <= self.default <= self.max:
            raise ValueError(
                f"default ({self.default}) must lie between min ({self.min}) and max ({self.max})"
            )
        return self


class ExpansionConfig(_Section):
    """The auto-expansion thresholds, on scores normalised to [0, 1]."""

    high_confidence: float = Field(default=0.92, ge=0.0, le=1.0)
    clear_winner: float = Field(default=0.85, ge=0.0, le=1.0)
    clear_winner_gap: float = Field(default=0.10, ge=0.0, le=1.0)
    ambiguity: float = Field(default=0.80, ge=0.0, le=1.0)
    max_auto_expansions: int = Field(default=3, ge=0)
    timeline_window: int = Field(default=1, ge=0)


def _default_weights() -> dict[str, float]:
    return {"hot": 1.0, "active": 0.5, "warm": 1.0, "cold": 1.0}


# The ranking model's weights (``fusion.learned``), fitted on two kinds of history and checked
# across them by ``python -m benchmarks.fit_spend`` (as ``benchmarks.fit_ranker`` does, with the
# answer_label feature); ``bias`` is the intercept.
LEARNED_WEIGHTS: dict[str, float] = {
    "bias": -2.465,
    "lexical": 1.407,
    "vector": 0.238,
    "lexical_rank": 0.508,
    "vector_rank": 0.624,
    "session": 1.781,
    "named_speaker": 0.519,
    "other_speaker": -2.858,
    "assistant_unasked": -2.69,
    "assistant_asked": 0.077,
    "in_time_range": 1.565,
    "recent": 0.036,
    "answer_label": 1.338,
}


def _learned_weights() -> dict[str, float]:
    return dict(LEARNED_WEIGHTS)


class FusionConfig(_Section):
    """How the tiers' lists become one ranking (reciprocal rank fusion,
    ``disclosure.core.pipeline.fusion``).

    ``weights`` per list: ``hot`` (the working set's matches), ``active`` (the working set's
    recent and important items, taken when the hot matches fall short), ``warm`` (vectors) and
    ``cold`` (the archive's BM25). ``participant_prior`` < 1 favours what a participant said
    when the query names exactly one (everyone else's fused values are multiplied by it);
    ``strip_participants`` removes participants' names from the queries the tiers see (a name
    is in every turn of its speaker, so it only blurs the match; the prior handles "who").
    ``session_boost`` lifts the sessions that hold the best hits: with the ``session_boost_top``
    best candidates' fused values summed per session, each memory's value is multiplied by
    ``1 + session_boost x its session's sum / the largest sum`` (0 turns it off).
    ``entity_boost`` favours memories that name what the query names (files, symbols, ids,
    tickets, URLs): a memory naming a share s of the query's entities is multiplied by
    ``1 + entity_boost x s``.

    ``method``: ``learned`` (the default) ranks by a model of the chance that a memory answers
    the query, from the lists' scores and ranks, the session, who spoke and when
    (``disclosure.core.pipeline.ranking``; its weights are ``learned``, a feature left out weighs
    0); ``rrf`` is reciprocal rank fusion with ``weights``, ``rrf_k`` and the session boost. The
    participant prior and the entity boost apply to both. ``token_cost``: candidates are packed
    by their chance of use per token raised to this power (0: by chance alone; 1: per token), so
    one long memory does not crowd out several short ones that are as likely to answer.
    ``min_chance``: with ``learned``, candidates the model gives a lower chance are not
    disclosed, so a small history is not handed over whole when little of it bears on the query
    (applied when both the vector and the BM25 lists answered). ``relative_chance``: nor are
    candidates whose chance is below this share of the best candidate's, so a query with a sure
    answer stops early while one whose candidates look alike fills its budget (same condition).
    ``gather_floor_scale``: for a question that asks for a set or a count, both floors are
    multiplied by this (1: as for any question; 0: no floor), so evidence spread thin over many
    sessions, each piece of it unlikely on its own, is not cut before the budget is spent.
    ``cover_alternatives``: for a question that weighs two things (``which came first, A or
    B?``), each side's best match by the archive's BM25 is raised to the leader's chance, so the
    evidence of both is packed (``disclosure.core.pipeline.alternatives``).
    """

    method: Literal["learned", "rrf"] = "learned"
    learned: dict[str, float] = Field(default_factory=_learned_weights)
    token_cost: float = Field(default=0.5, ge=0.0, le=2.0)
    min_chance: float = Field(default=0.003, ge=0.0, lt=1.0)
    relative_chance: float = Field(default=0.01, ge=0.0, lt=1.0)
    rrf_k: int = Field(default=60, ge=0)
    weights: dict[str, float] = Field(default_factory=_default_weights)
    participant_prior: float = Field(default=1.0, gt=0.0, le=1.0)
    strip_participants: bool = True
    session_boost: float = Field(default=0.0, ge=0.0, le=10.0)
    session_boost_top: int = Field(default=10, ge=1)
    entity_boost: float = Field(default=0.0, ge=0.0, le=10.0)
    gather_items: int = Field(default=50, ge=0)
    gather_floor_scale: float = Field(default=1.0, ge=0.0, le=1.0)
    cover_alternatives: bool = True

    @field_validator("weights")
    @classmethod
    def _known_lists(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(_default_weights()))
        if unknown:
            raise ValueError(f"unknown list {unknown[0]!r}; valid: active, cold, hot, warm")
        if any(weight < 0 for weight in value.values()):
            raise ValueError("weights must not be negative")
        return {**_default_weights(), **value}

    @field_validator("learned")
    @classmethod
    def _known_features(cls, value: dict[str, float]) -> dict[str, float]:
        valid = ("bias", *FEATURES)
        unknown = sorted(set(value) - set(valid))
        if unknown:
            raise ValueError(f"unknown feature {unknown[0]!r}; valid: {', '.join(sorted(valid))}")
        if not all(math.isfinite(weight) for weight in value.values()):
            raise ValueError("weights must be finite numbers")
        return {name: value.get(name, 0.0) for name in valid}


class FeedbackConfig(_Section):
    """When a reply counts as having used a disclosed item
    (``disclosure.core.pipeline.feedback``)."""

    min_overlap: float = Field(default=0.3, gt=0.0, le=1.0)
    min_shared_words: int = Field(default=3, ge=1)


class CacheLimits(_Section):
    """How long one cache keeps an entry, and how many it keeps."""

    ttl_seconds: float = Field(gt=0)
    max_items: int = Field(gt=0)


class CacheConfig(_Section):
    """The disclose pipeline's caches (``disclosure.core.pipeline.caches``): ``index``, a query's
    fused candidates; ``timeline``, a hit's neighbours; ``detail``, a memory rendered in full."""

    enabled: bool = True
    index: CacheLimits = CacheLimits(ttl_seconds=60, max_items=100)
    timeline: CacheLimits = CacheLimits(ttl_seconds=300, max_items=500)
    detail: CacheLimits = CacheLimits(ttl_seconds=1800, max_items=200)


class Profile(_Section):
    """A complete, validated policy. Build with :func:`load_profile`."""

    name: str = Field(default="default", min_length=1)
    description: str = ""
    tokens: TokenConfig = TokenConfig()
    levels: dict[DisclosureLevel, LevelConfig] = Field(default_factory=_default_levels)
    budget: BudgetConfig = BudgetConfig()
    expansion: ExpansionConfig = ExpansionConfig()
    fusion: FusionConfig = FusionConfig()
    feedback: FeedbackConfig = FeedbackConfig()
    caches: CacheConfig = CacheConfig()
    citations: CitationConfig = CitationConfig()
    formatting: FormattingConfig = FormattingConfig()
    analyzer: AnalyzerConfig = AnalyzerConfig()
    tiers: TiersConfig = TiersConfig()
    isolation: IsolationConfig = IsolationConfig()
    middleware: MiddlewareConfig = MiddlewareConfig()
    service: ServiceConfig = ServiceConfig()
    consolidation: ConsolidationConfig = ConsolidationConfig()

    @model_validator(mode="after")
    def _every_level(self) -> Profile:
        missing = [level.value for level in DisclosureLevel if level not in self.levels]
        if missing:
            raise ValueError(f"levels: missing {', '.join(missing)} (all four levels are needed)")
        return self

    def level(self, level: DisclosureLevel | str) -> LevelConfig:
        return self.levels[DisclosureLevel.parse(level)]

    def to_yaml(self) -> str:
        """The resolved profile as YAML (what ``disclosure profiles show`` prints)."""
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


# -- loading ------------------------------------------------------------------------------------


def builtin_profile_dir() -> Path:
    """Where the built-in profiles live: inside the installed package, else the repository."""
    packaged = importlib.resources.files("disclosure") / "_builtin_profiles"
    if packaged.is_dir():
        return Path(str(packaged))
    repository = Path(__file__).resolve().parents[2] / "configs" / "profiles"
    if repository.is_dir():
        return repository
    raise ProfileError("this installation has lost its built-in profiles; reinstall the package")


def builtin_profiles() -> list[str]:
    """Names of the built-in profiles, sorted."""
    return sorted(p.stem for p in builtin_profile_dir().iterdir() if p.suffix in PROFILE_SUFFIXES)


def load_profile(source: str | Path | Profile) -> Profile:
    """A profile from a built-in name, a YAML path, or an already-built Profile."""
    if isinstance(source, Profile):
        return source
    path = _resolve(source, relative_to=None)
    defaults = Profile().model_dump(mode="json", exclude={"name", "description"})
    return _validate(path, _merge(defaults, _read_chain(path, ())))


def _resolve(source: str | Path, *, relative_to: Path | None) -> Path:
    text = str(source)
    looks_like_path = isinstance(source, Path) or "/" in text or text.endswith(PROFILE_SUFFIXES)
    if looks_like_path:
        path = Path(text).expanduser()
        if relative_to is not None and not path.is_absolute():
            path = relative_to / path
        if not path.is_file():
            raise ProfileError(f"{path}: no such profile file")
        return path
    if relative_to is not None:  # a sibling file wins over a built-in of the same name
        for suffix in PROFILE_SUFFIXES:
            sibling = relative_to / f"{text}{suffix}"
            if sibling.is_file():
                return sibling
    for suffix in PROFILE_SUFFIXES:
        candidate = builtin_profile_dir() / f"{text}{suffix}"
        if candidate.is_file():
            return candidate
    raise ProfileError(
        f"unknown profile {text!r}; built-in: {', '.join(builtin_profiles())} "
        f"(or give the path of a YAML file)"
    )


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = load_yaml(path) or {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ProfileError(f"{path}: {where}{exc.problem or exc}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ProfileError(f"{path}: cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: a profile must be a mapping, not {type(data).__name__}")
    return data


def _read_chain(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    """The raw mapping of ``path`` merged over everything it extends."""
    real = path.resolve()
    if real in seen:
        chain = " -> ".join(str(p) for p in (*seen, real))
        raise ProfileError(f"{path}: extends forms a cycle: {chain}")
    if len(seen) >= _MAX_EXTENDS_DEPTH:
        raise ProfileError(f"{path}: extends nests deeper than {_MAX_EXTENDS_DEPTH} profiles")
    raw = _read_yaml(path)
    raw.setdefault("name", path.stem)
    parent = raw.pop("extends", None)
    if parent is None:
        return raw
    if not isinstance(parent, str) or not parent.strip():
        raise ProfileError(f"{path}: extends: must name a profile or a YAML path")
    try:
        base_path = _resolve(parent, relative_to=path.parent)
    except ProfileError as exc:
        raise ProfileError(f"{path}: extends: {exc}") from None
    base = _read_chain(base_path, (*seen, real))
    base.pop("description", None)  # a description speaks of one file only
    return _merge(base, raw)


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _validate(path: Path, data: dict[str, Any]) -> Profile:
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise ProfileError(f"{path}: {describe_validation_error(exc)}") from None


def iter_profile_files(paths: list[Path]) -> Iterator[Path]:
    """Expand directories into the YAML files they hold (for ``profiles validate``)."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.suffix in PROFILE_SUFFIXES)
        else:
            yield path
