"""What kind of answer a question asks for, read off its form.

"Which *cities* has John been to?" asks for places, "what video *games* does Nate play?" for
things (works and products), "who", "whose" and "the *names* of John's children" for people,
"how many *plants*" for a count, "when" for a date. The answer's kind says which entity labels
answer it (``analyzer.answers``: a place is a GPE, LOC or FAC entity), so the memories that name
such an entity can be gathered even when they share no word with the question ("Counter-Strike"
for "video games").

The *head* is the noun the question asks about: with the trained pipeline, the noun the
question word determines in the parse ("which" -> "cities"), or the subject of "what are ..."
("what are Joanna's *hobbies*"), through "kind of", "type of", "names of"; with the rules alone,
the last word before the auxiliary ("which video *games* does"), or the word after "how many".
Its kind comes from the profile's noun lists, matched on stems (``games`` meets ``game``);
"where", "who" and "when" name theirs outright.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from analyzers.config import AnswerConfig
from analyzers.levels import AnswerType
from analyzers.text import stem

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_OF_STEMS = frozenset(
    stem(w) for w in ("kind", "type", "sort", "name", "number", "list", "variety", "genre")
)
_WH_KINDS = {"where": "place", "who": "person", "whom": "person", "whose": "person",
             "when": "date"}  # fmt: skip
_COUNT = ("many", "much")
_WORD = r"[a-z][\w'/-]*"


def answer_type(text: str, config: AnswerConfig, trained: Doc | None = None) -> AnswerType | None:
    """The answer ``text`` asks for (None when its form names none). ``trained``: the trained
    pipeline's parse of ``text``, read in place of the rules when it has a dependency parse."""
    if not config.enabled:
        return None
    parsed = trained is not None and trained.has_annotation("DEP")
    found = _from_parse(trained) if parsed and trained is not None else _from_rules(text.lower())
    if found is None:
        return None
    kind, head = found
    if head is not None and kind in (None, "count"):
        named = _kind_of_noun(head, config)
        kind = kind or named
    if kind is None and head is None:
        return None
    labels = config.kinds[kind].labels if kind in config.kinds else ()
    return AnswerType(kind=kind, head=head, labels=labels)


def _kind_of_noun(head: str, config: AnswerConfig) -> str | None:
    stems = _stems(config.model_dump_json())
    for part in head.split("/"):
        words = part.split()
        for word in words[-1:] if words else []:
            kind = stems.get(stem(word))
            if kind is not None:
                return kind
    return None


@lru_cache(maxsize=16)
def _stems(key: str) -> dict[str, str]:
    """The kind of each listed noun's stem (the config as JSON: the cache's key)."""
    table: dict[str, str] = {}
    for kind, rule in AnswerConfig.model_validate_json(key).kinds.items():
        for noun in rule.nouns:
            table.setdefault(stem(noun.lower()), kind)
    return table


# -- from the parse -------------------------------------------------------------------------------


def _from_parse(doc: Doc) -> tuple[str | None, str | None] | None:
    for token in doc:
        word = token.lower_
        if word == "how":
            following = doc[token.i + 1] if token.i + 1 < len(doc) else None
            if following is not None and following.lower_ in _COUNT:
                return "count", _first_noun(doc[token.i + 2 :])
            continue
        if word in _WH_KINDS:
            return _WH_KINDS[word], None
        if word in ("what", "which"):
            return None, _head_of(token)
    return None


def _head_of(wh: Token) -> str | None:
    """The noun a "what"/"which" asks about."""
    if wh.dep_ == "det" and wh.head.pos_ in ("NOUN", "PROPN"):
        return _through_of(wh.head)
    root = wh.head
    for child in root.children:  # "what are Joanna's hobbies": the copula's other argument
        if (
            child.i != wh.i
            and child.dep_ in ("nsubj", "attr", "nsubjpass")
            and child.pos_
            in (
                "NOUN",
                "PROPN",
            )
        ):
            return _through_of(child)
    return None


def _through_of(noun: Token) -> str:
    """ "kinds of *art*", "names of John's *children*": the noun after "of" when there is one."""
    if stem(noun.lower_) in _OF_STEMS:
        for prep in noun.children:
            if prep.dep_ == "prep" and prep.lower_ == "of":
                for obj in prep.children:
                    if obj.dep_ == "pobj" and obj.pos_ in ("NOUN", "PROPN"):
                        return _with_compound(obj)
    return _with_compound(noun)


def _with_compound(noun: Token) -> str:
    """ "video games", "tv series": the noun with the compound nouns before it."""
    parts = [t.lower_ for t in noun.lefts if t.dep_ == "compound"]
    return " ".join([*parts, noun.lower_])


def _first_noun(tokens: Iterable[Token]) -> str | None:
    for token in tokens:
        if token.pos_ in ("NOUN", "PROPN"):
            return _with_compound(token)
        if token.pos_ in ("VERB", "AUX"):
            break
    return None


# -- from the rules -------------------------------------------------------------------------------

_AUX = r"(?:do|does|did|has|have|had|is|are|was|were|can|could|would|will|should)"
_OF = r"(?:(?:kinds?|types?|sorts?|names?|genres?|varieties)\s+of\s+)?"
_WHICH = re.compile(rf"\b(?:what|which)\s+{_OF}((?:{_WORD}\s+){{0,2}}?{_WORD})\s+{_AUX}\b")
_WHAT_ARE = re.compile(
    rf"\bwhat\s+(?:are|were|is|was)\s+(?:the\s+|some\s+)?{_OF}(?:{_WORD}'s\s+)?"
    rf"({_WORD}(?:\s+{_WORD})?)"
)
_HOW_MANY = re.compile(rf"\bhow\s+(?:many|much)\s+((?:{_WORD}\s+)?{_WORD})")
_WH = re.compile(r"\b(where|who|whom|whose|when)\b")


def _from_rules(text: str) -> tuple[str | None, str | None] | None:
    if m := _HOW_MANY.search(text):
        return "count", _last_noun_guess(m.group(1))
    if m := _WHICH.search(text):
        return None, m.group(1)
    if m := _WHAT_ARE.search(text):
        return None, _last_noun_guess(m.group(1))
    if m := _WH.search(text):
        return _WH_KINDS[m.group(1)], None
    return None


_FUNCTION_WORDS = frozenset(
    {"did", "does", "do", "has", "have", "had", "is", "are", "was", "were", "the", "a", "an",
     "of", "to", "in", "on", "for", "with", "and", "or", "that", "this", "i", "you", "he", "she",
     "they", "we", "it", "his", "her", "their", "my", "your", "our"}
)  # fmt: skip


def _last_noun_guess(words: str) -> str | None:
    """The words up to the first function word: "plants did" -> "plants"."""
    kept: list[str] = []
    for word in words.split():
        if word in _FUNCTION_WORDS or word.endswith("'s"):
            break
        kept.append(word)
    return " ".join(kept) or None
