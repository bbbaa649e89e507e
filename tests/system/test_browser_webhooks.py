"""The dashboard's webhooks page in headless Chromium (phone and desktop, axe-core): register an
endpoint, see its secret once, see a failed delivery and send it again."""

import pytest

from founders.services import startup_update
from tests.support.browser import open_page, problems_on
from tests.support.factories import PASSWORD, make_account, make_api_key, make_startup
from tests.support.webhook_receiver import Receiver
from tests.support.webhooks import drain
from webhooks.models import Delivery


@pytest.mark.parametrize("viewport", ["phone-light", "desktop-light"])
def test_register_see_deliveries_and_send_again(live_server, browser, viewport, settings):
    settings.WEBHOOKS_ALLOW_HTTP = True
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    account = make_account(email=f"{viewport}-hooks@example.com")
    make_api_key(account=account)
    startup = make_startup("Acme", slug="acme", mrr=10, owner=account)  # its founder edits it
    base = live_server.url
    page = open_page(browser, viewport)
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", account.email)
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/dashboard/")
    problems: list[str] = []

    with Receiver(statuses=(500, 200)) as receiver:
        page.click("header >> text=Webhooks")
        page.wait_for_url(f"{base}/dashboard/webhooks/")
        problems.extend(problems_on(page))
        page.fill("input[name=url]", receiver.base_url + "/a/rather/long/path/for/a/phone/screen")
        page.check("input[value='startup.updated']")
        page.click("text=Add endpoint")
        page.wait_for_selector("text=shown only this once")
        assert "whsec_" in page.content()
        problems.extend(problems_on(page))

        drain()
        startup_update(startup=startup, profile={"name": "Acme 2"}, mrr=10)
        drain()
        page.goto(f"{base}/dashboard/webhooks/")
        assert "whsec_" not in page.content()
        page.wait_for_selector("text=HTTP 500")
        problems.extend(problems_on(page))
        page.click("text=Send again")
        page.wait_for_selector("text=will be sent again")
        drain()
    assert len(receiver.received) == 2
    assert Delivery.objects.get().status == "delivered"
    assert not problems, "\n".join(problems)
