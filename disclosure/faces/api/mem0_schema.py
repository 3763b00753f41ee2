"""The answers of the mem0 API as the OpenAPI schema documents them (mem0's shapes).

Fields a request's ``fields`` leaves out are absent, so none is required. Errors carry mem0's
``detail`` (the text its client raises) beside this API's own ``error``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from disclosure.faces.api.models import ErrorBody

__all__ = [
    "Mem0AddResponse",
    "Mem0Entities",
    "Mem0Error",
    "Mem0HistoryEntry",
    "Mem0Memory",
    "Mem0Message",
    "Mem0Page",
    "Mem0Ping",
    "Mem0SearchResponse",
]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Mem0Memory(_Doc):
    id: str | None = Field(default=None, description="opaque: the memory's namespace and id")
    memory: str | None = Field(default=None, description="the text, verbatim")
    user_id: str | None = None
    agent_id: str | None = None
    app_id: str | None = None
    run_id: str | None = None
    session_id: str | None = Field(default=None, description="the run_id, as mem0 lists it")
    metadata: dict[str, Any] | None = None
    categories: list[str] | None = Field(default=None, description="always empty here")
    immutable: bool | None = None
    expiration_date: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    score: float | None = Field(default=None, description="search results: relevance in [0, 1]")


class Mem0Added(_Doc):
    id: str
    memory: str
    data: dict[str, str]
    event: str = Field(description="ADD, UPDATE, or NONE (already stored)")


class Mem0AddResponse(_Doc):
    results: list[Mem0Added]
    status: str = Field(description="SUCCEEDED: stored when the call returns")
    message: str


class Mem0SearchResponse(_Doc):
    results: list[Mem0Memory]


class Mem0Page(_Doc):
    count: int
    next: str | None
    previous: str | None
    results: list[Mem0Memory]


class Mem0HistoryEntry(_Doc):
    id: str
    memory_id: str
    input: list[dict[str, str]]
    old_memory: str | None
    new_memory: str
    event: str
    user_id: str | None
    agent_id: str | None
    app_id: str | None
    session_id: str | None
    categories: list[str]
    metadata: dict[str, Any] | None
    created_at: str
    updated_at: str


class Mem0Message(_Doc):
    message: str
    count: int | None = Field(default=None, description="how many memories were deleted")


class Mem0Ping(_Doc):
    status: str
    org_id: str = Field(description="the tenant the key works in (mem0's org and project)")
    project_id: str
    user_email: str | None = None


class Mem0Entity(_Doc):
    id: str
    name: str
    type: str = Field(description="user, agent, app or run")
    owner: str
    created_at: str
    updated_at: str
    metadata: dict[str, Any] | None = None
    total_memories: int


class Mem0Entities(_Doc):
    count: int
    next: str | None
    previous: str | None
    results: list[Mem0Entity]
    total_users: int
    total_agents: int
    total_apps: int
    total_runs: int


class Mem0Error(_Doc):
    detail: str | None = Field(default=None, description="what mem0's client raises")
    error: ErrorBody
