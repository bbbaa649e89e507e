"""In real headless Chromium: every page a newcomer meets, at 1280 px and on a 390 px
phone (light and dark), has no horizontal scroll and no serious or critical axe-core violation;
the key flow is POST → 303 → shown once; password reset works through the e-mail outbox; the
badge and Markdown twins load.

axe-core comes from npm (package.json; `make test` runs `npm ci`). Chromium as in
tests/system/test_browser.py (Debian's binary; Playwright never downloads a browser).
"""

import re
import time
from datetime import date

import pytest
from django.core import mail

from apikeys.models import ApiKey
from tests.support.browser import VIEWPORTS, open_page, problems_on
from tests.support.factories import (
    PASSWORD,
    make_founder,
    make_social,
    make_startup,
    make_startups,
    make_verification,
)

EMAIL = "phone-founder@example.com"
NEW_PASSWORD = "a-fresh-long-passphrase-42"


def confirm_and_sign_in(page, base: str, email: str, mailoutbox) -> None:
    """After sign-up: follow the e-mailed confirmation link, then sign in."""
    page.wait_for_load_state()
    for _ in range(200):
        sent = [message for message in mailoutbox if email in message.to]
        if sent:
            break
        time.sleep(0.05)
    link = re.search(r"http\S+/accounts/confirm/\S+/", sent[-1].body).group(0)
    page.goto(link)
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/dashboard/")


def seed() -> None:
    make_startups(40)
    acme = make_startup(
        "Acme Analytics With A Rather Long Name For Phones",
        slug="acme-analytics",
        mrr=123456,
        category="Analytics",
        description="Product analytics for small teams " * 4,
        website="https://acme-analytics-with-a-long-domain.example.com/some/long/path",
        on_sale=True,
        asking_price=2_500_000,
    )
    make_founder(acme, "Ada Example", title="CEO", twitter="https://x.com/ada")
    make_social(acme, "github", "https://github.com/acme-analytics-with-a-long-name")
    months = [(date(2024 + (m // 12), m % 12 + 1, 1), 1000 + 150 * m, 20) for m in range(30)]
    make_verification(acme, months=months)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_every_page_fits_the_screen_and_passes_axe(live_server, browser, viewport, mailoutbox):
    seed()
    base = live_server.url
    page = open_page(browser, viewport)
    problems: list[str] = []

    def visit(path: str) -> None:
        page.goto(f"{base}{path}")
        problems.extend(problems_on(page))

    for path in (
        "/",
        "/startups/",
        "/startups/?verified=true&sort=name-asc",
        "/startups/acme-analytics",
        "/docs/guide/",
        "/docs/",
        "/no-such-page/",
        "/accounts/login/",
        "/accounts/password/reset/",
    ):
        visit(path)

    page.goto(f"{base}/docs/")
    page.click("#open-console")
    page.wait_for_selector(".opblock-summary-path")
    problems.extend(problems_on(page))  # the reference, rendered
    page.goto(f"{base}/")
    page.click("text=The answer, as served right now")  # the sample, unfolded
    problems.extend(problems_on(page))
    page.goto(f"{base}/startups/acme-analytics")
    page.click("text=The same figures as a table")
    problems.extend(problems_on(page))

    visit("/accounts/signup/")
    page.fill("input[name=email]", f"{viewport}-{EMAIL}")
    page.fill("input[name=password1]", "short")
    page.fill("input[name=password2]", "short")
    page.click("main button[type=submit]")
    problems.extend(problems_on(page))  # the form with its errors
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    problems.extend(problems_on(page))  # "check your inbox"
    confirm_and_sign_in(page, base, f"{viewport}-{EMAIL}", mailoutbox)
    page.fill("input[name=name]", "a key with a long name for a narrow phone screen")
    page.click("text=Create key")
    page.wait_for_url(f"{base}/dashboard/keys/created/")
    problems.extend(problems_on(page))
    page.goto(f"{base}/dashboard/")
    problems.extend(problems_on(page))
    page.click("text=Revoke")
    page.wait_for_selector("text=Revoke this key?")
    problems.extend(problems_on(page))
    for path in ("/accounts/", "/accounts/password/change/", "/accounts/delete/"):
        visit(path)

    assert not problems, "\n".join(problems)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    dark = VIEWPORTS[viewport][1] == "dark"
    assert background == ("rgb(15, 20, 28)" if dark else "rgb(247, 248, 250)")


def test_the_key_page_is_post_redirect_get_and_shows_the_key_once(live_server, browser, mailoutbox):
    base = live_server.url
    page = open_page(browser, "phone-light")
    page.goto(f"{base}/accounts/signup/")
    page.fill("input[name=email]", EMAIL)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("main button[type=submit]")
    confirm_and_sign_in(page, base, EMAIL, mailoutbox)

    statuses: list[int] = []
    page.on(
        "response",
        lambda r: statuses.append(r.status) if r.url.endswith("/keys/new/") else None,
    )
    page.click("text=Create key")
    page.wait_for_url(f"{base}/dashboard/keys/created/")
    raw = page.text_content("[data-testid=new-key]").strip()
    assert re.fullmatch(r"osk_[0-9A-Za-z]{46}", raw)
    assert statuses == [303]

    page.reload()
    page.wait_for_url(f"{base}/dashboard/")
    assert raw not in page.content() and "shown only once" in page.content()
    page.go_back()
    page.go_forward()
    assert raw not in page.content()
    assert ApiKey.objects.filter(account__username=EMAIL).count() == 1


def test_password_reset_through_the_email_in_chromium(live_server, browser):
    from tests.support.factories import make_account

    make_account(email=EMAIL)
    base = live_server.url
    page = open_page(browser, "phone-light")
    page.goto(f"{base}/accounts/login/")
    page.click("text=Forgot your password?")
    page.fill("input[name=email]", EMAIL)
    page.click("main button[type=submit]")
    page.wait_for_selector("[data-testid=reset-sent]")
    assert len(mail.outbox) == 1
    link = re.search(r"https?://\S+/accounts/password/reset/\S+/", mail.outbox[0].body).group(0)
    page.goto(link)
    assert "at least 8 characters" in page.content()  # the rules, before any failure
    page.fill("input[name=new_password1]", NEW_PASSWORD)
    page.fill("input[name=new_password2]", NEW_PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_selector("[data-testid=reset-complete]")
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", EMAIL)
    page.fill("input[name=password]", NEW_PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/dashboard/")


def test_the_profile_badge_and_markdown_twin_load_in_chromium(live_server, browser):
    seed()
    base = live_server.url
    page = open_page(browser, "desktop-light")
    page.goto(f"{base}/startups/")
    page.click("text=Acme Analytics With A Rather Long Name For Phones")
    page.wait_for_url(f"{base}/startups/acme-analytics")
    assert "Verified · Stripe" in page.text_content("h1 [data-testid=trust]")
    assert page.locator("[data-testid=revenue-chart] rect.bar").count() == 24
    badge = page.locator("img[src$='/badge.svg']")
    assert badge.evaluate("img => img.complete && img.naturalWidth > 0")

    svg = page.goto(f"{base}/startups/acme-analytics/badge.svg")
    assert svg.headers["content-type"] == "image/svg+xml"
    assert "max-age" in svg.headers["cache-control"]
    assert "$123,456 MRR verified" in svg.text()

    markdown = page.goto(f"{base}/startups/acme-analytics.md")
    assert markdown.headers["content-type"] == "text/markdown; charset=utf-8"
    assert markdown.text().startswith("# Acme Analytics With A Rather Long Name For Phones")

    # The list's pages work as plain links (no JavaScript needed).
    page.goto(f"{base}/startups/")
    page.click("[data-testid=next-page]")
    page.wait_for_url(f"{base}/startups/?page=2")
    assert page.locator("[data-testid=startup-link]").count() == 16
