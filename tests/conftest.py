"""Fixtures every test directory may use: the session's real PostgreSQL (started on first use
only, so a run that needs none starts none)."""

from tests.tiers.conftest_pg import (  # noqa: F401 - fixtures are found by name
    backend,
    pg_server,
    pg_url,
)
