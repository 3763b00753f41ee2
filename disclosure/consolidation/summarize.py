"""Writing a summary's three detail levels, extractively by default, or with a plugged summarizer.

The extractive summarizer makes no model call. Sentences are ranked by centrality: how many of
the group's memories share each of its informative words (stemmed, stopwords dropped), over the
square root of its length, so a sentence that says what the group keeps coming back to wins.

- index line: ``date · speakers · keywords: the most central sentence`` (cut to a length);
- paragraph: the most central sentences, in the order they were said, each with its source's
  citation;
- full text: every source in order, ``[mem:xxxxxx] Speaker: content`` (long ones cut).

A plugged summarizer is any callable taking the group's memories and returning a string (the
paragraph) or a :class:`SummaryText`; the ``openai`` kind posts the transcript to an
OpenAI-compatible chat-completions endpoint. The full text always stays extractive: it is the
consolidated record of the sources, cited line by line.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from disclosure.consolidation.config import DetailConfig, SummarizerConfig
from disclosure.consolidation.grouping import informative, keywords
from tiers.memory import Memory
from tiers.text import Tokenizer

log = logging.getLogger(__name__)

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SPACE = re.compile(r"\s+")
MIN_SENTENCE_WORDS = 3
MAX_SENTENCE_CHARS = 300


@dataclass(frozen=True, slots=True)
class SummaryText:
    """What a summarizer returns: the three detail levels (any may be left empty, and the
    extractive one fills it in)."""

    index_line: str = ""
    paragraph: str = ""
    full_text: str = ""


SummarizerFn = Callable[[Sequence[Memory]], "str | SummaryText"]


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    memory: Memory
    order: int
    words: frozenset[str]


class Extractive:
    """The rule-based summarizer: central sentences, no model call."""

    name = "extractive"

    def __init__(self, detail: DetailConfig, tokenizer: Tokenizer) -> None:
        self.detail = detail
        self.tokenizer = tokenizer

    def summarize(
        self, memories: Sequence[Memory], citations: Mapping[str, str], *, session: str
    ) -> tuple[str, SummaryText]:
        """(the topic's keywords, its three levels) for one group of memories in time order."""
        words = keywords(memories, self.tokenizer, self.detail.keywords)
        ranked = self.central(memories)
        best = ranked[0].text if ranked else _one_line(memories[0].content)
        head = _head(memories, session, words)
        index_line = _cut(f"{head}: {best}" if best else head, self.detail.index_chars)
        chosen = sorted(ranked[: self.detail.paragraph_sentences], key=lambda s: s.order)
        paragraph = " ".join(_cited(s, citations) for s in chosen) or _cut(best, 400)
        return ", ".join(words), SummaryText(index_line, paragraph, self.full(memories, citations))

    def central(self, memories: Sequence[Memory]) -> list[_Sentence]:
        """The group's sentences, most central first (ties: the earlier one)."""
        sentences = list(self._sentences(memories))
        spread: Counter[str] = Counter()
        for memory in memories:
            spread.update(informative(memory.content, self.tokenizer))
        single = len(memories) == 1

        def centrality(s: _Sentence) -> float:
            shared = sum(spread[w] - (0 if single else 1) for w in s.words)
            return shared / math.sqrt(len(s.words))

        # a sentence saying something (3+ informative words) before a short exclamation
        return sorted(sentences, key=lambda s: (len(s.words) < 3, -centrality(s), s.order))

    def full(self, memories: Sequence[Memory], citations: Mapping[str, str]) -> str:
        limit = self.detail.full_chars_per_source
        lines = []
        for memory in memories:
            cite = citations.get(memory.id, memory.id)
            who = f"{memory.speaker}: " if memory.speaker else ""
            lines.append(f"[{cite}] {who}{_cut(_flat(memory.content), limit)}")
        return "\n".join(lines)

    def _sentences(self, memories: Sequence[Memory]) -> list[_Sentence]:
        found: list[_Sentence] = []
        for memory in memories:
            for piece in _SENTENCE.split(memory.content):
                text = _flat(piece)
                if len(text.split()) < MIN_SENTENCE_WORDS:
                    continue
                words = frozenset(informative(text, self.tokenizer))
                if words:
                    cut = _cut(text, MAX_SENTENCE_CHARS)
                    found.append(_Sentence(cut, memory, len(found), words))
        return found


def apply_plugin(
    plugin: SummarizerFn, memories: Sequence[Memory], base: SummaryText, head: str, limit: int
) -> SummaryText:
    """A plugged summarizer's answer over the extractive ``base``: what it leaves empty (and
    always the full text, the cited record of the sources) comes from ``base``."""
    answer = plugin(memories)
    if isinstance(answer, str):
        answer = SummaryText(paragraph=answer)
    if not isinstance(answer, SummaryText):
        raise TypeError(
            f"a summarizer returns a string or a SummaryText, not {type(answer).__name__}"
        )
    paragraph = _flat(answer.paragraph) or base.paragraph
    first = _SENTENCE.split(paragraph, maxsplit=1)[0] if paragraph else ""
    index_line = _flat(answer.index_line) or (_cut(f"{head}: {first}", limit) if first else "")
    return SummaryText(index_line or base.index_line, paragraph, base.full_text)


class OpenAISummarizer:
    """A summarizer behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    name = "openai"

    def __init__(self, config: SummarizerConfig) -> None:
        if not config.base_url:
            raise ValueError("the openai summarizer needs base_url")
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"

    def __call__(self, memories: Sequence[Memory]) -> str:
        transcript = "\n".join(
            f"{m.speaker or m.kind.value}: {_flat(m.content)}" for m in memories
        )[: self.config.max_source_chars]
        body = {
            "model": self.config.model,
            "temperature": 0,
            "messages": [
                {
                    "role": "system",
                    "content": "Summarize this conversation excerpt in two or three plain "
                    "sentences: the facts, decisions and names it holds. No preamble.",
                },
                {"role": "user", "content": transcript},
            ],
        }
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.config.api_key_env) if self.config.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            self.url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=self.config.timeout_seconds) as response:
            data: Any = json.loads(response.read().decode("utf-8"))
        try:
            return str(data["choices"][0]["message"]["content"]).strip()
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"{self.url} answered without choices[0].message.content") from None


PLUGIN_ERRORS = (OSError, urllib.error.URLError, ValueError, TypeError, json.JSONDecodeError)


def _head(memories: Sequence[Memory], session: str, words: Sequence[str]) -> str:
    first, last = memories[0].timestamp, memories[-1].timestamp
    day = f"{first.day} {first:%b %Y}"
    if last.date() != first.date():
        day += f" to {last.day} {last:%b %Y}"
    speakers = list(dict.fromkeys(m.speaker for m in memories if m.speaker))
    who = ", ".join(speakers[:3]) + (" …" if len(speakers) > 3 else "")
    parts = [session, day, who, ", ".join(words)]
    return " · ".join(p for p in parts if p)


def head_of(memories: Sequence[Memory], session: str, words: Sequence[str]) -> str:
    """The index line's lead: session, date range, speakers, keywords."""
    return _head(memories, session, words)


def _cited(sentence: _Sentence, citations: Mapping[str, str]) -> str:
    cite = citations.get(sentence.memory.id)
    who = f"{sentence.memory.speaker}: " if sentence.memory.speaker else ""
    return f"{who}{sentence.text}" + (f" [{cite}]" if cite else "")


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _one_line(text: str) -> str:
    return _cut(_flat(text), MAX_SENTENCE_CHARS)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(1, limit - 1)].rstrip() + "…"
