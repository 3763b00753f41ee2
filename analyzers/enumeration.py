"""Does the query ask for a set or a count, rather than one fact?

"Which cities has John been to?", "What kinds of yoga has Maria practised?", "How many plants
did I buy last month?": the answer is spread over several memories, often in different
sessions, and every one of them is needed. Such a query gets the ``enumeration`` signal, whose
floor (``analyzer.floors.enumeration``) can lift it to a level with a larger budget.

Two cues, both on the lowercased text:

* a phrase of ``analyzer.enumeration.phrases`` ("how many", "kinds of", "both", "all the"), as
  whole words for Latin-script phrases and as a substring, spaces ignored, for the others;
* a question word of ``question_words`` followed, within ``object_words`` words and before an
  auxiliary verb of ``auxiliaries``, by a regular English plural ("which *cities* has",
  "what video *games* does"), or "what are/were [the|some] <plural>" ("what are the *skills*").

A blank spaCy pipeline has no part-of-speech tags, so plurals are read off the word's ending:
-s or -es, not -ss, -us, -is or -ous, and more than three letters, plus the irregular plurals
listed in ``plurals``. That misses some plurals and takes a few singulars ("series") for
plurals; the signal only widens the budget, so a false positive costs tokens, not answers.
"""

from __future__ import annotations

import re
from functools import lru_cache

from analyzers.config import EnumerationConfig
from analyzers.text import compact, is_latin

_NOT_PLURAL_ENDINGS = ("ss", "us", "is", "ous", "'s")
_WORD = r"[\w'/-]+"


def asks_for_set(text: str, config: EnumerationConfig) -> bool:
    """True when ``text`` (a query) asks for several things or a count (see the module)."""
    if not config.enabled:
        return False
    lowered = text.lower()
    patterns = _patterns(config)
    if patterns.phrases is not None and patterns.phrases.search(lowered):
        return True
    if patterns.others:
        squeezed = compact(text)
        if any(phrase in squeezed for phrase in patterns.others):
            return True
    for pattern in (patterns.object_before_aux, patterns.what_are):
        for match in pattern.finditer(lowered):
            if any(_plural(w, config.plurals) for w in match.group(1).split()):
                return True
    return False


def _plural(word: str, irregular: tuple[str, ...]) -> bool:
    for part in word.strip("'\"").split("/"):  # "artists/bands"
        if part in irregular:
            return True
        if len(part) > 3 and part.endswith("s") and not part.endswith(_NOT_PLURAL_ENDINGS):
            return True
    return False


class _Patterns:
    def __init__(self, config: EnumerationConfig) -> None:
        latin = [p.lower() for p in config.phrases if is_latin(p)]
        self.others = tuple(compact(p) for p in config.phrases if not is_latin(p))
        self.phrases = (
            re.compile(r"\b(?:" + "|".join(_phrase(p) for p in latin) + r")\b") if latin else None
        )
        wh = "|".join(re.escape(w.lower()) for w in config.question_words) or "(?!x)x"
        aux = "|".join(re.escape(w.lower()) for w in config.auxiliaries) or "(?!x)x"
        span = rf"((?:{_WORD}\s+){{1,{config.object_words}}}?)"
        self.object_before_aux = re.compile(rf"\b(?:{wh})\s+{span}(?:{aux})\b")
        self.what_are = re.compile(
            rf"\b(?:{wh})\s+(?:are|were)\s+(?:(?:the|some|some of the|all the)\s+)?({_WORD})"
        )


def _phrase(phrase: str) -> str:
    return r"\s+".join(re.escape(word) for word in phrase.split())


@lru_cache(maxsize=16)
def _patterns(config: EnumerationConfig) -> _Patterns:
    return _Patterns(config)
