"""Export and import of a namespace: a round trip loses nothing, forgotten memories stay
forgotten, bad files import nothing, and a namespace with memories is not overwritten."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from disclosure import Profile
from disclosure.core.transfer import export_namespace, import_namespace, read_export
from disclosure.faces.cli import main
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import namespace_dir
from tiers.chroma_server import ChromaServer
from tiers.errors import InvalidInputError
from tiers.memory import Memory

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SECRET = "zanzibarquokka"  # only in the memory that is forgotten
REPLACED_AT = re.compile(r'"replaced_at":"[^"]+"')


def turn(n: int, content: str, speaker: str = "Dana", **fields: Any) -> Memory:
    return Memory(
        id=f"t{n}",
        content=content,
        timestamp=START + timedelta(minutes=n),
        session_id="s1" if n < 4 else "s2",
        speaker=speaker,
        **fields,
    )


def fill(pool: ControllerPool, user: str = "dana") -> None:
    """A namespace with versions, metadata, a forgotten memory and a usage history."""
    with pool.lease(pool.namespace(user=user)) as c:
        c.ingest([
            turn(0, "The staging database moved to the Frankfurt region", metadata={"t": [1]}),
            turn(1, "Ravi owns the billing export job", speaker="Ravi", importance=0.9),
            turn(2, f"My locker code is {SECRET} 4471"),
            turn(4, "We agreed to ship the audit log viewer on Friday"),
        ])  # fmt: skip
        c.ingest([turn(0, "The staging database moved to the Dublin region")])  # a version
        c.ingest([turn(4, "We agreed to ship the audit log viewer on Friday",
                       metadata={"owner": "Ravi"})], refresh=True)  # fmt: skip
        c.ingest([turn(2, f"My locker code is {SECRET} 9000")])  # a version of what is forgotten
        for query in ("which region hosts the staging database?", "who owns billing export?"):
            result = c.disclose(query, now=START + timedelta(days=1))
            cited = next((i.citation for i in result.items), "")
            c.feedback(result, f"From memory [{cited}]: see above", session_id="chat-1")
        result = c.disclose("what is my locker code?", now=START + timedelta(days=1))
        c.feedback(result, " ".join(f"[{i.citation}]" for i in result.items))
        assert c.forget(ids=["t2"]).count == 1
        assert c.consolidate(include_working_set=True).written > 0


def side_files(directory: Path) -> list[str]:
    """The side stores' files in a namespace's data directory."""
    names = ("participants.json", "citations.sqlite3", "summaries.sqlite3", "usage.sqlite3")
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(names))


def export_text(pool: ControllerPool, user: str = "dana") -> str:
    out = io.StringIO()
    namespace = pool.namespace(user=user)
    with pool.lease(namespace) as c:
        export_namespace(c, out, namespace=namespace.as_dict())
    return out.getvalue()


@pytest.fixture
def pools(lean_profile: Profile, tmp_path: Path) -> Iterator[tuple[ControllerPool, ControllerPool]]:
    with (
        ControllerPool(lean_profile, root=tmp_path / "a") as a,
        ControllerPool(lean_profile, root=tmp_path / "b") as b,
    ):
        yield a, b


def test_round_trip_gives_the_same_lines_but_the_replacement_times(
    pools: tuple[ControllerPool, ControllerPool],
) -> None:
    source, target = pools
    fill(source)
    first = export_text(source)
    records = [json.loads(line) for line in first.splitlines()]
    kinds = [r["type"] for r in records]
    assert kinds[0] == "header" and kinds[-1] == "end"
    memories = {r["id"]: r for r in records if r["type"] == "memory"}
    assert sorted(memories) == ["t0", "t1", "t4"]  # t2 was forgotten
    t0 = memories["t0"]["versions"]
    assert [v["memory"]["content"].split()[-2] for v in t0] == ["Frankfurt", "Dublin"]
    assert t0[0]["memory"]["metadata"] == {"t": [1]} and t0[0]["replaced_at"] is not None
    assert memories["t4"]["versions"][-1]["memory"]["metadata"] == {"owner": "Ravi"}
    assert memories["t4"]["versions"][0]["memory"]["metadata"] == {}
    assert {"citation_use", "citation_reply", "budget_reply"} <= set(kinds)
    assert SECRET not in first

    export = read_export(first.splitlines(keepends=True))
    with target.lease(target.namespace(user="dana")) as c:
        report = import_namespace(c, export)
        assert (report.memories, report.versions) == (3, 5)
        assert report.recoded == [] and report.conflicts == []
        assert [v.memory.content for v in c.store.versions("t0")] == [
            "The staging database moved to the Frankfurt region",
            "The staging database moved to the Dublin region",
        ]
        assert "Ravi" in set(c.participants)
        assert c.show(memories["t1"]["citation"]).count("billing export") >= 1
        assert len(c.budget.export_replies()) == 3
        assert report.summaries > 0 and c.consolidation.of_session("s1")
        assert c.consolidation.search("audit log viewer")  # the summary index sees them
    second = export_text(target)
    assert second != first  # the replacement times are the import's
    assert REPLACED_AT.sub("", second) == REPLACED_AT.sub("", first)


def test_bad_or_truncated_files_name_the_line_and_import_nothing(
    pools: tuple[ControllerPool, ControllerPool], tmp_path: Path, capsys: Any
) -> None:
    source, _ = pools
    fill(source)
    lines = export_text(source).splitlines(keepends=True)
    bad_memory = json.loads(lines[1])
    bad_memory["versions"][-1]["memory"]["importance"] = 7
    cases = {
        "truncated": (lines[:-1], "without its end record: the file is truncated"),
        "cut line": ([*lines[:2], lines[2][:40] + "\n", *lines[3:]], "line 3: not JSON"),
        "bad field": ([lines[0], json.dumps(bad_memory) + "\n", *lines[2:]], "line 2: version"),
        "line lost": ([*lines[:2], *lines[3:]], "lines are missing"),
        "not an export": (['{"id": "x", "content": "y"}\n'], "line 1: not an export"),
        "unknown": ([lines[0], '{"type": "gossip"}\n', *lines[1:]], "line 2: unknown record"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(content), encoding="utf-8")
        root = tmp_path / f"root-{name}"
        code = main(["import", str(path), "--root", str(root), "--profile", "default"])
        err = capsys.readouterr().err
        assert code == 1, name
        assert message in err, (name, err)
        assert not (root / "namespaces").exists() or not any((root / "namespaces").iterdir())


def test_into_a_namespace_with_memories_refuses_unless_merge(
    pools: tuple[ControllerPool, ControllerPool],
) -> None:
    source, target = pools
    fill(source)
    export = read_export(export_text(source).splitlines())
    namespace = target.namespace(user="dana")
    with target.lease(namespace) as c:
        c.ingest([turn(1, "Ravi owns the billing export job", speaker="Ravi", importance=0.9),
                  turn(4, "Someone else's record under the same id")])  # fmt: skip
        before = c.store.get(["t4"])[0]
        with pytest.raises(InvalidInputError, match=r"already holds 2 memories; .*nothing"):
            import_namespace(c, export)
        assert c.store.count() == 2
        report = import_namespace(c, export, merge=True)
        assert report.skipped == ["t1"] and report.conflicts == ["t4"]
        assert report.memories == 1  # t0, with its two versions
        assert c.store.get(["t4"])[0] == before  # a conflict is left as it was
        assert len(c.store.versions("t0")) == 2
        again = import_namespace(c, export, merge=True)
        assert again.memories == 0 and sum(again.logs.values()) == 0  # nothing twice


def test_cli_moves_a_namespace_to_a_chroma_server_and_back(
    chroma_server: ChromaServer, tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Embedded store -> vectors on a Chroma server -> embedded again, with the real embedder."""
    monkeypatch.setenv("TIERED_DISCLOSURE_NO_SERVICE", "1")
    source = tmp_path / "turns.jsonl"
    source.write_text(
        "\n".join(
            turn(n, text).to_json()
            for n, text in enumerate(
                ["The cat sleeps on the radiator", "Invoices go out on the 3rd"]
            )
        ),
        encoding="utf-8",
    )
    here, there, back = (str(tmp_path / name) for name in ("here", "there", "back"))
    assert main(["ingest", str(source), "--root", here, "--user", "dana"]) == 0
    first, second, third = (tmp_path / f"{n}.jsonl" for n in ("first", "second", "third"))
    assert main(["export", "--root", here, "--user", "dana", "-o", str(first)]) == 0
    server = ["--chroma-url", chroma_server.url]
    assert main(["import", str(first), "--root", there, *server]) == 0
    out = capsys.readouterr().out
    assert "imported 2 memories (2 versions)" in out and "user=dana" in out
    with ControllerPool("default", root=there, chroma_url=chroma_server.url) as pool:
        with pool.lease(pool.namespace(user="dana")) as c:
            assert c.store.stats().pending == 0
            hits = c.store.search("warm", "where does the cat sleep", 1)
            assert [h.id for h in hits] == ["t0"]
        local = namespace_dir(there, pool.namespace(user="dana")) / "warm" / "chroma.sqlite3"
        assert not local.exists()
    assert main(["export", "--root", there, "--user", "dana", *server, "-o", str(second)]) == 0
    assert main(["import", str(second), "--root", back]) == 0
    assert main(["export", "--root", back, "--user", "dana", "-o", str(third)]) == 0
    assert first.read_text() == second.read_text() == third.read_text()
    assert main(["export", "--root", back, "--user", "nobody"]) == 1
    assert "nothing is stored for" in capsys.readouterr().err


def test_private_spans_in_an_edited_file_are_not_stored(
    pools: tuple[ControllerPool, ControllerPool],
) -> None:
    source, target = pools
    fill(source)
    lines = export_text(source).splitlines()
    edited = []
    for line in lines:
        record = json.loads(line)
        if record.get("id") == "t1":
            record["versions"][-1]["memory"]["content"] += " <private>pin 8812</private>"
        if record.get("id") == "t4":
            for version in record["versions"]:
                version["memory"]["content"] = "<private>all of it</private>"
        edited.append(json.dumps(record))
    with target.lease(target.namespace(user="dana")) as c:
        report = import_namespace(c, read_export(edited))
        assert report.private == 2 and report.memories == 2
        assert "8812" not in c.store.get(["t1"])[0].content
        assert c.store.get(["t4"]) == []


def test_a_namespace_moves_from_postgresql_to_sqlite_and_back(
    lean_profile: Profile, tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The PostgreSQL archive exports the same lines as the embedded one imports and exports
    again, and an import into PostgreSQL gives them back: nothing lost either way."""
    from tiers.config import DATABASE_URL_VARIABLE

    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    with ControllerPool(lean_profile, root=tmp_path / "pg") as source:
        fill(source, user="mover")
        first = export_text(source, user="mover")
        assert side_files(namespace_dir(source.root, source.namespace(user="mover"))) == []
    memories = [json.loads(line) for line in first.splitlines()]
    assert SECRET not in first
    assert sorted(r["id"] for r in memories if r["type"] == "memory") == ["t0", "t1", "t4"]
    kinds = [r["type"] for r in memories]  # the side stores, read from the PostgreSQL schema
    assert {"summaries", "citation_use", "citation_reply", "budget_reply"} <= set(kinds)
    assert "Ravi" in next(r["names"] for r in memories if r["type"] == "participants")
    assert not any(r.get("memory_id") == "t2" for r in memories)  # forgotten: its uses too
    with ControllerPool(lean_profile, root=tmp_path / "replica") as replica:  # another replica
        assert export_text(replica, user="mover") == first  # reads the same rows, no files
    monkeypatch.delenv(DATABASE_URL_VARIABLE)
    with ControllerPool(lean_profile, root=tmp_path / "lite") as lite:
        with lite.lease(lite.namespace(user="mover")) as c:
            import_namespace(c, read_export(first.splitlines(keepends=True)))
        second = export_text(lite, user="mover")
    assert REPLACED_AT.sub("", second) == REPLACED_AT.sub("", first)
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    with ControllerPool(lean_profile, root=tmp_path / "pg2") as back:
        with back.lease(back.namespace(user="returned")) as c:
            report = import_namespace(c, read_export(second.splitlines(keepends=True)))
            assert (report.memories, report.conflicts) == (3, [])
        third = export_text(back, user="returned")
        assert side_files(namespace_dir(back.root, back.namespace(user="returned"))) == []
    assert REPLACED_AT.sub("", third).replace("returned", "mover") == REPLACED_AT.sub("", first)
    with ControllerPool(lean_profile, root=tmp_path / "replica") as replica:
        assert export_text(replica, user="returned") == third  # imported into PostgreSQL
