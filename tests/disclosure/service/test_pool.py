"""The controller pool: one store per namespace, LRU-bounded, never closed under a lease."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from disclosure import ControllerPool, Memory, Profile
from disclosure.storage.namespaces import namespace_dir
from tests.disclosure.conftest import NOW
from tiers.errors import InvalidInputError, StorageError


def memory(memory_id: str, content: str) -> Memory:
    return Memory(id=memory_id, content=content, timestamp=NOW, session_id="s1", speaker="Dana")


def is_closed(controller: object) -> bool:
    try:
        controller.stats()  # type: ignore[attr-defined]
    except InvalidInputError:
        return True
    return False


def test_one_controller_and_directory_per_namespace(lean_profile: Profile, root: Path) -> None:
    """The same namespace reuses its controller; another gets its own data directory."""
    with ControllerPool(lean_profile, root=root) as pool:
        bob, eve = pool.namespace(user="bob"), pool.namespace(user="eve")
        with pool.lease(bob) as first, pool.lease(bob) as again, pool.lease(eve) as other:
            assert first is again
            assert other is not first
            assert first.data_dir == namespace_dir(root, bob)
            assert other.data_dir == namespace_dir(root, eve)


def test_least_recently_used_idle_controllers_are_closed(lean_profile: Profile, root: Path) -> None:
    """Beyond max_open, the least recently used idle controller closes."""
    with ControllerPool(lean_profile, root=root, max_open=2) as pool:
        names = [pool.namespace(user=u) for u in ("a", "b", "c")]
        opened = []
        for name in names:
            with pool.lease(name) as controller:
                opened.append(controller)
        assert is_closed(opened[0])
        assert not is_closed(opened[1]) and not is_closed(opened[2])
        assert pool.open_namespaces() == [names[1].key, names[2].key]
    assert all(is_closed(c) for c in opened)


def test_a_leased_controller_is_never_closed_under_its_user(
    lean_profile: Profile, root: Path
) -> None:
    """A held lease keeps its controller open past the bound; it closes once released."""
    with ControllerPool(lean_profile, root=root, max_open=1) as pool:
        held = pool.namespace(user="held")
        controller = pool.acquire(held)
        for user in ("x", "y"):
            with pool.lease(pool.namespace(user=user)):
                pass
        assert not is_closed(controller)
        controller.ingest([memory("m1", "still writable while leased")])
        pool.release(held)
        with pool.lease(pool.namespace(user="z")):
            pass
        assert is_closed(controller)


def test_concurrent_acquires_open_a_namespace_once(lean_profile: Profile, root: Path) -> None:
    """Threads asking for the same namespace at once share one controller (one lock holder)."""
    with ControllerPool(lean_profile, root=root) as pool:
        name = pool.namespace(user="busy")
        barrier = threading.Barrier(6)

        def grab(_: int) -> int:
            barrier.wait()
            with pool.lease(name) as controller:
                return id(controller)

        with ThreadPoolExecutor(max_workers=6) as executor:
            identities = set(executor.map(grab, range(6)))
        assert len(identities) == 1


def test_an_evicted_namespace_reopens_with_its_data(lean_profile: Profile, root: Path) -> None:
    """Eviction releases the directory lock; reopening sees what was stored."""
    with ControllerPool(lean_profile, root=root, max_open=1) as pool:
        bob = pool.namespace(user="bob")
        with pool.lease(bob) as controller:
            controller.ingest([memory("b1", "Bob prefers tabs over spaces in Makefiles.")])
        with pool.lease(pool.namespace(user="other")):
            pass
        with pool.lease(bob) as reopened:
            assert reopened is not controller
            assert "tabs" in reopened.show("b1")


def test_an_open_failure_is_raised_and_not_remembered(lean_profile: Profile, root: Path) -> None:
    """A namespace whose directory cannot be made fails; once fixed, it opens."""
    with ControllerPool(lean_profile, root=root) as pool:
        bob = pool.namespace(user="bob")
        blocker = namespace_dir(root, bob)
        blocker.parent.mkdir(parents=True)
        blocker.write_text("not a directory", encoding="utf-8")
        with pytest.raises(StorageError):
            pool.acquire(bob)
        assert pool.open_namespaces() == []
        blocker.unlink()
        with pool.lease(bob) as controller:
            assert controller.data_dir == blocker


def test_a_closed_pool_refuses(lean_profile: Profile, root: Path) -> None:
    """acquire after close is an error, not a silently reopened store."""
    pool = ControllerPool(lean_profile, root=root)
    pool.close()
    with pytest.raises(InvalidInputError, match="closed"):
        pool.acquire(pool.namespace(user="bob"))
