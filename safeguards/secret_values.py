"""Tests on a candidate value: is it random enough to be a key, or a placeholder, reference or
path that only names one? Pure functions of the string, shared by every secrets rule."""

from __future__ import annotations

import math
import re
from collections import Counter


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HEX = frozenset("0123456789abcdefABCDEF")
_SPACE = re.compile(r"\s")
_DIGIT = re.compile(r"[0-9]")
_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_LETTERS = re.compile(r"[A-Za-z]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-+.][0-9A-Za-z.-]{1,20})?")
_PATH = re.compile(
    r"(?:~?/|\.{1,2}/|[A-Za-z]:\\|\\\\)\S*"  # absolute, home, relative, Windows, UNC
    r"|\S+\.(?:json|pem|key|p12|pfx|crt|cer|txt|ya?ml|env|gpg|asc|ini|cfg|conf|toml|jks)"
)
_REFERENCE = re.compile(  # what a value starting so refers to: a variable, alias or vault entry
    r"\$[A-Za-z_{(]|%[A-Za-z_]\w*%|@[A-Za-z_][\w.]*\(|[*&][A-Za-z_][\w-]*$|\{\{|\[|<"
    r"|!(?:Ref|Sub|GetAtt|ImportValue|vault|env|secret)\b",
    re.IGNORECASE,
)
_IDENTIFIER_PATH = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_]+)+")
_NUMBER = re.compile(r"[0-9][0-9,._]*%?|[$€£¥][0-9]\S*")  # 3600, 12.5%, $100/month
_CONSTANT = re.compile(r"[A-Z]+(?:_[A-Z]+)+")  # DOMAIN_PASSWORD: the name of a variable
_FORMAT = re.compile(r"%[sd]|%\(|\{[A-Za-z_0-9]*\}")
_PUBLIC = ("pk_live_", "pk_test_", "pk.")  # publishable keys, made to be public
_SNAKE = re.compile(
    r"[A-Za-z]+(?:_[A-Za-z]+)+"  # user_password
    r"|[a-z]+(?:[A-Z][a-z]+)+|(?:[A-Z][a-z]+){2,}"  # hashedPassword, SecretStr
    r"|[A-Z][a-z]+(?:To)?-[A-Z][A-Za-z]+"  # New-Object, ConvertTo-SecureString (PowerShell)
)

#: Words that, as a whole segment of a value, say it stands for a secret rather than being one
#: (``your-api-key-here``, ``INSERT_TOKEN``, ``dummy_password``).
PLACEHOLDER_WORDS = _words(
    "your here placeholder redacted redact changeme dummy fake mock sample insert replace "
    "todo fixme tbd xxx xxxx yyyy zzzz"
)
#: Substrings that do the same anywhere in a value (``AKIAIOSFODNN7EXAMPLE``, ``sk_test_xxxx``).
PLACEHOLDER_PARTS = ("example", "xxxx", "****", "••", "...", "…", "changeme", "change_me",
                     "change-me", "${", "{{", "}}", "$(")  # fmt: skip
_PLACEHOLDER_PART = re.compile("|".join(map(re.escape, PLACEHOLDER_PARTS)))
#: Whole values that carry no secret: defaults everyone knows, types, switches, config words.
PLACEHOLDER_VALUES = _words(
    "password passwd pass secret secrets token key apikey api_key none null nil true false "
    "yes no on off undefined required optional string str bytes int any text empty default "
    "admin root test user username guest demo 123456 12345678 123456789 qwerty abc123 "
    "letmein secretstr secretbytes env prompt ask inherit disabled enabled auto hidden "
    "masked unset sensitive omitted removed n/a na tbd foo bar baz foobar include "
    "same-origin omit"
)


def shannon(value: str) -> float:
    """Bits per character of ``value``'s own character distribution."""
    n = len(value)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def is_hex(value: str) -> bool:
    return bool(value) and _HEX.issuperset(value)


def is_uuid(value: str) -> bool:
    return len(value) == 36 and _UUID.fullmatch(value) is not None


def looks_random(value: str, *, min_length: int = 16) -> bool:
    """Machine-made: long, no spaces, many short runs of letters and digits (a random string
    changes character class every second character or so, words and identifiers rarely), and
    a high enough entropy for its alphabet (hex tops out at 4 bits a character)."""
    n = len(value)
    if n < min_length or n > 4096 or _SPACE.search(value):
        return False
    has_digit = _DIGIT.search(value) is not None
    if is_hex(value):
        return has_digit and shannon(value) >= 3.0
    segments = _SEGMENT.findall(value)
    if not segments or sum(map(len, segments)) / len(segments) > 3.2:
        return False
    mixed = value.lower() != value != value.upper()
    return (has_digit or mixed) and shannon(value) >= min(3.8, 0.8 * math.log2(n))


def is_placeholder(value: str, *, references: bool = True) -> bool:
    """A value that stands for a secret instead of being one: a template, a format field, a
    documentation example, a well-known default word, a public (publishable) key, or (with
    ``references``) a reference to a variable, alias or vault entry."""
    lowered = value.lower()
    if lowered in PLACEHOLDER_VALUES or len(set(value)) <= 2 or _FORMAT.search(value):
        return True
    if lowered.startswith(_PUBLIC) or _PLACEHOLDER_PART.search(lowered):
        return True
    if references and (_REFERENCE.match(value) or _CONSTANT.fullmatch(value)):
        return True
    return any(w.lower() in PLACEHOLDER_WORDS for w in _LETTERS.findall(value))


def is_path_or_url(value: str) -> bool:
    """A URL, or a path (not a random string that happens to start with a slash)."""
    if "://" in value:
        return True
    return _PATH.fullmatch(value) is not None and not looks_random(value)


def is_version_or_amount(value: str) -> bool:
    """A version string, a number or an amount (``1.4.2``, ``3600``, ``$100/month``)."""
    return _VERSION.fullmatch(value) is not None or _NUMBER.fullmatch(value) is not None


def is_expression(value: str) -> bool:
    """Code that computes a value rather than a literal: ``settings.TOKEN``, ``get_key()``,
    ``user_password``, ``hashedPassword`` (an unquoted value in code: words joined by dots,
    underscores or case changes, without digits)."""
    if "(" in value or ")" in value:
        return True
    if _IDENTIFIER_PATH.fullmatch(value) is not None:
        return True
    return _SNAKE.fullmatch(value) is not None
