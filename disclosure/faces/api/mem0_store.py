"""What the mem0 API does in the stores: the namespaces a key reaches, search, list, history,
delete and the entities (users, agents, apps, runs) memories are kept for.

Each request reads one namespace (see :mod:`disclosure.faces.api.mem0_filters`); only deletes and
the entity listing, which mem0 scopes to the whole project, walk every stored namespace of the
key's tenant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from disclosure.core.workflow import ranked
from disclosure.faces.api.errors import ApiError
from disclosure.faces.api.mem0_filters import Filter, parse_filters
from disclosure.faces.api.mem0_records import (
    RESERVED_METADATA,
    BatchItem,
    UpdateBody,
    check_metadata,
    decode_id,
    entity,
    record,
    view,
)
from disclosure.faces.memories import MemoryBook
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import DEFAULT_PART, Namespace, iter_namespaces
from tiers.errors import MemoryNotFoundError, NamespaceError
from tiers.memory import Memory

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController
    from disclosure.faces.api.keys import Grant

__all__ = [
    "EntityTally",
    "Scope",
    "apply_update",
    "delete_where",
    "existing",
    "forget_matching",
    "history",
    "listing",
    "search",
    "updated",
]

MAX_DEPTH = 1000  # candidates a filtered search weighs
NARROW_DEPTH = 200
_WALK = 1000  # memories read a page at a time by a list


class Scope:
    """The namespaces one request's key reaches: its tenant's (``default`` when the key is not
    limited to one), the user and run the request names."""

    def __init__(self, pool: ControllerPool, grant: Grant | None) -> None:
        self.pool = pool
        self.grant = grant
        scope = pool.profile.isolation.scope
        self.run_is_namespace = "conversation" in scope
        self.has_tenant = "tenant" in scope
        self.tenant = grant.tenant if grant is not None and grant.tenant else None

    @property
    def tenant_name(self) -> str:
        """The tenant as mem0's org and project."""
        return self.tenant or DEFAULT_PART

    def namespace(self, user: str | None, run: str | None, *, write: bool) -> Namespace:
        """The namespace of ``user`` (and ``run``, when runs are namespaces), checked against
        the key."""
        parts: dict[str, str | None] = {"user": user}
        if self.has_tenant:
            parts["tenant"] = self.tenant
        if self.run_is_namespace:
            parts["conversation"] = run
        if "user" not in self.pool.profile.isolation.scope and user is not None:
            raise NamespaceError(
                "user_id cannot keep memories apart here: this server's profile does not "
                "isolate users (isolation.scope)"
            )
        try:
            namespace = self.pool.namespace({k: v for k, v in parts.items() if v is not None})
        except NamespaceError as exc:
            if self.has_tenant and self.tenant is None and "tenant" in str(exc):
                raise NamespaceError(
                    f"{exc}: the mem0 API takes the tenant from the API key; use a key limited "
                    "to one tenant (KEY tenant=NAME)"
                ) from None
            raise
        self.authorise(namespace, write=write)
        return namespace

    def authorise(self, namespace: Namespace, *, write: bool) -> None:
        grant = self.grant
        if grant is None or grant.allows(namespace.as_dict().get("tenant"), write=write):
            return
        what = "write to" if write and grant.read_only else "act on"
        raise ApiError(403, "forbidden", f"this API key may not {what} {namespace}")

    def of_id(self, token: str, *, write: bool) -> tuple[Namespace, str]:
        """The namespace and memory id a mem0 id names (checked against the key), and 404 when
        nothing was ever stored there."""
        parts, memory_id = decode_id(token)
        try:
            namespace = self.pool.namespace(parts)
        except NamespaceError:
            raise ApiError(
                400, "invalid_memory_id", "this memory id names no namespace of this server"
            ) from None
        if namespace.as_dict() != parts:
            raise ApiError(400, "invalid_memory_id", "this memory id is not one of this server's")
        self.authorise(namespace, write=write)
        if not self.pool.exists(namespace):
            raise MemoryNotFoundError(f"no memory has the id {token[:60]!r}")
        return namespace, memory_id

    def stored(self, *, user: str | None = None, run: str | None = None) -> list[Namespace]:
        """The stored namespaces of the key's tenant (of ``user``/``run`` when given)."""
        found = []
        for parts, _ in iter_namespaces(self.pool.root):
            if self.has_tenant and parts.get("tenant") != self.tenant_name:
                continue
            if (user is not None and parts.get("user") != user) or (
                run is not None and parts.get("conversation") != run
            ):
                continue
            try:
                namespace = self.pool.namespace(parts)
            except NamespaceError:  # a directory of another profile's scope
                continue
            if namespace.as_dict() == parts:
                found.append(namespace)
        return found


def updated(controller: DisclosureController, memory: Memory) -> datetime:
    """When the memory's current version was written (its time, unless it was updated)."""
    replaced = [v.replaced_at for v in controller.store.versions(memory.id) if v.replaced_at]
    return max(replaced) if replaced else memory.timestamp


def search(
    controller: DisclosureController,
    namespace: Namespace,
    flt: Filter,
    query: str,
    *,
    top_k: int,
    threshold: float | None,
    now: datetime | None,
    run_is_namespace: bool,
) -> list[dict[str, Any]]:
    """The ``top_k`` best matches passing ``flt``, best first, in mem0's shape. A filter that
    narrows the namespace is applied to the best few hundred candidates."""
    depth = max(top_k, NARROW_DEPTH) if flt.narrows else top_k
    depth = min(MAX_DEPTH, depth)
    chosen: list[tuple[str, float]] = []
    for candidate in ranked(controller, query, depth=depth, now=now):
        score = round(candidate.score, 4)
        if threshold is not None and score < threshold:
            continue
        memory = candidate.memory
        stamp = _lazy(controller, memory)
        if flt.narrows and not flt.matches(
            view(memory, namespace, stamp, run_is_namespace=run_is_namespace)
        ):
            continue
        chosen.append((candidate.id, score))
        if len(chosen) == top_k:
            break
    found = {m.id: m for m in controller.store.get([i for i, _ in chosen])}
    return [
        record(
            found[i],
            namespace,
            updated_at=updated(controller, found[i]),
            run_is_namespace=run_is_namespace,
            score=score,
        )
        for i, score in chosen
        if i in found
    ]


def listing(
    controller: DisclosureController,
    namespace: Namespace,
    flt: Filter,
    *,
    keep: Callable[[Memory], bool] | None,
    offset: int,
    size: int,
    session: str | None,
    run_is_namespace: bool,
) -> tuple[int, list[dict[str, Any]]]:
    """How many memories pass ``flt`` (and ``keep``), and those of one page, in time order."""
    everything = not flt.narrows and keep is None
    count, index, page = 0, 0, []
    for memory, total in _walk(controller, session):
        if everything:
            count = total
        else:
            seen = view(
                memory, namespace, _lazy(controller, memory), run_is_namespace=run_is_namespace
            )
            if not flt.matches(seen) or (keep is not None and not keep(memory)):
                continue
            count += 1
        if offset <= index < offset + size:
            page.append(memory)
        index += 1
        if everything and index >= offset + size:
            break
    records = [
        record(m, namespace, updated_at=updated(controller, m), run_is_namespace=run_is_namespace)
        for m in page
    ]
    return count, records


def history(
    controller: DisclosureController, namespace: Namespace, memory_id: str, token: str, *, run: bool
) -> list[dict[str, Any]]:
    """The versions of one memory as mem0's history entries, oldest first."""
    versions = controller.store.versions(memory_id)
    if not versions:
        raise MemoryNotFoundError(f"no memory has the id {token[:60]!r}")
    entries = []
    previous: Memory | None = None
    written = versions[0].memory.timestamp
    for version in versions:
        memory = version.memory
        seen = view(memory, namespace, lambda w=written: w, run_is_namespace=run)
        role = memory.metadata.get("role")
        entries.append(
            {
                "id": f"{token}.{version.version}",
                "memory_id": token,
                "input": (
                    [{"role": role, "content": memory.content}]
                    if previous is None and isinstance(role, str)
                    else []
                ),
                "old_memory": previous.content if previous is not None else None,
                "new_memory": memory.content,
                "event": "ADD" if previous is None else "UPDATE",
                "user_id": seen.user_id,
                "agent_id": seen.agent_id,
                "app_id": seen.app_id,
                "session_id": seen.run_id,
                "categories": [],
                "metadata": dict(seen.metadata) or None,
                "created_at": _iso(written),
                "updated_at": _iso(version.replaced_at or written),
            }
        )
        previous = memory
        written = version.replaced_at or written
    return entries


def forget_matching(
    controller: DisclosureController,
    namespace: Namespace,
    flt: Filter | None,
    *,
    run_is_namespace: bool,
) -> int:
    """Forget every memory of the namespace that passes ``flt`` (None: all); how many."""
    ids = [
        m.id
        for m in controller.store.iter_memories()
        if flt is None
        or flt.matches(view(m, namespace, _lazy(controller, m), run_is_namespace=run_is_namespace))
    ]
    if not ids:
        return 0
    return controller.forget(ids=ids).count


@dataclass
class EntityTally:
    """Memories per entity, with the first and last time of each."""

    kinds: dict[tuple[str, str], list[Any]] = field(default_factory=dict)

    def add(self, kind: str, name: str | None, when: datetime) -> None:
        if name is None:
            return
        entry = self.kinds.setdefault((kind, name), [0, when, when])
        entry[0] += 1
        entry[1], entry[2] = min(entry[1], when), max(entry[2], when)

    def count(self, controller: DisclosureController, namespace: Namespace) -> None:
        parts = namespace.as_dict()
        for memory in controller.store.iter_memories():
            when = (
                memory.timestamp
                if memory.timestamp.tzinfo
                else memory.timestamp.replace(tzinfo=UTC)
            )
            runs = "conversation" in parts
            seen = view(memory, namespace, lambda w=when: w, run_is_namespace=runs)
            self.add("user", entity(parts.get("user")), when)
            self.add("agent", seen.agent_id, when)
            self.add("app", seen.app_id, when)
            self.add("run", seen.run_id, when)

    def results(self, owner: str) -> list[dict[str, Any]]:
        return [
            {
                "id": name,
                "name": name,
                "type": kind,
                "owner": owner,
                "created_at": _iso(first),
                "updated_at": _iso(last),
                "metadata": None,
                "total_memories": count,
            }
            for (kind, name), (count, first, last) in sorted(self.kinds.items())
        ]


def _walk(controller: DisclosureController, session: str | None) -> Iterator[tuple[Memory, int]]:
    """Every memory (of one session) in time order, with the total, a page at a time."""
    cursor = None
    while True:
        page = controller.store.page(session_id=session, cursor=cursor, limit=_WALK)
        for memory in page.memories:
            yield memory, page.total
        cursor = page.cursor
        if cursor is None:
            return


def _lazy(controller: DisclosureController, memory: Memory) -> Callable[[], datetime]:
    return lambda: updated(controller, memory)


def _iso(moment: datetime) -> str:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def existing(controller: Any, memory_id: str, token: str) -> Any:
    found = controller.store.get([memory_id])
    if not found:
        raise MemoryNotFoundError(f"no memory has the id {token[:60]!r}")
    return found[0]


def apply_update(
    controller: Any,
    namespace: Any,
    memory_id: str,
    change: UpdateBody | BatchItem,
    *,
    scope: Scope,
    token: str,
) -> dict[str, Any]:
    """Apply ``change`` (text and/or metadata; this server's own keys are kept)."""
    memory = existing(controller, memory_id, token)
    merged = None
    if change.metadata is not None:
        kept = {k: v for k, v in memory.metadata.items() if k in RESERVED_METADATA}
        merged = {**check_metadata(change.metadata), **kept}
    MemoryBook(controller).update(memory_id, change.text, metadata=merged)
    fresh = existing(controller, memory_id, token)
    return record(
        fresh,
        namespace,
        updated_at=updated(controller, fresh),
        run_is_namespace=scope.run_is_namespace,
    )


def delete_where(pool: ControllerPool, scope: Scope, raw: dict[str, Any]) -> int:
    """Forget what ``raw`` selects. No user_id is the user ``default``; ``"*"`` walks every
    stored user of the tenant; where runs are namespaces, every run of the user unless one is
    named."""
    every_user = raw.get("user_id") == "*"
    every_run = scope.run_is_namespace and raw.get("run_id") == "*"
    rest = {
        k: v
        for k, v in raw.items()
        if not ((k == "user_id" and every_user) or (k == "run_id" and every_run))
    }
    flt = parse_filters(rest, run_is_namespace=scope.run_is_namespace) if rest else None
    user = None if every_user else (flt.user_id if flt and flt.user_id else DEFAULT_PART)
    run = flt.run_id if flt and scope.run_is_namespace else None
    if every_user or (scope.run_is_namespace and run is None):
        targets = scope.stored(user=user, run=run)
    else:
        targets = [scope.namespace(user, run, write=True)]
    count = 0
    for namespace in targets:
        scope.authorise(namespace, write=True)
        if not pool.exists(namespace):
            continue
        with pool.lease(namespace) as controller:
            count += forget_matching(
                controller, namespace, flt, run_is_namespace=scope.run_is_namespace
            )
    return count
