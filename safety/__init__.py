"""What must never reach a model as it was written: private spans, and injected instructions.

Every piece of memory text a formatter renders passes :mod:`safety.filter`::

    from safety import neutralize, strip_private

    text = strip_private(text)          # <private>...</private> spans removed
    shown, findings = neutralize(text)  # injected orders defanged; findings say why

Modules: ``filter`` (private spans, the scan and the defanging, kept verdicts), and the
injection filter's parts: ``injection_rules`` (phrases and markers), ``injection_shapes``
(orders recognised by their shape), ``injection_signals`` (independent signals scored
together), ``injection_hidden`` (text hidden from a human reader, made visible) and
``injection_model`` (a small learned classifier, its weights shipped as
``injection_model.json``).

This package sits at the bottom of the import graph beside :mod:`tiers` and :mod:`analyzers`:
it imports nothing of this project's but possibly :mod:`tiers`, and :mod:`formatters` renders
with it.
"""

from safety.filter import (
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
