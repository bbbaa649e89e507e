"""A founder pastes an App Store Connect credential (a JSON line holding a .p8 key) into the
dashboard's key field in headless Chromium. The field is a password input, which drops the line
breaks of whatever is pasted: a JSON document copied from an editor, its .p8 key with real line
breaks, still connects and verifies against the local fake Apple."""

from datetime import UTC, datetime, timedelta

from core.formats import month_start
from tests.support.app_store_connect import (
    ISSUER,
    KEY_ID,
    PEM,
    PRIVATE,
    VENDOR,
    sale,
    subscription,
)
from tests.support.factories import PASSWORD, make_account, make_startup
from tests.support.verification_fakes import apple_reports, apple_tokens


def test_a_multi_line_credential_pasted_in_chromium_connects_app_store_connect(
    live_server,
    page,
    fake_providers,
    settings,
):
    # Last month 20 x $6.99 = 139.80 -> 140; yesterday's subscription report 25 x $6.99 =
    # 174.75 -> MRR $175.
    settings.PROVIDER_API_BASES = {"app_store_connect": fake_providers.base_url}
    fake_providers.authenticate = apple_tokens({KEY_ID: (PRIVATE.public_key(), ISSUER)})
    today = datetime.now(UTC).date()
    last = month_start(datetime.now(UTC)) - timedelta(days=1)
    fake_providers.account(KEY_ID, apple_reports(
        vendor=VENDOR,
        sales={f"{last:%Y-%m}": [sale(20, "6.99")]},
        subscriptions={(today - timedelta(days=1)).isoformat(): [
            subscription("1 Month", "6.99", 25)]},
    ))  # fmt: skip
    founder = make_account(email="ios-founder@example.com")
    make_startup(name="Pocket App", slug="pocket-app", owner=founder, mrr=10)
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", "ios-founder@example.com")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/dashboard/")

    # As copied from an editor: one field per line, the .p8 file pasted with its line breaks.
    pasted = (
        "{\n"
        f'  "key_id": "{KEY_ID}",\n'
        f'  "issuer_id": "{ISSUER}",\n'
        f'  "private_key": "{PEM.strip()}",\n'
        f'  "vendor_number": "{VENDOR}"\n'
        "}"
    )
    page.goto(f"{base}/dashboard/startups/pocket-app/connect/")
    assert "Sales role" in page.text_content("[data-testid=guide-app_store_connect]")
    page.select_option("select[name=provider]", "app_store_connect")
    page.fill("input[name=key]", pasted)
    page.click("text=Check key and connect")
    page.wait_for_url(f"{base}/dashboard/startups/pocket-app/")
    assert "Connected and verified." in page.content()
    assert page.text_content("[data-testid=mrr]").strip() == "$175"
    assert PEM.splitlines()[1] not in page.content()
    page.goto(f"{base}/startups/pocket-app")
    assert "Figures verified by App Store Connect" in page.text_content(
        "[data-testid=verification]"
    )
