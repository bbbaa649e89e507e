"""Headless Chromium for the browser suites (tests/system/test_browser*.py): Debian's binary
driven by Playwright (.ci/install-browser; Playwright never downloads a browser), axe-core from
npm, the viewports every page is checked at, and what a page must not show."""

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connections

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium(monkeypatch) -> Iterator:
    """Headless Chromium driven by Playwright's sync API, or a loud failure: a browser test
    that skips did not run."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run .ci/install-browser (make test runs it)")
    from playwright import sync_api

    # Playwright's sync API keeps an event loop in this thread; the ORM calls the test makes
    # meanwhile are plain synchronous ones.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            # While that loop runs, asgiref's Local (behind django.db.connections) acts as a
            # context variable, so the test's ORM calls opened a connection of their own; the
            # test-database teardown runs outside it and would find that session still open.
            connections.close_all()


AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = Path(__file__).resolve().parents[1] / "screenshots"  # gitignored; look at them
VIEWPORTS = {
    "desktop-light": ({"width": 1280, "height": 900}, "light"),
    "desktop-dark": ({"width": 1280, "height": 900}, "dark"),
    "phone-light": ({"width": 390, "height": 844}, "light"),
    "phone-dark": ({"width": 390, "height": 844}, "dark"),
}


def open_page(browser, viewport: str):
    size, scheme = VIEWPORTS[viewport]
    context = browser.new_context(viewport=size, color_scheme=scheme)
    # axe-core is loaded into every page before its own scripts, by the browser itself: a
    # <script> tag added afterwards would be refused by the pages' Content-Security-Policy.
    context.add_init_script(path=str(AXE))
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


def screenshot(page) -> None:
    """The whole page as shown, kept under tests/screenshots/<viewport>/."""
    size = page.viewport_size
    scheme = (
        "dark" if page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") else "light"
    )
    name = re.sub(r"[^A-Za-z0-9]+", "-", page.url.split("//", 1)[1].split("/", 1)[1]).strip("-")
    folder = SCREENSHOTS / f"{size['width']}-{scheme}"
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name or 'home'}.png"), full_page=True)


def problems_on(page) -> list[str]:
    """Horizontal overflow and serious/critical axe violations of the page as shown."""
    found = []
    widths = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    if widths[0] > widths[1]:
        found.append(f"{page.url}: scrollWidth {widths[0]} > {widths[1]}")
    # Ready for a `default-src 'self'` Content-Security-Policy: no inline scripts or styles.
    # Swagger UI (/docs) sets a few styles through the DOM, which the policy allows.
    inline = page.evaluate(
        "document.querySelectorAll('script:not([src]), style, [style]:not(#swagger-ui *)').length"
    )
    if inline:
        found.append(f"{page.url}: {inline} inline script/style element(s) or attribute(s)")
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    for violation in result["violations"]:
        if violation["impact"] in ("serious", "critical"):
            targets = [node["target"] for node in violation["nodes"]][:3]
            found.append(f"{page.url}: {violation['id']} ({violation['impact']}) at {targets}")
    screenshot(page)  # last: Playwright styles the page while it takes one
    return found
