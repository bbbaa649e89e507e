"""The founder's whole path in headless Chromium: sign up, add a startup, connect it to a local
fake Stripe (PROVIDER_API_BASES), see verified figures on the dashboard and in the API,
disconnect and see them self-reported again; claim a startup that an operator approves in the
admin; become Pro by a signed Stripe webhook (50 records per page at once) and lapse to Free."""

import os
import re
import time
from pathlib import Path

import httpx
import pytest

from tests.support.billing_fakes import FakeStripe, event, signature
from tests.support.factories import (
    PASSWORD,
    make_account,
    make_startup,
    make_startups,
    self_reported_revenue,
)
from tests.support.founder_stripe import KEY, assert_verified_by_stripe_data, stripe_data

SECRET = "whsec_browser_secret"  # noqa: S105 - the test's own webhook secret


@pytest.fixture
def fake_stripe():
    with FakeStripe() as fake:
        yield fake


def api_detail(base: str, slug: str) -> dict:
    response = httpx.get(f"{base}/api/v1/startups/{slug}")
    assert response.status_code == 200
    return response.json()["data"]


def webhook(base: str, event_id: str, kind: str, obj: dict, created: int) -> None:
    payload = event(event_id, kind, obj, created=created)
    response = httpx.post(
        f"{base}/billing/stripe/webhook",
        content=payload,
        headers={
            "Content-Type": "application/json",
            "Stripe-Signature": signature(payload, secret=SECRET),
        },
    )
    assert response.status_code == 200, response.text


def test_a_founder_verifies_a_startup_claims_another_and_pays_for_pro_in_chromium(
    live_server,
    page,
    fake_providers,
    fake_stripe,
    settings,
    tmp_path,
    mailoutbox,
):
    settings.PROVIDER_API_BASES = {"stripe": fake_providers.base_url}
    settings.STRIPE_WEBHOOK_SECRET = SECRET
    fake_providers.account(KEY, stripe_data())
    make_startups(60)
    orphan = make_startup(name="Orphan Co", slug="orphan-co", mrr=250)
    base = live_server.url
    shots = Path(os.environ.get("BROWSER_SCREENSHOT_DIR", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)

    # Sign up.
    page.goto(f"{base}/accounts/signup/")
    page.fill("input[name=email]", "verified-founder@example.com")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    if page.url != f"{base}/dashboard/":
        # Sign-up that asks to confirm the address first: follow the e-mailed link, sign in.
        link = re.search(r"http\S+/accounts/confirm/\S+/", mailoutbox[-1].body).group(0)
        page.goto(link)
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", "verified-founder@example.com")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
    page.wait_for_url(f"{base}/dashboard/")

    # Add a startup with self-reported figures.
    page.click("[data-testid=my-startups] >> text=Add a startup")
    page.fill("input[name=name]", "Rocket Sauce")
    page.fill("input[name=website]", "https://rocket-sauce.example.com")
    page.fill("textarea[name=description]", "Hot sauce for rockets.")
    page.fill("input[name=category]", "Food")
    page.fill("input[name=mrr]", "1500")
    page.click("text=Add startup")
    page.wait_for_url(f"{base}/dashboard/startups/rocket-sauce/")
    assert page.text_content("[data-testid=mrr]").strip() == "$1,500"
    assert page.text_content("[data-testid=revenue-kind]").strip() == "Self-reported"

    # Connect it to the fake Stripe: the first sync runs at once.
    page.click("text=Connect a payment provider")
    page.screenshot(path=str(shots / "connect.png"), full_page=True)
    page.select_option("select[name=provider]", "stripe")
    page.fill("input[name=key]", KEY)
    page.click("text=Check key and connect")
    page.wait_for_url(f"{base}/dashboard/startups/rocket-sauce/")
    assert "Connected and verified." in page.content()
    assert page.text_content("[data-testid=mrr]").strip() == "$49"
    assert page.text_content("[data-testid=revenue-kind]").strip() == "Verified · Stripe"
    assert page.text_content("[data-testid=sync-status]").strip() == "ok"
    assert KEY not in page.content()
    page.screenshot(path=str(shots / "startup-verified.png"), full_page=True)
    data = api_detail(base, "rocket-sauce")
    assert_verified_by_stripe_data(data)

    # Disconnect: self-reported again, at once.
    page.click("text=Disconnect")
    page.wait_for_selector("text=Disconnect the payment provider?")
    page.click("button:has-text('Disconnect')")
    page.wait_for_url(f"{base}/dashboard/startups/rocket-sauce/")
    assert page.text_content("[data-testid=mrr]").strip() == "$1,500"
    assert page.text_content("[data-testid=revenue-kind]").strip() == "Self-reported"
    data = api_detail(base, "rocket-sauce")
    assert data["revenue"] == self_reported_revenue(1500)

    # Claim an unowned startup: pending until an operator approves it in the admin.
    page.goto(f"{base}/dashboard/startups/claim/")
    page.fill("input[name=slug]", orphan.slug)
    page.click("button:has-text('Claim')")
    page.wait_for_url(f"{base}/dashboard/startups/")
    assert "pending" in page.text_content("[data-testid=claim]")

    operator = make_account(email="operator@example.com")
    operator.is_staff = operator.is_superuser = True
    operator.save()
    admin = page.context.browser.new_context().new_page()
    admin.goto(f"{base}/admin/login/")
    admin.fill("input[name=username]", operator.username)
    admin.fill("input[name=password]", PASSWORD)
    admin.click("input[type=submit]")
    admin.goto(f"{base}/admin/founders/startupclaim/")
    admin.check("input[name=_selected_action]")
    admin.select_option("select[name=action]", "approve")
    admin.click("button[name=index]")
    admin.wait_for_selector("text=1 claim(s) approved.")
    admin.context.close()

    page.goto(f"{base}/dashboard/startups/")
    page.click("text=Orphan Co")
    page.wait_for_url(f"{base}/dashboard/startups/orphan-co/")
    assert page.text_content("[data-testid=mrr]").strip() == "$250"

    # A key on Free gets 10 records per page.
    page.goto(f"{base}/dashboard/")
    page.fill("input[name=name]", "pro test")
    page.click("text=Create key")
    raw = page.text_content("[data-testid=new-key]").strip()

    def page_size() -> int:
        response = httpx.get(
            f"{base}/api/v1/startups",
            params={"limit": 50},
            headers={"Authorization": f"Bearer {raw}"},
        )
        assert response.status_code == 200
        return len(response.json()["data"])

    assert page_size() == 10

    # "Upgrade to Pro" goes to Stripe Checkout (the SDK talks to a local fake Stripe; the
    # checkout page itself is answered by the browser's route).
    settings.STRIPE_SECRET_KEY = "sk_test_operator"
    settings.STRIPE_PRO_PRICE_ID = "price_pro"
    settings.STRIPE_API_BASE = fake_stripe.base_url
    page.route(
        "https://checkout.stripe.test/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body="<h1>Pay</h1>"),
    )
    page.goto(f"{base}/dashboard/")
    page.click("button:has-text('Upgrade to Pro')")
    page.click("[data-testid=continue-to-stripe]")
    page.wait_for_url("https://checkout.stripe.test/c/pay/cs_test_1")
    assert fake_stripe.requests[-1][0] == "/v1/checkout/sessions"

    # Pro by a signed webhook: 50 per page at once, and the dashboard says Pro.
    from accounts.models import User

    account = User.objects.get(username="verified-founder@example.com")
    now = int(time.time())
    subscription = {
        "id": "sub_browser",
        "object": "subscription",
        "customer": "cus_browser",
        "status": "active",
        "metadata": {"account_id": str(account.pk)},
        "items": {
            "data": [
                {
                    "id": "si_b",
                    "price": {"id": "price_pro", "object": "price"},
                    "current_period_end": now + 30 * 86400,
                }
            ]
        },
    }
    webhook(base, "evt_b1", "customer.subscription.created", subscription, now)
    assert page_size() == 50
    page.goto(f"{base}/dashboard/")
    assert page.text_content("[data-testid=plan]").strip() == "Pro"

    # The subscription ends: back to Free.
    webhook(
        base,
        "evt_b2",
        "customer.subscription.deleted",
        {**subscription, "status": "canceled"},
        now + 1,
    )
    assert page_size() == 10
    page.reload()
    assert page.text_content("[data-testid=plan]").strip() == "Free"
