"""How each field of a memory reads in a context: cleaned text, summaries, previews, dates, ages.

Every piece of memory text goes through :func:`clean` (private spans removed, prompt injection
neutralised) before a formatter shows it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache

from safeguards.filter import FLAG_NOTE, neutralize, strip_private
from tiers.memory import MAX_SUMMARY_CHARS, Memory

ELLIPSIS = "…"
_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\n+")  # also CJK . ! ?
_DASHES = "\u2013\u2014"  # en and em dash
_CLAUSE_END = re.compile(rf"[,;:{_DASHES})](?=\s)|\s[-{_DASHES}]\s")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class Clean:
    """Text ready to show: private spans gone, injection defanged; ``flagged`` when it was."""

    text: str
    flagged: bool = False

    @property
    def shown(self) -> str:
        """The text with the flag note in front when flagged."""
        return f"{FLAG_NOTE} {self.text}" if self.flagged else self.text


@lru_cache(maxsize=16384)
def clean(text: str) -> Clean:
    """``text`` without private spans and with prompt injection neutralised."""
    visible = strip_private(text)
    safe, findings = neutralize(visible)
    return Clean(safe, bool(findings))


def content_of(memory: Memory) -> Clean:
    """The memory's content as it may be shown."""
    return clean(memory.content)


def summary_of(memory: Memory) -> Clean:
    """A one-line summary: ``Memory.summary`` when set, else derived from the shown content."""
    if memory.summary:
        summary = clean(memory.summary)
        if summary.text.strip():
            return summary
    content = content_of(memory)
    return Clean(one_line_summary(content.text), content.flagged)


def one_line_summary(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    """The first sentence(s) of ``text`` on one line, at most ``limit`` characters.

    Whole sentences are taken while they fit (if they fill at least half the limit); otherwise
    the text is cut at a clause boundary in the second half of the limit, else at a word
    boundary, else mid-word (scripts without spaces), and ends with ``…``.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    taken = ""
    for sentence in _SENTENCE_END.split(text):
        candidate = f"{taken} {' '.join(sentence.split())}".strip()
        if len(candidate) > limit:
            break
        taken = candidate
    if len(taken) >= limit // 2:
        return taken
    return cut_words(flat, limit - len(ELLIPSIS)) + ELLIPSIS  # a short first sentence: go on


def cut_words(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a clause or word boundary when possible."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if text[limit].isspace():
        return head.rstrip()
    clauses = [m.end() for m in _CLAUSE_END.finditer(head) if m.end() >= limit // 2]
    if clauses:
        return head[: clauses[-1]].rstrip(f" -{_DASHES}")
    space = head.rfind(" ")
    if space >= limit // 2:
        return head[:space].rstrip()
    return head


def preview(text: str, chars: int) -> str:
    """``text`` whole if it has at most ``chars`` characters (0: no limit), else cut, with ``…``."""
    if chars <= 0 or len(text) <= chars:
        return text
    return cut_words(text, chars - len(ELLIPSIS)).rstrip() + ELLIPSIS


def speaker_of(memory: Memory) -> str:
    """Who said it: the speaker, else the memory's kind (prompt, response, tool, ...)."""
    if memory.speaker and memory.speaker.strip():
        name = clean(" ".join(memory.speaker.split())).text
        return name or memory.kind.value
    return memory.kind.value


def short_date(value: datetime | date) -> str:
    """``10 Mar 2026``: short, unambiguous, and cheap in tokens."""
    return f"{value.day} {_MONTHS[value.month - 1]} {value.year}"


def clock(value: datetime) -> str:
    """``14:32``."""
    return f"{value.hour:02d}:{value.minute:02d}"


def age(then: datetime, now: datetime) -> str:
    """How long ago, compactly: ``5m``, ``3h``, ``2d``, ``3w``, ``4mo``, ``2y`` (future: ``0m``)."""
    seconds = max(0.0, (now - then).total_seconds())
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    return day_age(then.date(), now.date())


def day_age(then: date, today: date) -> str:
    """Days ago as ``today``, ``1d``, ``13d``, ``3w``, ``4mo``, ``2y``."""
    days = (today - then).days
    if days <= 0:
        return "today"
    if days < 14:
        return f"{days}d"
    if days < 60:
        return f"{days // 7}w"
    if days < 730:
        return f"{days // 30}mo"
    return f"{days // 365}y"


def metadata_line(memory: Memory, limit: int) -> Clean:
    """Entities and metadata as ``key: value`` pairs on one line, at most ``limit`` characters."""
    pairs = []
    if memory.entities:
        pairs.append(f"entities: {', '.join(memory.entities)}")
    for key in sorted(memory.metadata):
        pairs.append(f"{key}: {_value(memory.metadata[key])}")
    if not pairs or limit <= 0:
        return Clean("")
    shown = clean(" · ".join(pairs))
    return Clean(preview(" ".join(shown.text.split()), limit), shown.flagged)


def _value(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
