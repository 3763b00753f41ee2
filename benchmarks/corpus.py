"""A seeded synthetic chat corpus for benchmarks: short turns over a Zipfian vocabulary.

Turns read like terse engineering chat ("we should move the billing cron to postgres before
the friday deploy ..."): function words at English-like rates, then content words drawn from a
Zipf-Mandelbrot law (s = 1.1, q = 20) over a vocabulary whose head is real domain words and
whose long tail is pronounceable made-up words, so term statistics (a few very common terms, a
huge tail of rare ones) look like a real conversation log. Sessions of ~40 alternating
user/assistant turns a minute or two apart. Same seed, same corpus, on every machine.

    from benchmarks.corpus import generate, queries
    memories = list(generate(10_000, seed=3))
    probes = queries(memories, 200, seed=4)   # 5-word queries drawn from random turns
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from tiers.memory import Memory

START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
ZIPF_S = 1.1
ZIPF_Q = 20.0
SESSION_TURNS = 40

FUNCTION_WORDS = (  # noqa: SIM905 - a word list reads better as text
    "the to and a of we it is in that for on this with be so but if i you should can was "
    "are not just then when now what it's do about at as or from"
).split()
DOMAIN_WORDS = (  # noqa: SIM905 - a word list reads better as text
    "billing invoice postgres deploy cron email redis cache queue worker retry timeout "
    "migration schema index query latency api endpoint token auth login session cookie "
    "customer account payment refund stripe webhook alert pager incident rollback release "
    "staging production config env secret key docker kubernetes pod node cluster build "
    "test flaky pipeline ci lint type error exception trace log metric dashboard grafana "
    "sentry pdf report export csv upload bucket s3 backup restore snapshot disk memory "
    "cpu thread lock race deadlock batch job schedule friday monday sprint ticket review "
    "merge branch commit hotfix patch version dependency upgrade python rust typescript "
    "react frontend backend mobile ios android search ranking embedding vector model "
    "prompt context budget"
).split()
VERBS = (  # noqa: SIM905 - a word list reads better as text
    "move fix check add remove rename split merge deploy revert bump retry cache log "
    "measure profile document review ship test rewrite migrate pin drop"
).split()
_SYLLABLES = [a + b for a in "bcdfghklmnprstvz" for b in ("a", "e", "i", "o", "u", "ar", "en")]


def vocabulary(size: int, seed: int = 0) -> list[str]:
    """Domain words first (the Zipf head), then distinct made-up words."""
    rng = random.Random(seed)
    words = list(dict.fromkeys(DOMAIN_WORDS + VERBS))
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words[:size]


class _Sampler:
    def __init__(self, size: int, seed: int) -> None:
        self.words = vocabulary(size, seed)
        ranks = np.arange(1, len(self.words) + 1, dtype=np.float64)
        weights = (ranks + ZIPF_Q) ** -ZIPF_S  # Zipf-Mandelbrot: a flatter head
        self.cdf = np.cumsum(weights / weights.sum())
        self.rng = np.random.default_rng(seed)

    def content(self, n: int) -> list[str]:
        picks = np.searchsorted(self.cdf, self.rng.random(n), side="right")
        return [self.words[min(int(i), len(self.words) - 1)] for i in picks]


def generate(n: int, *, seed: int = 3, vocab_size: int = 50_000) -> Iterator[Memory]:
    """``n`` chat turns, in time order, deterministic for a seed."""
    sampler = _Sampler(vocab_size, seed)
    rng = random.Random(seed)
    moment = START
    for i in range(n):
        session = i // SESSION_TURNS
        if i % SESSION_TURNS == 0 and i:
            moment += timedelta(hours=rng.randint(2, 60))
        moment += timedelta(seconds=rng.randint(20, 180))
        user = i % 2 == 0
        yield Memory(
            id=f"turn-{i:07d}",
            content=_sentence(rng, sampler, user),
            session_id=f"session-{session:05d}",
            timestamp=moment,
            kind="prompt" if user else "response",
            speaker="user" if user else "assistant",
            importance=round(rng.betavariate(2, 5), 3),
        )


def _sentence(rng: random.Random, sampler: _Sampler, user: bool) -> str:
    length = rng.randint(6, 22) if user else rng.randint(12, 45)
    content = iter(sampler.content(length))
    words = [rng.choice(VERBS)] if user and rng.random() < 0.5 else []
    while len(words) < length:
        words.append(rng.choice(FUNCTION_WORDS) if rng.random() < 0.45 else next(content))
    text = " ".join(words)
    return text[0].upper() + text[1:] + ("?" if user and rng.random() < 0.4 else ".")


def queries(memories: Sequence[Memory], n: int, *, seed: int = 4, words: int = 5) -> list[str]:
    """``n`` queries of ``words`` words, each sampled from one random memory's content."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        tokens = memories[rng.randrange(len(memories))].content.rstrip(".?").split()
        out.append(" ".join(rng.sample(tokens, min(words, len(tokens)))))
    return out


def batched(items: Iterator[Memory], size: int) -> Iterator[list[Memory]]:
    """Consecutive lists of ``size`` memories."""
    while chunk := list(itertools.islice(items, size)):
        yield chunk
