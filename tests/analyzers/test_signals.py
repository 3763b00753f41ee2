"""Each signal of the analyzer, one at a time, on the built-in defaults or a small profile."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from analyzers import AnalyzerConfig, DisclosureLevel, QueryAnalysis, QueryComplexityAnalyzer

NOW = datetime(2025, 3, 12, 15, 30, tzinfo=UTC)
D = DisclosureLevel

SIGNAL = re.compile(
    r"(override|keyword):(minimal|standard|detailed|comprehensive):.+"
    r"|expansion_request|explicit_id|continuation|long_query|many_entities|enumeration"
    r"|temporal:(today|yesterday|day_before_yesterday|this_morning|last_night|this_week"
    r"|last_week|this_month|last_month|this_year|last_year|earlier|recently|date|month"
    r"|weekday|ago|past|topic)"
)


@pytest.fixture(scope="module")
def small() -> QueryComplexityAnalyzer:
    """An analyzer with low thresholds and an extra language in its lists."""
    config = AnalyzerConfig(
        long_query_words=5,
        many_entities=1,
        keywords={
            D.MINIMAL: ("quick",),
            D.DETAILED: ("explain", "詳しく"),
            D.COMPREHENSIVE: ("everything about",),
        },
        id_prefixes=("mem", "note"),
    )
    return QueryComplexityAnalyzer(config)


def run(analyzer: QueryComplexityAnalyzer, query: str, **kw: object) -> QueryAnalysis:
    return analyzer.analyze(query, now=NOW, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("query", "signal"),
    [
        ("Analyzing the crash dump now", "keyword:detailed:analyze"),
        ("You explained the lock, right?", "keyword:detailed:explain"),
        ("Still debugging the worker", "keyword:detailed:debug"),
        ("It debugs fine locally", "keyword:detailed:debug"),
        ("I want to understand the retries", "keyword:detailed:understand"),
        ("quickly: the port?", "keyword:minimal:quickly"),
        ("Everything about the auth flow", "keyword:comprehensive:everything about"),
        ("Walking me through the release would help", "keyword:detailed:walk me through"),
    ],
)
def test_keywords_match_inflected_forms(
    analyzer: QueryComplexityAnalyzer, query: str, signal: str
) -> None:
    """Keywords match their inflections: "analyzing", "explained", "debugging" count."""
    assert signal in run(analyzer, query).detected_signals


def test_keywords_vote_for_their_level(analyzer: QueryComplexityAnalyzer) -> None:
    """A lone keyword sets the level it is listed under, and records its vote."""
    result = run(analyzer, "Why does the cache miss?")
    assert result.level is D.DETAILED
    assert result.votes == {"keyword:detailed:why": D.DETAILED}


def test_overrides_win_and_swallow_the_same_keyword(analyzer: QueryComplexityAnalyzer) -> None:
    """An override that is also a keyword counts once, as the override, and wins."""
    result = run(analyzer, "Full context please, and explain the failure")
    assert result.level is D.COMPREHENSIVE
    assert result.override == "full context"
    assert "override:comprehensive:full context" in result.detected_signals
    assert "keyword:comprehensive:full context" not in result.detected_signals
    assert "keyword:detailed:explain" in result.detected_signals


def test_overrides_match_exactly(analyzer: QueryComplexityAnalyzer) -> None:
    """ "details" is not the override "detailed"; "Detailed" (any case) is."""
    assert "override:detailed:detailed" not in run(analyzer, "any details?").detected_signals
    assert run(analyzer, "Detailed notes on the fix").override == "detailed"


def test_long_query_threshold_comes_from_the_profile(small: QueryComplexityAnalyzer) -> None:
    """More than long_query_words words fire long_query; exactly that many do not."""
    assert "long_query" not in run(small, "one two three four five").detected_signals
    result = run(small, "one two three four five six")
    assert "long_query" in result.detected_signals
    assert result.level is D.DETAILED
    assert result.word_count == 6


def test_long_query_default_is_thirty_words(analyzer: QueryComplexityAnalyzer) -> None:
    """31 words are long, 30 are not (the default threshold)."""
    assert "long_query" not in run(analyzer, " ".join(["word"] * 30)).detected_signals
    assert "long_query" in run(analyzer, " ".join(["word"] * 31)).detected_signals


def test_many_entities_threshold_comes_from_the_profile(small: QueryComplexityAnalyzer) -> None:
    """More than many_entities distinct entities fire many_entities."""
    assert "many_entities" not in run(small, "open app.py").detected_signals
    result = run(small, "open app.py and app.py and db.py")
    assert result.entities == ("app.py", "db.py")
    assert "many_entities" in result.detected_signals


def test_many_entities_default(analyzer: QueryComplexityAnalyzer) -> None:
    """Four distinct entities lift a plain request to detailed; three do not."""
    three = run(analyzer, "compare a.py, b.py and c.py")
    four = run(analyzer, "compare a.py, b.py, c.py and d.py")
    assert (three.level, four.level) == (D.STANDARD, D.DETAILED)
    assert "many_entities" in four.detected_signals


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("The fix is in src/auth/login.py", ["src/auth/login.py"]),
        ("see ./scripts/run.sh and ~/.bashrc", ["./scripts/run.sh", "~/.bashrc"]),
        ("JwtToken and getUserName and HTTPServer", ["JwtToken", "getUserName", "HTTPServer"]),
        ("rename parse_date and MAX_RETRIES", ["parse_date", "MAX_RETRIES"]),
        ("call os.path.join() then cfg.load", ["os.path.join()", "cfg.load"]),
        ("read https://example.com/a?b=1.", ["https://example.com/a?b=1"]),
        ("see #123 and BILL-482 and PR 17", ["#123", "BILL-482", "PR 17"]),
        ("UTF-8 and SHA-256 are not tickets", []),
        ("and/or yes/no e.g. i.e. 3/4", []),
        ("What did Alice say to Bob?", ["Alice", "Bob"]),
        ("Alice said the build broke", []),
        ("we open an office in seoul and new york", ["seoul", "new york"]),
        ("the JWT goes in the AWS vault", ["JWT", "AWS"]),
        ("auth.py에서 Priya가 고친 부분", ["auth.py", "Priya"]),
        ("is mem_12 in cache_store?", ["cache_store"]),
    ],
)
def test_entities(rules_analyzer: QueryComplexityAnalyzer, query: str, expected: list[str]) -> None:
    """The rules find paths, identifiers, URLs, tickets, names and places; the rest is not."""
    assert list(run(rules_analyzer, query).entities) == expected


def test_entities_are_distinct_and_in_order(analyzer: QueryComplexityAnalyzer) -> None:
    """Repeats (case aside) count once, in order of first appearance."""
    result = run(analyzer, "Redis, then app.py, then redis again and app.py")
    assert result.entities == ("Redis", "app.py")


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("show mem_12", ["mem_12"]),
        ("what does [mem:a7Bc3x] say", ["mem:a7Bc3x"]),
        ("compare mem:a7Bc3x with MEM_7 and mem-9", ["mem:a7Bc3x", "mem_7", "mem-9"]),
        ("mem:aBcDeF is all letters", ["mem:aBcDeF"]),
        ("mem_cache is a module, memory is a word", []),
        ("show mem_12 and mem_12 again", ["mem_12"]),
    ],
)
def test_explicit_ids(analyzer: QueryComplexityAnalyzer, query: str, ids: list[str]) -> None:
    """Ids and citations are found as written, normalised; identifiers are not ids."""
    result = run(analyzer, query)
    assert list(result.explicit_ids) == ids
    assert result.expansion_request is bool(ids)
    assert ("explicit_id" in result.detected_signals) is bool(ids)
    assert not set(ids) & set(result.entities)


def test_id_prefixes_come_from_the_profile(small: QueryComplexityAnalyzer) -> None:
    """A profile can add prefixes: note_3 is an id there."""
    assert run(small, "open note_3 and mem:Ab12Cd").explicit_ids == ("note_3", "mem:Ab12Cd")


@pytest.mark.parametrize(
    "query",
    ["tell me more", "Tell me more about the lock", "show the details", "자세히 알려줘"],
)
def test_expansion_requests(analyzer: QueryComplexityAnalyzer, query: str) -> None:
    """Requests for more are expansion requests, lifted to at least detailed."""
    result = run(analyzer, query)
    assert result.expansion_request
    assert "expansion_request" in result.detected_signals
    assert result.level >= D.DETAILED


def test_non_latin_phrases_match_whatever_the_spacing(analyzer: QueryComplexityAnalyzer) -> None:
    """Korean phrases match as substrings, with or without spaces, inside longer words."""
    for query in ("자세히알려줘", "자세히  알려줘요", "좀 자세히 알려줘!"):
        assert run(analyzer, query).expansion_request, query
    assert run(analyzer, "설명해주세요").level is D.DETAILED


def test_a_profile_can_list_triggers_in_another_language(small: QueryComplexityAnalyzer) -> None:
    """A Japanese keyword given in the profile works like the built-in Korean ones."""
    result = run(small, "ログの件、詳しく教えて")
    assert "keyword:detailed:詳しく" in result.detected_signals
    assert result.level is D.DETAILED


class TestContinuation:
    """Follow-up cues, read with the recent history."""

    def test_a_cue_with_history_inherits_the_previous_level(
        self, analyzer: QueryComplexityAnalyzer
    ) -> None:
        """ "and ..." after a comprehensive turn is comprehensive, and says so."""
        result = run(analyzer, "and the tests?", history=["Full context on the outage"])
        assert result.is_continuation
        assert result.level is D.COMPREHENSIVE
        assert result.inherited_level is D.COMPREHENSIVE
        assert result.votes["continuation"] is D.COMPREHENSIVE
        assert "continuation" in result.detected_signals

    def test_without_history_a_cue_continues_nothing(
        self, analyzer: QueryComplexityAnalyzer
    ) -> None:
        """With no earlier turn there is nothing to continue."""
        result = run(analyzer, "and the tests?")
        assert not result.is_continuation
        assert result.level is D.STANDARD

    @pytest.mark.parametrize(
        "query",
        [
            "And the tests?",
            "ok, and the tests?",
            "What about staging?",
            "keep going",
            "Can you also add docs?",
            "그리고 테스트는?",
            "also: docs",
            "Thanks. And docs?",
        ],
    )
    def test_cues(self, analyzer: QueryComplexityAnalyzer, query: str) -> None:
        """Starting cues (after fillers or a closed sentence) and anywhere cues count."""
        assert run(analyzer, query, history=["Explain the cache"]).is_continuation

    @pytest.mark.parametrize("query", ["Andrew wrote the tests", "Fix this and that"])
    def test_non_cues(self, analyzer: QueryComplexityAnalyzer, query: str) -> None:
        """ "and" inside a sentence, or a word that starts with it, is no cue."""
        assert not run(analyzer, query, history=["Explain the cache"]).is_continuation

    def test_previous_analysis_wins_over_history(self, analyzer: QueryComplexityAnalyzer) -> None:
        """When the caller passes the previous analysis, its level is the one inherited."""
        previous = run(analyzer, "quick: the port?")
        result = run(analyzer, "and the host?", history=["Explain the cache"], previous=previous)
        assert result.level is D.MINIMAL

    def test_the_history_chain_is_followed(self, analyzer: QueryComplexityAnalyzer) -> None:
        """A continuation of a continuation inherits from where the chain started."""
        history = ["Tell me everything about billing", "and the invoices?", "what about taxes?"]
        assert run(analyzer, "and refunds?", history=history).level is D.COMPREHENSIVE

    def test_an_override_beats_the_inherited_level(self, analyzer: QueryComplexityAnalyzer) -> None:
        """ "and briefly ..." after a comprehensive turn is minimal."""
        result = run(analyzer, "and briefly, the fix?", history=["Full context on the outage"])
        assert result.is_continuation
        assert result.level is D.MINIMAL


def test_every_signal_is_in_the_documented_vocabulary(analyzer: QueryComplexityAnalyzer) -> None:
    """Signals across a varied batch all follow the documented vocabulary."""
    queries = [
        "Just explain everything about auth yesterday in src/a.py, b.py, c.py and d.py",
        "and tell me more about mem_3, briefly",
        "지난주 장애 원인 자세히",
        "when we discussed caching two days ago " + "word " * 30,
    ]
    for query in queries:
        result = run(analyzer, query, history=["Explain it"])
        assert result.detected_signals
        assert all(SIGNAL.fullmatch(s) for s in result.detected_signals), result.detected_signals


def test_complexity_sits_in_its_level_band(analyzer: QueryComplexityAnalyzer) -> None:
    """Complexity lies in the level's quarter of [0, 1] and grows with the query."""
    for query in ("quick: port?", "what's new", "explain the cache", "full context please"):
        result = run(analyzer, query)
        rank = result.level.rank
        assert rank / 4 <= result.complexity <= (rank + 1) / 4, query
    short = run(analyzer, "explain the cache")
    long = run(analyzer, "explain the cache layer in src/cache.py and its TTL policy for Redis")
    assert short.level is long.level is D.DETAILED
    assert long.complexity > short.complexity


def test_empty_and_oversized_queries(analyzer: QueryComplexityAnalyzer) -> None:
    """An empty query gets the default level; a huge one is analysed on its head, quickly."""
    assert run(analyzer, "   ").level is D.STANDARD
    huge = run(analyzer, "explain " + "x " * 200_000)
    assert huge.level is D.DETAILED
    assert huge.word_count == 200_001


def test_now_defaults_to_current_utc_and_naive_means_utc(
    analyzer: QueryComplexityAnalyzer,
) -> None:
    """Without now, ranges end at the current UTC time; a naive now is taken as UTC."""
    before = datetime.now(UTC)
    result = analyzer.analyze("what happened today?")
    assert result.temporal is not None and result.temporal.end is not None
    assert before - timedelta(seconds=1) <= result.temporal.end <= datetime.now(UTC)
    naive = analyzer.analyze("yesterday?", now=datetime(2025, 3, 12, 9, 0))
    assert naive.temporal is not None and naive.temporal.start is not None
    assert naive.temporal.start == datetime(2025, 3, 11, tzinfo=UTC)
