"""Safety of what is stored and shown: secrets are redacted before anything is stored."""

from safety.secrets import KINDS, MARKER, Redaction, marker, redact, redact_field

__all__ = ["KINDS", "MARKER", "Redaction", "marker", "redact", "redact_field"]
