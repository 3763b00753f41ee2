"""What a command served by a running service loads: nothing heavy (no timing here: the
start-up figures live in benchmarks/service_bench.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from analyzers import DisclosureLevel
from disclosure.core.profile_sections import NAMESPACE_PARTS as SCOPE_PARTS
from disclosure.faces.cli import ingest, query
from disclosure.faces.cli.importers import FORMATS
from disclosure.storage.namespaces import NAMESPACE_PARTS

REPO = Path(__file__).resolve().parents[4]
HEAVY = ("spacy", "onnxruntime", "torch", "chromadb", "sentence_transformers", "analyzers")


def loaded_after(code: str) -> set[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_client_and_the_command_line_import_nothing_heavy() -> None:
    """Importing the client, the file readers and the CLI's parser loads no model, engine,
    analyzer or numpy."""
    modules = loaded_after(
        "import disclosure.service.client\nimport disclosure.faces.cli.importers\n"
        "from disclosure.faces.cli import build_parser\nbuild_parser()"
    )
    assert "disclosure.service.client" in modules and "httpx" in modules
    assert {m.split(".")[0] for m in modules} & {*HEAVY, "numpy"} == set()


def test_import_disclosure_is_lazy_but_complete() -> None:
    """`import disclosure` loads no tier; every public name still resolves on use."""
    modules = loaded_after("import disclosure")
    assert "tiers.store" not in modules and "disclosure.core.controller" not in modules
    import disclosure

    for name in disclosure.__all__:
        assert getattr(disclosure, name) is not None


def test_the_constants_repeated_for_a_quick_start_agree() -> None:
    assert tuple(level.value for level in DisclosureLevel) == query.LEVELS
    assert ingest.FORMATS == FORMATS
    assert NAMESPACE_PARTS == SCOPE_PARTS
