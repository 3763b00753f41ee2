"""What an evaluation runs on: conversations of memories, questions with gold evidence, and a log.

A :class:`Dataset` is loaded once (:mod:`disclosure.evaluation.locomo` or
:mod:`disclosure.evaluation.jsonl`) and never changes. Gold evidence is held as memory ids;
evidence the loader could not resolve is kept out of ``Question.evidence`` (so it never enters a
recall denominator) and described in ``Dataset.issues``, with every repair the loader made.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType

from tiers.memory import Memory


@dataclass(frozen=True, slots=True)
class DatasetIssue:
    """One thing the loader repaired or could not use: where, what kind, and the detail.

    ``kind`` is one of ``evidence-split``, ``evidence-normalised``, ``evidence-duplicate``
    (repaired), ``evidence-unresolved`` (dropped from the denominators), ``no-evidence`` (the
    question is asked but not scored for recall), ``dates-without-session`` (ignored).
    """

    where: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.kind}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Question:
    """A question about one conversation, with the memory ids of its gold evidence turns."""

    id: str
    conversation_id: str
    text: str
    evidence: tuple[str, ...]
    category: str | None = None
    answer: str | None = None
    unresolved_evidence: tuple[str, ...] = ()

    @property
    def scored(self) -> bool:
        """Whether recall, hit rate and precision are defined for this question."""
        return bool(self.evidence)


@dataclass(frozen=True, slots=True)
class Conversation:
    """The memories of one conversation, in time order, and the moment its questions are asked."""

    id: str
    memories: tuple[Memory, ...]
    now: datetime
    contents: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        contents = MappingProxyType({m.id: m.content for m in self.memories})
        object.__setattr__(self, "contents", contents)


@dataclass(frozen=True, slots=True)
class Dataset:
    """Conversations and their questions (in order), plus the loader's repair log."""

    name: str
    conversations: tuple[Conversation, ...]
    questions: tuple[Question, ...]
    issues: tuple[DatasetIssue, ...] = ()
    category_codes: Mapping[int, str] = field(default_factory=dict)

    def conversation(self, conversation_id: str) -> Conversation:
        for conversation in self.conversations:
            if conversation.id == conversation_id:
                return conversation
        raise KeyError(conversation_id)

    def questions_of(self, conversation_id: str) -> tuple[Question, ...]:
        return tuple(q for q in self.questions if q.conversation_id == conversation_id)

    def categories(self) -> list[str]:
        """The categories present, in first-seen order (``uncategorised`` for None)."""
        return list(dict.fromkeys(q.category or "uncategorised" for q in self.questions))

    def select(
        self,
        *,
        categories: Iterable[int | str] | None = None,
        limit: int | None = None,
        seed: int = 0,
    ) -> Dataset:
        """The questions in ``categories`` (codes or names), then a seeded sample of ``limit``.

        The sample keeps dataset order, so each conversation's questions are still asked in turn.
        """
        questions = list(self.questions)
        if categories is not None:
            wanted = {self._category_name(c) for c in categories}
            questions = [q for q in questions if q.category in wanted]
        if limit is not None and limit < len(questions):
            keep = sorted(random.Random(seed).sample(range(len(questions)), limit))
            questions = [questions[i] for i in keep]
        return replace(self, questions=tuple(questions))

    def _category_name(self, category: int | str) -> str:
        if isinstance(category, int) and not isinstance(category, bool):
            return self.category_codes.get(category, str(category))
        return str(category)

    @property
    def scored_questions(self) -> tuple[Question, ...]:
        return tuple(q for q in self.questions if q.scored)
