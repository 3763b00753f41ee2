"""Safety of disclosed text: private spans never leave, injected instructions are defanged.

Two defences, applied by every built-in formatter to every piece of memory text it renders
(content, summary, entities, metadata, neighbours):

- :func:`strip_private` removes ``<private>...</private>`` spans. The controller also calls it at
  ingest, so private text is never stored; the formatters call it again as defence in depth.
- :func:`scan` and :func:`neutralize`: retrieved text that looks like prompt injection is defanged
  before it reaches the model. Findings carry a weight; a text is *flagged* when its weights add up
  to at least 1. A flagged text has its markers made unparseable (angle brackets become single
  angle quotes U+2039 and U+203A, ``[INST]`` gets full-width brackets, ``"tool_calls"`` gets curly
  quotes, links lose ``http``) and the formatter prefixes it with :data:`FLAG_NOTE`. Text that is
  not flagged is returned unchanged, so benign memories stay verbatim.

What counts (the rules are in :mod:`safeguards.injection_rules`; the corpora in
``tests/safeguards/test_filter.py`` and ``benchmarks/safety_rates.py``, with measured rates):
instructions to ignore or override earlier instructions (English plus nine other languages,
matched on a view that undoes case, spacing, zero-width characters, full-width forms, Cyrillic
look-alikes and leetspeak), requests to reveal the system prompt, persona switches ("you are now
DAN"), chat-template markers (``<|im_start|>``, ``[INST]``, ``<<SYS>>``), fake role tags and
headings (``<system>``, ``</user>``, ``### System:``, ``[SYSTEM]``), tool-call markup
(``<tool_call>``, ``<function_calls>``, ``<invoke ...>``, ``{"tool_calls": [...]}``), escapes from
the memory wrapper (``[End memory context]``) and Markdown image or link exfiltration
(``![x](https://evil/?q=...)``). Markers inside Markdown code (fenced or inline) count as quoted,
at a quarter of their weight, so documentation *about* these markers is not flagged on their
account alone. Beyond these, independent signals (:mod:`safeguards.injection_signals`: who the
text addresses, control verbs, claimed authority, evasion, overrides, sensitive targets,
obfuscation) each weigh under 1 and flag a text only when several combine. Orders that never
address a model are read by what they ask and of whom (:mod:`safeguards.injection_orders`, from
a lexicon of 25 languages): errands on the user's systems for whoever reads, conditional and
deferred triggers, tasks for whoever summarises or reviews. Text hidden by reversal, acrostics
and shifted alphabets is decoded (:mod:`safeguards.injection_ciphers`) and counts when what it
says is an order. Last, a small learned
classifier (:mod:`safeguards.injection_model`: a logistic regression over words, stems and
concept words in many languages plus the kinds of the rule findings, trained offline, shipped as
JSON weights) scores the folded text and flags it on its own when its probability reaches the
threshold fixed in training; it also scores what hidden text decodes to. It also vetoes: a text
the rules flag but the classifier reads as ordinary (probability under the model's ``veto``) is
not flagged, unless it hides text. The rules match words and shapes that notes about admins,
prompts and tools use too; the classifier weighs the whole text. The veto shows in the findings
as ``classifier-ordinary`` with a negative weight that cancels the rules'.

Scanning is the costly part of showing a memory (a few tenths of a millisecond per text), so a
caller may keep verdicts: :data:`FILTER_VERSION` fingerprints everything a verdict depends on
(this module, the rule, shape, signal, order, cipher and hidden-text modules, the classifier and
its weights, the order lexicon, the word list, Python's Unicode tables), :func:`is_clean` scans a
text without the process caches, and inside ``with known_verdicts(source):`` :func:`neutralize`
asks ``source`` before scanning a text the process has not seen. Only "clean" verdicts can be
kept that way; a flagged text is always scanned (its defanged form and findings are needed).
"""

from __future__ import annotations

import hashlib
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from safeguards import (
    injection_ciphers,
    injection_hidden,
    injection_model,
    injection_orders,
    injection_rules,
    injection_shapes,
    injection_signals,
)
from safeguards.injection_ciphers import cipher_payloads
from safeguards.injection_hidden import hidden_payloads, tag_text, without_tags
from safeguards.injection_model import load_model
from safeguards.injection_orders import order_hits
from safeguards.injection_rules import (
    BADGE_QUERY,
    DEFANG_BRACKETS,
    DEFANG_RULES,
    FOREIGN_RULE,
    MARKER_RULES,
    PHRASE_RULES,
    Rule,
)
from safeguards.injection_shapes import (
    GATES,
    LOOKALIKES,
    MIXED_SCRIPT_RULE,
    SECOND_PERSON,
    SHAPE_MARKERS,
    SHAPE_RULES,
    TOOL_IDENTIFIER_RULE,
)
from safeguards.injection_signals import obfuscation_hit, signal_hits

__all__ = [
    "FILTER_VERSION",
    "FLAG_NOTE",
    "Finding",
    "Verdicts",
    "is_clean",
    "is_flagged",
    "known_verdicts",
    "neutralize",
    "scan",
    "strip_private",
]

#: What a formatter puts before a flagged text.
FLAG_NOTE = "[flagged: possible prompt injection]"

# -- private spans --------------------------------------------------------------------------------

_PRIVATE_TAG = re.compile(r"<\s*(/?)\s*private\b[^<>]*>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """``text`` without its ``<private>`` spans; ``""`` when nothing but whitespace remains.

    Tags are matched case-insensitively and may carry attributes (``<private reason="pin">``);
    spans may nest and cross lines. An unclosed tag hides everything after it; a stray closing tag
    is dropped. Whitespace on both sides of a removed span collapses to the left side's.
    """
    if "<" not in text or "private" not in text.lower():
        return text
    kept: list[str] = []
    depth = 0
    position = 0
    for tag in _PRIVATE_TAG.finditer(text):
        if depth == 0:
            _keep(kept, text[position : tag.start()], after_cut=position > 0)
        depth = max(0, depth - 1) if tag.group(1) else depth + 1
        position = tag.end()
    if depth == 0:
        _keep(kept, text[position:], after_cut=True)
    result = "".join(kept)
    if depth or position == len(text):  # the text ended in a removed span
        result = result.rstrip()
    return result if result.strip() else ""


def _keep(kept: list[str], piece: str, *, after_cut: bool) -> None:
    """Append ``piece``; whitespace on both sides of a removed span collapses to the left side's."""
    if after_cut and (not kept or kept[-1][-1:].isspace()):
        piece = piece.lstrip()
    if piece:
        kept.append(piece)


# -- prompt injection -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """One suspicious pattern: its kind, the rule that fired, the text it matched and its weight."""

    kind: str
    rule: str
    excerpt: str
    weight: float
    quoted: bool = False


_ZERO_WIDTH = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]+`", re.DOTALL)
_LETTER_SPACED = re.compile(r"\b(?:\w[ .\-_*]){2,}\w\b")
_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "l",
    }
)
_LEET_WORD = re.compile(r"[\w@$!|]*[a-z][\w@$!|]*")
_LEET_CHARS = frozenset("0134579@$!|")
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁɡℓαεορτυνκιмтвнАЕОРСХІЈЅΑΕΟΡΤΥΝΚΙМТВН",
    "aeopcyxijsdglaeoptuvkimtbhaeopcxijsaeoptynkimtbh",
)
_TRIGGER = re.compile(
    r"[<\[{]|!\[|#|\]\(|ignor|disregard|forget|overrid|overwrit|bypass|instruc|system|prompt|"
    r"jailbreak|mode|now\b|act\s+as|pretend|reveal|assistant|model|send|upload|tell|user|task|"
    r"note|rule|attention|follow|pwn|anweisung|vergiss|oubli|consigne|olvid|istruzion|dimentica|"
    r"\bai\b|\bllm|END\s+OF|print|repeat|output|call|invoke|pretend|imagine|role-?play|game|"
    r"character|authori[sz]|approved|developer|admin|directive|decode|guideline|restriction|"
    r"limit|everything|above|agent|\bbot|\brole\b|[A-Za-z0-9+/_-]{20}|execut|function|tool|"
    r"permission|granted|secretly|quietly|silently|policy|claude|gpt|gemini|copilot|\byou|"
    r"[^\x00-\x7f]|rot[\s_-]?13|%[0-9a-f]{2}|\b(?:\w[ .\-_*]){3}\w\b|[a-z][0134579@$!|]+[a-z]",
    re.IGNORECASE,
)
_HIDDEN_DEPTH = 2  # an encoding inside an encoding is decoded once more, no further
_FLAG_THRESHOLD = 1.0
_QUOTED_CAP = 0.5  # markers quoted in Markdown code never flag a text on their own
_EXCERPT_CHARS = 80


def scan(text: str) -> list[Finding]:
    """Every suspicious pattern in ``text``, strongest first; an empty list for clean text.

    A ``classifier-ordinary`` finding (negative weight) records the classifier's veto of the
    rules' flag; :func:`is_flagged` sums the weights."""
    return list(_scan(text))


def is_flagged(findings: list[Finding] | tuple[Finding, ...]) -> bool:
    """Whether findings add up to a flag: weights sum to at least 1, quoted ones to at most 0.5."""
    plain = sum(f.weight for f in findings if not f.quoted)
    quoted = min(_QUOTED_CAP, sum(f.weight for f in findings if f.quoted))
    return plain + quoted >= _FLAG_THRESHOLD - 1e-9


def neutralize(text: str) -> tuple[str, list[Finding]]:
    """``(text, [])`` for clean text; for flagged text, the defanged text and its findings.

    The text is only changed when it is flagged: zero-width characters are removed, angle
    brackets become single angle quotes (U+2039, U+203A), ``[INST]``-style and ``[SYSTEM]``
    brackets become full-width, tool keys in JSON get curly quotes, role colons become U+A789,
    and links lose their scheme (``hxxps://``) and their image ``!``. Add :data:`FLAG_NOTE`
    where the text is shown.
    """
    cleaned, findings = _neutralize(text)
    return cleaned, list(findings)


@lru_cache(maxsize=8192)
def _neutralize(text: str) -> tuple[str, tuple[Finding, ...]]:
    source = _VERDICTS.get()
    if source is not None and source.known_clean(text):
        return text, ()
    findings = _scan(text)
    if not is_flagged(findings):
        return text, ()
    return _defang(without_tags(_ZERO_WIDTH.sub("", text))), findings


class Verdicts(Protocol):
    """Kept verdicts of earlier scans (under :data:`FILTER_VERSION`)."""

    def known_clean(self, text: str) -> bool:
        """Whether ``text`` was scanned before, by this filter, and found clean."""
        ...


_VERDICTS: ContextVar[Verdicts | None] = ContextVar("scan_verdicts", default=None)


@contextmanager
def known_verdicts(source: Verdicts | None) -> Iterator[None]:
    """Within the block (this thread or task), :func:`neutralize` asks ``source`` whether a text
    it has not seen in this process is known to be clean before scanning it."""
    token = _VERDICTS.set(source)
    try:
        yield
    finally:
        _VERDICTS.reset(token)


def is_clean(text: str) -> bool:
    """Whether :func:`neutralize` would return ``text`` unchanged, scanned afresh (no cache nor
    kept verdict is consulted or filled)."""
    return not is_flagged(_scan_at(text, 0))


def _filter_version() -> str:
    """A fingerprint of what decides a verdict: the source of the modules that scan, the
    classifier's weights and the Unicode tables the folding relies on. Any change to them
    changes it, so verdicts kept under another one are not trusted."""
    digest = hashlib.sha256(f"unicode {unicodedata.unidata_version}\n".encode())
    modules = (
        sys.modules[__name__],
        injection_ciphers,
        injection_hidden,
        injection_model,
        injection_orders,
        injection_rules,
        injection_shapes,
        injection_signals,
    )
    files = sorted({Path(str(m.__file__)) for m in modules})
    files += [
        injection_model.MODEL_PATH,
        injection_orders.LEXICON_PATH,
        injection_ciphers.WORDS_PATH,
    ]
    for file in files:
        digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


@lru_cache(maxsize=8192)
def _scan(text: str) -> tuple[Finding, ...]:
    return _scan_at(text, 0)


def _scan_at(text: str, depth: int, *, learned: bool = True) -> tuple[Finding, ...]:
    if not text or not (_TRIGGER.search(text) or _may_order(text, depth)):
        return ()
    bare = _ZERO_WIDTH.sub("", text)
    nfkc = unicodedata.normalize("NFKC", bare)
    findings = [*_marker_findings(bare), *_marker_findings(nfkc)]
    folded = _fold(bare)
    findings += [
        _finding(rule, m.group(0))
        for rule in (*PHRASE_RULES, *SHAPE_RULES)
        if _gate_open(rule.name, folded)
        for m in rule.pattern.finditer(folded)
    ]
    lower = nfkc.lower()
    findings += [_finding(FOREIGN_RULE, m.group(0)) for m in FOREIGN_RULE.pattern.finditer(lower)]
    findings += [_finding(MIXED_SCRIPT_RULE, m.group(0)) for m in _mixed_words(lower)]
    findings += [_finding(TOOL_IDENTIFIER_RULE, m.group(0)) for m in _tool_orders(lower)]
    findings += _signal_findings(text, folded, lower)
    findings += _order_findings(text, lower)
    probability = None
    if learned:
        probability = _probability(bare, folded, findings)
        findings += _learned_findings(probability, folded)
    if depth < _HIDDEN_DEPTH:
        findings += _hidden_findings(bare, depth, learned=learned)
    if probability is not None and depth == 0:
        findings += _veto(probability, folded, findings)
    unique = {(f.rule, f.excerpt.lower()): f for f in findings}
    return tuple(sorted(unique.values(), key=_strongest_first))


def _strongest_first(finding: Finding) -> tuple[float, bool, str, str]:
    """Heavier findings first; at equal weight a rule (which names what matched) before the
    classifier."""
    return (-finding.weight, finding.kind == "learned", finding.rule, finding.excerpt)


def learned_view(text: str) -> tuple[str, str, tuple[str, ...]]:
    """What the classifier reads of ``text``: the folded view, the text without zero-width
    characters, and the kinds of the rule findings in it (for training the model on the
    same features the scan gives it)."""
    bare = _ZERO_WIDTH.sub("", text)
    kinds = _rule_kinds(_scan_at(text, _HIDDEN_DEPTH, learned=False))
    return _fold(bare), bare, kinds


def _rule_kinds(findings: Iterable[Finding]) -> tuple[str, ...]:
    return tuple(sorted({f.kind for f in findings if not f.quoted}))


def _probability(bare: str, folded: str, findings: list[Finding]) -> float:
    """The classifier's (:mod:`safeguards.injection_model`) probability that the text is an
    injected order; the rules' findings so far are among its features."""
    return load_model().probability(folded, bare, _rule_kinds(findings))


def _learned_findings(probability: float, folded: str) -> list[Finding]:
    """A finding of weight 1 when the classifier's probability reaches its threshold."""
    if probability < load_model().threshold:
        return []
    return [Finding("learned", "classifier", f"p={probability:.2f}: {folded[:60]}", 1.0)]


def _veto(probability: float, folded: str, findings: list[Finding]) -> list[Finding]:
    """A finding that cancels the rules' weight when the classifier reads the text as ordinary
    (probability under its ``veto``) and nothing in it is hidden: the rules match words and
    shapes that ordinary notes about prompts, admins and tools use too, while the classifier
    weighs the whole text. Hidden text (invisible tag characters, a suspicious decoded payload)
    is never ordinary, so it is not vetoed."""
    if probability >= load_model().veto or any(f.kind == "hidden" for f in findings):
        return []
    if not is_flagged(findings):
        return []
    weight = sum(f.weight for f in findings if not f.quoted)
    weight += min(_QUOTED_CAP, sum(f.weight for f in findings if f.quoted))
    excerpt = f"p={probability:.2f}: {folded[:60]}"
    return [Finding("learned", "classifier-ordinary", excerpt, -weight)]


def _signal_findings(raw: str, folded: str, lower: str) -> list[Finding]:
    """One finding per kind of evidence (see :mod:`safeguards.injection_signals`): each weighs
    under 1, so a text is flagged by signals only when several kinds combine."""
    views = (folded,) if folded == lower else (folded, lower)
    found = [
        Finding(kind, f"signal-{kind}", " ".join(excerpt.split())[:_EXCERPT_CHARS], weight)
        for kind, weight, excerpt in signal_hits(views, raw)
    ]
    hidden = obfuscation_hit(raw)
    if hidden is not None:
        found.append(Finding("obfuscation", "signal-obfuscation", hidden[:_EXCERPT_CHARS], 0.5))
    return found


def _may_order(text: str, depth: int) -> bool:
    """Whether a text without any word the rules look for still holds an order of
    :mod:`safeguards.injection_orders` or an encoding of :mod:`safeguards.injection_ciphers`
    (both cheap beside the full scan)."""
    lower = " ".join(unicodedata.normalize("NFKC", text).lower().split())
    if any(weight >= 0.5 for _, weight, _ in order_hits(lower, text)):
        return True  # an errand's hint alone does not: "TODO: add the table" is a note
    return depth == 0 and bool(cipher_payloads(text))


def _order_findings(raw: str, lower: str) -> list[Finding]:
    """Orders recognised by what they ask and of whom (see :mod:`safeguards.injection_orders`):
    errands, triggers, tasks for whoever summarises, orders in other languages."""
    view = " ".join(lower.split())  # lower case, not folded: the lexicon has Cyrillic words
    return [
        Finding(kind, f"order-{kind}", excerpt[:_EXCERPT_CHARS], weight)
        for kind, weight, excerpt in order_hits(view, raw)
    ]


def _gate_open(name: str, folded: str) -> bool:
    words = GATES.get(name)
    return words is None or any(word in folded for word in words)


def _tool_orders(lower: str) -> list[re.Match[str]]:
    return list(TOOL_IDENTIFIER_RULE.pattern.finditer(lower)) if "_" in lower else []


def _mixed_words(lower: str) -> list[re.Match[str]]:
    if lower.isascii():
        return []
    return list(MIXED_SCRIPT_RULE.pattern.finditer(lower))[:3]


def _hidden_findings(text: str, depth: int, *, learned: bool) -> list[Finding]:
    """Findings in what the text hides (see :mod:`safeguards.injection_hidden`): invisible tag
    characters flag on their own; a comment or an encoded run adds weight when what it hides
    is itself suspicious."""
    found: list[Finding] = []
    invisible = tag_text(text)
    if invisible.strip():
        found.append(Finding("hidden", "invisible-tag-characters", invisible[:_EXCERPT_CHARS], 1.0))
    for how, payload in hidden_payloads(text):
        if how == "reference-link":
            inner: tuple[Finding, ...] = tuple(_marker_findings(payload))
        else:
            inner = _scan_at(payload, depth + 1, learned=learned)
        if how != "reference-link" and SECOND_PERSON.search(payload):
            inner += (_finding(_ADDRESSED_RULE, payload),)  # hidden text that speaks to "you"
        if not any(_suspicious(f) for f in inner):
            continue
        found += [Finding(f.kind, f"{how}:{f.rule}", f.excerpt, f.weight, f.quoted) for f in inner]
        found.append(_finding(_HIDDEN_RULE, payload, weight=0.5))
    # a reversed, shifted or acrostic text is decoded once: what it decodes to is not decoded
    # again that way (reversing a reversal gives back the text)
    for how, payload in cipher_payloads(text) if depth == 0 else ():
        inner = _scan_at(payload, depth + 1, learned=learned)
        if not inner:  # too few words for the full scan to start: the orders are still read
            lower = unicodedata.normalize("NFKC", payload).lower()
            inner = tuple(_order_findings(payload, lower))
        # a decoding counts when it says something on its own: a puzzle or a palindrome that
        # decodes to ordinary words is not hidden text
        if not _says_something(inner):
            continue
        found += [Finding(f.kind, f"{how}:{f.rule}", f.excerpt, f.weight, f.quoted) for f in inner]
        found.append(_finding(_CIPHER_RULE, payload, weight=_CIPHER_WEIGHT))
    return found


def _suspicious(finding: Finding) -> bool:
    """Whether a finding in hidden text makes it suspicious: anything not quoted, except an
    errand's hint alone (a comment that says "TODO: move the table" is a note, not an order)."""
    return not finding.quoted and not (finding.kind == "errand" and finding.weight < 0.5)


_HIDDEN_RULE = Rule("hidden", "hidden-suspicious-text", re.compile("$^"))
_CIPHER_RULE = Rule("hidden", "encoded-suspicious-text", re.compile("$^"))
# A decoding that says something adds this weight to what it says.
_CIPHER_WEIGHT = 0.75
_ORDER_KINDS = frozenset({"errand", "trigger", "reader_task", "foreign_order"})


def _says_something(findings: tuple[Finding, ...]) -> bool:
    """Whether a decoded text is an order: an order of :mod:`safeguards.injection_orders`, even
    an errand's hint (innocent text does not reverse, shift or spell an errand by chance), or
    findings weighing half a flag."""
    plain = [f for f in findings if not f.quoted]
    return any(f.kind in _ORDER_KINDS for f in plain) or sum(f.weight for f in plain) >= 0.5


_ADDRESSED_RULE = Rule("hidden", "hidden-text-addresses-you", re.compile("$^"), weight=0.5)


def _marker_findings(text: str) -> list[Finding]:
    quoted_spans = [m.span() for m in _CODE.finditer(text)] if "`" in text or "~~~" in text else []
    found = []
    for rule in (*MARKER_RULES, *SHAPE_MARKERS):
        for match in rule.pattern.finditer(text):
            quoted = any(start <= match.start() < end for start, end in quoted_spans)
            weight = rule.weight * (0.25 if quoted else 1.0)
            if rule.name == "markdown-image-remote" and BADGE_QUERY.search(match.group(0)):
                weight *= 0.5
            found.append(_finding(rule, match.group(0), weight=weight, quoted=quoted))
    return found


def _finding(
    rule: Rule, excerpt: str, *, weight: float | None = None, quoted: bool = False
) -> Finding:
    excerpt = " ".join(excerpt.split())[:_EXCERPT_CHARS]
    return Finding(rule.kind, rule.name, excerpt, rule.weight if weight is None else weight, quoted)


def _fold(text: str) -> str:
    """A lower-case view that undoes common obfuscation (only for matching, never shown)."""
    view = unicodedata.normalize("NFKC", text).lower().translate(_CONFUSABLES).translate(LOOKALIKES)
    view = _LEET_WORD.sub(_unleet, view)
    view = _LETTER_SPACED.sub(lambda m: re.sub(r"[ .\-_*]", "", m.group(0)), view)
    return " ".join(view.replace("_", " ").split())


def _unleet(match: re.Match[str]) -> str:
    """``1gn0re`` -> ``ignore``; trailing ``!`` and ``|`` stay punctuation (``pwned!!``)."""
    word = match.group(0)
    core = word.rstrip("!|")
    if not _LEET_CHARS.intersection(core) or core.isdigit():
        return word
    return core.translate(_LEET) + word[len(core) :]


def _defang(text: str) -> str:
    for pattern, replacement in DEFANG_RULES:
        text = pattern.sub(replacement, text)
    return text.translate(DEFANG_BRACKETS)


#: The fingerprint of this filter (see :func:`_filter_version`).
FILTER_VERSION = _filter_version()
