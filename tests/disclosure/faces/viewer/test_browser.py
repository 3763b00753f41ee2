"""The web viewer in a real headless Chromium (Debian's ``chromium`` and ``chromium-driver``,
installed with apt-get when missing), against ``disclosure serve``'s app on loopback.

Screenshots of every page are kept under ``test-artifacts/viewer/``."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the [server] extra is not installed")
pytest.importorskip("selenium", reason="the [dev] extra is not installed")

import uvicorn
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from disclosure import ControllerPool
from disclosure.faces.api import create_app
from disclosure.sample import load_sample_conversation
from tests.disclosure.consolidation.conftest import profile_with

ARTIFACTS = Path(__file__).resolve().parents[4] / "test-artifacts" / "viewer"
NS = "?user=dana"


def _browser_binaries() -> tuple[str, str]:
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"],
        ):
            subprocess.run(command, check=False, env=env, capture_output=True, timeout=900)
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        if os.environ.get("CI"):
            pytest.fail("chromium and chromium-driver could not be installed with apt-get")
        pytest.skip("chromium and chromium-driver are missing and apt-get could not install them")
    return chromium, driver


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("viewer")
    results = root / "results" / "dev"
    results.mkdir(parents=True)
    (results / "report.md").write_text("# Evaluation report\n\nrecall 0.871\n")
    pool = ControllerPool(profile_with(), root=root / "data")
    with pool.lease(pool.namespace(user="dana")) as controller:
        controller.ingest(load_sample_conversation())
        controller.consolidate(include_working_set=True)
        result = controller.disclose("full context on the billing migration to Postgres")
        controller.feedback(result, f"Postgres 16 [{result.items[0].citation}].", session_id="c1")
    app = create_app(pool=pool, results_dir=root / "results")
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not uv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert uv.started, "the server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        pool.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, driver = _browser_binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,900",
        "--no-first-run",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    chrome.set_page_load_timeout(30)
    try:
        yield chrome
    finally:
        chrome.quit()


def wait_for(check: Any, timeout: float = 10.0) -> None:
    """Wait until ``check()`` is true (a page may be changing under it meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except (StaleElementReferenceException, NoSuchElementException):
            pass
        assert time.monotonic() < deadline, "timed out waiting for the page"
        time.sleep(0.05)


def heading(browser: Any) -> str:
    return str(browser.find_element(By.TAG_NAME, "h1").text)


def visit(browser: Any, url: str, shot: str) -> None:
    browser.get(url)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / f"{shot}.png"))
    problems = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert problems == [], f"{url}: console: {problems}"


def test_every_page_loads_without_console_errors_or_outside_assets(
    server: str, browser: Any
) -> None:
    pages = {
        "namespaces": "/",
        "sessions": f"/ui/sessions{NS}",
        "search": f"/ui/search{NS}&q=billing+database",
        "playground": f"/ui/playground{NS}&q=full+context+on+the+billing+migration",
        "stats": f"/ui/stats{NS}",
        "citations": f"/ui/citations{NS}",
        "eval": "/ui/eval",
        "docs": "/docs",
    }
    for shot, path in pages.items():
        visit(browser, server + path, shot)
        assert "tiered-disclosure" in browser.title
        sources = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        assert all(s.startswith(server) or s.startswith("data:") for s in sources), sources
    visit(browser, f"{server}/ui/sessions{NS}", "sessions")
    assert "s1-kickoff" in browser.find_element(By.CLASS_NAME, "timeline").text
    visit(browser, f"{server}/ui/stats{NS}", "stats")
    assert browser.find_elements(By.CSS_SELECTOR, "svg.chart polyline")
    visit(browser, f"{server}/docs", "docs")
    assert "/v1/disclose" in browser.find_element(By.TAG_NAME, "main").text
    visit(browser, f"{server}/ui/eval", "eval")
    assert "recall 0.871" in browser.find_element(By.TAG_NAME, "pre").text


def test_a_search_results_citation_opens_the_memory_page(server: str, browser: Any) -> None:
    visit(browser, f"{server}/ui/search{NS}&q=nightly+batch+duplicate+emails", "search-batch")
    badge = browser.find_elements(By.CSS_SELECTOR, "table a.cite")[0]
    citation = badge.text
    assert citation.startswith("mem:") and badge.get_attribute("data-cite") == f"[{citation}]"
    badge.click()
    wait_for(lambda: "/ui/memory/" in browser.current_url and heading(browser) == "Memory")
    assert browser.current_url.split("?")[0].endswith(f"/ui/memory/{citation}")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "memory.png"))
    detail = browser.find_element(By.ID, "detail").text
    assert citation in detail
    assert browser.get_log("browser") == []


def test_the_playground_shows_a_context_within_its_budget(server: str, browser: Any) -> None:
    visit(browser, f"{server}/ui/playground{NS}&q=full+context+on+the+billing+migration", "play")
    context = browser.find_element(By.ID, "context")
    tokens, budget = (
        int(context.get_attribute("data-tokens")),
        int(context.get_attribute("data-budget")),
    )
    assert 0 < tokens <= budget
    assert "[mem:" in context.text
    assert browser.find_element(By.ID, "card-level").text.startswith("level\ncomprehensive")


def test_forgetting_from_the_viewer_asks_first(server: str, browser: Any) -> None:
    visit(browser, f"{server}/ui/search{NS}&q=ReportLab+templates", "search-pdf")
    badge = browser.find_elements(By.CSS_SELECTOR, "table a.cite")[0]
    citation = badge.text
    badge.click()
    wait_for(lambda: heading(browser) == "Memory")
    browser.find_element(By.CSS_SELECTOR, "button.danger").click()
    wait_for(lambda: heading(browser) == "Forget a memory?")
    browser.find_element(By.CSS_SELECTOR, "button.danger").click()
    browser.switch_to.alert.dismiss()  # the script asks again: "no" keeps it
    assert heading(browser) == "Forget a memory?"
    browser.find_element(By.CSS_SELECTOR, "button.danger").click()
    browser.switch_to.alert.accept()
    wait_for(lambda: heading(browser) == "Forgotten")
    browser.get(f"{server}/ui/memory/{citation}{NS}")
    assert "Not found" in browser.find_element(By.TAG_NAME, "h1").text
