"""Every code example of the README and the docs runs as written.

Each ``python`` or ``bash`` block runs in a fresh temporary directory holding the page's named
YAML files (a ``yaml`` block whose first line is ``# NAME.yaml``) and links to the repository's
``configs/`` and ``tests/``, with ``TIERED_DISCLOSURE_HOME`` there too. Python blocks run in this
process (plug-ins a block registers are removed after it); bash blocks run with ``bash -e -o
pipefail``, this virtualenv's scripts first on the ``PATH``. A block that cannot run here says
why in a ``<!-- not-run: ... -->`` line before it; there are exactly ``NOT_RUN`` of those.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from disclosure import load_profile
from formatters import FORMATTERS
from tests.markdown_blocks import REPO, Block, blocks, pages
from tiers.embedders import EMBEDDERS

# The blocks marked not-run: the two set-up commands (README and docs/setup.md each), the
# development commands (the suite itself), the docs build, and an import into a Chroma server on
# another host. One more needs a reason here too.
NOT_RUN = 7
RUNS = ("python", "bash")
PICTURES = ("", "markdown")  # plain blocks are diagrams and trees; markdown shows Markdown
_NAMED_FILE = re.compile(r"^# (?P<name>[\w.-]+\.ya?ml)\n")

ALL_BLOCKS = [block for page in pages() for block in blocks(page)]
EXAMPLES = [b for b in ALL_BLOCKS if b.language in RUNS and b.not_run is None]


def _named_files(page: Path) -> dict[str, str]:
    named = {}
    for block in blocks(page):
        match = _NAMED_FILE.match(block.code)
        if block.language == "yaml" and match:
            named[match["name"]] = block.code
    return named


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory an example runs in (see the module docstring)."""
    for name in ("configs", "tests"):
        (tmp_path / name).symlink_to(REPO / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TIERED_DISCLOSURE_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture
def plugins() -> Iterator[None]:
    """Formatters and embedders a block registers are gone after it."""
    before = (set(FORMATTERS.names()), set(EMBEDDERS.names()))
    yield
    for registry, known in zip((FORMATTERS, EMBEDDERS), before, strict=True):
        for name in set(registry.names()) - known:
            registry.unregister(name)


def test_every_block_is_run_shown_or_excused() -> None:
    """Each block is an example that runs, a picture, a named profile file, or marked not-run
    with a reason; there are examples on the pages that matter, and exactly NOT_RUN excuses."""
    unknown = [b.where for b in ALL_BLOCKS if b.language not in (*RUNS, *PICTURES, "yaml")]
    assert unknown == [], f"blocks in a language the examples test does not run: {unknown}"
    loose_yaml = [
        b.where for b in ALL_BLOCKS if b.language == "yaml" and not _NAMED_FILE.match(b.code)
    ]
    assert loose_yaml == [], f"yaml blocks must start with '# NAME.yaml': {loose_yaml}"
    excused = [b for b in ALL_BLOCKS if b.not_run is not None]
    assert all(b.language in RUNS for b in excused)
    assert len(excused) == NOT_RUN, [f"{b.where}: {b.not_run}" for b in excused]
    readme_examples = [b for b in EXAMPLES if b.path.name == "README.md"]
    assert readme_examples and all(b.language == "python" for b in readme_examples)
    assert len(EXAMPLES) >= 10  # the extractor finds them (an empty list would pass vacuously)


@pytest.mark.parametrize("block", EXAMPLES, ids=[b.where for b in EXAMPLES])
def test_example_runs(
    block: Block, workdir: Path, plugins: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The block runs as written (python: no exception; bash: exit 0)."""
    for name, text in _named_files(block.path).items():
        (workdir / name).write_text(text, encoding="utf-8")
    if block.language == "python":
        code = compile(block.code, block.where, "exec")
        exec(code, {"__name__": "__docs_example__"})
        return
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.code],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{done.stderr}"


@pytest.mark.parametrize(
    "block",
    [b for b in ALL_BLOCKS if b.language == "yaml"],
    ids=lambda b: b.where,
)
def test_named_profile_files_load(block: Block, tmp_path: Path) -> None:
    """A ``# NAME.yaml`` block is a profile that loads (bash examples validate it again)."""
    match = _NAMED_FILE.match(block.code)
    assert match is not None
    path = tmp_path / match["name"]
    path.write_text(block.code, encoding="utf-8")
    load_profile(path)  # a ProfileError names the file, the path inside it and the reason
