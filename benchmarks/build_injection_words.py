"""Build safeguards/injection_words.txt: the English words the hidden-text decoders of
:mod:`safeguards.injection_ciphers` check a decoding against.

The list is the words written at least ``--min-count`` times in the chat turns of the LongMemEval
dev split (MIT licence; the same file the classifier's training reads), lower case, letters
only, plus a short list of the words of systems and accounts that chat rarely uses (repo, prod,
iam ...). Two-letter words are kept only from a fixed list of English ones, and single letters
only "a" and "i": chat in other languages and typos otherwise put "ti", "si" or "de" in, and a
reversed or shifted text would read as words more often than it should.

    python -m benchmarks.build_injection_words        (from the repository root)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

from disclosure.evaluation.experiment import (
    LONGMEMEVAL_ENV,
    LONGMEMEVAL_RELATIVE,
    default_dataset_path,
)
from safeguards.injection_ciphers import WORDS_PATH

_WORD = re.compile(r"[A-Za-z]+")
_TWO_LETTERS = frozenset(
    [
        "am",
        "an",
        "as",
        "at",
        "be",
        "by",
        "do",
        "go",
        "he",
        "hi",
        "if",
        "in",
        "is",
        "it",
        "me",
        "my",
        "no",
        "of",
        "oh",
        "ok",
        "on",
        "or",
        "so",
        "to",
        "up",
        "us",
        "we",
        "id",
        "tv",
        "pc",
        "ad",
        "ah",
        "ax",
        "db",
        "ex",
        "ha",
        "ma",
        "mr",
        "ms",
        "pa",
        "pm",
        "re",
        "vs",
    ]
)
# Words of systems, accounts and errands that chat turns rarely contain.
_EXTRA = [
    "repo",
    "repos",
    "prod",
    "staging",
    "admin",
    "admins",
    "auth",
    "config",
    "configs",
    "creds",
    "credential",
    "credentials",
    "db",
    "dbs",
    "dns",
    "iam",
    "mfa",
    "ssh",
    "sudo",
    "vpn",
    "wiki",
    "api",
    "apis",
    "backup",
    "backups",
    "bucket",
    "buckets",
    "cli",
    "cron",
    "env",
    "infra",
    "kube",
    "kubectl",
    "namespace",
    "namespaces",
    "oauth",
    "okta",
    "payroll",
    "pentest",
    "phishing",
    "pipeline",
    "pipelines",
    "rollback",
    "rotate",
    "revoke",
    "revoked",
    "sysadmin",
    "terraform",
    "token",
    "tokens",
    "vault",
    "webhook",
    "webhooks",
    "whoever",
    "summarise",
    "summarize",
    "summarises",
    "summarizes",
    "summarising",
    "summarizing",
    "exfiltrate",
    "wipe",
    "purge",
    "truncate",
    "deploy",
    "deployed",
    "deploys",
    "unsubscribe",
    "chargeback",
    "chargebacks",
    "firewall",
    "firewalls",
    "audit",
    "audited",
    "auditor",
    "auditors",
    "approve",
    "approved",
    "preapproved",
    "signoff",
    "merge",
    "merged",
    "push",
    "pushed",
    "inbox",
    "inboxes",
    "mailbox",
    "mailboxes",
    "invoice",
    "invoices",
    "refund",
    "refunds",
]


def build(path: Path, min_count: int) -> list[str]:
    counts: Counter[str] = Counter()
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            for session in json.loads(line)["haystack_sessions"]:
                for turn in session:
                    for word in _WORD.findall(turn.get("content") or ""):
                        # proper nouns and acronyms are not the words a decoding should find
                        if word.islower() or (word[0].isupper() and word[1:].islower()):
                            counts[word.lower()] += 1
    words = {w for w, c in counts.items() if c >= min_count and _keep(w)}
    words.update(_EXTRA)
    return sorted(words)


def _keep(word: str) -> bool:
    if len(word) == 1:
        return word in {"a", "i"}
    if len(word) == 2:
        return word in _TWO_LETTERS
    return len(word) <= 20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--min-count", type=int, default=10)
    args = parser.parse_args(argv)
    path = Path(os.environ.get(LONGMEMEVAL_ENV) or default_dataset_path(LONGMEMEVAL_RELATIVE))
    if not path.is_file():
        print(f"no LongMemEval at {path}: cannot build the word list", file=sys.stderr)
        return 1
    words = build(path, args.min_count)
    WORDS_PATH.write_text("\n".join(words) + "\n", encoding="utf-8")
    print(f"wrote {WORDS_PATH.name}: {len(words)} words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
