"""Simulated readers: the reply a model would give to a disclosure, for the feedback loop.

The adaptive budget learns from what replies use, so evaluating it needs replies. A reader
here is a function of the question and the disclosure that returns the reply text (or None: no
reply, no feedback). The runner sends each reply back through ``feedback`` before the next
question of the conversation, as a chat would.

``cite-gold`` is the ideal reader of evidence recall: it answers citing, ``[mem:a7Bc3x]``, every
disclosed memory that is gold evidence for the question (at any layer, a cut one included: what
a reader sees, it can use), in the order they were disclosed, after a sentence that uses none of
them. It cites nothing when no gold evidence was disclosed.
"""

from __future__ import annotations

from collections.abc import Callable

from disclosure.core.result import DisclosureResult
from disclosure.evaluation.dataset import Question
from tiers.registry import Registry

Reader = Callable[[Question, DisclosureResult], str | None]

PREAMBLE = "Going by what we talked about before, here is what I can tell you."
NOTHING = "I could not find that in what we talked about before."


def cite_gold(question: Question, result: DisclosureResult) -> str:
    """The reply citing each disclosed gold item of ``question``, after a preamble."""
    gold = set(question.evidence)
    cited = [f"[{item.citation}]" for item in result.items if item.id in gold and item.citation]
    if not cited:
        return NOTHING
    return f"{PREAMBLE} See {' '.join(dict.fromkeys(cited))}."


#: The readers by name; register another with ``READERS.register(name, reader)``.
READERS: Registry[Reader] = Registry("reader")
READERS.register("cite-gold", cite_gold)


def get_reader(name: str) -> Reader:
    """The reader called ``name``; a miss lists the available ones."""
    return READERS.get(name)
