"""App Store Connect: ES256 tokens with Apple's documented claims, checked by the fake
as Apple does; golden cases built from Apple's report formats (Summary Sales Report 1_1,
Subscription Report 1_3, gzip TSV), served by the local fake. Time is fixed at NOW (2026-11-15
12:00 UTC) unless a test says otherwise; every figure is worked out in a comment.
"""

import io
import sys
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.management import call_command
from django.test import Client

from core.formats import month_start
from startups.models import Startup
from tests.support.app_store_connect import (
    ISSUER,
    KEY_ID,
    PEM,
    PRIVATE,
    VENDOR,
    credential,
    sale,
    subscription,
)
from tests.support.connectors import (
    Connector,
    assert_refused_answer,
    assert_revoked_key_keeps_the_last_figures,
    sync_through_a_429,
)
from tests.support.factories import make_account, make_startup
from tests.support.fake_server import Stream
from tests.support.provider_surfaces import assert_verified_everywhere, dashboard_connect
from tests.support.verification_fakes import (
    APPLE_SALES_COLUMNS,
    NOW,
    apple_reports,
    apple_tokens,
    apple_tsv,
    rows,
)
from verification.connections import ConnectionRefused, provider_connection_connect
from verification.models import ProviderConnection
from verification.providers import app_store_connect, credential_problem
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db


def golden_reports() -> dict:
    return apple_reports(
        vendor=VENDOR,
        sales={
            "2026-09": [sale(10, "6.99"), sale(5, "2.10", "EUR", kind="1F"),
                        sale(100, "0", kind="1F"), sale(-1, "6.99")],
            "2026-10": [sale(20, "6.99"), sale(3, "700", "JPY", kind="1F")],
            "2026-10-16": [sale(1, "6.99")],
            "2026-11-02": [sale(4, "6.99")],
            "2026-11-10": [sale(2, "8.49", "EUR"), sale(-1, "6.99")],
        },
        subscriptions={
            "2026-11-14": [
                subscription("1 Month", "6.99", 25, **{
                    "Active Free Trial Introductory Offer Subscriptions": 5,
                    "Active Pay As You Go Introductory Offer Subscriptions": 2}),
                subscription("1 Year", "41.99", 12),
                subscription("1 Week", "2.10", 4, "EUR"),
                subscription("1 Month", "0.99", 0, **{
                    "Subscription Offer Name": "Intro",
                    "Active Pay Up Front Introductory Offer Subscriptions": 3}),
            ]
        },
    )  # fmt: skip


# Worked by hand (proceeds: Apple's price after its commission, per unit x units):
#   2026-09 (monthly report): 10 x $6.99 = 69.90; 5 x €2.10 = €10.50 = $11.34; 100 free downloads
#     at 0; one refund (units -1) of $6.99. Gross 81.24 -> 81, refunds 6.99 -> 7, net 74.
#   2026-10 (monthly report): 20 x $6.99 = 139.80; 3 x ¥700 = ¥2,100 = $14.07. Gross 153.87 ->
#     154, net 154. (Its daily report of Oct 16 counts only in the last 30 days.)
#   2026-11 (no monthly report yet: the daily ones): Nov 2 4 x $6.99 = 27.96; Nov 10 2 x €8.49 =
#     €16.98 = $18.3384 and a $6.99 refund. Gross 46.2984 -> 46, refunds 7, net 39.
#   Earlier months: 404 (no sales): history starts in September. Total 74 + 154 + 39 = 267.
#   Last 30 days (daily reports Oct 16 - Nov 14): 6.99 + 27.96 + 18.3384 - 6.99 = 46.2984 -> 46.
# Subscription report of Nov 14 (yesterday): MRR from standard-price subscriptions, proceeds per
# period / months: 25 x $6.99 = 174.75; 12 x $41.99 / 12 = 41.99; 4 x €2.10 x 52/12 = €36.40 =
# $39.312. MRR = 256.052 -> 256, ARR 3072. Paying subscriptions (free trials left out): 25 + 2
# (pay as you go intro) + 12 + 4 + 3 (pay up front intro) = 46 customers.
GOLDEN = {"mrr": 256, "arr": 3072, "total": 267, "last_30_days": 46, "customers": 46}


@pytest.fixture
def apple(fake_providers):
    fake_providers.authenticate = apple_tokens({KEY_ID: (PRIVATE.public_key(), ISSUER)})
    return fake_providers


APPLE = Connector(
    provider="app_store_connect",
    token=KEY_ID,
    credential=credential(),
    golden_routes=golden_reports,
    golden_mrr=GOLDEN["mrr"],
    slug="apple",
)
sync = APPLE.sync


def test_app_store_connect_golden_case(apple):
    connection = sync(apple, golden_reports())
    assert connection.status == "ok", connection.last_error
    verification = connection.startup.verification
    assert (verification.mrr, verification.arr) == (GOLDEN["mrr"], GOLDEN["arr"])
    assert rows(connection.startup) == [
        ("2026-09", 81, 7, 74),
        ("2026-10", 154, 0, 154),
        ("2026-11", 46, 7, 39),
    ]
    assert (verification.total_revenue, verification.last_30_days) == (267, 46)
    assert verification.customers == 46
    # 24 monthly reports, the 30 daily ones from Oct 16 to Nov 14 (and the connect-time probe's
    # one, two days before the real today), the subscription report.
    assert apple.calls("/v1/salesReports", **{"filter[frequency]": "MONTHLY"}) == 24
    assert apple.calls("/v1/salesReports", **{"filter[reportType]": "SALES",
                                              "filter[frequency]": "DAILY"}) == 31  # fmt: skip
    assert apple.calls("/v1/salesReports", **{"filter[reportType]": "SUBSCRIPTION"}) == 1


def test_the_token_has_apples_documented_claims_and_verifies_with_pyjwt():
    issued = datetime.now(UTC).timestamp()
    token = app_store_connect.token(credential(), at=issued)
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "ES256", "kid": KEY_ID, "typ": "JWT"}
    claims = jwt.decode(
        token, PRIVATE.public_key(), algorithms=["ES256"], audience="appstoreconnect-v1"
    )
    assert claims["iss"] == ISSUER and claims["iat"] == int(issued)
    assert 0 < claims["exp"] - claims["iat"] <= 20 * 60
    assert set(claims) == {"iss", "iat", "exp", "aud"}


def test_last_months_daily_reports_stand_in_until_apple_publishes_its_monthly_one(apple):
    # On Nov 3 Apple has not yet published October's monthly report: October comes from its
    # daily reports (Oct 1 x $6.99 and Oct 31 2 x $6.99 = 20.97 -> 21), which are read from Oct 1.
    # November: Nov 2 $6.99 -> 7. No subscription report for Nov 2, 1 or Oct 31: MRR null (Apple
    # gives no subscription data), customers 0.
    routes = apple_reports(
        vendor=VENDOR,
        sales={"2026-10-01": [sale(1, "6.99")], "2026-10-31": [sale(2, "6.99")],
               "2026-11-02": [sale(1, "6.99")]},
        subscriptions={},
    )  # fmt: skip
    connection = sync(apple, routes, now=datetime(2026, 11, 3, 12, tzinfo=UTC))
    assert connection.status == "ok", connection.last_error
    assert rows(connection.startup) == [("2026-10", 21, 0, 21), ("2026-11", 7, 0, 7)]
    verification = connection.startup.verification
    assert (verification.mrr, verification.arr, verification.customers) == (None, None, 0)
    assert apple.calls("/v1/salesReports", **{"filter[reportDate]": "2026-10-01"}) == 1


def test_app_store_connect_429_is_retried(apple):
    routes = golden_reports()
    connection = sync_through_a_429(APPLE, apple, routes, "/v1/salesReports")
    assert connection.startup.verification.mrr == GOLDEN["mrr"]


def test_a_revoked_app_store_connect_key_is_key_revoked(apple):
    def forget_the_key():  # Apple no longer knows the key
        apple.authenticate = apple_tokens({})

    assert_revoked_key_keeps_the_last_figures(APPLE, apple, revoke=forget_the_key)


def without_column(column: str) -> dict:
    """Apple's reports, October's monthly sales report lacking `column`."""
    routes = apple_reports(vendor=VENDOR, sales={}, subscriptions={})
    columns = tuple(c for c in APPLE_SALES_COLUMNS if c != column)
    data = apple_tsv(columns, [sale(1, "6.99")])
    reports = routes["/v1/salesReports"]
    routes["/v1/salesReports"] = lambda query: (
        (200, {"Content-Length": str(len(data))}, Stream(lambda wfile: wfile.write(data)))
        if query.get("filter[reportDate]") == ["2026-10"]
        else reports(query)
    )
    return routes


@pytest.mark.parametrize(
    ("routes", "words"),
    [
        (lambda: without_column("Developer Proceeds"), "without the column `Developer Proceeds`"),
        (lambda: without_column("Units"), "without the column `Units`"),
        (lambda: apple_reports(vendor=VENDOR, sales={"2026-10": [sale("many", "6.99")]},
                               subscriptions={}), "unreadable `Units`"),
        (lambda: apple_reports(vendor=VENDOR, sales={"2026-10": [sale(1, "-6.99")]},
                               subscriptions={}), "negative"),
    ],
)  # fmt: skip
def test_malformed_reports_name_the_column_and_write_nothing(apple, routes, words):
    assert_refused_answer(sync(apple, routes()), words, nothing_written=True)


def test_an_unknown_subscription_duration_is_an_error(apple):
    routes = apple_reports(
        vendor=VENDOR, sales={}, subscriptions={"2026-11-14": [subscription("1 Fortnight", "1", 1)]}
    )
    assert_refused_answer(sync(apple, routes), "Standard Subscription Duration")


def test_a_report_that_is_not_gzip_is_an_error(apple):
    connection = sync(apple, golden_reports())
    apple.account(KEY_ID, {"/v1/salesReports": lambda query: (200, {}, {"not": "gzip"})})
    assert_refused_answer(revenue_sync(connection=connection, now=NOW), "not gzip")


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("just-a-key", "one line of JSON"),
        (credential(vendor_number=""), '"vendor_number"'),
        (credential(key_id="abc"), "Key ID"),
        (credential(issuer_id="issuer"), "Issuer ID"),
        (credential(vendor_number="V-1"), "Payments and Financial Reports"),
        (credential(private_key="-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"),
         "not a readable .p8 key"),
        (credential(private_key="MIGTAgEAMBMG"), "BEGIN and END"),
    ],
)  # fmt: skip
def test_credentials_that_cannot_work_are_refused_without_echoing_the_key(raw, words):
    startup = Startup.objects.create(name="X", slug="x")
    with pytest.raises(ConnectionRefused, match=words) as refused:
        provider_connection_connect(startup=startup, provider="app_store_connect", raw_key=raw)
    assert not any(line in str(refused.value) for line in PEM.splitlines()[1:-1])
    assert raw not in str(refused.value)
    assert not ProviderConnection.objects.exists()


def test_a_pem_whose_line_breaks_were_lost_still_reads(apple):
    # A password field drops newlines, a hand-made JSON may carry literal \n: both still read.
    joined = PEM.replace("\n", "")
    assert credential_problem("app_store_connect", credential(private_key=joined)) is None
    spaced = PEM.replace("\n", " ")
    connection = sync(apple, golden_reports(), credential=credential(private_key=spaced))
    assert connection.status == "ok", connection.last_error


def test_connect_provider_takes_the_json_line_on_standard_input(apple, monkeypatch):
    Startup.objects.create(name="Cli", slug="cli")
    apple.account(KEY_ID, golden_reports())
    monkeypatch.setattr(sys, "stdin", io.StringIO(credential() + "\n"))
    out = io.StringIO()
    call_command(
        "connect_provider", "cli", "app_store_connect", "--api-base", apple.base_url, stdout=out
    )
    assert "Connected cli to app_store_connect" in out.getvalue()
    assert PEM.splitlines()[1] not in ProviderConnection.objects.get().encrypted_key


@pytest.mark.django_db(transaction=True)
def test_app_store_connect_from_the_dashboard_shows_verified_everywhere(apple, settings):
    # Reports dated from today (the dashboard syncs at the real time): the month before last
    # 10 x $6.99 = 69.90 -> 70, last month 20 x $6.99 = 139.80 -> 140; this month nothing yet.
    # Yesterday's subscription report: 25 x $6.99 = 174.75 -> MRR 175. Total 210.
    today = datetime.now(UTC).date()
    last = month_start(datetime.now(UTC)) - timedelta(days=1)
    before = last.replace(day=1) - timedelta(days=1)
    apple.account(KEY_ID, apple_reports(
        vendor=VENDOR,
        sales={f"{before:%Y-%m}": [sale(10, "6.99")], f"{last:%Y-%m}": [sale(20, "6.99")]},
        subscriptions={(today - timedelta(days=1)).isoformat(): [
            subscription("1 Month", "6.99", 25)]},
    ))  # fmt: skip
    dashboard_connect(
        apple, settings, provider="app_store_connect", credential=credential(), slug="ios-app"
    )
    # The key check: one daily sales report two days back (a 404 only means no sales then).
    two_days_ago = (today - timedelta(days=2)).isoformat()
    assert apple.calls("/v1/salesReports", **{"filter[reportDate]": two_days_ago}) >= 1
    assert_verified_everywhere("ios-app", provider="app_store_connect", mrr=175, total=210)


@pytest.mark.django_db(transaction=True)
def test_a_key_apple_does_not_know_is_refused_at_the_dashboard(apple, settings):
    # Another .p8 key under the same Key ID: its signature does not verify, Apple answers 401.
    settings.PROVIDER_API_BASES = {"app_store_connect": apple.base_url}
    apple.account(KEY_ID, golden_reports())
    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    founder = make_account()
    startup = make_startup(owner=founder)
    client = Client()
    client.force_login(founder)
    response = client.post(
        f"/dashboard/startups/{startup.slug}/connect/",
        {"provider": "app_store_connect", "key": credential(private_key=other.decode())},
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "App Store Connect refused this key" in page
    assert other.decode().splitlines()[1] not in page
    assert not ProviderConnection.objects.exists()
