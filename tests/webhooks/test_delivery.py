"""Signed webhooks (webhooks/): registered through the API, produced from the change sequence,
delivered to a real local receiver that verifies every signature with the `standardwebhooks`
library, retried on schedule, disabled after failing for days, never sent to private
addresses in production, and enough on their own to keep a mirror of the dataset exact."""

import json
import time
from datetime import timedelta
from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.core import mail
from django.core.management import call_command
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from founders.services import startup_create, startup_update
from startups.models import Startup
from tests.support.admin import admin_form, operator_client
from tests.support.factories import (
    PROFILE,
    bearer,
    make_account,
    make_api_key,
    make_pro_key,
    make_startup,
    make_subscription,
    make_verification,
)
from tests.support.fake_server import Stream, answer
from tests.support.webhook_receiver import Receiver
from tests.support.webhooks import (
    ENDPOINTS,
    drain,
    every_kind_of_write,
    register,
    verified_events,
)
from webhooks.limits import EVENT_TYPES, EVENTS_PER_MONTH, RETRY_DELAYS
from webhooks.models import Delivery, Endpoint
from webhooks.transport import post

pytestmark = pytest.mark.django_db


def test_signed_events_for_founder_edits_syncs_unpublish_and_delete(
    api_client, client, fake_providers
):
    _, raw = make_api_key()
    with Receiver() as receiver:
        endpoint = register(api_client, raw, receiver.base_url + "/hooks")
        assert endpoint["secret"].startswith("whsec_")
        assert set(endpoint["events"]) == set(EVENT_TYPES)
        drain()  # the delivery process's first run: its checkpoint starts here

        every_kind_of_write(client, fake_providers, created_mrr=100, renamed="Acme 2")

        events = verified_events(receiver, endpoint["secret"])
    types = [event["type"] for event in events]
    assert types[:2] == ["startup.created", "startup.updated"]
    assert events[0]["data"]["startup"]["slug"] == "acme"
    assert events[0]["data"]["startup"]["revenue"]["mrr"] == 100
    assert "name" in events[1]["data"]["fields"]
    assert events[1]["data"]["startup"]["name"] == "Acme 2"
    synced = [
        e
        for e in events
        if e["type"] == "startup.updated" and "verification" in e["data"]["fields"]
    ]
    assert synced and synced[0]["data"]["startup"]["revenue"]["mrr"] != 100
    revenue = next(e for e in events if e["type"] == "revenue.changed")
    assert revenue["data"]["previousMrr"] == 100
    assert revenue["data"]["mrr"] == synced[0]["data"]["startup"]["revenue"]["mrr"]
    status = next(e for e in events if e["type"] == "verification.status_changed")
    assert (status["data"]["previousStatus"], status["data"]["status"]) == (None, "ok")
    attestation = next(e for e in events if e["type"] == "attestation.issued")
    assert attestation["data"]["attestation"].count(".") == 2  # a compact JWS
    deleted = [e["data"] for e in events if e["type"] == "startup.deleted"]
    assert [(d["slug"], d["reason"]) for d in deleted] == [
        ("acme", "unpublished"),
        ("other", "deleted"),
    ]
    assert [e["type"] for e in events].count("startup.created") == 2  # acme, then other
    for event in events:
        assert event["timestamp"].endswith("Z") and set(event) == {"type", "timestamp", "data"}
    ids = [headers["webhook-id"] for headers, _ in receiver.received]
    assert len(ids) == len(set(ids))  # never doubled
    assert all(d.status == "delivered" for d in Delivery.objects.all())


def test_filters_and_the_revenue_threshold(api_client):
    _, raw = make_api_key()
    a = make_startup("A", owner=make_account(), slug="a", category="AI", mrr=1000)
    b = make_startup("B", owner=make_account(), slug="b", category="Tools", mrr=1000)
    with Receiver() as receiver:
        endpoint = register(
            api_client,
            raw,
            receiver.base_url,
            categories=["ai"],
            events=["revenue.changed", "startup.updated"],
            revenueThresholdPercent=25,
        )
        drain()
        for startup, mrr in ((a, 1100), (b, 5000), (a, 1500)):
            startup_update(
                startup=startup,
                profile={"name": startup.name, "category": startup.category},
                mrr=mrr,
            )
            drain()
        events = verified_events(receiver, endpoint["secret"])
    assert {e["data"]["slug"] for e in events} == {"a"}
    revenue = [
        (e["data"]["previousMrr"], e["data"]["mrr"])
        for e in events
        if e["type"] == "revenue.changed"
    ]
    assert revenue == [(1100, 1500)]  # +10% stays under 25%; +36% crosses it


def test_registration_answers_clear_errors(api_client, settings):
    account_key, raw = make_api_key()
    assert api_client.get(ENDPOINTS).status_code == 401
    bad = [
        {},
        {"url": "ftp://example.com/"},
        {"url": "https://example.com/", "events": ["startup.exploded"]},
        {"url": "https://example.com/", "revenueThresholdPercent": -1},
        {"url": "https://user:pw@example.com/"},
        {"url": "https://exa mple.com/\n"},
        {"url": "https://example.com:99999/"},
        {"url": "https://example.com/", "slugs": "acme"},
        {"url": 5},
    ]
    for body in bad:
        response = api_client.post(ENDPOINTS, body, format="json", **bearer(raw))
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == "invalid_webhook"
    response = api_client.post(ENDPOINTS, [1], format="json", **bearer(raw))
    assert response.status_code == 400
    response = api_client.post(ENDPOINTS, "{", content_type="application/json", **bearer(raw))
    assert response.status_code == 400

    settings.WEBHOOKS_ALLOW_HTTP = False
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = False
    for url in (
        "http://example.com/",
        "https://127.0.0.1/",
        "https://[::1]/",
        "https://localhost/",
    ):
        response = api_client.post(ENDPOINTS, {"url": url}, format="json", **bearer(raw))
        assert response.status_code == 400, url

    first = register(api_client, raw, "https://example.com/a")
    register(api_client, raw, "https://example.com/b")
    response = api_client.post(
        ENDPOINTS, {"url": "https://example.com/c"}, format="json", **bearer(raw)
    )
    assert response.status_code == 403 and response.json()["error"]["code"] == "webhook_limit"
    make_subscription(account=account_key.account)
    register(api_client, raw, "https://example.com/c")  # Pro: 20

    listed = api_client.get(ENDPOINTS, **bearer(raw)).json()["data"]
    assert [e["url"] for e in listed] == [
        "https://example.com/a",
        "https://example.com/b",
        "https://example.com/c",
    ]
    assert all("secret" not in e for e in listed)
    detail = f"{ENDPOINTS}/{first['id']}"
    response = api_client.patch(
        detail, {"slugs": ["acme"], "verifiedOnly": True}, format="json", **bearer(raw)
    )
    assert response.status_code == 200
    assert (response.json()["data"]["slugs"], response.json()["data"]["verifiedOnly"]) == (
        ["acme"],
        True,
    )
    _, stranger = make_api_key()
    assert api_client.get(detail, **bearer(stranger)).status_code == 404
    assert api_client.get(f"{ENDPOINTS}/nope", **bearer(raw)).status_code == 404
    assert api_client.delete(detail, **bearer(raw)).status_code == 204
    assert api_client.get(detail, **bearer(raw)).status_code == 404
    # No allowance spent by any of it.
    assert api_client.get(ENDPOINTS, **bearer(raw))["X-Service-Plan"] == "Pro"


def test_a_failed_delivery_is_retried_on_schedule_with_the_same_id(api_client, watched):
    now = timezone.now()
    with Receiver(statuses=(500, 200)) as receiver:
        register(api_client, watched.raw, receiver.base_url, events=["startup.updated"])
        drain(now=now)
        watched.edit("A2")
        drain(now=now)
        assert len(receiver.received) == 1
        delivery = Delivery.objects.get()
        assert (delivery.status, delivery.last_status_code) == ("pending", 500)
        assert delivery.next_attempt_at == now + RETRY_DELAYS[0]
        drain(now=now + timedelta(seconds=4))
        assert len(receiver.received) == 1  # not due yet
        drain(now=now + timedelta(seconds=5))
        assert len(receiver.received) == 2
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    first, second = (headers for headers, _ in receiver.received)
    assert first["webhook-id"] == second["webhook-id"]
    assert first["webhook-timestamp"] != second["webhook-timestamp"]


def test_an_endpoint_failing_for_three_days_is_disabled_and_its_owner_told(api_client, watched):
    now = timezone.now()
    assert sum(RETRY_DELAYS, timedelta()) >= timedelta(days=3)
    with Receiver(statuses=(500,)) as receiver:
        created = register(
            api_client, watched.raw, receiver.base_url + "/<b>x</b>", events=["startup.updated"]
        )
        drain(now=now)
        watched.edit("A2")
        drain(now=now)
        for delay in RETRY_DELAYS:
            now += delay
            drain(now=now)
        assert len(receiver.received) == len(RETRY_DELAYS) + 1
    endpoint = Endpoint.objects.get(pk=created["id"])
    assert not endpoint.enabled and endpoint.disabled_reason
    assert Delivery.objects.get().status == "failed"
    [message] = mail.outbox
    assert message.to == [watched.key.account.email]
    assert receiver.base_url + "/<b>x</b>" in message.body and not message.alternatives
    shown = api_client.get(f"{ENDPOINTS}/{created['id']}", **bearer(watched.raw)).json()["data"]
    assert shown["enabled"] is False and shown["disabledReason"]
    # Re-enabled, the next change goes out again.
    api_client.patch(
        f"{ENDPOINTS}/{created['id']}", {"enabled": True}, format="json", **bearer(watched.raw)
    )
    assert Endpoint.objects.get(pk=created["id"]).enabled


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/",
        "http://10.0.0.1:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:{port}/",
        "http://localhost:{port}/",  # a name that resolves to loopback
    ],
)
def test_production_never_delivers_to_private_addresses(settings, url):
    settings.PRODUCTION = True
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True  # never honoured in production
    with Receiver() as receiver:
        port = receiver.base_url.rsplit(":", 1)[1]
        outcome = post(url.format(port=port), b"{}", {})
    assert outcome.status_code is None and "refused address" in outcome.error
    assert receiver.received == []


def test_development_may_deliver_to_loopback():
    with Receiver() as receiver:
        outcome = post(receiver.base_url + "/x", b"{}", {"webhook-id": "msg_1"})
    assert outcome.ok and receiver.received[0][0]["webhook-id"] == "msg_1"


def _list(api_client, raw) -> dict[str, dict]:
    items = api_client.get("/api/v1/startups?limit=50", **bearer(raw)).json()["data"]
    return {item["slug"]: {k: v for k, v in item.items() if k != "rank"} for item in items}


def test_a_mirror_kept_by_webhooks_alone_equals_the_api(api_client, client):
    key, raw = make_pro_key()
    for n in range(4):
        make_startup(f"S{n}", owner=make_account(), slug=f"s{n}", mrr=100 * (n + 1))
    with Receiver() as receiver:
        endpoint = register(
            api_client,
            raw,
            receiver.base_url,
            events=["startup.created", "startup.updated", "startup.deleted"],
        )
        drain()
        mirror = _list(api_client, raw)  # the copy, taken once
        founder = make_account()
        new = startup_create(owner=founder, profile={**PROFILE, "name": "Fresh"}, mrr=50)
        s1 = Startup.objects.get(slug="s1")
        startup_update(startup=s1, profile={"name": "S1 renamed", "category": "Tools"}, mrr=999)
        operator_client(client)
        assert (
            client.post(
                f"/admin/startups/startup/{Startup.objects.get(slug='s2').pk}/delete/",
                {"post": "yes"},
            ).status_code
            == 302
        )
        s3 = Startup.objects.get(slug="s3")
        change = admin_form(name="S3", slug="s3", is_published=None)
        assert client.post(f"/admin/startups/startup/{s3.pk}/change/", change).status_code == 302
        startup_update(startup=new, profile={**PROFILE, "name": "Fresh 2"}, mrr=60)
        drain()
        for event in verified_events(receiver, endpoint["secret"]):
            data = event["data"]
            if event["type"] == "startup.deleted":
                mirror.pop(data["slug"], None)
            else:
                mirror[data["slug"]] = {k: v for k, v in data["startup"].items() if k != "rank"}
    assert mirror == _list(api_client, raw)
    assert "s2" not in mirror and "s3" not in mirror and mirror["fresh"]["name"] == "Fresh 2"


def test_the_monthly_event_allowance_stops_queueing(api_client, monkeypatch, watched):
    monkeypatch.setitem(EVENTS_PER_MONTH, "Free", 2)
    with Receiver() as receiver:
        register(api_client, watched.raw, receiver.base_url, events=["startup.updated"])
        drain()
        for n in range(3):
            watched.edit(f"A{n}")
            drain()
    assert len(receiver.received) == 2
    assert Delivery.objects.count() == 2


def test_the_dashboard_lists_deliveries_and_sends_one_again(api_client, client, watched):
    client.force_login(watched.key.account)
    with Receiver(statuses=(500,)) as receiver:
        page = client.post("/dashboard/webhooks/new/", {"url": receiver.base_url + "/<i>x</i>"})
        assert page.status_code == 302
        shown = client.get("/dashboard/webhooks/").content.decode()
        secret = shown.split("<code>whsec_", 1)[1].split("</code>", 1)[0]
        assert "whsec_" not in client.get("/dashboard/webhooks/").content.decode()  # once
        assert "&lt;i&gt;x&lt;/i&gt;" in shown and "<i>x</i>" not in shown
        drain()
        watched.edit("A2")
        drain()
        delivery = Delivery.objects.get(event_type="startup.updated")
        assert delivery.last_status_code == 500
        listed = client.get("/dashboard/webhooks/").content.decode()
        assert delivery.event_id in listed and "HTTP 500" in listed and "Send again" in listed
        receiver.statuses = [200]
        resend = client.post(f"/dashboard/webhooks/deliveries/{delivery.pk}/resend/")
        assert resend.status_code == 302
        drain()
        Webhook("whsec_" + secret).verify(receiver.received[-1][1], receiver.received[-1][0])
    delivery.refresh_from_db()
    assert delivery.status == "delivered"
    other = make_api_key()[0].account
    client.force_login(other)
    assert client.post(f"/dashboard/webhooks/deliveries/{delivery.pk}/resend/").status_code == 404


def test_a_full_queue_disables_the_endpoint_and_tells_the_owner(api_client, monkeypatch, watched):
    monkeypatch.setattr("webhooks.events.QUEUE_BOUND", 1)
    with Receiver(statuses=(500,)) as receiver:
        created = register(api_client, watched.raw, receiver.base_url, events=["startup.updated"])
        drain()
        for n in range(2):
            watched.edit(f"A{n}")
        drain()
    assert Delivery.objects.count() == 1  # the bound: the second event was not queued
    endpoint = Endpoint.objects.get(pk=created["id"])
    assert (endpoint.enabled, endpoint.disabled_reason) == (False, "queue full")
    assert [m.to for m in mail.outbox] == [[watched.key.account.email]]


def test_the_command_runs_one_round(api_client, watched):
    with Receiver() as receiver:
        register(api_client, watched.raw, receiver.base_url, events=["startup.updated"])
        call_command("deliver_webhooks")
        watched.edit("A2")
        call_command("deliver_webhooks")
    assert [json.loads(body)["type"] for _, body in receiver.received] == ["startup.updated"]


def test_secrets_rotate_with_the_encryption_keys_and_an_unreadable_one_disables(
    api_client, settings, watched
):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = [old]
    with Receiver() as receiver:
        endpoint = register(api_client, watched.raw, receiver.base_url, events=["startup.updated"])
        settings.PROVIDER_KEY_ENCRYPTION_KEYS = [new, old]
        call_command("rotate_webhook_secrets", stdout=StringIO())
        settings.PROVIDER_KEY_ENCRYPTION_KEYS = [new]
        drain()
        watched.edit("A2")
        drain()
        verified_events(receiver, endpoint["secret"])  # still signs with the same secret
        assert len(receiver.received) == 1
        settings.PROVIDER_KEY_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
        watched.edit("A3")
        drain()  # no exception: the endpoint is disabled, the round goes on
    assert len(receiver.received) == 1
    assert "unreadable" in Endpoint.objects.get(pk=endpoint["id"]).disabled_reason


def test_figures_going_stale_without_a_write_send_a_status_change(api_client, settings, watched):
    make_verification(watched.startup, verified_at=timezone.now())  # `ok`
    now = timezone.now()
    with Receiver() as receiver:
        wanted = ["verification.status_changed"]
        endpoint = register(api_client, watched.raw, receiver.base_url, events=wanted)
        drain(now=now)
        drain(now=now + timedelta(hours=settings.VERIFICATION_STALE_HOURS - 1))
        assert receiver.received == []
        later = timezone.now() + timedelta(hours=settings.VERIFICATION_STALE_HOURS + 1)
        drain(now=later)
        drain(now=later + timedelta(hours=1))  # once per aging
        hook = Webhook(endpoint["secret"])
        headers, body = receiver.received[0]
        # Signed at the driven clock: checked with the library's own signing.
        assert headers["webhook-signature"] == hook.sign(
            headers["webhook-id"], later, body.decode()
        )
    [event] = [json.loads(body) for _, body in receiver.received]
    assert event["type"] == "verification.status_changed"
    assert (event["data"]["previousStatus"], event["data"]["status"]) == ("ok", "stale")
    assert event["data"]["sequence"] is None


def test_old_finished_deliveries_are_pruned(api_client, watched):
    now = timezone.now()
    with Receiver() as receiver:
        register(api_client, watched.raw, receiver.base_url, events=["startup.updated"])
        drain(now=now)
        watched.edit("A2")
        drain(now=now)
    assert Delivery.objects.get().status == "delivered"
    drain(now=now + timedelta(days=34))
    assert Delivery.objects.count() == 1
    drain(now=now + timedelta(days=36))
    assert Delivery.objects.count() == 0


class _Dripping(Receiver):
    """Answers 200 at once, then drips its body a byte at a time."""

    def post(self, request) -> None:
        request.rfile.read(int(request.headers.get("Content-Length") or 0))
        self.received.append((dict(request.headers.items()), b""))
        answer(request, 200, {"Content-Length": "100000"}, Stream(self._drip))

    @staticmethod
    def _drip(out) -> None:
        for _ in range(100):
            out.write(b" ")
            out.flush()
            time.sleep(0.1)


def test_a_receiver_dripping_its_answer_is_not_waited_for(monkeypatch):
    monkeypatch.setattr("webhooks.transport.TIMEOUT_SECONDS", 0.5)
    started = time.monotonic()
    with _Dripping() as receiver:
        outcome = post(receiver.base_url, b"{}", {})
        took = time.monotonic() - started
    assert outcome.ok and took < 3
