"""Opening a report in headless Chromium (Debian's `chromium` package) through Playwright."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def chromium_path() -> str:
    """The system Chromium; skips the test where there is none, except in CI
    (STANCELAB_REQUIRE_BROWSER=1), where a missing browser is a failure."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("STANCELAB_REQUIRE_BROWSER") == "1":
        pytest.fail("Chromium is required (apt-get install chromium) but was not found")
    pytest.skip("no Chromium on this machine (apt-get install chromium)")


@dataclass
class PageVisit:
    """A loaded page and what happened while it loaded."""

    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return self.page_errors + [text for kind, text in self.console if kind == "error"]


@contextmanager
def open_in_chromium(report: Path) -> Iterator[PageVisit]:
    """Load `report` from file:// in headless Chromium with the network cut off."""
    executable = chromium_path()
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(offline=True, viewport={"width": 1300, "height": 1000})
            page = context.new_page()
            visit = PageVisit(page)
            page.on("console", lambda message: visit.console.append((message.type, message.text)))
            page.on("pageerror", lambda error: visit.page_errors.append(str(error)))
            page.on("request", lambda request: visit.requests.append(request.url))
            page.goto(report.resolve().as_uri(), wait_until="load")
            yield visit
        finally:
            browser.close()
