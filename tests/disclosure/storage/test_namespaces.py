"""Namespaces: validated parts, injective and safe directory names, the marker check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disclosure.core.profile_sections import IsolationConfig
from disclosure.core.profiles import load_profile
from disclosure.storage.namespaces import (
    DEFAULT_PART,
    HOME_VARIABLE,
    MARKER_FILE,
    NAMESPACES_DIR,
    Namespace,
    check_part,
    claim_dir,
    default_home,
    iter_namespaces,
    make_namespace,
    namespace_dir,
)
from tiers.errors import NamespaceError, ProfileError, StorageError

SCOPE = IsolationConfig(scope=("tenant", "user"))


def ns(**parts: str) -> Namespace:
    return make_namespace(SCOPE, parts)


@pytest.mark.parametrize(
    "value",
    [
        "../x",
        "..",
        ".",
        "a/b",
        "a\\b",
        "",
        " bob",
        "bob ",
        "bo\x00b",
        "bo\nb",
        "al\u200bice",  # zero-width space (format character)
        "x" * 129,
        "\ud800",  # a lone surrogate
    ],
)
def test_unsafe_parts_are_refused_with_the_reason(value: str) -> None:
    """Path components, separators, control or invisible characters, blanks, overlong: refused."""
    with pytest.raises(NamespaceError, match="namespace user"):
        check_part("user", value)


def test_look_alikes_and_case_variants_are_different_namespaces(tmp_path: Path) -> None:
    """Latin/Cyrillic 'a', case and full-width letters never share a directory."""
    variants = ["alice", "\u0430lice", "Alice", "ALICE", "\uff41lice", "alice\u0301"]
    directories = {namespace_dir(tmp_path, ns(user=v)).name.lower() for v in variants}
    assert len(directories) == len(variants)  # distinct even on a case-insensitive file system


def test_directory_names_stay_under_the_root_and_are_plain(tmp_path: Path) -> None:
    """Whatever the value, the directory is one plain component under ROOT/namespaces."""
    for value in ["acme corp", "日本", "x" * 128, "C:", "~", "$HOME", "%2e%2e", "..."]:
        directory = namespace_dir(tmp_path, ns(tenant=value, user="u"))
        assert directory.parent == tmp_path / NAMESPACES_DIR
        assert all(c.isalnum() or c in "._-" for c in directory.name), directory.name


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=30), st.text(min_size=1, max_size=30))
def test_distinct_valid_values_never_share_a_directory(first: str, second: str) -> None:
    """The directory name is injective over valid values (a hash of the exact parts)."""
    try:
        a, b = ns(user=first), ns(user=second)
    except NamespaceError:
        return
    assert (a.directory_name() == b.directory_name()) == (first == second)


def test_parts_are_ordered_defaulted_or_required() -> None:
    """Missing parts are 'default'; required ones fail; parts outside the scope fail."""
    assert ns(user="bob").parts == (("tenant", DEFAULT_PART), ("user", "bob"))
    strict = IsolationConfig(scope=("tenant", "user"), required=True)
    with pytest.raises(NamespaceError, match="tenant is required"):
        make_namespace(strict, {"user": "bob"})
    with pytest.raises(NamespaceError, match="'conversation' is not in"):
        make_namespace(SCOPE, {"conversation": "c1"})
    shared = make_namespace(IsolationConfig(scope=()), {})
    assert shared.parts == ()
    assert str(shared) == "(shared)"


def test_swapped_parts_are_different_namespaces() -> None:
    """tenant=a,user=b and tenant=b,user=a are different stores."""
    assert ns(tenant="a", user="b").key != ns(tenant="b", user="a").key
    assert ns(tenant="a", user="b").directory_name() != ns(tenant="b", user="a").directory_name()


@pytest.mark.parametrize("bad", ["[user, tenant]", "[user, user]", "[team]"])
def test_scope_validation_in_the_profile(tmp_path: Path, bad: str) -> None:
    """The scope must list known parts once each, in the order tenant, user, conversation."""
    path = tmp_path / "p.yaml"
    path.write_text(f"isolation: {{scope: {bad}}}\n", encoding="utf-8")
    with pytest.raises(ProfileError, match="isolation -> scope"):
        load_profile(path)


def test_claim_dir_writes_and_checks_the_marker(tmp_path: Path) -> None:
    """A directory records its namespace; a different namespace cannot take it over."""
    bob = ns(user="bob")
    directory = claim_dir(tmp_path, bob)
    marker = json.loads((directory / MARKER_FILE).read_text(encoding="utf-8"))
    assert marker == {"parts": {"tenant": "default", "user": "bob"}}
    assert claim_dir(tmp_path, bob) == directory
    (directory / MARKER_FILE).write_text(json.dumps({"parts": {"user": "eve"}}), encoding="utf-8")
    with pytest.raises(StorageError, match="refusing to mix"):
        claim_dir(tmp_path, bob)
    listed = list(iter_namespaces(tmp_path))
    assert listed == [({"user": "eve"}, directory)]


def test_default_home_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """$TIERED_DISCLOSURE_HOME wins, then $XDG_DATA_HOME/tiered-disclosure."""
    monkeypatch.setenv(HOME_VARIABLE, "/srv/memory")
    assert default_home() == Path("/srv/memory")
    monkeypatch.delenv(HOME_VARIABLE)
    monkeypatch.setenv("XDG_DATA_HOME", "/data")
    assert default_home() == Path("/data/tiered-disclosure")
