"""Byte searches of a data directory, for the tests that check what a forget leaves on disk."""

from __future__ import annotations

from pathlib import Path

# Chroma's HNSW files (data_level0.bin and friends) are written by hnswlib from buffers it
# never clears: unused link slots hold whatever the process heap held, now and then the text of
# a memory (forgotten or not, of any namespace the process served). That is a leak of Chroma's,
# not of what forget deletes: byte searches leave those files out, and an xfail test in
# tests/disclosure/core/test_erasure.py records the leak.
HNSW_FILES = {"data_level0.bin", "link_lists.bin", "length.bin", "header.bin"}


def files_with(root: Path, needle: str, *, hnsw: bool = False) -> list[str]:
    """The files under ``root`` whose bytes contain ``needle`` (any case; UTF-8 or UTF-16);
    Chroma's HNSW files only with ``hnsw``."""
    forms = {needle.encode(), needle.upper().encode(), needle.encode("utf-16-le")}
    found = []
    for path in root.rglob("*"):
        if path.is_file() and (hnsw or path.name not in HNSW_FILES):
            data = path.read_bytes()
            if any(form in data or form in data.lower() for form in forms):
                found.append(str(path.relative_to(root)))
    return found
