"""The standard suites of other ecosystems run here, and only their async tests run on
pytest-asyncio's event loop.

The project keeps pytest-asyncio in strict mode (its other async code runs under
``asyncio.run``), and LangChain's standard tests leave their coroutine tests unmarked,
expecting ``asyncio_mode=auto``. This wrapper marks them ``asyncio`` as they are collected, in
this directory alone; it sits inside pytest-asyncio's own wrapper (``trylast``), which then sees
the mark and runs them on its loop.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any

import pytest


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, Any, None]:
    outcome = yield
    made = outcome.get_result()
    for item in made if isinstance(made, list) else [made]:
        if isinstance(item, pytest.Function) and inspect.iscoroutinefunction(item.obj):
            item.add_marker(pytest.mark.asyncio)
