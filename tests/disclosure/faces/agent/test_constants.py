"""What the hooks' thin modules repeat (so that a hook process need not import the modules that
define it) agrees with its source."""

from __future__ import annotations

from pathlib import Path

import pytest

from disclosure import namespaces, service
from disclosure.core.profile_sections import ServiceConfig
from disclosure.faces.agent import hooks, observe, project, transcript, wire
from disclosure.faces.api.models import MAX_CONTENT_CHARS
from disclosure.faces.cli.hook import EVENTS as CLI_EVENTS
from tiers.memory import MemoryKind


def test_the_service_files_and_variables_are_the_services() -> None:
    for name in ("SERVICE_FILE", "LOCK_FILE", "LOG_FILE", "TOKEN_VARIABLE", "NO_SERVICE_VARIABLE"):
        assert getattr(wire, name) == getattr(service, name), name


def test_the_namespace_parts_and_the_data_home_are_the_namespaces(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert project.NAMESPACE_PARTS == namespaces.NAMESPACE_PARTS
    assert project.HOME_VARIABLE == namespaces.HOME_VARIABLE
    monkeypatch.setenv("HOME", str(tmp_path))
    for variables in ({}, {"XDG_DATA_HOME": str(tmp_path / "xdg")},
                      {"TIERED_DISCLOSURE_HOME": "~/memory"}):  # fmt: skip
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        monkeypatch.delenv("TIERED_DISCLOSURE_HOME", raising=False)
        for key, value in variables.items():
            monkeypatch.setenv(key, value)
        assert project.default_root() == namespaces.default_home()


def test_the_limits_and_names_are_the_apis() -> None:
    assert ServiceConfig().max_query_chars == hooks.MAX_QUERY_CHARS
    assert transcript.MAX_TEXT_CHARS == MAX_CONTENT_CHARS
    assert MemoryKind(observe.OBSERVATION_KIND) is MemoryKind.OBSERVATION
    assert set(CLI_EVENTS) == set(hooks.EVENTS)
