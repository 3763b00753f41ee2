"""What must never reach a model, or the store, as it was written: private spans, secrets,
and injected instructions.

Before anything is stored, :mod:`safeguards.secrets` replaces recognisable secrets by a marker
naming their kind; every piece of memory text a formatter renders passes
:mod:`safeguards.filter`::

    from safeguards import neutralize, redact, strip_private

    text = strip_private(text)          # <private>...</private> spans removed
    text = redact(text).text            # secrets replaced: [redacted:github_token]
    shown, findings = neutralize(text)  # injected orders defanged; findings say why

Modules: ``filter`` (private spans, the scan and the defanging, kept verdicts); the secrets
redactor ``secrets`` with its parts ``secret_tokens`` (provider formats), ``secret_names``
(names that hold secrets), ``secret_values`` (what a value must look like) and
``secret_context`` (where values stand); and the injection filter's parts: ``injection_rules``
(phrases and markers), ``injection_shapes`` (orders recognised by their shape),
``injection_signals`` (independent signals scored together), ``injection_orders`` (orders
read by what they ask and of whom, from a lexicon of 25 languages, ``injection_lexicon.json``),
``injection_hidden`` and ``injection_ciphers`` (text hidden from a human reader, made visible:
tags, encodings, reversal, acrostics, shifted alphabets) and ``injection_model`` (a small learned
classifier, its weights shipped as ``injection_model.json``).

This package sits at the bottom of the import graph beside :mod:`tiers` and :mod:`analyzers`:
it imports nothing of this project's but possibly :mod:`tiers`, and :mod:`formatters` renders
with it.
"""

from safeguards.filter import (
    FILTER_VERSION,
    FLAG_NOTE,
    Finding,
    Verdicts,
    is_clean,
    is_flagged,
    known_verdicts,
    neutralize,
    scan,
    strip_private,
)
from safeguards.secrets import KINDS, MARKER, Redaction, marker, redact, redact_field

__all__ = [
    "FILTER_VERSION",
    "FLAG_NOTE",
    "KINDS",
    "MARKER",
    "Finding",
    "Redaction",
    "Verdicts",
    "is_clean",
    "is_flagged",
    "known_verdicts",
    "marker",
    "neutralize",
    "redact",
    "redact_field",
    "scan",
    "strip_private",
]
