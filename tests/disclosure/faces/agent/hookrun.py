"""Running `disclosure hook EVENT` as the agent does: the console script, JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from disclosure.service import ServiceInfo, find_service, start_service, stop_service

SCRIPT = Path(sys.executable).with_name("disclosure")
LEAN = "extends: coding-agent\nname: lean-agent\ntiers:\n  warm:\n    embedder: none\n"


# what the tests of a hook's work give it (the default, 0.9 s, is for the tests of its limits
# and the benchmark: on a busy machine a working hook may need more)
PATIENT = {"TIERED_DISCLOSURE_HOOK_DEADLINE": "3"}


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("TIERED_DISCLOSURE_", "CLAUDE"))
    }
    return {**env, **extra}


@dataclass
class Ran:
    code: int
    out: str
    err: str
    seconds: float

    def context(self) -> str:
        """The additionalContext the hook handed the agent."""
        data = json.loads(self.out)
        return str(data["hookSpecificOutput"]["additionalContext"])


@dataclass
class Served:
    """A root whose service runs a lean profile (no embedder: quick to open)."""

    root: Path
    profile: Path
    info: ServiceInfo

    def hook(
        self,
        event: str,
        payload: Mapping[str, Any] | str,
        *,
        namespace: str | None = "user=hooks",
        root: Path | None = None,
        stdout: Any = subprocess.PIPE,
        env: Mapping[str, str] | None = None,
        prefix: tuple[str, ...] = (),
    ) -> Ran:
        command = [*prefix, str(SCRIPT), "hook", event, "--root", str(root or self.root),
                   "--profile", str(self.profile)]  # fmt: skip
        if namespace is not None:
            command += ["--namespace", namespace]
        data = payload if isinstance(payload, str) else json.dumps(payload)
        started = time.perf_counter()
        done = subprocess.run(
            command,
            input=data.encode("utf-8"),
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else clean_env(**PATIENT),
            timeout=60,
            check=False,
        )
        seconds = time.perf_counter() - started
        out = done.stdout.decode("utf-8") if isinstance(done.stdout, bytes) else ""
        return Ran(done.returncode, out, done.stderr.decode("utf-8"), seconds)

    def warm(self, user: str) -> None:
        """Create the namespace and have the service open its store (the hooks time out while
        a store opens: seconds, on a busy machine), leaving nothing in it."""
        from disclosure.service.client import MemoryClient

        with MemoryClient(
            self.info.url, api_key=self.info.token, namespace={"user": user}, timeout=120
        ) as memory:
            memory.ingest([{"id": "warm-up", "content": "warming the store up"}])
            memory.forget(ids=["warm-up"])


def serve(base: Path) -> Iterator[Served]:
    profile = base / "lean.yaml"
    profile.write_text(LEAN, encoding="utf-8")
    root = base / "root"
    info, _ = start_service(root, profile=str(profile))
    try:
        yield Served(root, profile, info)
    finally:
        stop_service(root, timeout=20)


def wait_for(check: Any, timeout: float = 60.0) -> Any:
    """``check()``'s first truthy value, polled; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"not true within {timeout:g} s: {check}")


def running(root: Path) -> ServiceInfo | None:
    return find_service(root)
