"""The per-language lexicon of order cues (``injection_lexicon.json`` beside this module), indexed
for a look-up per word (used by :mod:`safeguards.injection_orders`).

A cue belongs to a category (an action on systems, what it is done to, something to say, a
condition, whoever reads, a claimed approval ...; the file's ``about`` lists them) and to a
language. How a cue matches depends on its script:

- in scripts written without spaces (Chinese, Japanese, Thai), in Korean, whose words take
  particles, and in Hebrew, whose words take prefixes (and, the, that, to), anywhere;
- in Arabic-script and Indic scripts, whose words take endings, at the start of a word, running
  on into the ending (an Indic noun also loses its last vowel sign, which its case changes);
- elsewhere at the start of a word and, unless it ends with ``*`` (a stem), at its end; a ``*``
  inside a cue stands for the rest of a word (``baz* danych``), and `` … `` for up to six words
  (a separable verb: ``zet … uit``, ``schalte … ab``).

Greek is matched without its accents (``όποιος`` and ``οποιος`` are one cue), as people often
leave them out, and Persian and Urdu with Arabic's letter forms read as theirs (``ي`` as ``ی``,
``ك`` as ``ک``), as keyboards mix them; zero-width joiners and non-joiners do not count.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from safeguards.injection_ciphers import english_words

__all__ = ["LEXICON_PATH", "Lexicon", "fold", "load_lexicon"]

#: The shipped lexicon.
LEXICON_PATH = Path(__file__).with_name("injection_lexicon.json")

# Scripts written without spaces, or whose words take particles or prefixes: cues match anywhere.
_ANYWHERE = (
    "\u0e00-\u0e7f"  # Thai
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f"  # Chinese, Japanese
    "\u1100-\u11ff\uac00-\ud7af"  # Korean
    "\u0590-\u05ff"  # Hebrew
)
# Scripts with spaces whose words take endings (and whose vowel signs are not word characters to
# Python): cues match at the start of a word, and run on into its ending.
_SPACED = (
    "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff"  # Arabic, Persian, Urdu
    "\u0900-\u0dff"  # Devanagari, Bengali, ..., Tamil, Telugu
)
_ANYWHERE_CHAR = re.compile(f"[{_ANYWHERE}{_SPACED}]")
_ANYWHERE_RUN = re.compile(f"[{_ANYWHERE}]")
_SPACED_CHAR = re.compile(f"[{_SPACED}]")
_INDIC = re.compile("[\u0900-\u0dff]")
# categories of nouns, whose endings change with case (a verb's ending says it is an order)
_NOUNS = frozenset({"target", "model", "rules", "prompt", "reader", "discuss", "stakes"})
# every character of a script without spaces (group 1), or the start of a word (group 2)
_POSITIONS = re.compile(rf"([{_ANYWHERE}])|(?<![\w.'{_SPACED}-])([\w.{_SPACED}][\w{_SPACED}]*)")
_KEY = 3  # letters of a word a cue is indexed by
# " … " in a cue stands for up to six words: a separable verb ("zet … uit", "schalte … ab")
_GAP = " … "
_GAP_PATTERN = r"(?:\s+[^\s.;:!?]+){0,6}\s+"
_WORD = re.compile(r"[a-z]+")
# categories whose cues are read in their own language only: a cue of another language that is an
# English word is left out of them (English has its own)
_OWN = frozenset({"stakes", "standing", "self", "discuss"})
# Arabic's article and one-letter prefixes (and, with, for, so, as) before a word
_PREFIXES = ("وال", "بال", "فال", "كال", "لل", "ال", "و", "ب", "ل", "ف")
_ARABIC_PREFIXES = frozenset(p[0] for p in _PREFIXES)
_FOLD = str.maketrans(
    "άέήίόύώΐΰϊϋ\u064a\u0643\u0649",
    "αεηιουωιυιυ\u06cc\u06a9\u06cc",
    "\u200b\u200c\u200d\u2060\ufeff",
)


def fold(text: str) -> str:
    """``text`` with Greek accents and diaereses removed, Arabic letter forms read as Persian's,
    and zero-width characters dropped."""
    return text.translate(_FOLD)


@dataclass(frozen=True, slots=True)
class _Cue:
    category: str
    language: str
    literal: str  # the cue, or its part before the first stem mark
    pattern: re.Pattern[str] | None  # for a cue with a stem mark inside
    stem: bool
    anywhere: bool
    foreign_stem: bool = False  # another language's stem in Latin letters


class Lexicon:
    """The cues of :data:`LEXICON_PATH`, indexed for a look-up per word: by their first three
    letters (a shorter cue by itself), and in the scripts without spaces by their first two
    characters, looked up at every character."""

    def __init__(self, languages: dict[str, dict[str, list[str]]]) -> None:
        self.words: dict[str, list[_Cue]] = {}
        self.runs: dict[str, list[_Cue]] = {}
        # a cue that is an English word, or one of English's cues (ignore, transfer, model),
        # counts as English in any language
        english = {c.strip().lower() for cues in languages.get("en", {}).values() for c in cues}
        english |= english_words()
        self.english = english_words()
        for language, categories in languages.items():
            for category, cues in categories.items():
                for cue in cues:
                    text = fold(cue.strip().lower())
                    if text in english and language != "en" and category in _OWN:
                        continue  # German "note" (a mark) is not at stake in English text
                    self._add(_cue(category, "en" if text in english else language, text))
        for index in (self.words, self.runs):
            for found in index.values():
                found.sort(key=lambda c: -len(c.literal))
        self.singles = frozenset(key for key in self.runs if len(key) == 1)
        # one regular expression a key, of a lookahead a cue (compiled when first needed): a
        # look-up at a position is one match, whose groups say which cues are there
        self.probes: dict[str, tuple[re.Pattern[str], list[_Cue]] | None] = {}

    def _add(self, cue: _Cue) -> None:
        if cue.anywhere and _ANYWHERE_RUN.match(cue.literal):
            index, key = self.runs, cue.literal[:2]
        else:
            index, key = self.words, cue.literal[:_KEY]
        cues = index.setdefault(key, [])
        if cue not in cues:
            cues.append(cue)

    def matches(self, view: str) -> list[tuple[int, str, str, str]]:
        """``(position, category, language, excerpt)`` of every cue found in ``view`` (lower
        case, folded by :func:`fold`)."""
        found: list[tuple[int, str, str, str]] = []
        singles = self.singles
        for token in _POSITIONS.finditer(view):
            i = token.start()
            if token.group(1):  # a character of a script without spaces
                char = token.group(1)
                keys: tuple[str, ...] = (view[i : i + 2],)
                if char in singles:
                    keys += (char,)
            else:
                word = token.group(2)
                if word[0] in _ARABIC_PREFIXES:  # "الاسترداد", "والحساب": the cue after them
                    found += self._after_prefix(view, i, word)
                keys = (view[i : i + _KEY],)
                if len(word) < _KEY and word != keys[0]:
                    keys += (word,)
            for key in keys:
                found += self._matched(view, i, key)
        return found

    def _after_prefix(self, view: str, i: int, word: str) -> list[tuple[int, str, str, str]]:
        for prefix in _PREFIXES:
            if word.startswith(prefix) and len(word) > len(prefix) + 2:
                at = i + len(prefix)
                return self._matched(view, at, view[at : at + _KEY])
        return []

    def prepare(self) -> None:
        """Compile every cue's pattern now (about 0.3 s), so that no answer compiles them
        one by one as its texts first meet them (a server's readiness calls this)."""
        for index in (self.words, self.runs):
            for key, cues in list(index.items()):
                if key not in self.probes:
                    self.probes[key] = (_probe(cues), cues) if cues else None

    def _matched(self, view: str, i: int, key: str) -> list[tuple[int, str, str, str]]:
        if key in self.probes:
            probe = self.probes[key]
        else:
            cues = self.words.get(key) or self.runs.get(key)
            probe = self.probes[key] = (_probe(cues), cues) if cues else None
        if probe is None:
            return []
        matched = probe[0].match(view, i)
        if matched is None:
            return []
        cues = probe[1]
        found = [
            (i, cues[n].category, cues[n].language, text)
            for n, text in enumerate(matched.groups())
            if text is not None
        ]
        if any(cues[n].foreign_stem for n, text in enumerate(matched.groups()) if text):
            found = self._without_english(view, i, found)
        return found

    def _without_english(
        self, view: str, i: int, found: list[tuple[int, str, str, str]]
    ) -> list[tuple[int, str, str, str]]:
        """Leaves out another language's stem that begins an English word: Italian "approv*"
        is not an action in "approval", nor Polish "usu*" in "usual"."""
        word = _WORD.match(view, i)
        if word is None or word.group(0) not in self.english:
            return found
        return [hit for hit in found if hit[2] == "en" or hit[3].endswith(" ") or " " in hit[3]]


def _probe(cues: list[_Cue]) -> re.Pattern[str]:
    """A pattern that matches (empty) at any position, with a group for each cue found there."""
    parts = []
    for cue in cues:
        body = cue.pattern.pattern if cue.pattern is not None else re.escape(cue.literal)
        end = "" if cue.stem else r"(?!\w)"
        parts.append(f"(?:(?=({body}){end})|)")
    return re.compile("".join(parts))


def _cue(category: str, language: str, text: str) -> _Cue:
    anywhere = bool(_ANYWHERE_CHAR.search(text))
    stem = text.endswith("*")
    body = text.rstrip("*")
    if category in _NOUNS and _SPACED_CHAR.search(body):
        body = _stem(body)
    pattern = None
    if "*" in body or _GAP in body:
        pattern = re.compile(_GAP_PATTERN.join(_stems(part) for part in body.split(_GAP)))
    literal = body.split("*", 1)[0].split(_GAP, 1)[0]
    open_end = not body[-1:].isalnum()  # "dis qu'", "reviewer:": the next word may follow
    foreign_stem = language != "en" and stem and literal.isascii() and " " not in body
    return _Cue(
        category, language, literal, pattern, stem or anywhere or open_end, anywhere, foreign_stem
    )


def _stems(part: str) -> str:
    return r"[\w'-]*".join(re.escape(p) for p in part.split("*"))


def _stem(word: str) -> str:
    """A noun in an Indic script without its last vowel sign or virama, which its case changes
    (Tamil உதவியாளர் -> உதவியாளரே, Telugu సూచనలు -> సూచనలన్నింటినీ)."""
    stem = word
    while stem and unicodedata.category(stem[-1]) in ("Mn", "Mc") and _INDIC.match(stem[-1]):
        stem = stem[:-1]
    return stem if len(stem) >= 3 else word


@lru_cache(maxsize=1)
def load_lexicon(path: Path = LEXICON_PATH) -> Lexicon:
    """The lexicon in ``path`` (the shipped one by default), read once per process.

    Raises :class:`ValueError` naming the file when it is missing or malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        languages = {
            str(lang): {str(cat): [str(c) for c in cues] for cat, cues in cats.items()}
            for lang, cats in data["languages"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"cannot load the injection lexicon {path}: {exc}") from exc
    return Lexicon(languages)
