"""A Griffe extension for the API reference: the Sphinx markup the docstrings use reads as
Markdown. ``:class:`~formatters.base.Formatter``` becomes ``Formatter`` as code (the full path
without the ``~``), and a paragraph ending in ``::`` before a literal block ends in ``:``.

mkdocs.yml loads it by path (``extensions``); it is not part of the package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|attr|data|exc|obj|const):`(~?)([^`]+)`")
_LITERAL = re.compile(r"(\S)::$", re.M)


def plain(text: str) -> str:
    """``text`` with its Sphinx roles as code spans and its ``::`` as ``:``."""

    def code(match: re.Match[str]) -> str:
        tilde, target = match.groups()
        return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"

    return _LITERAL.sub(r"\1:", _ROLE.sub(code, text))


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)  # type: ignore[arg-type]


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring of a package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = plain(obj.docstring.value)
