"""Pro leads somewhere. With Stripe configured, Checkout is reachable from the
pricing section and the dashboard; without it, every mention of Pro names the operator's
contact (escaped; linked only as mailto: or http(s)); the Free plan is a sample with its
numbers; `make run` says how to turn billing on (manage.py billing_status)."""

from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command

from tests.support.factories import make_account

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_pages():
    cache.clear()  # the public pages are cached whole
    yield
    cache.clear()


@pytest.fixture
def stripe_on(settings):
    settings.STRIPE_SECRET_KEY = "sk_test_fake"
    settings.STRIPE_PRO_PRICE_ID = "price_pro"
    return settings


def test_with_stripe_the_pricing_section_leads_to_checkout(client, stripe_on):
    html = client.get("/").content.decode()
    pricing = html.split('id="pricing"', 1)[1].split("</section>", 1)[0]
    assert 'href="/dashboard/#plan" data-testid="pro-checkout">Upgrade to Pro' in pricing
    assert "pro-contact" not in pricing
    client.force_login(make_account())
    dashboard = client.get("/dashboard/").content.decode()
    assert 'action="/dashboard/billing/upgrade/"' in dashboard and "Upgrade to Pro" in dashboard
    guide = client.get("/docs/guide/").content.decode()
    assert 'href="/dashboard/#plan"' in guide


@pytest.mark.parametrize(
    "contact, link",
    [
        ("ops@example.com", 'href="mailto:ops@example.com"'),
        ("https://example.com/contact?a=1&b=2", 'href="https://example.com/contact?a=1&amp;b=2"'),
    ],
)
def test_without_stripe_every_mention_of_pro_names_the_operator(client, settings, contact, link):
    settings.OPERATOR_CONTACT = contact
    landing = client.get("/").content.decode()
    pricing = landing.split('id="pricing"', 1)[1].split("</section>", 1)[0]
    assert link in pricing and "pro-checkout" not in pricing
    assert link in client.get("/docs/guide/").content.decode()
    client.force_login(make_account())
    assert link in client.get("/dashboard/").content.decode()


def test_a_hostile_operator_contact_is_escaped_and_never_linked(client, settings):
    settings.OPERATOR_CONTACT = 'javascript:alert(1)"><script>x</script>'
    html = client.get("/").content.decode()
    assert "<script>x</script>" not in html
    assert "javascript:alert(1)&quot;&gt;&lt;script&gt;" in html
    assert 'href="javascript' not in html
    client.force_login(make_account())
    dashboard = client.get("/dashboard/").content.decode()  # it linked any contact before
    assert 'href="javascript' not in dashboard and "javascript:alert(1)&quot;" in dashboard


def test_without_a_contact_pro_still_says_whom_to_ask(client, settings):
    settings.OPERATOR_CONTACT = ""
    assert "write to the operator of this service" in client.get("/").content.decode()


def test_the_free_plan_is_a_sample_with_its_numbers(client):
    pricing = client.get("/").content.decode().split('id="pricing"', 1)[1]
    assert "Sample" in pricing and "100 records a month" in pricing
    assert "Up to 10 startups per request" in pricing and "$0" in pricing
    client.force_login(make_account())
    dashboard = client.get("/dashboard/").content.decode()
    assert "a sample of 100 records a month, up to 10 per request" in dashboard


def test_billing_status_says_how_to_turn_billing_on(settings):
    settings.STRIPE_SECRET_KEY = ""
    out = StringIO()
    call_command("billing_status", "--port", "8123", stdout=out)
    text = out.getvalue()
    assert "Billing is off" in text and "sk_test_" in text and "4242 4242 4242 4242" in text
    assert "http://127.0.0.1:8123/billing/stripe/webhook" in text
    settings.STRIPE_SECRET_KEY, settings.STRIPE_PRO_PRICE_ID = "sk_test_x", "price_x"
    out = StringIO()
    call_command("billing_status", stdout=out)
    assert out.getvalue().strip() == (
        "Billing is on (Stripe test mode): Pro is sold through Checkout."
    )


def test_make_run_prints_the_billing_status():
    from pathlib import Path

    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    run = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "manage.py billing_status --port $(PORT)" in run
