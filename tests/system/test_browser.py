"""The founders' flow in real headless Chromium: sign up → create a key → use it on the API
(usage moves on the dashboard) → revoke it → the API answers 401.

Needs Debian's chromium (.ci/install-browser); Playwright drives that binary, it never
downloads a browser. Set BROWSER_SCREENSHOT_DIR to keep a screenshot of the dashboard.
"""

import os
import re
from pathlib import Path

import httpx

from tests.support.contract import DOCUMENTED_PATHS
from tests.support.factories import PASSWORD, make_startups


def api_get(base: str, raw: str) -> httpx.Response:
    return httpx.get(f"{base}/api/v1/startups", headers={"Authorization": f"Bearer {raw}"})


def test_a_founder_signs_up_creates_uses_and_revokes_a_key_in_chromium(
    live_server, page, tmp_path, mailoutbox
):
    make_startups(4)
    base = live_server.url
    blocked: list[str] = []  # Content-Security-Policy violations, reported on the console
    page.on("console", lambda m: blocked.append(m.text) if "Content Security" in m.text else None)

    page.goto(f"{base}/accounts/signup/")
    page.fill("input[name=email]", "browser-founder@example.com")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("button[type=submit]")
    # Sign-up asks to confirm the address (and answers a registered one alike).
    page.wait_for_selector("[data-testid=signup-done]")
    link = re.search(r"http\S+/accounts/confirm/\S+/", mailoutbox[-1].body).group(0)
    page.goto(link)
    page.wait_for_url(f"{base}/accounts/login/")
    assert "is confirmed" in page.content()
    page.fill("input[name=username]", "browser-founder@example.com")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/dashboard/")
    assert page.text_content("[data-testid=plan]").strip() == "Free"
    assert page.text_content("[data-testid=used]").split()[0] == "0"

    page.fill("input[name=name]", "browser test")
    page.click("text=Create key")
    raw = page.text_content("[data-testid=new-key]").strip()
    page.click("#copy-key")  # its script is a static file the policy allows
    page.wait_for_selector("#copy-key:has-text('Copied')")
    shots = Path(os.environ.get("BROWSER_SCREENSHOT_DIR", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "key-created.png"))
    assert re.fullmatch(r"osk_[0-9A-Za-z]{46}", raw)
    assert "will not be shown again" in page.content()

    served = api_get(base, raw)
    assert served.status_code == 200
    assert len(served.json()["data"]) == 4
    assert served.headers["X-Service-Quota-Remaining"] == "96"

    page.click("text=back to the dashboard")
    page.wait_for_url(f"{base}/dashboard/")
    assert page.text_content("[data-testid=used]").split()[0] == "4"
    assert page.text_content("[data-testid=remaining]").strip() == "96"
    assert raw not in page.content()
    assert f"osk_…{raw[-4:]}" in page.content()
    page.screenshot(path=str(shots / "dashboard.png"), full_page=True)

    page.click("text=Revoke")
    page.wait_for_selector("text=Revoke this key?")
    page.click("button:has-text('Revoke key')")
    page.wait_for_url(f"{base}/dashboard/")
    assert "was revoked" in page.content()

    refused = api_get(base, raw)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_api_key"
    assert not blocked, blocked


def test_the_api_docs_render_in_chromium_with_no_request_leaving_the_machine(live_server, page):
    base = live_server.url
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text) if "Content Security" in m.text else None)

    page.goto(f"{base}/docs/")
    page.click("#open-console")  # Swagger UI loads only when asked for
    page.wait_for_selector(".opblock-summary-path")
    paths = {
        text.strip().replace("\u200b", "")
        for text in page.locator(".opblock-summary-path").all_text_contents()
    }
    from webhooks.limits import EVENT_TYPES

    # Every operation, and each webhook event (the document's `webhooks`) under its own name.
    assert paths == DOCUMENTED_PATHS | set(EVENT_TYPES)
    # Inside the site's frame; HEAD and OPTIONS described once, not under each path;
    # tags that read as words.
    assert page.locator("header.site nav a[href='/startups/']").count() == 1
    assert page.locator("footer.site").count() == 1
    methods = {m.strip() for m in page.locator(".opblock-summary-method").all_text_contents()}
    # HEAD and OPTIONS are hidden; the webhook endpoints are written to (POST, PATCH, DELETE).
    assert methods == {"GET", "POST", "PATCH", "DELETE"}, methods
    assert "OPTIONS" in page.text_content("[data-testid=head-options]")
    tags = {
        t.strip()
        for t in page.locator(".opblock-tag > a span, .opblock-tag span").all_text_contents()
    }
    assert {"Startup data", "For AI agents"} <= tags, tags
    assert page.locator(".btn.authorize").count() == 1  # both key headers as security schemes

    assert requested
    assert f"{base}/api/v1/openapi.json" in requested
    assert not blocked, blocked  # Swagger UI runs under the Content-Security-Policy
    offsite = [url for url in requested if not url.startswith((base, "data:", "blob:"))]
    assert not offsite, f"/docs fetched from elsewhere: {offsite}"
