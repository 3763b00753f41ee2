"""Limits on what callers send, checked before parsing goes deep.

Python's JSON parser recurses once per nesting level, and so do the validators after it: a body
of ``[[[[...`` or deeply nested ``metadata`` would end in a RecursionError (a 500, a huge log)
instead of an answer. :func:`json_depth` measures nesting on the raw bytes without recursing
(vectorised, so a megabyte costs milliseconds), and :func:`read_bounded` reads a file in pieces
up to a limit, so ``/dev/zero`` or a huge file is refused rather than filling memory.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from tiers.errors import InvalidInputError

MAX_JSON_DEPTH = 64
MAX_INPUT_BYTES = 256 * 1024 * 1024
_CHUNK = 1024 * 1024
_ESCAPE = re.compile(rb"\\.", re.S)
_STRING = re.compile(rb'"[^"]*"')
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


def json_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings do not
    count). Works on malformed text too: it only counts."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"[" not in raw and b"{" not in raw:
        return 0
    bare = _STRING.sub(b"", _ESCAPE.sub(b"", raw))
    steps = _OPEN[np.frombuffer(bare, dtype=np.uint8)]
    if not steps.any():
        return 0
    return int(np.cumsum(steps, dtype=np.int64).max(initial=0))


def check_json_depth(data: bytes | str, where: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`InvalidInputError` if ``data`` nests deeper than ``limit``."""
    depth = json_depth(data)
    if depth > limit:
        raise InvalidInputError(f"{where}: JSON nested {depth} levels deep; the limit is {limit}")


def read_bounded(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of ``path``, read in pieces; over ``limit`` bytes is an InvalidInputError
    (raised before more than ``limit`` bytes are held). OSError passes through."""
    if path.is_char_device() or path.is_block_device():
        raise InvalidInputError(f"{path}: a device, not a file (it may never end)")
    pieces: list[bytes] = []
    size = 0
    with path.open("rb") as handle:
        while piece := handle.read(_CHUNK):
            size += len(piece)
            if size > limit:
                raise InvalidInputError(
                    f"{path}: larger than {limit // (1024 * 1024)} MB; split it into smaller files"
                )
            pieces.append(piece)
    return b"".join(pieces)


__all__ = ["MAX_INPUT_BYTES", "MAX_JSON_DEPTH", "check_json_depth", "json_depth", "read_bounded"]
