"""Limits on what callers send, checked before parsing goes deep.

Python's JSON parser recurses once per nesting level, and so do the validators after it: a body
of ``[[[[...`` or deeply nested ``metadata`` would end in a RecursionError (a 500, a huge log)
instead of an answer. :func:`json_depth` measures nesting on the raw bytes without recursing
(C-level iterators over the brackets alone: a megabyte costs milliseconds, and a command
that only reads a file loads no numpy), and :func:`read_bounded` reads a file in pieces up to a
limit, so ``/dev/zero`` or a huge file is refused rather than filling memory.
"""

from __future__ import annotations

import re
from itertools import accumulate, count
from operator import sub
from pathlib import Path

from tiers.errors import InvalidInputError

MAX_JSON_DEPTH = 64
MAX_INPUT_BYTES = 256 * 1024 * 1024
_CHUNK = 1024 * 1024
_ESCAPE = re.compile(rb"\\.", re.S)
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")  # an opening bracket 2, a closing one 0


def json_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings do not
    count). Works on malformed text too: it only counts."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"[" not in raw and b"{" not in raw:
        return 0
    brackets = _STRING.sub(b"", _ESCAPE.sub(b"", raw)).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    # the depth after the i-th bracket (from 1) is the sum of its steps (2 or 0) minus i
    deepest: int = max(map(sub, accumulate(brackets.translate(_STEP)), count(1)))
    return max(deepest, 0)


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
