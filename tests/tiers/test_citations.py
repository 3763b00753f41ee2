"""Citation codes: prefixes of the id's SHA-256 in decimal digits or base64url, extended on
collision."""

from __future__ import annotations

import base64
import hashlib
from collections import Counter

import pytest

from formatters import get_token_counter
from tiers.citations import assign_citation, candidate_codes, citation_code, citation_digest


def test_code_is_the_base64url_sha256_prefix() -> None:
    """In base64url the code is the first `length` characters of base64url(sha256(id))."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"evt_abc123").digest()).decode()
    assert citation_code("evt_abc123", alphabet="base64url") == digest[:6]
    assert citation_code("evt_abc123", 8, "base64url") == digest[:8]
    assert all(c.isalnum() or c in "-_" for c in citation_code("x" * 200, 43, "base64url"))


def test_digits_are_the_sha256_in_decimal_lowest_first() -> None:
    """By default a code is digits: the sha256 as a number, its decimal digits lowest first."""
    number = int.from_bytes(hashlib.sha256(b"evt_abc123").digest(), "big")
    lowest = [str(number // 10**i % 10) for i in range(8)]
    assert citation_code("evt_abc123") == "".join(lowest[:6])
    assert citation_code("evt_abc123", 8) == "".join(lowest)
    assert citation_digest("evt_abc123").isdigit()


def test_digits_spread_evenly_and_cost_fewer_tokens() -> None:
    """Every leading digit is about as common as any other, and a cited line is cheaper."""
    ids = [f"conv-{n}/D{n % 7}:{n}" for n in range(3000)]
    first = Counter(citation_code(i)[0] for i in ids)
    assert set(first) == set("0123456789")
    assert max(first.values()) < 2 * min(first.values())
    counter = get_token_counter("cl100k_base")
    digits = sum(counter(f"[mem:{citation_code(i)}]") for i in ids)
    base64url = sum(counter(f"[mem:{citation_code(i, alphabet='base64url')}]") for i in ids)
    assert digits / len(ids) <= 6.0 < base64url / len(ids) - 1.5


def test_collisions_extend_deterministically() -> None:
    """A code held by another id makes the newcomer take the next longer prefix."""
    for alphabet in ("digits", "base64url"):
        held = {citation_code("first", 6, alphabet): "first"}
        code = assign_citation("second", 6, held.get, alphabet)
        assert code == citation_code("second", 6, alphabet)  # no collision
        held[citation_code("second", 6, alphabet)] = "intruder"
        extended = assign_citation("second", 6, held.get, alphabet)
        assert extended == citation_code("second", 7, alphabet)
        assert assign_citation("second", 6, lambda c: "second", alphabet) == code


def test_candidates_and_bad_lengths() -> None:
    """Candidates grow one character at a time up to the full digest; lengths are checked."""
    codes = list(candidate_codes("m1", 40, "base64url"))
    assert [len(c) for c in codes] == [40, 41, 42, 43]
    assert [len(c) for c in candidate_codes("m1", 40)][-1] == 64
    with pytest.raises(ValueError, match=r"1\.\.43"):
        citation_code("m1", 0)
    with pytest.raises(ValueError, match="digits, base64url"):
        citation_code("m1", 6, "hex")
