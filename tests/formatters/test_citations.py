"""Citations: formatting, finding them in a reply, and the shared pattern."""

from __future__ import annotations

import re

import pytest

from formatters import CITATION_PATTERN, format_citation, parse_citations
from formatters.citations import citation_pattern
from tiers.errors import InvalidInputError


def test_format_citation() -> None:
    """A code and a prefix make ``prefix:code``."""
    assert format_citation("a7Bc3x") == "mem:a7Bc3x"
    assert format_citation("Qk-3_zAB", prefix="note") == "note:Qk-3_zAB"


@pytest.mark.parametrize(
    ("code", "prefix"), [("a7", "mem"), ("a7Bc3x!", "mem"), ("a" * 17, "mem"), ("a7Bc3x", "Mem")]
)
def test_format_citation_rejects_bad_parts(code: str, prefix: str) -> None:
    """Codes are 4-16 base64url characters; prefixes are lower-case; errors say what is valid."""
    with pytest.raises(InvalidInputError, match="invalid citation"):
        format_citation(code, prefix=prefix)


def test_parse_citations_finds_every_form_once_in_order() -> None:
    """Bracketed, bare, upper-case prefix and repeated citations; first appearance order."""
    reply = (
        "Per [mem:a7Bc3x] and mem:x9Yz2w, the fix landed (MEM:Qk-3_z). "
        "Again [mem:a7Bc3x]. Not these: mem:a7, xmem:b8Xc2y, mem:toolongtoolongtoolong."
    )
    assert parse_citations(reply) == ["mem:a7Bc3x", "mem:x9Yz2w", "mem:Qk-3_z"]
    assert parse_citations("see note:abcd12", prefix="note") == ["note:abcd12"]
    assert parse_citations("nothing cited") == []


def test_the_shared_pattern_is_the_documented_string() -> None:
    """The pattern the analyzer copies is exactly the one in the module docstring."""
    documented = r"(?<![A-Za-z0-9_-])(?i:mem):([A-Za-z0-9_-]{4,16})(?![A-Za-z0-9_-])"
    assert CITATION_PATTERN == documented == citation_pattern("mem")
    assert re.findall(CITATION_PATTERN, "show mem:a7Bc3x please") == ["a7Bc3x"]


def test_a_cut_marker_is_a_citation_too() -> None:
    """The marker on a cut item names the citation the model can ask for."""
    assert parse_citations("… [cut; show mem:a7Bc3x]") == ["mem:a7Bc3x"]
