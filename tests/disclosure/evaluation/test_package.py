"""disclosure.evaluation keeps a curated, sorted and complete __all__, and imports lightly."""

from __future__ import annotations

import subprocess
import sys
import types

import disclosure.evaluation as evaluation


def _isort_key(name: str) -> tuple[int, str]:
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def test_all_is_sorted_and_complete() -> None:
    """Every public name is exported, in ruff's RUF022 order."""
    exported = list(evaluation.__all__)
    assert exported == sorted(exported, key=_isort_key)
    public = {
        name
        for name, value in vars(evaluation).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public <= set(exported), sorted(public - set(exported))


def test_importing_the_package_loads_no_heavy_dependency() -> None:
    """torch, sentence-transformers, chromadb, spaCy, matplotlib and tqdm load only when used.

    (rank_bm25 is not on the list: it is a small pure-Python module that the lexical index
    subclasses at import.)"""
    code = (
        "import sys, disclosure.evaluation, disclosure.faces.cli;"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'matplotlib', 'tqdm',"
        " 'chromadb', 'spacy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
