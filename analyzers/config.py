"""The analyzer's profile section: every list and threshold it uses comes from here.

Phrase lists may mix languages. Phrases written in Latin script match word by word on a light
stem of each word ("explained", "explaining" and "explains" all match ``explain``), except the
overrides, which are explicit and match exactly, case aside ("details" is not "detailed").
Phrases with any non-Latin letter (Korean, say) match as substrings of the query with whitespace
ignored, because the rule tokenizer does not split those scripts into words.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from analyzers.levels import DisclosureLevel

Phrases = tuple[str, ...]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_phrases(name: str, phrases: Phrases) -> Phrases:
    if any(not phrase.strip() for phrase in phrases):
        raise ValueError(f"{name}: phrases must not be blank")
    return phrases


def _default_keywords() -> dict[DisclosureLevel, Phrases]:
    # English complexity triggers, plus Korean ones (the first users wrote Korean).
    return {
        DisclosureLevel.MINIMAL: (
            *("quick", "quickly", "simple", "just", "only", "briefly"),
            *("간단히", "빨리"),
        ),
        DisclosureLevel.DETAILED: (
            *("explain", "analyze", "analyse", "investigate", "debug", "understand", "why"),
            *("how does", "walk me through", "root cause", "figure out", "look into"),
            *("troubleshoot", "diagnose", "trace"),
            *("설명", "분석", "디버그", "디버깅", "왜", "원인"),
        ),
        DisclosureLevel.COMPREHENSIVE: (
            *("full context", "everything about", "tell me everything", "complete history"),
            *("all details", "everything we", "every decision", "full timeline", "whole story"),
            *("전체 맥락", "모든 것", "전부 다", "처음부터"),
        ),
    }


def _default_overrides() -> dict[DisclosureLevel, Phrases]:
    # Explicit requests that win over every other signal. Bare "everything" is deliberately not
    # here: "is everything ok?" must not fetch the whole archive ("everything about" is a keyword).
    return {
        DisclosureLevel.MINIMAL: (
            *("brief", "briefly", "tl;dr", "in one line", "one sentence", "short answer"),
            "keep it short",
            *("간단히", "짧게", "한 줄로", "요약만"),
        ),
        DisclosureLevel.DETAILED: (
            *("in detail", "detailed", "show the details", "step by step"),
            *("자세히", "상세히"),
        ),
        DisclosureLevel.COMPREHENSIVE: (
            *("full context", "complete history", "everything you know", "the whole history"),
            *("전체 맥락", "처음부터 끝까지"),
        ),
    }


def _default_expansion() -> Phrases:
    return (
        *("tell me more", "more about", "more on", "more details", "show the details"),
        *("show me the details", "expand on", "elaborate", "go deeper", "dig deeper"),
        *("the full text", "what exactly"),
        *("자세히 알려줘", "더 알려줘", "더 자세히", "자세한 내용", "전체 내용", "더 보여줘"),
    )


class FloorsConfig(_Section):
    """The lowest level a structural signal lifts a query to; null: the signal lifts nothing."""

    long_query: DisclosureLevel | None = DisclosureLevel.DETAILED
    many_entities: DisclosureLevel | None = DisclosureLevel.DETAILED
    temporal: DisclosureLevel | None = DisclosureLevel.DETAILED
    expansion_request: DisclosureLevel | None = DisclosureLevel.DETAILED
    enumeration: DisclosureLevel | None = None


class EnumerationConfig(_Section):
    """What makes a query ask for a set or a count (:mod:`analyzers.enumeration`)."""

    enabled: bool = True
    phrases: Phrases = (
        *("how many", "how much", "how often", "in total", "total", "both", "all the"),
        *("all of", "every", "each", "list", "various", "different", "names of"),
        *("kind of", "kinds of", "type of", "types of", "sort of", "sorts of"),
        *("몇 번", "몇 개", "모두", "전부", "목록"),
    )
    question_words: Phrases = ("what", "which")
    auxiliaries: Phrases = (
        *("do", "does", "did", "has", "have", "had", "is", "are", "was", "were"),
        *("can", "could", "would", "will", "should"),
    )
    object_words: int = Field(default=3, ge=1, le=10)
    plurals: Phrases = ("people", "children", "kids", "series", "media", "men", "women")

    @field_validator("phrases", "question_words", "auxiliaries", "plurals")
    @classmethod
    def _non_blank(cls, value: Phrases) -> Phrases:
        return _check_phrases("enumeration", value)


class AnswerKind(_Section):
    """One kind of answer: the nouns a question asks about to want it, and the entity labels
    of a trained pipeline (or the rules' gazetteer, or ``QUOTED`` for a quoted title) that
    answer it."""

    nouns: Phrases = ()
    labels: Phrases = ()


def _default_answer_kinds() -> dict[str, AnswerKind]:
    return {
        "place": AnswerKind(
            nouns=(
                *("city", "country", "place", "location", "state", "area", "region", "town"),
                *("destination", "spot", "beach", "park", "island", "village", "continent"),
                *("neighborhood", "neighbourhood", "venue", "landmark", "geographical"),
            ),
            labels=("GPE", "LOC", "FAC"),
        ),
        "person": AnswerKind(
            nouns=(
                *("name", "person", "people", "friend", "child", "children", "kid", "son"),
                *("daughter", "sibling", "brother", "sister", "parent", "artist", "singer"),
                *("musician", "author", "writer", "player", "teammate", "colleague", "partner"),
                *("actor", "actress", "director", "mentor", "coach", "boss"),
            ),
            labels=("PERSON",),
        ),
        "thing": AnswerKind(
            nouns=(
                *("book", "movie", "film", "show", "series", "song", "album", "game", "novel"),
                *("podcast", "band", "brand", "product", "app", "car", "play", "musical"),
                *("tv", "video", "title", "poem", "story", "franchise", "console", "device"),
                *("company", "team", "club", "organization", "organisation", "shop", "store"),
            ),
            labels=("WORK_OF_ART", "PRODUCT", "ORG", "EVENT", "QUOTED"),
        ),
        "event": AnswerKind(
            nouns=(
                *("event", "festival", "concert", "tournament", "competition", "race"),
                *("conference", "party", "wedding", "match", "contest", "championship"),
            ),
            labels=("EVENT", "FAC", "ORG", "WORK_OF_ART", "QUOTED"),
        ),
        "count": AnswerKind(labels=("CARDINAL", "QUANTITY", "MONEY")),
        "date": AnswerKind(
            nouns=("date", "year", "month", "day", "time", "week"),
            labels=("DATE", "TIME"),
        ),
    }


class AnswerConfig(_Section):
    """The kinds of answer questions ask for (:mod:`analyzers.answer`), by the nouns they ask
    about; ``where``, ``who`` and ``when`` ask for a place, a person and a date."""

    enabled: bool = True
    kinds: dict[str, AnswerKind] = Field(default_factory=_default_answer_kinds)

    @field_validator("kinds")
    @classmethod
    def _non_blank(cls, value: dict[str, AnswerKind]) -> dict[str, AnswerKind]:
        for kind, rule in value.items():
            if not kind.strip():
                raise ValueError("answer kinds must not be blank")
            _check_phrases(f"answers -> {kind} -> nouns", rule.nouns)
            _check_phrases(f"answers -> {kind} -> labels", rule.labels)
        return value


class ContinuationConfig(_Section):
    """Follow-up cues: ``starts`` open the query (after fillers), ``anywhere`` may sit anywhere."""

    starts: Phrases = (
        *("and", "another", "next", "then", "continue", "keep going", "go on", "more"),
        *("what about", "how about", "same for", "the same for"),
        *("그리고", "그럼", "그러면", "또", "계속", "그 다음"),
    )
    anywhere: Phrases = ("also", "as well", "또한")
    fillers: Phrases = (
        *("ok", "okay", "so", "right", "great", "thanks", "cool", "alright", "yes", "yeah"),
        *("no", "hmm", "좋아", "네", "응"),
    )
    history_turns: int = Field(default=4, ge=1, le=50)

    @field_validator("starts", "anywhere", "fillers")
    @classmethod
    def _non_blank(cls, value: Phrases) -> Phrases:
        return _check_phrases("continuation", value)


class TemporalConfig(_Section):
    """Phrases naming fixed time ranges, by range kind; ranges resolve against ``now``.

    Dates, month and weekday names, "N days ago" and "the last N days" are recognised by the
    analyzer's own grammar (English and Korean) and need no list here.
    """

    today: Phrases = ("today", "earlier today", "오늘")
    yesterday: Phrases = ("yesterday", "어제")
    day_before_yesterday: Phrases = ("day before yesterday", "그저께", "그제")
    this_morning: Phrases = ("this morning", "오늘 아침")
    last_night: Phrases = ("last night", "어젯밤")
    this_week: Phrases = ("this week", "이번 주")
    last_week: Phrases = ("last week", "지난주", "지난 주")
    this_month: Phrases = ("this month", "이번 달")
    last_month: Phrases = ("last month", "지난달", "지난 달")
    this_year: Phrases = ("this year", "올해")
    last_year: Phrases = ("last year", "작년")
    earlier: Phrases = (
        *("earlier", "previously", "last time", "a while ago", "a moment ago"),
        *("아까", "이전에", "지난번"),
    )
    recently: Phrases = ("recently", "lately", "the other day", "최근")
    topic_markers: Phrases = (
        *("when we discussed", "when we talked about", "when we were talking about"),
        *("when we spoke about", "when i asked about", "when i asked you about"),
        *("when you mentioned", "when you explained", "the conversation about"),
        *("the discussion about", "our discussion of", "our discussion about"),
    )
    topic_markers_after: Phrases = ("얘기했을 때", "이야기했을 때", "논의했을 때", "얘기할 때")
    earlier_hours: float = Field(default=24.0, gt=0)
    recent_days: float = Field(default=7.0, gt=0)

    @model_validator(mode="after")
    def _non_blank(self) -> TemporalConfig:
        for name, value in self:
            if isinstance(value, tuple):
                _check_phrases(f"temporal -> {name}", value)
        return self


def _default_gazetteer() -> dict[str, Phrases]:
    # Unambiguous names only: the gazetteer matches case-insensitively ("seoul" counts).
    return {
        "GPE": (
            *("Seoul", "Busan", "Incheon", "Tokyo", "Osaka", "Beijing", "Shanghai", "Singapore"),
            *("London", "Paris", "Berlin", "Amsterdam", "Dublin", "New York", "San Francisco"),
            *("Seattle", "Toronto", "Sydney", "Korea", "South Korea", "Japan", "Germany"),
        ),
        "ORG": ("GitHub", "GitLab", "Jira", "OpenAI", "Anthropic", "AWS", "Google", "Microsoft"),
        "PRODUCT": (
            "PostgreSQL",
            "Postgres",
            "Redis",
            "Kubernetes",
            "Docker",
            "ChromaDB",
            "SQLite",
        ),
    }


class EntityConfig(_Section):
    """What counts as an entity: code-like tokens, a small gazetteer, and capitalised words."""

    gazetteer: dict[str, Phrases] = Field(default_factory=_default_gazetteer)
    capitalised: bool = True  # capitalised words not at a sentence start are names or places
    acronyms: bool = True  # all-caps words of 2 to 6 letters (JWT, AWS) are entities
    ignore: Phrases = (
        *("hi", "hello", "hey", "thanks", "thank", "ok", "okay", "yes", "no", "sure"),
        *("please", "tl", "dr", "fyi", "asap", "btw", "imo", "lgtm", "todo"),
    )
    file_extensions: Phrases = (
        *("py", "pyi", "ipynb", "js", "jsx", "ts", "tsx", "mjs", "json", "yaml", "yml"),
        *("toml", "ini", "cfg", "conf", "env", "md", "rst", "txt", "csv", "html", "css"),
        *("sql", "db", "sh", "go", "rs", "java", "kt", "swift", "rb", "php", "c", "h"),
        *("cpp", "hpp", "cs", "lock", "log", "xml", "proto", "tf", "pdf"),
    )
    not_tickets: Phrases = ("UTF", "SHA", "ISO", "AES", "COVID", "HTTP", "MP", "TLS")
    trained_labels: Phrases = (
        *("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT"),
        *("WORK_OF_ART", "LAW", "LANGUAGE"),
    )
    max_entities: int = Field(default=20, gt=0)
    trained_chars: int = Field(default=2000, gt=0)

    @field_validator("gazetteer")
    @classmethod
    def _non_blank_names(cls, value: dict[str, Phrases]) -> dict[str, Phrases]:
        for label, names in value.items():
            if not label.strip():
                raise ValueError("gazetteer labels must not be blank")
            _check_phrases(f"gazetteer -> {label}", names)
        return value


class ComplexityWeights(_Section):
    """Weights of the features that place a query inside its level's band of complexity."""

    length: float = Field(default=0.35, ge=0)
    entities: float = Field(default=0.25, ge=0)
    temporal: float = Field(default=0.15, ge=0)
    continuation: float = Field(default=0.10, ge=0)
    keywords: float = Field(default=0.15, ge=0)

    @model_validator(mode="after")
    def _some_weight(self) -> ComplexityWeights:
        if self.total <= 0:
            raise ValueError("at least one weight must be positive")
        return self

    @property
    def total(self) -> float:
        return self.length + self.entities + self.temporal + self.continuation + self.keywords


class SummaryConfig(_Section):
    """Ingest summaries: the first informative sentence among the leading ones, one line."""

    max_chars: int = Field(default=100, ge=10, le=100)
    lead_sentences: int = Field(default=3, ge=1)
    min_content_words: int = Field(default=3, ge=0)


class AnalyzerConfig(_Section):
    """Lists and thresholds of the QueryComplexityAnalyzer. Lists may mix languages."""

    default_level: DisclosureLevel = DisclosureLevel.STANDARD
    keywords: dict[DisclosureLevel, Phrases] = Field(default_factory=_default_keywords)
    overrides: dict[DisclosureLevel, Phrases] = Field(default_factory=_default_overrides)
    expansion: Phrases = Field(default_factory=_default_expansion)
    id_prefixes: Phrases = ("mem",)
    long_query_words: int = Field(default=30, gt=0)
    many_entities: int = Field(default=3, ge=0)
    max_query_chars: int = Field(default=10_000, gt=0)
    floors: FloorsConfig = FloorsConfig()
    continuation: ContinuationConfig = ContinuationConfig()
    enumeration: EnumerationConfig = EnumerationConfig()
    answers: AnswerConfig = AnswerConfig()
    temporal: TemporalConfig = TemporalConfig()
    entities: EntityConfig = EntityConfig()
    complexity: ComplexityWeights = ComplexityWeights()
    summary: SummaryConfig = SummaryConfig()
    spacy_pipeline: str | None = "auto"

    @field_validator("keywords", "overrides")
    @classmethod
    def _non_blank(cls, value: dict[DisclosureLevel, Phrases]) -> dict[DisclosureLevel, Phrases]:
        for level, phrases in value.items():
            _check_phrases(level.value, phrases)
        return value

    @field_validator("expansion")
    @classmethod
    def _non_blank_expansion(cls, value: Phrases) -> Phrases:
        return _check_phrases("expansion", value)

    @field_validator("id_prefixes")
    @classmethod
    def _word_prefixes(cls, value: Phrases) -> Phrases:
        for prefix in value:
            if not prefix.isascii() or not prefix.isalnum():
                raise ValueError(f"id prefix {prefix!r} must be ASCII letters and digits")
        return value
