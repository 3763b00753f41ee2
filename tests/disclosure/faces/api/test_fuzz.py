"""A schema-driven fuzz of the HTTP API (schemathesis): no input makes it answer 500.

The default suite runs a bounded smoke pass; ``pytest -m slow`` runs many more examples per
operation. Both use the lean profile (no warm tier: the fuzz is about the API, and every new
namespace it invents opens a store). The schema is loaded eagerly (schemathesis's lazy
``from_fixture`` does not work with pytest 9); the store's root is only created by requests.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from disclosure import ControllerPool  # noqa: E402
from disclosure.faces.api import create_app  # noqa: E402
from tests.disclosure.conftest import make_lean_profile  # noqa: E402

SMOKE_EXAMPLES = 8
# No 500s, and every answer is documented: its status, content type and body schema. (The
# positive/negative data checks are left out: some valid-looking values are refused on
# purpose, such as namespace parts with invisible characters.)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
SLOW_EXAMPLES = 150
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
ROOT = Path(tempfile.gettempdir()) / f"disclosure-fuzz-{uuid.uuid4().hex}"  # made on first use
POOL = ControllerPool(make_lean_profile(), root=ROOT)
schema = schemathesis.openapi.from_asgi(
    "/openapi.json", create_app(pool=POOL, allowed_hosts=["testserver"])
)


@pytest.fixture(scope="module", autouse=True)
def _clean_up() -> Iterator[None]:
    # open one store first: the first open in a process imports the heavy libraries, which on a
    # loaded machine can outlast schemathesis's 10 s read timeout for whichever request is first
    with POOL.lease(POOL.namespace(user="warm-up")):
        pass
    yield
    POOL.close()
    shutil.rmtree(ROOT, ignore_errors=True)


@schema.parametrize()
@settings(max_examples=SMOKE_EXAMPLES, deadline=None, suppress_health_check=_SUPPRESSED)
def test_no_input_makes_the_api_fail(case: Any) -> None:
    """Smoke: a few generated requests per operation; none answers 500 or off-schema."""
    case.call_and_validate(checks=CHECKS)


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=SLOW_EXAMPLES, deadline=None, suppress_health_check=_SUPPRESSED)
def test_no_input_makes_the_api_fail_thoroughly(case: Any) -> None:
    """Many generated requests per operation; none answers 500 or off-schema."""
    case.call_and_validate(checks=CHECKS)
