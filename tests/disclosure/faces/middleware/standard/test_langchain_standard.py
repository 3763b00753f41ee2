"""LangChain's own standard tests (``langchain-tests``) for :class:`DisclosureRetriever`.

Of its suites only the retrievers' fits an adapter here: ``with_memory`` and
``memory_injector`` are Runnables around a model, not chat models, tools, embeddings or stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed")
standard = pytest.importorskip(
    "langchain_tests.integration_tests", reason="langchain-tests (the dev extra) is not installed"
)

from disclosure import ControllerPool  # noqa: E402
from disclosure.faces.middleware.langchain import DisclosureRetriever  # noqa: E402
from disclosure.sample import load_sample_conversation  # noqa: E402

_POOL: list[ControllerPool] = []


@pytest.fixture(scope="module", autouse=True)
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControllerPool]:
    """A real store holding the sample conversation for Dana (the suite builds retrievers from
    constructor parameters, so the pool is handed over through this module)."""
    with ControllerPool("default", root=tmp_path_factory.mktemp("lc-standard")) as made:
        with made.lease(made.namespace(user="dana")) as controller:
            controller.ingest(load_sample_conversation())
        _POOL.append(made)
        yield made
        _POOL.clear()


class TestDisclosureRetrieverStandard(standard.RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[DisclosureRetriever]:
        return DisclosureRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": _POOL[0], "namespace": {"user": "dana"}, "level": "detailed"}

    @property
    def retriever_query_example(self) -> str:
        return "Which database did we pick for billing, and who migrates it?"
