"""Temporal references and the time ranges they name, resolved against ``now``.

Ranges are ``[start, end)`` in ``now``'s timezone (a naive ``now`` is taken as UTC) and never
end after ``now``. The fixed phrases come from the profile (``analyzer.temporal``); a small
grammar adds dates, months, weekdays and counted units, in English and Korean:

=============================  ================================================================
"today", "earlier today"       today 00:00 -> now
"yesterday", "어제"            yesterday 00:00 -> today 00:00
"this morning"                 today 00:00 -> 12:00 (or now, if earlier)
"last night"                   yesterday 18:00 -> today 06:00
"this week" / "last week"      ISO weeks (Monday 00:00): this Monday -> now / the week before
"this month" / "last month"    calendar months; "this year" / "last year" likewise
"earlier", "last time"         the last ``earlier_hours`` (24 h: the hot working set's window)
"recently", "the other day"    the last ``recent_days`` (7 days)
"in March", "3월"              the most recent March not in the future: in February 2025 that
                               is March 2024; in March 2025, March 1 -> now. "since March" ends
                               now; "last March" is the most recent March before this month
"March 5", "2025-03-05"        that day; without a year, the most recent one, unless this year's
                               is less than six months ahead: "the April 15 deadline" names a
                               day to come, not a memory, and gives no reference ("since March 3"
                               ends now)
"on Monday" / "last Monday"    the most recent Monday, today included / excluded ("next Monday",
                               "by Friday" are ahead: no reference)
"two days ago", "3일 전"       that calendar day (weeks: that ISO week; months: that month;
                               hours and minutes: a window of one unit either side)
"the last 3 days", "past week" now minus the span -> now
"when we discussed X"          no range; ``about="X"`` (the caller searches for X)
=============================  ================================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from analyzers.config import TemporalConfig
from analyzers.levels import TemporalReference
from analyzers.pipeline import MONTHS, TEMPORAL, TOPIC, TOPIC_AFTER, WEEKDAYS, TriggerHit

Range = tuple[datetime, datetime]
_UPCOMING = timedelta(days=183)  # a day-and-month this close ahead means the coming one
_AHEAD = frozenset({"next", "for", "by", "until", "till", "coming"})

_NUMBERS = {
    **{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6},
    **{"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12},
    **{"couple": 2, "a couple of": 2, "couple of": 2, "few": 3, "a few": 3, "several": 3},
    **{"한": 1, "두": 2, "세": 3, "네": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8},
    **{"아홉": 9, "열": 10, "일": 1, "하루": 1, "이틀": 2, "사흘": 3, "나흘": 4},
}
_UNITS = {
    **{"minute": "minute", "hour": "hour", "day": "day", "week": "week", "month": "month"},
    **{"year": "year", "분": "minute", "시간": "hour", "일": "day", "주": "week"},
    **{"주일": "week", "달": "month", "개월": "month", "년": "year"},
}
_KO_WEEKDAYS = "월화수목금토일"
_NUM = (
    r"\d{1,3}|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six|seven"
    r"|eight|nine|ten|eleven|twelve"
)
_MONTH = "|".join(MONTHS)
_ABBR = "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_UNIT = "minute|hour|day|week|month|year"


@dataclass(frozen=True, slots=True)
class TimeMatch:
    """One temporal expression: where it is, what kind, and its range or topic."""

    start: int
    end: int
    kind: str
    phrase: str
    span: Range | None = None
    about: str | None = None


def find_times(
    text: str, hits: Sequence[TriggerHit], now: datetime, config: TemporalConfig
) -> list[TimeMatch]:
    """Every temporal expression in ``text``, non-overlapping, in text order."""
    now = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    found = [m for m in _grammar(text, now) if m.span is not None]
    for hit in hits:
        if hit.spec.kind == TEMPORAL and hit.spec.tag:
            span = _fixed(hit.spec.tag, now, config)
            found.append(
                TimeMatch(hit.start, hit.end, hit.spec.tag, text[hit.start : hit.end], span)
            )
    found = _non_overlapping(found)
    found += _topics(text, hits, found)
    return sorted(found, key=lambda m: m.start)


def to_reference(matches: Sequence[TimeMatch]) -> TemporalReference | None:
    """The query's reference: the first range, with the first topic's ``about`` if any."""
    ranged = next((m for m in matches if m.span is not None), None)
    topic = next((m for m in matches if m.about), None)
    first = ranged or topic
    if first is None:
        return None
    start, end = first.span if first.span else (None, None)
    about = topic.about if topic else None
    return TemporalReference(
        phrase=first.phrase, kind=first.kind, start=start, end=end, about=about
    )


def _non_overlapping(found: list[TimeMatch]) -> list[TimeMatch]:
    kept: list[TimeMatch] = []
    for m in sorted(found, key=lambda m: (m.start, m.start - m.end)):
        if all(m.start >= k.end or m.end <= k.start for k in kept):
            kept.append(m)
    return kept


# -- fixed phrases ------------------------------------------------------------------------------


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, like: datetime) -> datetime:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return _midnight(like).replace(year=year, month=month, day=1)


def _clip(start: datetime, end: datetime, now: datetime) -> Range:
    end = min(end, now)
    return start, max(start, end)


def _fixed(kind: str, now: datetime, config: TemporalConfig) -> Range:
    today = _midnight(now)
    monday = today - timedelta(days=now.weekday())
    month = _month_start(now.year, now.month, now)
    day = timedelta(days=1)
    table: dict[str, Callable[[], Range]] = {
        "today": lambda: (today, now),
        "yesterday": lambda: (today - day, today),
        "day_before_yesterday": lambda: (today - 2 * day, today - day),
        "this_morning": lambda: (today, today + timedelta(hours=12)),
        "last_night": lambda: (today - timedelta(hours=6), today + timedelta(hours=6)),
        "this_week": lambda: (monday, now),
        "last_week": lambda: (monday - 7 * day, monday),
        "this_month": lambda: (month, now),
        "last_month": lambda: (_month_start(now.year, now.month - 1, now), month),
        "this_year": lambda: (_month_start(now.year, 1, now), now),
        "last_year": lambda: (_month_start(now.year - 1, 1, now), _month_start(now.year, 1, now)),
        "earlier": lambda: (now - timedelta(hours=config.earlier_hours), now),
        "recently": lambda: (now - timedelta(days=config.recent_days), now),
    }
    return _clip(*table[kind](), now)


# -- the grammar --------------------------------------------------------------------------------

_DIGIT = re.compile(r"\d")
_MONTH_HINT = re.compile("jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec")
_SINCE = r"(?:(?P<mark>since|from|on)\s+)?"
_NO_DAY = r"(?!\.?\s+\d{1,2}(?:st|nd|rd|th)?\b)"  # "March 3rd" is a date, not a month
_WEEKDAY_MARKS = "last|this|on|past|next|for|by|until|till|coming"
_PATTERNS: list[tuple[str, str, re.Pattern[str]]] = [
    (
        "date",
        "digit",
        re.compile(rf"\b{_SINCE}(?P<y>\d{{4}})[-/.](?P<m>\d{{1,2}})[-/.](?P<d>\d{{1,2}})\b", re.I),
    ),
    (
        "date",
        "month+digit",
        re.compile(
            rf"\b{_SINCE}(?P<mn>{_MONTH}|{_ABBR})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b"
            r"(?:,?\s+(?P<y>\d{4})\b)?",
            re.I,
        ),
    ),
    (
        "date",
        "month+digit",
        re.compile(
            rf"\b{_SINCE}(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?"
            rf"(?P<mn>{_MONTH}|{_ABBR})\b(?:,?\s+(?P<y>\d{{4}})\b)?",
            re.I,
        ),
    ),
    (
        "month",
        "month",
        re.compile(
            r"\b(?P<mark>last|this|in|during|since|from|early|mid|late)\s+"
            rf"(?P<mn>{_MONTH})\b{_NO_DAY}(?:\s+(?P<y>\d{{4}})\b)?",
            re.I,
        ),
    ),
    ("month", "month+digit", re.compile(rf"\b(?P<mn>{_MONTH})\s+(?P<y>\d{{4}})\b", re.I)),
    (
        "weekday",
        "day",
        re.compile(rf"\b(?:(?P<mark>{_WEEKDAY_MARKS})\s+)?(?P<wd>{'|'.join(WEEKDAYS)})\b", re.I),
    ),
    ("ago", "ago", re.compile(rf"\b(?P<n>{_NUM})\s+(?P<u>{_UNIT})s?\s+ago\b", re.I)),
    (
        "past",
        "past",
        re.compile(rf"\b(?:the\s+)?(?:last|past)\s+(?P<n>{_NUM})\s+(?P<u>{_UNIT})s?\b", re.I),
    ),
    ("past", "past", re.compile(rf"\b(?:the\s+)?past\s+(?P<u>{_UNIT})\b", re.I)),
    ("date", "korean", re.compile(r"(?P<m>\d{1,2})\s*월\s*(?P<d>\d{1,2})\s*일")),
    ("month", "korean", re.compile(r"(?P<m>\d{1,2})\s*월(?!\s*\d)")),
    ("weekday", "korean", re.compile(rf"(?:(?P<mark>지난)\s*)?(?P<kwd>[{_KO_WEEKDAYS}])요일")),
    (
        "ago",
        "korean",
        re.compile(
            r"(?P<n>\d{1,3}|한|두|세|네|다섯|여섯|일곱|여덟|아홉|열|일)\s*"
            r"(?P<u>분|시간|일|주일|주|달|개월|년)\s*전"
        ),
    ),
    ("ago", "korean", re.compile(r"(?P<n>하루|이틀|사흘|나흘)\s*전")),
]


def _grammar(text: str, now: datetime) -> list[TimeMatch]:
    found = []
    hints = _hints(text)
    for kind, guard, pattern in _PATTERNS:
        if not all(hints[g] for g in guard.split("+")):
            continue  # cheap guards: an ordinary query runs few of the patterns
        for m in pattern.finditer(text):
            if kind == "month" and _modal_may(m):
                continue
            if kind == "weekday" and _weekday_as_attribute(m, text):
                continue
            span = _RESOLVERS[kind](m.groupdict(), now)
            found.append(TimeMatch(m.start(), m.end(), kind, m.group(), span))
    if any(t.kind in ("ago", "past", "date", "month") for t in found):
        # "the Wednesday two months ago": the counted phrase places it; a bare weekday alone
        # would point at the last one
        found = [t for t in found if t.kind != "weekday" or _has_mark(t.phrase)]
    return found


_TIMES_OF_DAY = frozenset({"morning", "afternoon", "evening", "night", "noon", "lunch", "at"})


def _weekday_as_attribute(m: re.Match[str], text: str) -> bool:
    """A bare weekday that names a kind of thing, not a day: "the Sunday mass", "my Sunday
    group rides". Marked ones ("last Sunday", "on Sunday") and "Sunday morning" are days."""
    if m.groupdict().get("mark") or m.groupdict().get("kwd"):
        return False
    after = re.match(r"\s+([a-z]+)", text[m.end() :])
    return after is not None and after.group(1) not in _TIMES_OF_DAY


def _has_mark(text: str) -> bool:
    return re.match(rf"(?:{_WEEKDAY_MARKS})\s", text, re.IGNORECASE) is not None


def _hints(text: str) -> dict[str, bool]:
    lowered = text.lower()
    return {
        "digit": _DIGIT.search(text) is not None,
        "month": _MONTH_HINT.search(lowered) is not None,
        "day": "day" in lowered,
        "ago": "ago" in lowered,
        "past": "last" in lowered or "past" in lowered,
        "korean": not text.isascii(),
    }


def _modal_may(m: re.Match[str]) -> bool:
    # "this may take a while" is not a month; "in may" and "May 2024" are
    name, mark = m.groupdict().get("mn") or "", (m.groupdict().get("mark") or "").lower()
    return name == "may" and mark in ("this", "from", "")


def _month_of(g: dict[str, str | None]) -> int:
    if number := g.get("m"):
        return int(number)
    name = (g.get("mn") or "").lower()
    return next(i for i, full in enumerate(MONTHS, 1) if full.startswith(name[:3]))


def _resolve_date(g: dict[str, str | None], now: datetime) -> Range | None:
    month = _month_of(g)
    day = int(g.get("d") or 0)
    year = int(g.get("y") or 0) or now.year
    try:
        start = _midnight(now).replace(year=year, month=month, day=day)
    except ValueError:
        return None
    if not g.get("y") and start > now:
        if start - now < _UPCOMING:
            return None  # "the April 15 deadline" in March: a date ahead, not a memory
        try:
            start = start.replace(year=year - 1)
        except ValueError:  # February 29 of a leap year, a year on
            return None
    if start > now:
        return None
    end = now if (g.get("mark") or "").lower() == "since" else start + timedelta(days=1)
    return _clip(start, end, now)


def _resolve_month(g: dict[str, str | None], now: datetime) -> Range | None:
    month = _month_of(g)
    if not 1 <= month <= 12:
        return None
    mark = (g.get("mark") or "").lower()
    if g.get("y"):
        year = int(g.get("y") or 0)
    elif mark == "last":
        year = now.year if month < now.month else now.year - 1
    else:
        year = now.year if month <= now.month else now.year - 1
    start = _month_start(year, month, now)
    if start > now:
        return None
    end = now if mark == "since" else _month_start(year, month + 1, now)
    return _clip(start, end, now)


def _resolve_weekday(g: dict[str, str | None], now: datetime) -> Range | None:
    if (g.get("mark") or "").lower() in _AHEAD:
        return None  # "next Friday", "by Monday": a day ahead, not a memory
    if g.get("kwd"):
        weekday = _KO_WEEKDAYS.index(g["kwd"] or "")
        strict = bool(g.get("mark"))
    else:
        weekday = WEEKDAYS.index((g["wd"] or "").lower())
        strict = (g.get("mark") or "").lower() in ("last", "past")
    back = (now.weekday() - weekday) % 7
    if strict and back == 0:
        back = 7
    start = _midnight(now) - timedelta(days=back)
    return _clip(start, start + timedelta(days=1), now)


def _count(g: dict[str, str | None]) -> tuple[int, str]:
    raw = (g.get("n") or "1").lower()
    n = int(raw) if raw.isdigit() else _NUMBERS.get(raw, 1)
    unit = _UNITS.get((g.get("u") or "").lower(), "day")
    return n, unit


def _resolve_ago(g: dict[str, str | None], now: datetime) -> Range:
    n, unit = _count(g)
    today = _midnight(now)
    if unit in ("minute", "hour"):
        step = timedelta(minutes=1) if unit == "minute" else timedelta(hours=1)
        return _clip(now - (n + 1) * step, now - (n - 1) * step, now)
    if unit == "day":
        start = today - timedelta(days=n)
        return _clip(start, start + timedelta(days=1), now)
    if unit == "week":
        start = today - timedelta(days=now.weekday() + 7 * n)
        return _clip(start, start + timedelta(days=7), now)
    if unit == "month":
        start = _month_start(now.year, now.month - n, now)
        return _clip(start, _month_start(now.year, now.month - n + 1, now), now)
    start = _month_start(now.year - n, 1, now)
    return _clip(start, _month_start(now.year - n + 1, 1, now), now)


def _resolve_past(g: dict[str, str | None], now: datetime) -> Range:
    n, unit = _count(g)
    if unit == "month":
        return _clip(_shift_months(now, -n), now, now)
    if unit == "year":
        return _clip(_shift_months(now, -12 * n), now, now)
    step = {"minute": 60, "hour": 3600, "day": 86_400, "week": 604_800}[unit]
    return _clip(now - timedelta(seconds=n * step), now, now)


def _shift_months(moment: datetime, months: int) -> datetime:
    first = _month_start(moment.year, moment.month + months, moment)
    for day in (moment.day, 30, 29, 28):
        try:
            return moment.replace(year=first.year, month=first.month, day=day)
        except ValueError:
            continue
    return first  # pragma: no cover - day 28 exists in every month


_RESOLVERS: dict[str, Callable[[dict[str, str | None], datetime], Range | None]] = {
    "date": _resolve_date,
    "month": _resolve_month,
    "weekday": _resolve_weekday,
    "ago": _resolve_ago,
    "past": _resolve_past,
}


# -- "when we discussed X" ----------------------------------------------------------------------

_TOPIC_END = re.compile(r"[.,;:!?()\n]|\s(?:and|but|so|because|then|or)\s", re.I)
_KO_PARTICLES = ("에 대해서", "에 대해", "에 관해서", "에 관해", "에대해", "을", "를")
_MAX_TOPIC_WORDS = 8


def _topics(text: str, hits: Sequence[TriggerHit], times: Sequence[TimeMatch]) -> list[TimeMatch]:
    found = []
    for hit in hits:
        if hit.spec.kind == TOPIC:
            about = _topic_after(text, hit.end, times)
        elif hit.spec.kind == TOPIC_AFTER:
            about = _topic_before(text, hit.start, times)
        else:
            continue
        if about:
            phrase = text[hit.start : hit.end]
            found.append(TimeMatch(hit.start, hit.end, "topic", phrase, None, about))
    return found


def _topic_after(text: str, start: int, times: Sequence[TimeMatch]) -> str:
    stop = min([t.start for t in times if t.start >= start] + [len(text)])
    tail = text[start:stop]
    if m := _TOPIC_END.search(tail):
        tail = tail[: m.start()]
    return " ".join(tail.split()[:_MAX_TOPIC_WORDS])


def _topic_before(text: str, end: int, times: Sequence[TimeMatch]) -> str:
    begin = max([t.end for t in times if t.end <= end] + [0])
    head = re.split(r"[.,;:!?()\n]", text[begin:end])[-1].strip()
    for particle in _KO_PARTICLES:
        if head.endswith(particle) and len(head) > len(particle) + 1:
            head = head[: -len(particle)].strip()
            break
    return " ".join(head.split()[-3:])
