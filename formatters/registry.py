"""The formatter registry: the built-in formatters by name, and plug-ins.

Built-ins are imported on first use. Third parties add theirs with ``FORMATTERS.register(name,
obj)`` (or as a decorator) or through the ``tiered_disclosure.formatters`` entry-point group
(:mod:`tiers.registry` says how plug-ins load and how to switch that off).
"""

from __future__ import annotations

from formatters.base import ConfigurableFormatter, Formatter
from formatters.config import FormattingConfig
from tiers.errors import RegistryError
from tiers.registry import Registry

BUILTIN_FORMATTERS = {
    name: f"formatters.builtin:{name}"
    for name in (
        "summary_only",
        "summary_with_entities",
        "full_content",
        "full_with_context",
        "index",
        "timeline",
        "detail",
        "json",
    )
}

#: The formatter registry. Third parties add theirs with ``FORMATTERS.register(name, obj)`` (or
#: as a decorator) or through the ``tiered_disclosure.formatters`` entry-point group. A
#: registered object is a :class:`~formatters.base.Formatter` instance.
FORMATTERS: Registry[Formatter] = Registry(
    "formatter", group="tiered_disclosure.formatters", builtins=BUILTIN_FORMATTERS
)


def get_formatter(name: str, options: FormattingConfig | None = None) -> Formatter:
    """The formatter registered as ``name``, configured with ``options`` when it takes them."""
    formatter = FORMATTERS.get(name)
    if not isinstance(formatter, Formatter):
        raise RegistryError(
            f"formatter {name!r} is {formatter!r}, which has no name and render(); "
            f"register a Formatter instance"
        )
    if options is not None and isinstance(formatter, ConfigurableFormatter):
        return formatter.configure(options)
    return formatter
