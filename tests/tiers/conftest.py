"""Fixtures for the tier tests. Each tier keeps its fixtures in its own module, re-exported here
(``pytest_plugins`` is only allowed in the rootdir's conftest)."""

from tests.tiers.conftest_warm import (  # noqa: F401 - fixtures are found by name
    onnx_cache_dir,
    onnx_embedder,
    st_embedder,
)
