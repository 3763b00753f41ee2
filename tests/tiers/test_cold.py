"""The cold archive: both BM25 engines, timelines, citations, line counts, bad data dirs."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.tiers.contract import BASE, TEXTS, TierContract, corpus
from tiers.citations import citation_code
from tiers.cold import ColdArchive
from tiers.config import ColdConfig
from tiers.errors import (
    CorruptDataError,
    IncompatibleDataError,
    InvalidInputError,
    MemoryNotFoundError,
)
from tiers.history import history_line
from tiers.memory import Memory
from tiers.schema import ARCHIVE_FILE

ENGINES = ["fts5", "rank_bm25"]


class TestColdFts5Contract(TierContract):
    @pytest.fixture
    def tier(self, tmp_path: Path) -> Iterator[ColdArchive]:
        archive = ColdArchive(tmp_path, ColdConfig(engine="fts5"))
        yield archive
        archive.close()


class TestColdRankBm25Contract(TierContract):
    @pytest.fixture
    def tier(self, tmp_path: Path) -> Iterator[ColdArchive]:
        archive = ColdArchive(tmp_path, ColdConfig(engine="rank_bm25"))
        yield archive
        archive.close()


def chat(n: int, *, sessions: int = 3, seed: int = 5) -> list[Memory]:
    rng = random.Random(seed)
    words = ["billing", "invoice", "postgres", "redis", "cache", "deploy", "rollback"]
    words += ["alert", "pager", "cron", "email"]
    return [
        Memory(
            id=f"m{i}",
            content=" ".join(rng.choices(words, k=rng.randint(3, 12))) + f" note{i}",
            session_id=f"s{i % sessions}",
            timestamp=BASE + timedelta(minutes=i),
        )
        for i in range(n)
    ]


def test_both_engines_give_the_same_scores(tmp_path: Path) -> None:
    """FTS5 and rank_bm25 share tokenisation and BM25, so they rank and score alike."""
    memories = chat(300)
    results = {}
    for engine in ENGINES:
        archive = ColdArchive(tmp_path / engine, ColdConfig(engine=engine))
        archive.add(memories)
        archive.forget([f"m{i}" for i in range(0, 300, 7)])
        archive.add([memories[1].replace(content="postgres postgres failover drill")])
        results[engine] = [(h.id, h.score) for h in archive.search("postgres failover cron", 20)]
        archive.close()
    fts, okapi = results["fts5"], results["rank_bm25"]
    assert [s for _, s in fts] == pytest.approx([s for _, s in okapi], rel=1e-9)

    def tie_free(hits: list[tuple[str, float]]) -> list[tuple[float, str]]:
        # equal scores may differ in the last bits (summation order): compare rounded
        return sorted(((-round(s, 9), i) for i, s in hits))[:15]

    assert tie_free(fts) == tie_free(okapi)
    assert fts[0][0] == "m1"


@pytest.mark.parametrize("engine", ENGINES)
def test_index_survives_reopen_and_tracks_changes(tmp_path: Path, engine: str) -> None:
    """After reopening, search sees what was written, replaced and forgotten before."""
    archive = ColdArchive(tmp_path, ColdConfig(engine=engine))
    archive.add(corpus())
    archive.search("billing", 3)  # loads rank_bm25's in-memory index before the changes
    archive.add([corpus()[0].replace(content="Billing stays on SQLite in WAL mode.")])
    archive.forget(["c4"])
    archive.close()
    archive = ColdArchive(tmp_path, ColdConfig(engine=engine))
    assert archive.count() == len(TEXTS) - 1
    assert [h.id for h in archive.search("SQLite WAL", 3)][:1] == ["c0"]
    assert archive.search("Decimal floats", 3) == []
    archive.close()


def test_switching_engines_rebuilds_the_fts_index(tmp_path: Path) -> None:
    """An archive written under rank_bm25 gets a complete FTS5 index when reopened with fts5."""
    archive = ColdArchive(tmp_path, ColdConfig(engine="fts5"))
    archive.add(corpus()[:3])
    archive.close()
    archive = ColdArchive(tmp_path, ColdConfig(engine="rank_bm25"))
    archive.add(corpus()[3:])
    archive.close()
    archive = ColdArchive(tmp_path, ColdConfig(engine="fts5"))
    assert archive.search("invoice totals Decimal", 1)[0].id == "c4"
    assert archive.search("Postgres", 1)[0].id == "c0"
    archive.check_integrity()
    archive.close()


def test_neighbours_walk_the_session_in_time_order(tmp_path: Path) -> None:
    """neighbours returns the target with up to `window` memories each side, same session."""
    archive = ColdArchive(tmp_path)
    memories = chat(30, sessions=3)
    archive.add(list(reversed(memories)))  # insertion order differs from time order
    around = archive.neighbours("m15", 2)
    assert [m.id for m in around] == ["m9", "m12", "m15", "m18", "m21"]
    assert [m.id for m in archive.neighbours("m0", 2)] == ["m0", "m3", "m6"]
    assert [m.id for m in archive.neighbours("m15", 0)] == ["m15"]
    assert archive.session("m15") == "s0" and archive.session("zz") is None
    assert archive.ids_in_session("s1")[:3] == ["m1", "m4", "m7"]
    with pytest.raises(MemoryNotFoundError, match="'zz'"):
        archive.neighbours("zz", 2)
    archive.close()


def test_equal_timestamps_order_by_insertion(tmp_path: Path) -> None:
    """Memories with the same timestamp keep the order they were ingested in."""
    archive = ColdArchive(tmp_path)
    archive.add([Memory(id=f"t{i}", content=f"same time {i}", timestamp=BASE) for i in (3, 1, 2)])
    assert archive.ids_in_session("default") == ["t3", "t1", "t2"]
    assert [m.id for m in archive.recent(2)] == ["t2", "t1"]
    archive.close()


def test_recent_and_iteration(tmp_path: Path) -> None:
    """recent(n) is newest first; iter_memories yields everything once, in time order."""
    archive = ColdArchive(tmp_path)
    memories = chat(25)
    archive.add(memories[::-1])
    assert [m.id for m in archive.recent(3)] == ["m24", "m23", "m22"]
    assert [m.id for m in archive.iter_memories(page=4)] == [m.id for m in memories]
    assert list(archive.iter_memories()) == memories
    archive.close()


def test_citations_persist_resolve_and_extend_on_collision(tmp_path: Path) -> None:
    """Codes are sha256 prefixes; a colliding id gets a longer code; both survive reopening."""
    archive = ColdArchive(tmp_path, citation_length=2)
    seen: dict[str, str] = {}
    first = second = ""
    for i in range(5000):  # 100 two-digit codes: a collision comes quickly
        code = citation_code(f"id{i}", 2)
        if code in seen:
            first, second = seen[code], f"id{i}"
            break
        seen[code] = f"id{i}"
    archive.add([Memory(id=first, content="first"), Memory(id=second, content="second")])
    codes = archive.citation_of([first, second, "unknown"])
    assert codes == {first: citation_code(first, 2), second: citation_code(second, 3)}
    archive.close()
    archive = ColdArchive(tmp_path, citation_length=2)
    assert archive.resolve_citation(codes[second]) == second
    assert archive.resolve_citation(codes[first]) == first
    assert archive.resolve_citation("nope") is None
    archive.forget([first])
    assert archive.resolve_citation(codes[first]) is None
    archive.close()


def test_codes_keep_their_alphabet_when_the_setting_changes(tmp_path: Path) -> None:
    """Memories stored under base64url keep their codes; new ones get digits; all resolve."""
    archive = ColdArchive(tmp_path, citation_alphabet="base64url")
    archive.add([Memory(id="old", content="stored before")])
    archive.close()
    archive = ColdArchive(tmp_path)  # digits, the default
    archive.add([Memory(id="new", content="stored after")])
    codes = archive.citation_of(["old", "new"])
    assert codes == {
        "old": citation_code("old", alphabet="base64url"),
        "new": citation_code("new", alphabet="digits"),
    }
    assert codes["new"].isdigit() and not codes["old"].isdigit()
    assert [archive.resolve_citation(codes[i]) for i in ("old", "new")] == ["old", "new"]
    archive.close()
    with pytest.raises(InvalidInputError, match="digits, base64url"):
        ColdArchive(tmp_path, citation_alphabet="hex")


def test_citation_length_is_checked(tmp_path: Path) -> None:
    """An impossible citation length is refused when the archive opens."""
    with pytest.raises(InvalidInputError, match=r"1\.\.43"):
        ColdArchive(tmp_path, citation_length=0)


def test_line_tokens_are_kept_and_backfilled(tmp_path: Path) -> None:
    """Per-memory history-line counts add up; reopening with a counter counts old rows."""
    archive = ColdArchive(tmp_path)
    archive.add(corpus()[:2])
    assert archive.total_line_tokens() == 0
    archive.close()

    def words(text: str) -> int:
        return len(text.split())

    archive = ColdArchive(tmp_path, line_counter=words)
    expected = sum(words(history_line(m)) for m in corpus()[:2])
    assert archive.total_line_tokens() == expected
    archive.add(corpus()[2:])
    archive.add([corpus()[0].replace(content="short")])
    archive.forget(["c5"])
    live = [corpus()[0].replace(content="short"), *corpus()[1:5]]
    assert archive.total_line_tokens() == sum(words(history_line(m)) for m in live)
    archive.close()
    assert ColdArchive(tmp_path).total_line_tokens() == sum(words(history_line(m)) for m in live)


def test_a_failed_transaction_writes_nothing(tmp_path: Path) -> None:
    """An exception inside a transaction rolls back every row, count and index entry."""
    archive = ColdArchive(tmp_path)
    archive.add(corpus()[:2])
    with pytest.raises(RuntimeError), archive.transaction() as txn:
        txn.put(corpus()[2])
        txn.delete("c0")
        raise RuntimeError("boom")
    assert archive.count() == 2
    assert [m.id for m in archive.get(["c0", "c2"])] == ["c0"]
    assert archive.search("Priya billing", 2)[0].id == "c0"
    archive.check_integrity()
    archive.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    """An archive written by a newer schema raises IncompatibleDataError naming both versions."""
    ColdArchive(tmp_path).close()
    with sqlite3.connect(tmp_path / ARCHIVE_FILE) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(IncompatibleDataError, match=r"newer.*schema 99.*schemas 1 to 2"):
        ColdArchive(tmp_path)


def test_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    """A SQLite file that is not ours raises IncompatibleDataError, and is left untouched."""
    path = tmp_path / ARCHIVE_FILE
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (x)")
    before = path.read_bytes()
    with pytest.raises(IncompatibleDataError, match="not a tiered-disclosure archive"):
        ColdArchive(tmp_path)
    assert path.read_bytes() == before


def test_garbage_file_is_reported_corrupt(tmp_path: Path) -> None:
    """A file that is not a database raises CorruptDataError naming the file."""
    (tmp_path / ARCHIVE_FILE).write_bytes(b"this is not sqlite" * 300)
    with pytest.raises(CorruptDataError, match=ARCHIVE_FILE):
        ColdArchive(tmp_path)


def test_damaged_pages_are_reported_corrupt(tmp_path: Path) -> None:
    """Overwriting pages inside the archive is caught on open by quick_check."""
    archive = ColdArchive(tmp_path)
    archive.add(chat(400))
    archive.close()
    path = tmp_path / ARCHIVE_FILE
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(2 * page, len(data) - page, 3 * page):
        data[start + 100 : start + 900] = bytes(random.Random(start).randbytes(800))
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptDataError):
        ColdArchive(tmp_path)


def test_fts5_budget_keeps_exact_scores_and_rare_terms_first(tmp_path: Path) -> None:
    """Over its budget, FTS5 still returns exact BM25 scores, led by the rarer terms' matches."""
    memories = chat(300)
    exact = ColdArchive(tmp_path / "exact", ColdConfig(fts5_budget=0))
    bounded = ColdArchive(tmp_path / "bounded", ColdConfig(fts5_budget=40, fts5_rescore=5))
    for archive in (exact, bounded):
        archive.add(memories)
    query = "postgres cron note17 note42"
    full = {h.id: h.score for h in exact.search(query, 300)}
    hits = bounded.search(query, 10)
    assert len(hits) == 10  # the rare terms alone find two: the core widens to fill k
    assert {h.id for h in hits[:2]} == {"m17", "m42"}
    for hit in hits:
        assert hit.score == pytest.approx(full[hit.id], rel=1e-9)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert bounded.search("note17", 3)[0].id == "m17"  # within budget: the exact path
    for archive in (exact, bounded):
        archive.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_non_latin_text_is_searchable_in_both_engines(tmp_path: Path, engine: str) -> None:
    """Accented, Korean and Chinese text is found through the shared tokenisation."""
    archive = ColdArchive(tmp_path, ColdConfig(engine=engine))
    archive.add(
        [
            Memory(id="fr", content="Le déploiement du café est reporté à lundi."),
            Memory(id="ko", content="데이터베이스 마이그레이션은 금요일에 끝났다"),
            Memory(id="zh", content="我们把数据库迁移到了新的服务器"),
            Memory(id="en", content="Nothing relevant in plain English here."),
        ]
    )
    assert archive.search("DÉPLOIEMENT cafe café", 1)[0].id == "fr"
    assert archive.search("데이터베이스", 1)[0].id == "ko"
    assert archive.search("数据库迁移", 1)[0].id == "zh"
    archive.close()


def test_changing_the_stemming_rebuilds_the_fts5_index(tmp_path: Path) -> None:
    """An archive indexed without stemming is re-indexed when reopened with it, and back."""
    from tiers.config import ColdConfig
    from tiers.text import Tokenizer

    memory = Memory(id="p1", content="Melanie painted a lake sunrise", session_id="s")
    plain = ColdArchive(tmp_path, ColdConfig(engine="fts5"), tokenizer=Tokenizer(stem="none"))
    with plain.transaction() as txn:
        txn.put(memory)
    assert plain.search("paintings", 3) == []
    plain.close()
    stemmed = ColdArchive(tmp_path, ColdConfig(engine="fts5"), tokenizer=Tokenizer())
    assert [h.id for h in stemmed.search("paintings", 3)] == ["p1"]
    stemmed.close()
    again = ColdArchive(tmp_path, ColdConfig(engine="fts5"), tokenizer=Tokenizer(stem="none"))
    assert again.search("paintings", 3) == []
    again.close()
