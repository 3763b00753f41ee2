"""One tokenisation for every lexical index: folding, word splitting, CJK bigrams, stopwords."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tiers.text import _COMPOUND, ENGLISH_STOPWORDS, Tokenizer, tokenize


def test_lowercases_and_splits_on_punctuation_and_underscores() -> None:
    """Case folds; punctuation, slashes and underscores separate words; digits stay; the path
    written without spaces is one more token, whole."""
    assert tokenize("Moved billing/invoice_total.py to Postgres 16!") == [
        "moved",
        "billing",
        "invoice",
        "total",
        "py",
        "to",
        "postgres",
        "16",
        "billing/invoice_total.py",
    ]


def test_codes_versions_and_addresses_are_also_whole_tokens() -> None:
    """QX-0042 and v2.3.1 are whole tokens (joined, as QX0042 is written), 192.168.0.1 as
    written, beside their parts; a sentence's full stop followed by a space joins nothing."""
    tokens = tokenize("Ticket QX-0042 ships in v2.3.1 to 192.168.0.1. Next week.")
    assert {"qx0042", "v231", "192.168.0.1"} <= set(tokens)
    assert "qx0042" in tokenize("QX0042")
    assert {"qx", "0042", "v2", "192"} <= set(tokens)
    assert not any(t.startswith("1.next") or " " in t for t in tokens)


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
    """Every token is non-empty and holds no space; a word re-tokenises to itself, a compound
    to its parts and itself."""
    for token in tokenize(text):
        assert token and not any(c.isspace() for c in token)
        again = tokenize(token)
        if _COMPOUND.fullmatch(token):
            assert again[-1] in (token, token.replace("-", "").replace(".", ""))
            assert all(part in token for part in again[:-1])
        else:
            assert "_" not in token
            assert again in ([token], [token[i : i + 2] for i in range(len(token) - 1)])
