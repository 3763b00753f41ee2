"""Text helpers: Unicode normalisation, script detection and the trigger-word stemmer.

Why a stemmer and not lemmas: a blank English pipeline has no lemmatizer, and the lookup tables
(``spacy-lookups-data``) add 99 MB to match a few dozen trigger words. The analyzer only needs
"analyzing", "explained", "debugging" and "explains" to meet "analyze", "explain", "debug": so
:func:`stem` strips the regular English inflections (-s, -es, -ies, -ed, -ied, -ing, a final -e,
a doubled final consonant) from ASCII words, and is applied to the trigger phrases and to every
word of the text alike. It is a matching key, not a lemma ("analyze" -> "analyz"); irregular
forms ("understood") and derivations ("explanation") are not conflated: list them if wanted.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

_LATIN_LIMIT = 0x0250  # Basic Latin up to the end of Latin Extended-B
_KEEP_S = ("ss", "us", "is")
_NO_UNDOUBLE = frozenset("aeioulsz")


def normalise(text: str) -> str:
    """NFKC-normalised text (full-width letters, ligatures and compatibility forms folded)."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def is_latin(phrase: str) -> bool:
    """True when every letter of ``phrase`` is in a Latin block (so the tokenizer splits it)."""
    return phrase.isascii() or all(ord(ch) < _LATIN_LIMIT for ch in phrase if ch.isalpha())


def compact(text: str) -> str:
    """Case-folded text without whitespace: the key for matching non-Latin phrases."""
    return "".join(text.casefold().split())


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The matching key of ``word``: lowercase, regular English inflections stripped."""
    w = word.lower()
    if len(w) <= 3 or not (w.isascii() and w.isalpha()):
        return w
    w = _strip_suffix(w)
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _strip_suffix(w: str) -> str:
    if w.endswith(("ies", "ied")) and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("ing") and len(w) > 5:
        return _undouble(w[:-3])
    if w.endswith("eed"):
        return w
    if w.endswith("ed") and len(w) > 4:
        return _undouble(w[:-2])
    if w.endswith("es") and (w[-3] in "sxz" or w.endswith(("ches", "shes"))):
        return w[:-2]
    if w.endswith("s") and not w.endswith(_KEEP_S):
        return w[:-1]
    return w


def _undouble(w: str) -> str:
    # debugg(ing) -> debug, stopp(ed) -> stop; fill(ed), pass(ed) and add(ing) keep theirs
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in _NO_UNDOUBLE:
        return w[:-1]
    return w
