"""mem0's filter grammar (``filters`` of its v2/v3 search and list calls) over our memories.

A filter is a JSON object: ``{"user_id": "alice"}``, several keys at once (all must hold),
``{"AND": [...]}``, ``{"OR": [...]}``, ``{"NOT": [...]}``, and per field either a value, the
wildcard ``"*"`` (any non-null value) or operators ``{"in": [...]}``, ``eq``, ``ne``, ``gt``,
``gte``, ``lt``, ``lte``, ``contains``, ``icontains``. Fields: the entity ids ``user_id``,
``agent_id``, ``app_id``, ``run_id``; ``created_at`` and ``updated_at`` (ISO dates or times, or
Unix seconds; a bare date covers its whole day); ``metadata`` (``{"metadata": {"key": value}}``,
a condition per key).

``user_id`` names the namespace (its ``user`` part), and so does ``run_id`` when the profile
isolates conversations: such a value must be pinned, an equality that holds for the whole
filter (at the top, or inside ``AND``), so that one request reads one namespace. ``user_id``
inside ``OR``/``NOT``, in a list or as ``"*"`` would read several users' memories, which are
kept apart, and is refused. ``categories`` (assigned by mem0's model) are refused too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from disclosure.faces.api.errors import ApiError

__all__ = [
    "ENTITY_FIELDS",
    "Condition",
    "Filter",
    "MemoryView",
    "Node",
    "invalid",
    "parse_filters",
    "unsupported",
]

ENTITY_FIELDS = ("user_id", "agent_id", "app_id", "run_id")
DATE_FIELDS = ("created_at", "updated_at")
LOGICAL = ("AND", "OR", "NOT")
OPERATORS = frozenset({"eq", "ne", "in", "gt", "gte", "lt", "lte", "contains", "icontains"})
WILDCARD = "*"
MAX_CONDITIONS = 200
MAX_DEPTH = 12
MAX_IN_VALUES = 1000
_DAY = timedelta(days=1)
_MODEL_FIELDS = {
    "categories": "categories are assigned by mem0's model, and this server assigns none",
    "keywords": "give keywords as get_all's own keywords= argument",
}


def invalid(message: str) -> ApiError:
    """A malformed request (400: mem0's client raises it as its ValidationError)."""
    return ApiError(400, "invalid_filters", message)


def unsupported(message: str) -> ApiError:
    """Something mem0 offers that this server does not (400, with what to do instead)."""
    return ApiError(400, "unsupported", message)


@dataclass(frozen=True, slots=True)
class Condition:
    """``field op value``; ``key``: the metadata key for ``field == "metadata"``."""

    field: str
    op: str
    value: Any
    key: str | None = None


@dataclass(frozen=True, slots=True)
class Node:
    """``AND``, ``OR`` or ``NOT`` (none of its children holds) over conditions and nodes."""

    logic: str
    children: tuple[Condition | Node, ...]


@dataclass(frozen=True, slots=True)
class MemoryView:
    """What a filter looks at in one memory, in mem0's terms (None: no such entity)."""

    user_id: str | None
    agent_id: str | None
    app_id: str | None
    run_id: str | None
    created_at: datetime
    metadata: Mapping[str, Any]
    updated_at: Callable[[], datetime]


@dataclass(frozen=True)
class Filter:
    """A parsed filter: the namespace values it pins and the test every memory must pass."""

    root: Condition | Node
    user_id: str | None = None  # pinned: the namespace's user (None: none named)
    run_id: str | None = None  # pinned run_id (an equality that holds for the whole filter)
    pinned: frozenset[Condition] = field(default_factory=frozenset)

    @property
    def narrows(self) -> bool:
        """Whether it asks more than the pinned entity values (so search must look deeper)."""
        return bool(_conditions(self.root) - self.pinned)

    def matches(self, memory: MemoryView) -> bool:
        """Whether ``memory`` (of the namespace the pins name) passes."""
        return _holds(self.root, memory, self.pinned)


def parse_filters(raw: Any, *, run_is_namespace: bool) -> Filter:
    """``raw`` as a :class:`Filter`; a malformed one is :func:`invalid`, one this server cannot
    honour :func:`unsupported`. ``run_is_namespace``: run_id names a namespace part."""
    if not isinstance(raw, Mapping) or not raw:
        raise invalid(
            'filters must be a non-empty object naming at least one entity, e.g. {"user_id": '
            '"alice"}'
        )
    root = _node(raw, depth=0, budget=[MAX_CONDITIONS])
    conditions = _conditions(root)
    if not any(c.field in ENTITY_FIELDS and c.op != "ne" for c in conditions):
        raise invalid("filters must name at least one of user_id, agent_id, app_id or run_id")
    namespace_fields = ("user_id", "run_id") if run_is_namespace else ("user_id",)
    pins = _pins(root, namespace_fields)
    pinned_run = pins.get("run_id") or _pins(root, ("run_id",), strict=False).get("run_id")
    kept = frozenset(c for c in conditions if c.field in pins and c.op == "eq")
    user = pins.get("user_id")
    return Filter(
        root,
        user_id=user.value if user else None,
        run_id=pinned_run.value if pinned_run else None,
        pinned=kept,
    )


# -- parsing --------------------------------------------------------------------------------------


def _node(raw: Mapping[str, Any], *, depth: int, budget: list[int]) -> Condition | Node:
    if depth > MAX_DEPTH:
        raise invalid(f"filters nest more than {MAX_DEPTH} levels")
    parts: list[Condition | Node] = []
    for key, value in raw.items():
        if key in LOGICAL:
            parts.append(_logical(key, value, depth=depth, budget=budget))
        elif key in ENTITY_FIELDS or key in DATE_FIELDS:
            parts.extend(_field(key, value, budget))
        elif key == "metadata":
            parts.extend(_metadata(value, budget))
        elif key in _MODEL_FIELDS:
            raise unsupported(f"filters: {key}: {_MODEL_FIELDS[key]}")
        else:
            known = ", ".join((*LOGICAL, *ENTITY_FIELDS, *DATE_FIELDS, "metadata"))
            raise invalid(
                f"filters: unknown field {str(key)[:40]!r}; this server filters on {known}"
            )
    return parts[0] if len(parts) == 1 else Node("AND", tuple(parts))


def _logical(key: str, value: Any, *, depth: int, budget: list[int]) -> Node:
    items = [value] if key == "NOT" and isinstance(value, Mapping) else value
    if not isinstance(items, list) or not items:
        raise invalid(f"filters: {key} takes a non-empty list of conditions")
    children = []
    for item in items:
        if not isinstance(item, Mapping) or not item:
            raise invalid(f"filters: each condition in {key} is a non-empty object")
        children.append(_node(item, depth=depth + 1, budget=budget))
    return Node(key, tuple(children))


def _field(name: str, value: Any, budget: list[int]) -> list[Condition]:
    if isinstance(value, Mapping):
        if not value:
            raise invalid(f"filters: {name} has an empty set of operators")
        return [_condition(name, str(op), operand, budget) for op, operand in value.items()]
    if value == WILDCARD:
        return [_spend(Condition(name, "exists", None), budget)]
    return [_condition(name, "eq", value, budget)]


def _metadata(value: Any, budget: list[int]) -> list[Condition]:
    if not isinstance(value, Mapping) or not value:
        raise invalid('filters: metadata takes an object of keys, e.g. {"metadata": {"k": "v"}}')
    found = []
    for key, wanted in value.items():
        ops = wanted if isinstance(wanted, Mapping) and wanted else {"eq": wanted}
        for op, operand in ops.items():
            condition = _condition("metadata", str(op), operand, budget)
            found.append(Condition("metadata", condition.op, condition.value, key=str(key)))
    return found


def _condition(name: str, op: str, operand: Any, budget: list[int]) -> Condition:
    if op not in OPERATORS:
        raise invalid(
            f"filters: {name}: unknown operator {op[:20]!r}; use one of "
            f"{', '.join(sorted(OPERATORS))} or the wildcard '*'"
        )
    if op == "in":
        if not isinstance(operand, list) or not 1 <= len(operand) <= MAX_IN_VALUES:
            raise invalid(f"filters: {name}: 'in' takes a list of 1-{MAX_IN_VALUES} values")
        read = _moment if name in DATE_FIELDS else lambda n, _, v: _scalar(n, v)
        value: Any = tuple(read(name, "eq", v) for v in operand)
    elif name in DATE_FIELDS:
        value = _moment(name, op, operand)
    else:
        value = _scalar(name, operand)
        if op in ("contains", "icontains") and not isinstance(value, str):
            raise invalid(f"filters: {name}: {op} takes a string")
    return _spend(Condition(name, op, value), budget)


def _scalar(name: str, value: Any) -> Any:
    if name in ENTITY_FIELDS:
        if not isinstance(value, str) or not value or len(value) > 300:
            raise invalid(f"filters: {name} takes a string of 1-300 characters")
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise invalid(f"filters: {name}: numbers must be finite")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise invalid(f"filters: {name} compares with a string, number, true/false or null")


def _moment(name: str, op: str, value: Any) -> tuple[datetime, datetime]:
    """A time as the interval it covers: a bare date covers its whole day."""
    if op in ("contains", "icontains"):
        raise invalid(f"filters: {name} takes eq, ne, in, gt, gte, lt or lte")
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise invalid(f"filters: {name} takes an ISO date or time, or Unix seconds")
    try:
        if isinstance(value, int | float):
            instant = datetime.fromtimestamp(value, UTC)
            return instant, instant
        if len(value) == 10:
            day = datetime.combine(date.fromisoformat(value), time(), UTC)
            return day, day + _DAY - timedelta(microseconds=1)
        moment = datetime.fromisoformat(value)
    except (ValueError, OverflowError, OSError):
        raise invalid(f"filters: {name}: {str(value)[:40]!r} is not a date or time") from None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware, aware


def _spend(condition: Condition, budget: list[int]) -> Condition:
    budget[0] -= 1
    if budget[0] < 0:
        raise invalid(f"filters hold more than {MAX_CONDITIONS} conditions")
    return condition


def _conditions(node: Condition | Node) -> set[Condition]:
    if isinstance(node, Condition):
        return {node}
    return set().union(*(_conditions(c) for c in node.children))


def _pins(
    root: Condition | Node, names: Sequence[str], *, strict: bool = True
) -> dict[str, Condition]:
    """The equality each of ``names`` has at the top of the filter (outside OR and NOT).
    ``strict``: those names must appear nowhere else, nor with another operator."""
    pins: dict[str, Condition] = {}
    for given in _top(root):
        if given.field not in names:
            continue
        condition = given
        if given.op == "in" and len(given.value) == 1:
            condition = Condition(given.field, "eq", given.value[0])
        if condition.op != "eq":
            if strict:
                raise _spans_namespaces(condition.field)
            continue
        if condition.field in pins and pins[condition.field].value != condition.value:
            raise invalid(f"filters: {condition.field} is given two different values")
        pins[condition.field] = condition
    if strict:
        nested = _conditions(root) - set(_top(root))
        for condition in nested:
            if condition.field in names:
                raise _spans_namespaces(condition.field)
    return pins


def _top(node: Condition | Node) -> list[Condition]:
    """The conditions that must all hold: the root's, and those of ANDs directly under it."""
    if isinstance(node, Condition):
        return [node]
    if node.logic != "AND":
        return []
    return [c for child in node.children for c in _top(child)]


def _spans_namespaces(name: str) -> ApiError:
    what = "user" if name == "user_id" else "run (this server keeps each run apart)"
    return unsupported(
        f"filters: {name} must be one value that holds for the whole filter (at the top or "
        f"inside AND): each {what} has its own store here, and one request reads one of them; "
        "OR, NOT, lists and '*' over it would read several"
    )


# -- evaluation -----------------------------------------------------------------------------------


def _holds(node: Condition | Node, memory: MemoryView, pinned: frozenset[Condition]) -> bool:
    if isinstance(node, Condition):
        return node in pinned or _test(node, memory)  # a pin chose the namespace itself
    results = (_holds(child, memory, pinned) for child in node.children)
    if node.logic == "AND":
        return all(results)
    if node.logic == "OR":
        return any(results)
    return not any(results)


def _test(condition: Condition, memory: MemoryView) -> bool:
    if condition.field == "metadata":
        present = condition.key in memory.metadata
        actual = memory.metadata.get(condition.key or "")
        return _compare(condition.op, actual, condition.value, present=present)
    if condition.field in DATE_FIELDS:
        moment = memory.created_at if condition.field == "created_at" else memory.updated_at()
        return _within(condition.op, moment, condition.value)
    actual = getattr(memory, condition.field)
    return _compare(condition.op, actual, condition.value, present=actual is not None)


def _compare(op: str, actual: Any, wanted: Any, *, present: bool) -> bool:
    if op == "exists":
        return present and actual is not None
    if op == "eq":
        return present and _same(actual, wanted)
    if op == "ne":
        return not (present and _same(actual, wanted))
    if op == "in":
        return present and any(_same(actual, w) for w in wanted)
    if op in ("contains", "icontains"):
        return _contains(actual, wanted, fold=op == "icontains")
    return _ordered(op, actual, wanted)


def _same(actual: Any, wanted: Any) -> bool:
    if isinstance(actual, bool) != isinstance(wanted, bool):
        return False
    return bool(actual == wanted)


def _contains(actual: Any, wanted: str, *, fold: bool) -> bool:
    if isinstance(actual, str):
        return wanted.casefold() in actual.casefold() if fold else wanted in actual
    if isinstance(actual, list):
        items = [a for a in actual if isinstance(a, str)]
        return any((a.casefold() == wanted.casefold()) if fold else a == wanted for a in items)
    return False


def _ordered(op: str, actual: Any, wanted: Any) -> bool:
    numbers = (int, float)
    comparable = (
        isinstance(actual, numbers)
        and isinstance(wanted, numbers)
        and not isinstance(actual, bool)
        and not isinstance(wanted, bool)
    ) or (isinstance(actual, str) and isinstance(wanted, str))
    if not comparable:
        return False
    if op == "gt":
        return bool(actual > wanted)
    if op == "gte":
        return bool(actual >= wanted)
    if op == "lt":
        return bool(actual < wanted)
    return bool(actual <= wanted)


def _within(op: str, moment: datetime, bounds: Any) -> bool:
    if op == "in":
        return any(_within("eq", moment, b) for b in bounds)
    start: datetime = bounds[0]
    end: datetime = bounds[1]
    if op == "eq":
        return start <= moment <= end
    if op == "ne":
        return not start <= moment <= end
    if op == "gt":
        return moment > end
    if op == "gte":
        return moment >= start
    if op == "lt":
        return moment < start
    return moment <= end
