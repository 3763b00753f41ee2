"""Secrets out of text before it is stored: each recognisable secret becomes a marker naming
its kind, ``[redacted:github_token]``.

What is recognised (see :data:`KINDS`):

- credentials in a provider's own format (:mod:`safeguards.secret_tokens`): AWS access key ids,
  GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Twilio, SendGrid, npm, PyPI, Google,
  Hugging Face and other tokens, Slack and Discord webhooks, JWTs;
- secrets known by where they stand (:mod:`safeguards.secret_context`): private key blocks (PEM,
  OpenSSH, PGP, also with escaped newlines inside JSON), passwords in URLs
  (``postgres://user:PASSWORD@host``), ``Authorization`` headers and ``Bearer``/``Basic``
  credentials, values given to names that say secret (``*_PASSWORD``, ``*_TOKEN``,
  ``*_SECRET``, ``api_key``, ``AccountKey``, ...) in env files, shell, JSON, YAML, XML, code,
  Kubernetes env lists, ``--password`` flags and sentences ("the password is ..."), an AWS
  secret key next to its key id, ``.netrc`` passwords.

A name's value counts when it is a secret by its looks: any password or secret a person may
choose, a token or key only when it looks machine-made
(:func:`safeguards.secret_values.looks_random`).
Left alone: hashes, commit ids, UUIDs (except under a key or token name), base64 data, version
strings, paths, URLs without credentials, public keys and certificates, Stripe publishable keys,
and placeholders that say what they stand for: ``<TOKEN>``, ``${SECRET}``, ``{{ vault.x }}``,
``your-api-key-here``, ``xxxx``, ``EXAMPLE`` keys from documentation, ``changeme``, and
well-known default words (``password``, ``admin``, ``secret``): those are in every
documentation page and protect nothing.

The marker, ``[redacted:<kind>]`` (6 to 8 cl100k tokens), is never taken for a secret itself,
so redacting redacted text changes nothing; its kinds avoid the words the injection filter
counts as a sensitive target (``password``, ``secret``, ``api key``, ``private key``: hence
``passwd``, ``credential``, ``apikey``, ``privkey``), so a marker alone scans clean and a
redacted text never looks more like an injection than before. The cost: a text is split once
(runs of 16 non-space characters are all a token needs) and searched once for name words;
texts with neither are let through after a few microseconds, the others are read by bounded
patterns (linear in their length).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress

from safeguards import secret_context as context
from safeguards.secret_names import classify, kind_of
from safeguards.secret_tokens import TOKEN_KINDS, token_spans

__all__ = ["KINDS", "MARKER", "Redaction", "marker", "redact", "redact_field"]

#: What a secret becomes: ``MARKER.format(kind="aws_access_key")``.
MARKER = "[redacted:{kind}]"
_MARKERS = re.compile(r"\[redacted:[a-z0-9_]{1,40}\]")
_CONTEXT_KINDS = frozenset(
    {"passwd", "credential", "token", "apikey", "aws_secretkey", "azure_key", "azure_sas",
     "bearer_token", "basic_auth", "privkey"}
)  # fmt: skip
#: Every kind a marker may name.
KINDS = frozenset(TOKEN_KINDS | _CONTEXT_KINDS)
_SHORTEST = 6  # no secret fits in fewer characters
_LONG_RUN = 16  # every token-shaped secret is at least this long without a space
# lower priority numbers win when spans overlap: a provider's format names the kind best
_PRIORITY = {"privkey": 0, "jwt": 2, "passwd": 4, "credential": 4, "token": 4, "apikey": 4}
_FLAG_WORDS = frozenset({"mysql", "sshpass"})
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

Span = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class Redaction:
    """A text with its secrets replaced, and the kind of each secret replaced, in order."""

    text: str
    kinds: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.kinds)


def marker(kind: str) -> str:
    """The marker that replaces a secret of ``kind``."""
    return MARKER.format(kind=kind)


def redact(text: str) -> Redaction:
    """``text`` with every recognisable secret replaced by its kind's marker."""
    if len(text) < _SHORTEST:
        return Redaction(text)
    markers = list(_MARKERS.finditer(text)) if "[redacted:" in text else []
    # a marker already in the text is read as a stretch of "|" (no name, value or token)
    masked = _MARKERS.sub(lambda m: "|" * len(m.group()), text) if markers else text
    spans = _merged(_spans(masked), markers)
    if not spans:
        return Redaction(text)
    parts: list[str] = []
    position = 0
    for start, end, kind in spans:
        parts += [text[position:start], marker(kind)]
        position = end
    parts.append(text[position:])
    return Redaction("".join(parts), tuple(kind for _, _, kind in spans))


def redact_field(name: str, value: str) -> Redaction:
    """``value`` as stored under ``name`` (a metadata key, a header): whole when the name says
    it holds a secret and the value looks like one, else with the secrets it contains
    replaced."""
    klass = classify(name)
    if klass is not None and klass != "auth" and context.accepts(value.strip(), klass):
        return Redaction(marker(kind_of(name, klass)), (kind_of(name, klass),))
    return redact(value)


def _spans(text: str) -> list[Span]:
    spans: list[Span] = []
    runs = _long_runs(text)
    if runs:
        found = list(token_spans(text, runs))
        spans += found
        aws = [start for start, _, kind in found if kind == "aws_access_key"]
        if aws:
            spans += context.aws_secret_spans(text, aws)
    lowered = text.lower()
    if len(lowered) != len(text):  # a few non-ASCII letters change length when lower-cased
        lowered = text.translate(_ASCII_LOWER)
    hits = [(m.start(), m.group()) for m in context.TRIGGERS.finditer(lowered)]
    if hits:
        spans += context.name_spans(text, hits)
    words = {word for _, word in hits}
    if "-u " in text or "--user " in text or not words.isdisjoint(_FLAG_WORDS):
        spans += context.flag_spans(text, words)
    if "://" in text:
        spans += context.url_spans(text)
    if "-----BEGIN " in text:
        spans += context.key_block_spans(text)
    return spans


def _long_runs(text: str) -> list[tuple[int, int]]:
    """Where the runs of non-space characters long enough to hold a token are."""
    words = text.split()
    if max(map(len, words), default=0) < _LONG_RUN:
        return []
    runs = []
    position = 0
    for word in compress(words, map(_LONG_RUN.__le__, map(len, words))):
        start = text.find(word, position)  # no shorter word can hold it: found in order
        position = start + len(word)
        runs.append((start, position))
    return runs


def _merged(spans: list[Span], markers: Iterable[re.Match[str]]) -> list[Span]:
    """Overlapping spans as one (named by the most specific kind among them), without any
    that touches a marker already in the text."""
    taken = [(m.start(), m.end()) for m in markers]
    out: list[Span] = []
    for start, end, kind in sorted(spans):
        if end <= start or any(s < end and start < e for s, e in taken):
            continue
        if out and start < out[-1][1]:
            last = out[-1]
            best = min((last[2], kind), key=lambda k: _PRIORITY.get(k, 1))
            out[-1] = (last[0], max(last[1], end), best)
        else:
            out.append((start, end, kind))
    return out
