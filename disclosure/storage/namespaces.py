"""Namespaces: whose memories are whose, and where each namespace's data directory lives.

A namespace is the profile's ``isolation.scope`` parts (tenant, user, conversation) with a value
each. Every namespace gets a data directory of its own under a root, so its archive, Chroma
collection, caches and usage history are apart from every other namespace's::

    ROOT/namespaces/acme.bob-3f1c...e2/      tenant "acme", user "bob"
        namespace.json                       the exact parts, checked on every open

The directory name is a readable slug (lowercase ASCII letters and digits only) and a SHA-256 of
the exact parts: values are never normalised (``Alice`` and ``alice``, or a Latin and a Cyrillic
``a``, are different namespaces with different directories, also on a case-insensitive file
system), and nothing a caller writes can reach outside the root. Values must be 1-128 printable
characters without path separators, ``.`` or ``..``, control or invisible format characters, or
whitespace at either end.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tiers.errors import NamespaceError, StorageError

# profile_sections.NAMESPACE_PARTS, repeated (a test keeps them equal) so that finding a
# namespace's directory does not import pydantic
NAMESPACE_PARTS = ("tenant", "user", "conversation")

DEFAULT_PART = "default"
MAX_PART_CHARS = 128
NAMESPACES_DIR = "namespaces"
MARKER_FILE = "namespace.json"
HOME_VARIABLE = "TIERED_DISCLOSURE_HOME"
_SLUG_CHARS = 20
_HASH_CHARS = 32
_FORBIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
_REPLACEMENT = "\ufffd"  # what a lenient decoder leaves of invalid bytes: never a real name


@dataclass(frozen=True, slots=True)
class Namespace:
    """One namespace: ``(part, value)`` pairs in scope order. Build with :func:`make_namespace`."""

    parts: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        """A stable, exact text form (JSON) for maps and hashes."""
        return json.dumps([list(p) for p in self.parts], ensure_ascii=False)

    def as_dict(self) -> dict[str, str]:
        return dict(self.parts)

    def directory_name(self) -> str:
        """``slug-hash``: readable, collision-free, safe on every file system."""
        digest = hashlib.sha256(self.key.encode("utf-8")).hexdigest()[:_HASH_CHARS]
        slug = ".".join(_slug(value) for _, value in self.parts) or "shared"
        return f"{slug}-{digest}"

    def __str__(self) -> str:
        if not self.parts:
            return "(shared)"
        return ", ".join(f"{name}={value!r}" for name, value in self.parts)


def check_part(name: str, value: object) -> str:
    """``value`` if it is a safe namespace part value; else :class:`NamespaceError` saying why."""
    if not isinstance(value, str):
        raise NamespaceError(f"namespace {name} must be a string, not {type(value).__name__}")
    problem = _problem(value)
    if problem:
        raise NamespaceError(
            f"namespace {name} {value[:40]!r} {problem}; a part is 1-{MAX_PART_CHARS} printable "
            f"characters without '/', '\\', control or invisible characters"
        )
    return value


def _problem(value: str) -> str | None:
    if not value:
        return "is empty"
    if len(value) > MAX_PART_CHARS:
        return f"has {len(value)} characters"
    if value != value.strip():
        return "starts or ends with whitespace"
    if value in (".", ".."):
        return "is a path component"
    if "/" in value or "\\" in value:
        return "contains a path separator"
    bad = next(
        (
            ch
            for ch in value
            if unicodedata.category(ch) in _FORBIDDEN_CATEGORIES or ch == _REPLACEMENT
        ),
        None,
    )
    if bad is not None:
        return f"contains the character U+{ord(bad):04X}"
    return None


class Isolation(Protocol):
    """What a namespace is made under: the profile's ``isolation`` section
    (:class:`~disclosure.core.profile_sections.IsolationConfig`, which the core defines above
    this room; only these two of its fields are read here)."""

    @property
    def scope(self) -> Sequence[str]:
        """The parts that name a namespace, in order."""
        ...

    @property
    def required(self) -> bool:
        """Whether a part not given is an error (else it is ``default``)."""
        ...


def make_namespace(isolation: Isolation, parts: Mapping[str, str | None]) -> Namespace:
    """The namespace that ``parts`` name under ``isolation``; every mistake is a NamespaceError.

    A part outside the scope is an error (so no caller believes it is isolated when it is not);
    a missing one is ``default`` unless ``isolation.required``.
    """
    unknown = sorted(k for k, v in parts.items() if v is not None and k not in isolation.scope)
    if unknown:
        scope = ", ".join(isolation.scope) or "none: one shared store"
        raise NamespaceError(
            f"namespace part {unknown[0]!r} is not in this profile's isolation scope ({scope})"
        )
    values: list[tuple[str, str]] = []
    for name in isolation.scope:
        value = parts.get(name)
        if value is None:
            if isolation.required:
                raise NamespaceError(f"namespace {name} is required (isolation.required is on)")
            value = DEFAULT_PART
        values.append((name, check_part(name, value)))
    return Namespace(tuple(values))


def namespace_dir(root: Path | str, namespace: Namespace) -> Path:
    """The data directory of ``namespace`` under ``root`` (not created)."""
    return Path(root) / NAMESPACES_DIR / namespace.directory_name()


def claim_dir(root: Path | str, namespace: Namespace) -> Path:
    """Create (or check) ``namespace``'s directory: its marker must name exactly this namespace."""
    directory = namespace_dir(root, namespace)
    marker = directory / MARKER_FILE
    expected = {"parts": namespace.as_dict()}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if marker.exists():
            found = json.loads(marker.read_text(encoding="utf-8"))
            if found != expected:
                raise StorageError(
                    f"{directory}: holds namespace {found.get('parts')!r}, not "
                    f"{namespace.as_dict()!r}; refusing to mix them"
                )
        else:
            _write_atomically(marker, json.dumps(expected, ensure_ascii=False, sort_keys=True))
    except (OSError, ValueError) as exc:
        if isinstance(exc, StorageError):
            raise
        raise StorageError(f"{directory}: cannot use it for {namespace}: {exc}") from None
    return directory


def iter_namespaces(root: Path | str) -> Iterator[tuple[dict[str, str], Path]]:
    """The namespaces stored under ``root``: their parts and directories (no store is opened)."""
    base = Path(root) / NAMESPACES_DIR
    if not base.is_dir():
        return
    for directory in sorted(base.iterdir()):
        marker = directory / MARKER_FILE
        try:
            parts = json.loads(marker.read_text(encoding="utf-8"))["parts"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        yield dict(parts), directory


def default_home() -> Path:
    """The default root: ``$TIERED_DISCLOSURE_HOME``, else ``$XDG_DATA_HOME/tiered-disclosure``
    (``~/.local/share/tiered-disclosure``)."""
    explicit = os.environ.get(HOME_VARIABLE)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "tiered-disclosure"


def _slug(value: str) -> str:
    ascii_lower = "".join(ch.lower() if ch.isascii() else "_" for ch in value)
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_lower).strip("_")
    return slug[:_SLUG_CHARS] or "_"


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


__all__ = [
    "DEFAULT_PART",
    "HOME_VARIABLE",
    "MARKER_FILE",
    "NAMESPACE_PARTS",
    "Namespace",
    "check_part",
    "claim_dir",
    "default_home",
    "iter_namespaces",
    "make_namespace",
    "namespace_dir",
]
