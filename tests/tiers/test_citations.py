"""Citation codes: base64url SHA-256 prefixes, extended on collision."""

from __future__ import annotations

import base64
import hashlib

import pytest

from tiers.citations import assign_citation, candidate_codes, citation_code


def test_code_is_the_base64url_sha256_prefix() -> None:
    """The code is the first `length` characters of base64url(sha256(id))."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"evt_abc123").digest()).decode()
    assert citation_code("evt_abc123") == digest[:6]
    assert citation_code("evt_abc123", 8) == digest[:8]
    assert all(c.isalnum() or c in "-_" for c in citation_code("x" * 200, 43))


def test_collisions_extend_deterministically() -> None:
    """A code held by another id makes the newcomer take the next longer prefix."""
    held = {citation_code("first", 6): "first"}
    code = assign_citation("second", 6, held.get)
    assert code == citation_code("second", 6)  # no collision
    held[citation_code("second", 6)] = "intruder"
    extended = assign_citation("second", 6, held.get)
    assert extended == citation_code("second", 7)
    assert assign_citation("second", 6, lambda c: "second") == citation_code("second", 6)


def test_candidates_and_bad_lengths() -> None:
    """Candidates grow one character at a time up to the full digest; lengths are checked."""
    codes = list(candidate_codes("m1", 40))
    assert [len(c) for c in codes] == [40, 41, 42, 43]
    with pytest.raises(ValueError, match=r"1\.\.43"):
        citation_code("m1", 0)
