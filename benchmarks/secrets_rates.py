"""How much of the secrets corpus :mod:`safeguards.secrets` replaces, how many look-alikes it
touches, and what it costs per memory.

Rates, per corpus (benchmarks/secrets_bank: ``tuning``, written with the patterns; ``held_out``,
written before them and measured once when they were final):

- a secret is *replaced* when no 8 characters in a row of its random part (all of it, if
  shorter) are left in the redacted text: the whole value gone, not just part; the marker's kind
  is counted apart (``kind_right``);
- a look-alike is *touched* when it is no longer in the redacted text verbatim.

Real conversations hold few secrets: the turns of both dev sets (LoCoMo, LongMemEval; any
redaction there is most likely a false positive, and each is listed by kind) are redacted too,
which also times ordinary chat text. Latency is wall clock and CPU time per text: ordinary
chat turns, the corpus's texts, a 4 KB tool output, a 100 KB log and a 100 KB base64 blob (the
longest memory ingest takes), what ingest pays per memory (``for_storage``), and the CPU time
of 100,000-character adversarial strings built to make a backtracking pattern take quadratic
time (runs of prefixes, of token characters, of ``name=`` pairs, unclosed key blocks, ...).
Prints a table and writes benchmarks/results/secrets_rates.json.

    python -m benchmarks.secrets_rates [--corpus all|tuning|held_out] [--misses]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from benchmarks.secrets_bank import held_out, tuning
from benchmarks.secrets_bank.fakes import Case, Planted
from safeguards import redact

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "secrets_rates.json"
DATASETS = ROOT.parent / "shared" / "datasets"
WINDOW = 8
# the corpus names kinds in plain words; markers spell a few so the injection filter's
# sensitive-word signal does not fire on them (see safeguards.secrets)
MARKER_KIND = {
    "password": "passwd", "secret": "credential", "private_key": "privkey", "api_key": "apikey",
    "aws_secret_key": "aws_secretkey", "google_api_key": "google_apikey",
    "azure_client_secret": "azure_clientsecret",
}  # fmt: skip
ADVERSARIAL_CHARS = 100_000
LARGE = 100_000  # tiers.ingest.max_content_chars: the longest memory ingest takes


def gone(planted: Planted, redacted: str) -> bool:
    """No ``WINDOW`` characters in a row of the secret's random part survive."""
    core = planted.core
    width = min(WINDOW, len(core))
    return not any(core[i : i + width] in redacted for i in range(len(core) - width + 1))


def rates(cases: list[Case], *, show_misses: bool) -> dict[str, object]:
    secrets: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # total, gone, kind right
    looks: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # total, touched
    for case in cases:
        result = redact(case.text)
        for planted in case.secrets:
            row = secrets[planted.kind]
            row[0] += 1
            if gone(planted, result.text):
                row[1] += 1
                expected = MARKER_KIND.get(planted.kind, planted.kind)
                row[2] += expected in result.kinds
                if show_misses and expected not in result.kinds:
                    print(f"  KIND {case.corpus}/{case.template} {planted.kind}: {result.kinds}")
            elif show_misses:
                print(
                    f"  MISS {case.corpus}/{case.template} {planted.kind}: {planted.value[:60]!r}"
                )
        for kept in case.keep:
            row = looks[kept.kind]
            row[0] += 1
            if kept.value not in result.text:
                row[1] += 1
                if show_misses:
                    print(
                        f"  TOUCHED {case.corpus}/{case.template} {kept.kind}: {kept.value[:60]!r}"
                    )
    total = sum(r[0] for r in secrets.values())
    replaced = sum(r[1] for r in secrets.values())
    kinds_right = sum(r[2] for r in secrets.values())
    look_total = sum(r[0] for r in looks.values())
    touched = sum(r[1] for r in looks.values())
    return {
        "texts": len(cases),
        "secrets": total,
        "replaced": replaced,
        "replaced_rate": round(replaced / total, 4) if total else None,
        "kind_right": kinds_right,
        "lookalikes": look_total,
        "touched": touched,
        "touched_rate": round(touched / look_total, 4) if look_total else None,
        "per_kind": {k: {"total": r[0], "replaced": r[1], "kind_right": r[2]}
                     for k, r in sorted(secrets.items())},
        "lookalike_kinds": {k: {"total": r[0], "touched": r[1]} for k, r in sorted(looks.items())},
    }  # fmt: skip


def conversations() -> dict[str, list[str]]:
    """The turns of both dev sets (what is found there is shown, to judge by eye)."""
    texts: dict[str, list[str]] = {}
    locomo = DATASETS / "locomo" / "locomo_dev.json"
    if locomo.is_file():
        from disclosure.faces.cli.importers import read_memories

        texts["locomo"] = [m.content for m in read_memories(locomo)[0]]
    longmemeval = DATASETS / "longmemeval" / "lme_s_dev.jsonl.gz"
    if longmemeval.is_file():
        from disclosure.evaluation.longmemeval import load_longmemeval

        seen: set[str] = set()
        turns = []
        for conversation in load_longmemeval(longmemeval).conversations:
            for memory in conversation.memories:
                if memory.content not in seen:
                    seen.add(memory.content)
                    turns.append(memory.content)
        texts["longmemeval"] = turns
    return texts


def chat_findings(texts: list[str]) -> dict[str, object]:
    changed = 0
    kinds: Counter[str] = Counter()
    samples: list[str] = []
    for text in texts:
        result = redact(text)
        if result.count:
            changed += 1
            kinds.update(result.kinds)
            if len(samples) < 25:
                samples.append(_around_marker(result.text))
    return {"texts": len(texts), "changed": changed, "kinds": dict(kinds), "samples": samples}


def _around_marker(text: str) -> str:
    at = text.find("[redacted:")
    return text[max(0, at - 80) : at + 60].replace("\n", " ")


def timed(texts: Iterable[str]) -> list[tuple[float, float]]:
    """(wall, CPU time of this thread) of redacting each text; the CPU time is what other
    processes on a busy machine do not inflate."""
    out = []
    for text in texts:
        wall, cpu = time.perf_counter(), time.thread_time()
        redact(text)
        out.append((time.perf_counter() - wall, time.thread_time() - cpu))
    return out


def summary(times: list[tuple[float, float]], chars: int) -> dict[str, float]:
    row: dict[str, float] = {"texts": len(times), "mean_chars": round(chars / len(times))}
    for label, seconds in (("wall", [w for w, _ in times]), ("cpu", [c for _, c in times])):
        ordered = sorted(seconds)
        row[f"{label}_p50_us"] = round(statistics.median(ordered) * 1e6, 2)
        row[f"{label}_p95_us"] = round(ordered[int(0.95 * (len(ordered) - 1))] * 1e6, 2)
        row[f"{label}_us_per_kb"] = round(sum(seconds) / max(chars, 1) * 1e9, 2)
    return row


def adversarial() -> dict[str, Callable[[int], str]]:
    """Long inputs shaped to make a backtracking or re-scanning pattern slow."""
    return {
        "token characters": lambda n: "a" * n,
        "jwt prefixes": lambda n: ("eyJ" * n)[:n],
        "jwt parts": lambda n: ("eyJaaaaaaaaa." * n)[:n],
        "slack prefixes": lambda n: ("xoxb-" * n)[:n],
        "sk prefixes": lambda n: ("sk-" * n)[:n],
        "name words": lambda n: ("password" * n)[:n],
        "name assignments": lambda n: ("password=" * n)[:n],
        "api_key pairs": lambda n: ('"api_key": "' * n)[:n],
        "url schemes": lambda n: ("a://b:" * n)[:n],
        "url userinfo": lambda n: ("://" + ":" * n)[:n],
        "unclosed key": lambda n: ("-----BEGIN RSA PRIVATE KEY-----\n" + "A" * n)[:n],
        "key headers": lambda n: ("-----BEGIN PRIVATE KEY-----" * n)[:n],
        "dotted names": lambda n: ("a.b-" * n)[:n],
        "aws ids": lambda n: ("AKIA" + "A" * 16 + " ") * (n // 21),
        "bearer words": lambda n: ("Bearer " * n)[:n],
        "base64 lines": lambda n: ("QUJD\n" * n)[:n],
        "netrc": lambda n: ("machine a login b " * n)[:n],
        "quotes": lambda n: ('token="' + "x" * n)[:n],
        "mysql flags": lambda n: ("mysql " + "-p" * n)[:n],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=["all", "tuning", "held_out"], default="all")
    parser.add_argument("--misses", action="store_true", help="list what was missed or touched")
    parser.add_argument("--no-conversations", action="store_true", help="skip the dev sets")
    args = parser.parse_args()
    corpora = {"tuning": tuning.cases, "held_out": held_out.cases}
    if args.corpus != "all":
        corpora = {args.corpus: corpora[args.corpus]}
    report: dict[str, object] = {}
    all_cases: list[Case] = []
    for name, build in corpora.items():
        cases = build()
        all_cases += cases
        report[name] = rates(cases, show_misses=args.misses)
        _print_rates(name, report[name])  # type: ignore[arg-type]
    chats = {} if args.no_conversations else conversations()
    report["conversations"] = {name: chat_findings(texts) for name, texts in chats.items()}
    for name, found in report["conversations"].items():  # type: ignore[attr-defined]
        print(f"{name}: {found['changed']} of {found['texts']} turns changed {found['kinds']}")
        for sample in found["samples"] if args.misses else ():
            print(f"    {sample}")
    report["latency"] = latency(all_cases, chats)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


def latency(cases: list[Case], chats: dict[str, list[str]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, texts in chats.items():
        out[f"chat_{name}"] = summary(timed(texts), sum(map(len, texts)))
    corpus = [c.text for c in cases]
    out["corpus"] = summary(timed(corpus * 5), 5 * sum(map(len, corpus)))
    tool = ("\n".join(c.text for c in cases) * 2)[:4096]
    out["tool_output_4kb"] = summary(timed([tool] * 200), 200 * len(tool))
    log = ("\n".join(c.text for c in cases) * 20)[:LARGE]
    blob = base64.b64encode(random.Random(1).randbytes(LARGE * 3 // 4)).decode()
    out["log_100kb"] = summary(timed([log] * 5), 5 * len(log))
    out["base64_100kb"] = summary(timed([blob] * 5), 5 * len(blob))
    out["memory_for_storage"] = per_memory(chats)
    hostile = {}
    for name, make in adversarial().items():
        text = make(ADVERSARIAL_CHARS)
        hostile[name] = round(min(cpu for _, cpu in timed([text] * 3)) * 1e3, 2)
    out["adversarial_100k_cpu_ms"] = hostile
    for name, row in out.items():
        print(f"latency {name}: {row}")
    return out


def per_memory(chats: dict[str, list[str]]) -> dict[str, float]:
    """What ingest pays per memory (``for_storage``: private spans, then secrets in the
    content, summary, entities and metadata), on the LoCoMo turns as Memory records."""
    from disclosure.core.pipeline.ingest import for_storage
    from tiers import Memory

    texts = chats.get("locomo") or [c.text for c in tuning.cases()]
    memories = [Memory(id=f"m{i}", content=t, metadata={"source": "bench"}) for i, t in
                enumerate(texts)]  # fmt: skip
    cpu = time.thread_time()
    for memory in memories:
        for_storage(memory)
    spent = time.thread_time() - cpu
    return {"memories": len(memories), "cpu_us_per_memory": round(spent / len(memories) * 1e6, 2)}


def _print_rates(name: str, row: dict[str, object]) -> None:
    print(
        f"{name}: {row['replaced']} of {row['secrets']} secrets replaced ({row['replaced_rate']}),"
        f" kind named right for {row['kind_right']}; {row['touched']} of {row['lookalikes']}"
        f" look-alikes touched ({row['touched_rate']})"
    )
    for kind, counts in row["per_kind"].items():  # type: ignore[attr-defined]
        done, total, right = counts["replaced"], counts["total"], counts["kind_right"]
        print(f"    {kind:22} {done:>3} / {total:<3} kind right {right}")
    for kind, counts in row["lookalike_kinds"].items():  # type: ignore[attr-defined]
        if counts["touched"]:
            print(f"    look-alike {kind:18} touched {counts['touched']} of {counts['total']}")


if __name__ == "__main__":
    main()
