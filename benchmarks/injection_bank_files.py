"""Reading the injection bank (benchmarks/injection_bank): one text a line under ``[attack:KIND]``
or ``[benign:KIND]`` headings, encodings written as ``{{b64:...}}`` and the like.

Shared by the classifier's training (:mod:`benchmarks.train_injection_model`) and the measured
rates (:mod:`benchmarks.safety_rates`), which read the test files the training never reads.
"""

from __future__ import annotations

import base64
import codecs
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Item:
    text: str
    label: int  # 1 attack, 0 benign
    kind: str
    source: str  # "hand" or "generated"


_EXPAND = re.compile(
    r"\{\{(b64|hex|tags|url|rot13|rev|revwords|revletters|atbash|caesar\d{1,2}):(.*?)\}\}"
)
_LETTERS = re.compile(r"[A-Za-z]+")


def _shift(text: str, shift: int) -> str:
    """``text`` with every Latin letter moved ``shift`` places along the alphabet (Caesar)."""
    return _LETTERS.sub(
        lambda m: "".join(
            chr((ord(c) - base + shift) % 26 + base)
            for c in m.group(0)
            for base in (ord("a") if c.islower() else ord("A"),)
        ),
        text,
    )


def _atbash(text: str) -> str:
    """``text`` with every Latin letter mirrored in the alphabet (a<->z, b<->y ...)."""
    return _LETTERS.sub(
        lambda m: "".join(
            chr(base + 25 - (ord(c) - base))
            for c in m.group(0)
            for base in (ord("a") if c.islower() else ord("A"),)
        ),
        text,
    )


def _expand(match: re.Match[str]) -> str:
    how, text = match.group(1), match.group(2)
    if how == "b64":
        return base64.b64encode(text.encode()).decode()
    if how == "hex":
        return text.encode().hex()
    if how == "tags":
        return "".join(chr(0xE0000 + ord(c)) for c in text)
    if how == "url":
        return "".join(f"%{b:02x}" for b in text.encode())
    if how == "rev":
        return text[::-1]
    if how == "revwords":
        return " ".join(reversed(text.split()))
    if how == "revletters":
        return _LETTERS.sub(lambda m: m.group(0)[::-1], text)
    if how == "atbash":
        return _atbash(text)
    if how.startswith("caesar"):
        return _shift(text, int(how[len("caesar") :]))
    return codecs.encode(text, "rot13")


def expand(line: str) -> str:
    """One line of a bank file as the memory it stands for: ``\\n`` is a line break, and
    ``{{b64:...}}``, ``{{hex:...}}``, ``{{tags:...}}``, ``{{url:...}}``, ``{{rot13:...}}`` encode
    their text; ``{{rev:...}}`` reverses it, ``{{revwords:...}}`` reverses the order of its words,
    ``{{revletters:...}}`` the letters of each word, ``{{caesarN:...}}`` shifts its letters N
    places and ``{{atbash:...}}`` mirrors them in the alphabet."""
    return _EXPAND.sub(_expand, line.replace("\\n", "\n"))


def read_bank(path: Path) -> list[Item]:
    """The items of a bank file: ``[attack:KIND]`` / ``[benign:KIND]`` headings (or ``[attack]``,
    ``[benign]``), one text a line, ``#`` comments."""
    items: list[Item] = []
    label, kind = -1, ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("# "):
            continue
        heading = re.fullmatch(r"\[(attack|benign)(?::([\w-]+))?\]", line)
        if heading:
            label = int(heading.group(1) == "attack")
            kind = heading.group(2) or heading.group(1)
            continue
        if label < 0:
            raise ValueError(f"{path}: text before any heading: {line[:60]!r}")
        items.append(Item(expand(line), label, kind, "hand"))
    return items
