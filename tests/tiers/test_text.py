"""One tokenisation for every lexical index: folding, word splitting, CJK bigrams, stopwords."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tiers.text import ENGLISH_STOPWORDS, Tokenizer, tokenize


def test_lowercases_and_splits_on_punctuation_and_underscores() -> None:
    """Case folds; punctuation, slashes and underscores separate words; digits stay."""
    assert tokenize("Moved billing/invoice_total.py to Postgres 16!") == [
        "moved",
        "billing",
        "invoice",
        "total",
        "py",
        "to",
        "postgres",
        "16",
    ]


def test_unicode_letters_are_words_and_compatibility_forms_fold() -> None:
    """Accented and non-Latin letters stay in words; NFKC and casefold unify variants."""
    fullwidth = "\uff30\uff4f\uff53\uff54\uff47\uff52\uff45\uff53"  # Postgres
    assert tokenize(f"Café MÜNCHEN Straße \ufb01le {fullwidth}") == [
        "café",
        "münchen",
        "strasse",
        "file",
        "postgres",
    ]
    assert tokenize("데이터베이스 마이그레이션") == ["데이터베이스", "마이그레이션"]


def test_cjk_runs_become_bigrams() -> None:
    """Chinese and Japanese runs (no spaces) become overlapping bigrams; Latin parts stay whole."""
    assert tokenize("数据库迁移") == ["数据", "据库", "库迁", "迁移"]
    assert tokenize("python编程") == ["python", "编程"]
    assert tokenize("库") == ["库"]


def test_query_drops_stopwords_and_repeats() -> None:
    """Queries keep distinct informative words in order; stopword-only queries keep them."""
    tok = Tokenizer(stem="none")
    assert tok.query("Why did the invoice totals drift? The invoice!") == [
        "invoice",
        "totals",
        "drift",
    ]
    assert tok.query("to be or not to be") == ["to", "be", "or", "not"]
    assert tok.document("the the cat") == ["the", "the", "cat"]


def test_porter_stemming_meets_inflections_in_documents_and_queries() -> None:
    """With stemming, inflected forms share a token; stopwords are judged before stemming."""
    tok = Tokenizer()
    assert tok.stem == "porter"
    assert tok.query("paintings she painted") == tok.query("painting paint")
    assert tok.document("Adopting kids") == tok.query("adoption kid") == ["adopt", "kid"]
    assert "was" not in tok.query("it was painted") and "wa" not in tok.query("it was painted")
    assert tok.document("자세히 2023") == ["자세히", "2023"]
    assert Tokenizer(stem="none").document("paintings") == ["paintings"]
    assert Tokenizer().fingerprint != Tokenizer(stem="none").fingerprint


def test_stopword_settings() -> None:
    """english, none, or a custom list; an unknown name is an error naming the choices."""
    assert Tokenizer.from_setting("english").stopwords == ENGLISH_STOPWORDS
    assert Tokenizer.from_setting("none").query("the cat") == ["the", "cat"]
    assert Tokenizer.from_setting(["Cat"]).query("the cat sat") == ["the", "sat"]
    with pytest.raises(ValueError, match="english, none"):
        Tokenizer.from_setting("french")


@given(st.text())
def test_tokens_are_nonempty_alphanumeric_and_stable(text: str) -> None:
    """Every token is non-empty, holds no separator, and re-tokenises to itself."""
    for token in tokenize(text):
        assert token and " " not in token and "_" not in token
        assert tokenize(token) in ([token], [token[i : i + 2] for i in range(len(token) - 1)])
