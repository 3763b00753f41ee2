"""Text that a memory hides from a human reader but a model still reads, made visible so the
injection rules can scan it (see :mod:`safeguards.filter`).

- Unicode tag characters (U+E0020-U+E007E) spell ASCII invisibly; only emoji flag sequences
  (a black flag, tag letters, a cancel tag) use them legitimately.
- HTML comments do not render in Markdown or HTML, but reach the model verbatim.
- base64 and hex runs can wrap an order that no phrase rule sees until decoded.
- URL-encoded runs (``%41%49%3A ...``), and text labelled ROT13, are decoded the same way.
- Markdown comments (``[//]: # (...)``) do not render either.
- Reference-style Markdown links and images (``![x][1]`` ... ``[1]: https://...``) put the URL
  far from the image: they are rewritten inline so the image and link rules see them.

Each payload is returned with how it was hidden; decoding is bounded (number and size of runs)
so a long memory costs little more than a short one.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from collections.abc import Callable
from urllib.parse import unquote

TAG_FIRST, TAG_LAST = 0xE0000, 0xE007F
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]")
_FLAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0030-\U000e007a]{1,12}\U000e007f")
_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.DOTALL)
_BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{20,}={0,2}(?![\w+/=-])")
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}[ :]?){16,}(?![0-9A-Za-z])")
_REF_DEFINITION = re.compile(r"^[ \t]{0,3}\[([^\]\n]{1,100})\]:[ \t]*<?(\S+?)>?(?:[ \t].*)?$", re.M)
_REF_USE = re.compile(r"(!?)\[([^\]\n]{0,200})\]\[([^\]\n]{0,100})\]")
_URL_ENCODED = re.compile(r"(?:%[0-9A-Fa-f]{2}[^\s%]{0,12}){4,}")
_MD_COMMENT = re.compile(
    r"^[ \t]{0,3}\[(?://|comment|_)\]:\s*(?:#|<>)\s*(?:\((.*)\)|\"(.*)\"|'(.*)')[ \t]*$", re.M
)
_ROT13_LABEL = re.compile(r"\brot[\s_-]?13\b", re.IGNORECASE)
_MAX_RUNS = 8
_MAX_RUN_CHARS = 4096


def tag_text(text: str) -> str:
    """The ASCII that tag characters outside emoji flags spell ('' when there are none)."""
    if not _TAG_CHARS.search(text):
        return ""
    bare = _FLAG_SEQUENCE.sub("", text)
    return "".join(chr(ord(c) - TAG_FIRST) for c in _TAG_CHARS.findall(bare))


def without_tags(text: str) -> str:
    """``text`` without tag characters (flags lose their subdivision, nothing else changes)."""
    return _TAG_CHARS.sub("", text)


def hidden_payloads(text: str) -> list[tuple[str, str]]:
    """``(how, text)`` for every hidden or encoded piece of ``text`` worth scanning."""
    found: list[tuple[str, str]] = []
    if not text.isascii():
        tagged = tag_text(text)
        if tagged.strip():
            found.append(("unicode-tags", tagged))
    if "<!--" in text:
        found += [("html-comment", m.group(1)) for m in _COMMENT.finditer(text)][:_MAX_RUNS]
    if "]:" in text:
        found += [("markdown-comment", "".join(m.groups(""))) for m in _MD_COMMENT.finditer(text)]
    found += [("base64", t) for t in _decoded(_BASE64, text, _from_base64)]
    if "%" in text:
        found += [("url-encoded", t) for t in _decoded(_URL_ENCODED, text, _from_url)]
    if _ROT13_LABEL.search(text):  # decoded only where the text says it is ROT13
        found.append(("rot13", codecs.decode(text[:_MAX_RUN_CHARS], "rot13")))
    found += [("hex", t) for t in _decoded(_HEX, text, _from_hex)]
    if "][" in text and "]:" in text:
        inline = _inline_references(text)
        if inline:
            found.append(("reference-link", inline))
    return found


def _decoded(pattern: re.Pattern[str], text: str, decode: Callable[[str], str | None]) -> list[str]:
    out: list[str] = []
    for match in pattern.finditer(text):
        if len(out) >= _MAX_RUNS:
            break
        run = match.group(0)[:_MAX_RUN_CHARS]
        plain = decode(run)
        if plain is not None:
            out.append(plain)
    return out


def _from_base64(run: str) -> str | None:
    if run.isalpha() or run.isdigit() or not any(c.isdigit() or c.isupper() for c in run[1:]):
        return None  # a plain word or number, not an encoding
    raw = run.rstrip("=")
    padded = raw + "=" * (-len(raw) % 4)
    try:
        data = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(data)


def _from_url(run: str) -> str | None:
    plain = unquote(run, errors="strict") if run.count("%") >= 4 else run
    return plain if plain != run and " " in plain else None


def _from_hex(run: str) -> str | None:
    try:
        data = bytes.fromhex(re.sub(r"[ :]", "", run))
    except ValueError:
        return None
    return _readable(data)


def _readable(data: bytes) -> str | None:
    """The text ``data`` encodes if it reads like words (mostly printable, some spaces)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(c.isprintable() or c in "\n\t" for c in text)
    if len(text) < 8 or printable < 0.95 * len(text) or " " not in text:
        return None
    return text


def _inline_references(text: str) -> str:
    """Every reference-style link or image of ``text`` written inline (``![a](url)``)."""
    targets = {m.group(1).strip().lower(): m.group(2) for m in _REF_DEFINITION.finditer(text)}
    if not targets:
        return ""
    inline = []
    for bang, label, ref in _REF_USE.findall(text):
        url = targets.get((ref or label).strip().lower())
        if url:
            inline.append(f"{bang}[{label}]({url})")
    return "\n".join(inline)


__all__ = ["hidden_payloads", "tag_text", "without_tags"]
