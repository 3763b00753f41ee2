"""The formatter registry: the built-ins by name, configured copies, refused non-formatters."""

from __future__ import annotations

import pytest

from formatters import FORMATTERS
from tiers.errors import RegistryError


def test_builtin_formatter_names_are_known() -> None:
    """The seven built-in formatters and json are named in the formatter registry."""
    assert {
        "summary_only",
        "summary_with_entities",
        "full_content",
        "full_with_context",
        "index",
        "timeline",
        "detail",
        "json",
    } <= set(FORMATTERS.names())


def test_get_formatter_configures_a_copy_and_lists_names_on_a_miss() -> None:
    """get_formatter applies options to a copy; an unknown name lists the available ones."""
    from formatters import FormattingConfig, get_formatter

    plain = get_formatter("timeline")
    tuned = get_formatter("timeline", FormattingConfig(preview_chars=20))
    assert plain is FORMATTERS.get("timeline") and tuned is not plain
    assert tuned.options.preview_chars == 20  # type: ignore[attr-defined]
    with pytest.raises(RegistryError, match=r"unknown formatter 'tabel'; available: detail, "):
        get_formatter("tabel")


def test_a_registered_object_that_is_not_a_formatter_is_refused() -> None:
    """A plug-in without name and render is reported as such when it is asked for."""
    from formatters import get_formatter

    FORMATTERS.register("not-a-formatter", object())
    try:
        with pytest.raises(RegistryError, match="has no name and render"):
            get_formatter("not-a-formatter")
    finally:
        FORMATTERS.unregister("not-a-formatter")
