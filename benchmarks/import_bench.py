"""History importers: how long a 10 MB agent transcript (and a ChatGPT export of the same size)
takes to read into memories, before any embedding (issue 27's target: <= 10 s for 10 MB).

The transcript is made in the shape Claude Code 2.1.328 writes (each line a JSON object: the
conversation's user and assistant lines with their uuids, times and working directory, tool
uses answered by tool results with the structured ``toolUseResult``, one line per content
block, and the agent's bookkeeping lines between them: attachments, queue operations, request
records), from a seeded generator; the export in the documented ``conversations.json`` shape
with a regenerated answer in every tenth conversation. Timed: reading and checking every line
(:func:`~disclosure.faces.agent.transcript.transcript_entries`), and the whole
:func:`~disclosure.faces.agent.history.read_history` (that plus a validated ``Memory`` each),
best of ``--runs``. Prints a table and writes benchmarks/results/import_bench.json.

    python -m benchmarks.import_bench [--megabytes 10] [--runs 3] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.corpus import generate

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "import_bench.json"
TARGET_S = 10.0
START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def make_transcript(
    path: Path, megabytes: float, seed: int = 7, tool_lines: tuple[int, int] = (5, 120)
) -> dict[str, int]:
    """A transcript of about ``megabytes`` MB, its tool results ``tool_lines`` lines long;
    counts of what it holds."""
    rng = random.Random(seed)
    texts = (m.content for m in generate(10**7, seed=seed))
    session, cwd = str(uuid.UUID(int=rng.getrandbits(128))), "/home/dana/billing"
    limit = megabytes * 2**20
    written, counts = 0, {"lines": 0, "prompts": 0, "replies": 0, "tool_uses": 0}
    moment = START
    with path.open("w", encoding="utf-8") as out:
        while written < limit:
            lines = _turn(rng, texts, session, cwd, moment, counts, tool_lines)
            moment += timedelta(minutes=2)
            for record in lines:
                text = json.dumps(record, separators=(",", ":")) + "\n"
                out.write(text)
                written += len(text.encode("utf-8"))
                counts["lines"] += 1
    return {**counts, "bytes": written}


def _turn(
    rng: random.Random,
    texts: Any,
    session: str,
    cwd: str,
    moment: datetime,
    counts: dict[str, int],
    tool_lines: tuple[int, int],
) -> list[dict[str, Any]]:
    def base(kind: str, **extra: Any) -> dict[str, Any]:
        return {"parentUuid": None, "isSidechain": False, "type": kind,
                "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                "timestamp": moment.isoformat().replace("+00:00", "Z"), "userType": "external",
                "entrypoint": "cli", "cwd": cwd, "sessionId": session, "version": "2.1.328",
                "gitBranch": "main", **extra}  # fmt: skip

    prompt = " ".join(next(texts) for _ in range(rng.randint(1, 3)))
    lines = [
        {"type": "queue-operation", "operation": "enqueue", "timestamp": moment.isoformat(),
         "sessionId": session, "content": prompt},
        base("user", message={"role": "user", "content": prompt}, promptId=str(rng.random())),
        base("attachment", attachment={"type": "hook_additional_context",
                                       "content": [next(texts) * 3]}),
    ]  # fmt: skip
    counts["prompts"] += 1
    for _ in range(rng.randint(0, 4)):
        tool_id = f"toolu_{rng.getrandbits(80):020x}"
        content = "\n".join(next(texts) for _ in range(rng.randint(*tool_lines)))
        file_path = f"{cwd}/src/mod_{rng.randint(1, 400)}.py"
        use = {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": file_path}}
        asked = {"id": f"msg_{rng.getrandbits(80):020x}", "role": "assistant", "content": [use]}
        lines.append(base("assistant", message=asked))
        read = {"filePath": file_path, "content": content, "numLines": content.count("\n")}
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        answer = {"role": "user", "content": [block]}
        lines.append(base("user", message=answer, toolUseResult={"type": "text", "file": read}))
        counts["tool_uses"] += 1
    reply_id = f"msg_{rng.getrandbits(80):020x}"
    for _ in range(rng.randint(1, 2)):  # one line per content block of the same message
        text = " ".join(next(texts) for _ in range(rng.randint(2, 8)))
        said = {"id": reply_id, "role": "assistant", "content": [{"type": "text", "text": text}]}
        lines.append(base("assistant", message=said))
    counts["replies"] += 1
    lines.append({"type": "last-prompt", "lastPrompt": prompt, "sessionId": session})
    return lines


def make_export(path: Path, megabytes: float, seed: int = 8) -> dict[str, int]:
    """A conversations.json of about ``megabytes`` MB."""
    rng = random.Random(seed)
    texts = (m.content for m in generate(10**7, seed=seed))
    conversations, size, messages = [], 0, 0
    while size < megabytes * 2**20:
        ident = str(uuid.UUID(int=rng.getrandbits(128)))
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                            "children": []}}  # fmt: skip
        parent = "root"
        when = START.timestamp() + len(conversations) * 3600
        for n in range(rng.randint(4, 40)):
            node = f"{ident}-{n}"
            role = "user" if n % 2 == 0 else "assistant"
            text = " ".join(next(texts) for _ in range(rng.randint(1, 6)))
            mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                "id": node, "author": {"role": role, "name": None, "metadata": {}},
                "create_time": when + n * 30, "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully", "metadata": {}, "recipient": "all"}}  # fmt: skip
            mapping[parent]["children"].append(node)
            parent = node
            size += len(text) + 300
            messages += 1
        title = f"Chat {len(conversations)}"
        conversation = {"id": ident, "title": title, "create_time": when, "mapping": mapping}
        conversations.append({**conversation, "current_node": parent})
    path.write_text(json.dumps(conversations), encoding="utf-8")
    return {"conversations": len(conversations), "messages": messages,
            "bytes": path.stat().st_size}  # fmt: skip


def _parse(path: Path, parse: Any) -> int:
    with path.open(encoding="utf-8") as lines:
        return len(parse(lines))


def _best(runs: int, work: Any) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result


def main(argv: list[str] | None = None) -> int:
    from disclosure.faces.agent.history import read_history
    from disclosure.faces.agent.transcript import transcript_entries

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="import-bench-") as tmp:
        base = Path(tmp)
        shapes = {
            "tool_heavy": make_transcript(base / "tools.jsonl", args.megabytes),
            "chatty": make_transcript(base / "chat.jsonl", args.megabytes, tool_lines=(1, 4)),
        }
        transcripts = {}
        for name, made in shapes.items():
            path = base / ("tools.jsonl" if name == "tool_heavy" else "chat.jsonl")
            parsed_s, entries = _best(args.runs, partial(_parse, path, transcript_entries))
            history_s, history = _best(args.runs, lambda p=path: read_history(p, "claude-code"))
            rate = made["bytes"] / 2**20 / history_s
            timed = {"parse_s": round(parsed_s, 2), "to_memories_s": round(history_s, 2)}
            counted = {"entries": entries, "memories": history.count, "mb_per_s": round(rate, 1)}
            transcripts[name] = {**made, **timed, **counted}
        export = base / "conversations.json"
        exported = make_export(export, args.megabytes)
        chatgpt_s, chats = _best(args.runs, lambda: read_history(export, "chatgpt"))
    report = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "transcripts": transcripts,
        "chatgpt": {**exported, "to_memories_s": round(chatgpt_s, 2), "memories": chats.count},
        "target_s_for_10_mb": TARGET_S,
        "command": "python -m benchmarks.import_bench " + " ".join(argv or sys.argv[1:]),
    }
    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"load average {report['load_average']} on {report['cpus']} CPUs")
    for name, t in report["transcripts"].items():
        size = t["bytes"] / 2**20
        print(f"transcript ({name}) {size:.1f} MB, {t['lines']} lines: parsed in {t['parse_s']} s")
        print(f"  {t['memories']} memories in {t['to_memories_s']} s ({t['mb_per_s']} MB/s)")
    c = report["chatgpt"]
    print(f"chatgpt export {c['bytes'] / 2**20:.1f} MB, {c['conversations']} conversations: "
          f"{c['memories']} memories in {c['to_memories_s']} s")  # fmt: skip
    print(f"target: 10 MB of transcript in <= {TARGET_S} s")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
