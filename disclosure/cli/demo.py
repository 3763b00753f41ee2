"""``disclosure demo``: the default profile at work on a bundled sample conversation."""

from __future__ import annotations

import argparse

from analyzers import DisclosureLevel
from disclosure.profiles import load_profile
from disclosure.result import human_tokens
from disclosure.sample import load_sample_conversation
from formatters.history import render_full_history
from formatters.tokens import get_token_counter


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("demo", help="show the disclosure levels on a sample conversation")
    parser.add_argument("--profile", default="default", help="a built-in name or a YAML path")
    parser.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    counter = get_token_counter(profile.tokens.encoding)
    memories = load_sample_conversation()
    full = counter(render_full_history(memories))
    sessions = len({m.session_id for m in memories})
    print(f"Profile {profile.name!r}: {profile.description}")
    print(
        f"Sample conversation: {len(memories)} turns in {sessions} sessions, "
        f"{human_tokens(full)} tokens in full ({profile.tokens.encoding}).\n"
    )
    print(
        f"{'level':<14} {'hot':>4} {'warm':>5} {'cold':>5}  {'formatter':<22} {'max tokens':>10}"
        f"  {'vs full':>8}"
    )
    for level in DisclosureLevel:
        cfg = profile.levels[level]
        cold = str(cfg.cold_items) if cfg.cold_search else "-"
        ratio = f"{full / cfg.max_tokens:.1f}x" if cfg.max_tokens < full else "full"
        print(
            f"{level.value:<14} {cfg.hot_items:>4} {cfg.warm_items:>5} {cold:>5}  "
            f"{cfg.formatter:<22} {cfg.max_tokens:>10}  {ratio:>8}"
        )
    return 0
