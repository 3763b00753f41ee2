"""The one tokenisation behind every lexical index: the hot set's BM25 and both cold engines.

``tokenize`` NFKC-normalises and case-folds the text, then splits it into runs of letters and
digits (any script; ``_`` and punctuation separate words, so ``billing/invoice_total.py`` gives
``billing invoice total py``), and adds every compound written without spaces as one more token
(``billing/invoice_total.py``, ``192.168.0.1``; codes of letters and digits joined, so
``QX-0042`` and ``QX0042`` meet as ``qx0042``): an exact code, version or path weighs as the rare
token it is. Chinese and Japanese, written without spaces, become overlapping
character bigrams. Documents keep every token; queries drop stopwords (unless nothing else is
left) and repeated words, so the stopword list can change without a reindex.

With ``stem="porter"`` (the default) every token is reduced to its Porter stem (snowball's
``porter``, the algorithm of SQLite FTS5's ``porter`` tokenizer), so "painted", "paintings" and
"painting" meet; stopwords are recognised before stemming. Tokens without Latin suffixes (Korean,
Chinese bigrams, numbers) pass through unchanged.

The FTS5 engine stores these tokens joined by spaces under SQLite's ``ascii`` tokenizer, which
treats every non-ASCII character as part of a token and folds nothing we have not folded
already: it sees exactly the tokens this module produced. Bump :data:`TOKENIZER_VERSION`
whenever the output of :func:`tokenize` changes; an on-disk index built with another
:attr:`Tokenizer.fingerprint` (version and stemming) is rebuilt when the archive opens.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

TOKENIZER_VERSION = 2

_WORD = re.compile(r"[^\W_]+")
# Codes, versions, paths and hyphenated names written without spaces: QX-0042, v2.3.1,
# billing/invoice_total.py, 192.168.0.1, data-residency. Each is also one token.
_COMPOUND = re.compile(r"[^\W_]+(?:[-_./:@#][^\W_]+)+")
_SEPARATORS = re.compile(r"[-_./:@#]")
# Scripts written without spaces between words: Hiragana, Katakana, CJK ideographs.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+")

# NLTK's English list (public domain), case-folded; question words are stopwords for BM25.
ENGLISH_STOPWORDS = frozenset(
    """
    a about above after again against ain all am an and any are aren as at be because been
    before being below between both but by can couldn d did didn do does doesn doing don down
    during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just ll m ma me mightn more
    most mustn my myself needn no nor not now o of off on once only or other our ours
    ourselves out over own re s same shan she should shouldn so some such t than that the
    their theirs them themselves then there these they this those through to too under until
    up ve very was wasn we were weren what when where which while who whom why will with won
    wouldn y you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def tokenize(text: str) -> list[str]:
    """Every token of ``text``, in order, repeats kept (what a document is indexed with): its
    words, then each compound written without spaces (``qx-0042``, ``v2.3.1``), whole, so an
    exact code or path in a query meets the memory that has it."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    tokens: list[str] = []
    for word in _WORD.findall(folded):
        if _CJK.search(word) is None:
            tokens.append(word)
        else:
            tokens.extend(_split_cjk(word))
    tokens.extend(_compound(c) for c in _COMPOUND.findall(folded) if _CJK.search(c) is None)
    return tokens


def _compound(text: str) -> str:
    """A code of letters and digits joins its parts (``qx-0042`` -> ``qx0042``, which is how
    ``QX0042`` is written too); other compounds stay as written (``192.168.0.1``, paths)."""
    if any(c.isdigit() for c in text) and any(c.isalpha() for c in text):
        return _SEPARATORS.sub("", text)
    return text


def _split_cjk(word: str) -> list[str]:
    out: list[str] = []
    position = 0
    for run in _CJK.finditer(word):
        if run.start() > position:
            out.append(word[position : run.start()])
        chars = run.group()
        out.extend([chars] if len(chars) == 1 else [a + b for a, b in itertools.pairwise(chars)])
        position = run.end()
    if position < len(word):
        out.append(word[position:])
    return out


Stemming = Literal["porter", "none"]


@lru_cache(maxsize=1)
def _porter() -> object:
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


@lru_cache(maxsize=262_144)
def porter_stem(token: str) -> str:
    """The Porter stem of one (case-folded) token; cached, the vocabulary is Zipfian."""
    if not token.isascii() or not token.isalpha():
        return token  # numbers, Korean, CJK bigrams: nothing to strip
    return str(_porter().stemWord(token))  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """:func:`tokenize` for documents, and queries with ``stopwords`` dropped; both stemmed
    when ``stem`` is ``porter``."""

    stopwords: frozenset[str] = ENGLISH_STOPWORDS
    stem: Stemming = "porter"

    @classmethod
    def from_setting(cls, stopwords: str | Iterable[str], stem: Stemming = "porter") -> Tokenizer:
        """``english``, ``none``, or a list of words (the profile's ``tiers.tokenizer``)."""
        if stopwords == "english":
            return cls(ENGLISH_STOPWORDS, stem)
        if stopwords == "none":
            return cls(frozenset(), stem)
        if isinstance(stopwords, str):
            raise ValueError(f"unknown stopword list {stopwords!r}; use english, none or a list")
        return cls(frozenset(tok for word in stopwords for tok in tokenize(word)), stem)

    @property
    def fingerprint(self) -> str:
        """What an on-disk index depends on: the tokenizer version and the stemming."""
        return f"{TOKENIZER_VERSION}:{self.stem}"

    def document(self, text: str) -> list[str]:
        """Every token of a document, repeats kept."""
        tokens = tokenize(text)
        return [porter_stem(t) for t in tokens] if self.stem == "porter" else tokens

    def query(self, text: str) -> list[str]:
        """The distinct tokens of a query, first occurrence first, stopwords dropped.

        A query made only of stopwords (``to be or not to be``) keeps them: better a weak
        match than none.
        """
        distinct = list(dict.fromkeys(tokenize(text)))
        kept = [tok for tok in distinct if tok not in self.stopwords] or distinct
        if self.stem == "porter":
            kept = list(dict.fromkeys(porter_stem(t) for t in kept))
        return kept
