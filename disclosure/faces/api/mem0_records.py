"""mem0's platform API: its request bodies, its memory records and its memory ids.

Entities map onto namespaces and memories without a second naming scheme:

- ``user_id`` is the namespace's ``user`` part; ``run_id`` is the memory's ``session_id`` (and
  the ``conversation`` part too, when the profile isolates conversations); the tenant is the
  one the API key is limited to (``KEY tenant=acme``), else ``default``. Our ``default`` is
  mem0's null: a memory added without a user lives in the user ``default`` and shows
  ``user_id: null`` (likewise a run).
- ``agent_id`` and ``app_id`` are kept on each memory (``metadata["agent_id"]``,
  ``metadata["app_id"]``), so filters can select them within a user's memories.
- A memory's mem0 ``id`` carries its namespace and its id here, so that ``get``, ``update``,
  ``delete`` and ``history``, which mem0's client sends without a user, find the one store that
  holds it: unpadded base64url of ``{"n": {part: value}, "i": id}``. The key must cover that
  namespace's tenant, as for every route.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from disclosure.faces.api.errors import ApiError
from disclosure.faces.api.mem0_filters import MemoryView, invalid
from disclosure.faces.api.models import MAX_CONTENT_CHARS
from disclosure.storage.namespaces import DEFAULT_PART, Namespace
from tiers.memory import Memory

__all__ = [
    "MAX_MEM0_ID_CHARS",
    "RESERVED_METADATA",
    "AddBody",
    "BatchBody",
    "BatchItem",
    "ListBody",
    "Mem0Message",
    "SearchBody",
    "UpdateBody",
    "check_metadata",
    "decode_id",
    "encode_id",
    "entity",
    "record",
    "user_metadata",
    "view",
]

# kept by this server on each memory; a client's own metadata may not use them
RESERVED_METADATA = ("agent_id", "app_id", "role", "source")
MAX_MEM0_ID_CHARS = 2048
EntityId = Annotated[str, Field(min_length=1, max_length=128)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _unicode(value: Any) -> Any:
    for text in _strings(value):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("text must be valid Unicode (no lone surrogates)") from None
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


class Mem0Message(_Body):
    role: str = Field(min_length=1, max_length=32)
    content: str = Field(max_length=MAX_CONTENT_CHARS)
    name: str | None = Field(default=None, min_length=1, max_length=200)

    _text = field_validator("role", "content", "name")(_unicode)


class _Scoped(_Body):
    """The fields every call may carry: org and project (checked against the key's tenant),
    and the API and output versions of older clients (answered in the current shape)."""

    org_id: str | None = Field(default=None, max_length=300)
    project_id: str | None = Field(default=None, max_length=300)
    version: Literal["v1", "v2", "v3"] | None = None
    output_format: Literal["v1.0", "v1.1"] | None = None


class AddBody(_Scoped):
    """``POST /v3/memories/add/``: messages stored verbatim, one memory per message."""

    messages: list[Mem0Message] = Field(min_length=1)
    user_id: EntityId | None = None
    agent_id: EntityId | None = None
    app_id: EntityId | None = None
    run_id: EntityId | None = None
    filters: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    infer: bool | None = None
    timestamp: int | float | None = Field(default=None, ge=-2208988800, le=32503680000)
    observation_datetime: datetime | None = Field(default=None, strict=False)
    expiration_date: str | None = Field(default=None, max_length=40)
    immutable: bool | None = None
    async_mode: bool | None = None
    # extraction by mem0's model: refused when given (see the route)
    custom_instructions: str | None = None
    agent_custom_instructions: str | None = None
    custom_categories: list[Any] | None = None
    includes: str | None = None
    excludes: str | None = None
    enable_graph: bool | None = None
    structured_data_schema: dict[str, Any] | None = None
    prompt_profile_id: str | None = None
    temporal_reasoning: bool | None = None
    timezone: str | None = None
    observation_date: str | None = None

    _checked = field_validator("metadata", "filters")(_unicode)


class SearchBody(_Scoped):
    """``POST /v3/memories/search/``."""

    query: str = Field(min_length=1, max_length=4000)
    filters: dict[str, Any] | None = None
    top_k: int | None = Field(default=None, ge=1, le=1000)
    limit: int | None = Field(default=None, ge=1, le=1000)  # older clients' name for top_k
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    rerank: bool | None = None
    keyword_search: bool | None = None
    filter_memories: bool | None = None
    fields: list[Annotated[str, Field(max_length=64)]] | None = Field(default=None, max_length=64)
    categories: list[str] | None = None
    metadata: dict[str, Any] | None = None
    show_expired: bool | None = None
    latest_only: bool | None = None
    reference_date: int | float | str | None = None
    enable_graph: bool | None = None

    _checked = field_validator("query", "metadata", "filters")(_unicode)


class ListBody(_Scoped):
    """``POST /v3/memories/``: memories in time order, a page at a time."""

    filters: dict[str, Any] | None = None
    page: int | None = Field(default=None, ge=1, le=1_000_000)
    page_size: int | None = Field(default=None, ge=1, le=1000)
    start_date: str | None = Field(default=None, max_length=40)
    end_date: str | None = Field(default=None, max_length=40)
    keywords: str | None = Field(default=None, min_length=1, max_length=1000)
    fields: list[Annotated[str, Field(max_length=64)]] | None = Field(default=None, max_length=64)
    categories: list[str] | None = None
    show_expired: bool | None = None
    latest_only: bool | None = None
    enable_graph: bool | None = None

    _checked = field_validator("filters", "keywords")(_unicode)


class UpdateBody(_Body):
    """``PUT /v1/memories/{id}/``: new text and/or metadata (the old version is kept)."""

    text: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    metadata: dict[str, Any] | None = None
    timestamp: int | float | str | None = None
    expiration_date: str | None = Field(default=None, max_length=40)

    _checked = field_validator("text", "metadata")(_unicode)


class BatchItem(_Body):
    memory_id: str = Field(min_length=1, max_length=MAX_MEM0_ID_CHARS)
    text: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    metadata: dict[str, Any] | None = None

    _checked = field_validator("text", "metadata")(_unicode)


class BatchBody(_Body):
    """``PUT``/``DELETE /v1/batch/``: up to 1000 memories at once."""

    memories: list[BatchItem] = Field(min_length=1, max_length=1000)


def encode_id(namespace: Namespace, memory_id: str) -> str:
    """The mem0 id of a memory: its namespace and id, unpadded base64url JSON."""
    payload = json.dumps({"n": namespace.as_dict(), "i": memory_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def decode_id(token: str) -> tuple[dict[str, str], str]:
    """The namespace parts and memory id a mem0 id names; 400 for anything else."""
    problem = ApiError(
        400,
        "invalid_memory_id",
        f"{token[:60]!r} is not a memory id of this server: use the id fields its answers give",
    )
    if not token or len(token) > MAX_MEM0_ID_CHARS:
        raise problem
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise problem from None
    parts, memory_id = (data.get("n"), data.get("i")) if isinstance(data, dict) else (None, None)
    if (
        not isinstance(parts, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in parts.items())
        or not isinstance(memory_id, str)
        or not memory_id
    ):
        raise problem
    return parts, memory_id


def entity(value: str | None) -> str | None:
    """mem0's view of a namespace part or session: ``default`` is null."""
    return None if value is None or value == DEFAULT_PART else value


def user_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A memory's metadata as its client gave it (without the keys this server keeps)."""
    return {k: v for k, v in metadata.items() if k not in RESERVED_METADATA}


def view(
    memory: Memory, namespace: Namespace, updated_at: Any, *, run_is_namespace: bool
) -> MemoryView:
    """What mem0's filters see of ``memory`` (``updated_at``: a callable, read on demand)."""
    parts = namespace.as_dict()
    run = parts.get("conversation") if run_is_namespace else memory.session_id
    agent, app = memory.metadata.get("agent_id"), memory.metadata.get("app_id")
    return MemoryView(
        user_id=entity(parts.get("user")),
        agent_id=agent if isinstance(agent, str) else None,
        app_id=app if isinstance(app, str) else None,
        run_id=entity(run),
        created_at=_aware(memory.timestamp),
        metadata=user_metadata(memory.metadata),
        updated_at=updated_at,
    )


def record(
    memory: Memory,
    namespace: Namespace,
    *,
    updated_at: datetime,
    run_is_namespace: bool,
    score: float | None = None,
) -> dict[str, Any]:
    """``memory`` as mem0's platform shows a memory (``score``: a search result)."""
    seen = view(memory, namespace, lambda: updated_at, run_is_namespace=run_is_namespace)
    found: dict[str, Any] = {
        "id": encode_id(namespace, memory.id),
        "memory": memory.content,
        "user_id": seen.user_id,
        "agent_id": seen.agent_id,
        "app_id": seen.app_id,
        "run_id": seen.run_id,
        "session_id": seen.run_id,  # mem0's list and get name it so; its search run_id
        "metadata": dict(seen.metadata) or None,
        "categories": [],
        "immutable": False,
        "expiration_date": None,
        "created_at": seen.created_at.isoformat(),
        "updated_at": _aware(updated_at).isoformat(),
    }
    if score is not None:
        found["score"] = score
    return found


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """A client's metadata, refused if it uses a key this server keeps itself."""
    given = dict(metadata or {})
    taken = sorted(set(given) & set(RESERVED_METADATA))
    if taken:
        raise invalid(
            f"metadata key {taken[0]!r} is kept by this server (agent_id and app_id are "
            "arguments of their own; role and source say where a memory came from)"
        )
    return given
