"""Fixtures the cross-cutting browser suites share: a Chromium page, and a Chromium whose pages
load axe-core (tests/support/browser.py)."""

import pytest

from tests.support.browser import AXE, chromium


@pytest.fixture
def page(live_server, monkeypatch):
    with chromium(monkeypatch) as browser:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.set_default_timeout(15_000)
        yield page
        context.close()


@pytest.fixture
def browser(live_server, monkeypatch):
    assert AXE.exists(), "axe-core is missing: run `npm ci` (make test does)"
    with chromium(monkeypatch) as browser:
        yield browser
