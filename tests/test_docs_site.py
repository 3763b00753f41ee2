"""The documentation site builds strictly and offline, and its API reference covers the public
names. ``mkdocs build --strict`` fails on a broken link or anchor, a page left out of the
navigation, an unresolved reference or an unreadable docstring (mkdocs.yml's ``validation``)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.markdown_blocks import DOCS, REPO

# Each module whose __all__ the reference documents, and the page it is on.
REFERENCE = {
    "disclosure": "reference/disclosure.html",
    "tiers": "reference/tiers.html",
    "analyzers": "reference/analyzers.html",
    "formatters": "reference/formatters.html",
    "safeguards": "reference/safeguards.html",
    "disclosure.faces.memories": "reference/faces.html",
    "disclosure.faces.middleware": "reference/faces.html",
    "disclosure.faces.middleware.langchain": "reference/faces.html",
    "disclosure.faces.mcp": "reference/faces.html",
    "disclosure.faces.api": "reference/faces.html",
    "disclosure.service": "reference/service.html",
    "disclosure.service.pool": "reference/service.html",
    "disclosure.service.client": "reference/service.html",
}

# Where a page may name a resource: these attributes of these tags.
_LOADS = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "source": ("src", "srcset"),
    "audio": ("src",),
    "video": ("src", "poster"),
    "embed": ("src",),
    "object": ("data",),
}
_REMOTE = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.I)
_CSS_URL = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'")\s;]+)|url\(\s*['"]?([^'")]+)""", re.I)


class _Loads(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in _LOADS.get(tag, ()) and value and _REMOTE.match(value):
                self.remote.append(f"<{tag} {name}={value}>")
            if name == "style" and value:
                self.remote += remote_in_css(value)
        self._style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._style = False

    def handle_data(self, data: str) -> None:
        if self._style:
            self.remote += remote_in_css(data)


def remote_in_css(css: str) -> list[str]:
    """The URLs of other hosts a stylesheet loads (``@import``, ``url(...)``, font faces)."""
    urls = [a or b for a, b in _CSS_URL.findall(css)]
    return [url for url in urls if _REMOTE.match(url)]


def remote_in_html(html: str) -> list[str]:
    """What a page loads from another host: scripts, stylesheets, images, frames, inline CSS."""
    parser = _Loads()
    parser.feed(html)
    return parser.remote


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built strictly as .ci/run builds it (into a temporary directory)."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_the_checks_of_remote_assets_catch_each_kind() -> None:
    """The offline check itself: each way a page or stylesheet loads from another host is seen,
    and local files and plain links are not."""
    page = """<html><head>
      <link rel="stylesheet" href="https://cdn.example/x.css"><link rel="icon" href="img/a.ico">
      <script src="//cdn.example/x.js"></script><script src="js/theme.js"></script>
      <style>@font-face { src: url("https://fonts.example/f.woff2") }</style></head>
      <body><a href="https://www.mkdocs.org/">MkDocs</a><img src="http://img.example/a.png">
      <div style="background: url(https://img.example/b.png)"></div></body></html>"""
    assert len(remote_in_html(page)) == 5
    assert remote_in_css('@import "https://fonts.example/css";') == ["https://fonts.example/css"]
    assert remote_in_css("@import url(theme.css); a { background: url(img/x.png) }") == []


def test_the_site_builds_strictly_and_loads_nothing_from_another_host(site: Path) -> None:
    """Every page, stylesheet and script of the built site is local."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 25
    remote = {str(p.relative_to(site)): remote_in_html(p.read_text("utf-8")) for p in pages}
    for css in site.rglob("*.css"):
        remote[str(css.relative_to(site))] = remote_in_css(css.read_text("utf-8"))
    assert {page: urls for page, urls in remote.items() if urls} == {}
    assert not any(site.rglob("*.md")), "a Markdown file was copied instead of rendered"


def test_every_page_is_built(site: Path) -> None:
    """Each Markdown page under docs/ became a page of the site."""
    for page in DOCS.rglob("*.md"):
        built = site / page.relative_to(DOCS).with_suffix(".html")
        assert built.is_file(), page


@pytest.mark.parametrize("module", sorted(REFERENCE))
def test_every_public_name_is_in_the_reference(site: Path, module: str) -> None:
    """Each name in the module's __all__ has an entry on its reference page: under the module's
    own path, or (a function named like the module holding it) under its defining path."""
    html = (site / REFERENCE[module]).read_text("utf-8")
    anchors = set(re.findall(r'\bid="([^"]+)"', html))
    imported = importlib.import_module(module)
    missing = []
    for name in imported.__all__:
        value = getattr(imported, name)
        defined = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
        if f"{module}.{name}" not in anchors and defined not in anchors:
            missing.append(name)
    assert missing == []
