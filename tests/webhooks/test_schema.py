"""The OpenAPI document's `webhooks` object describes every event the sender can
emit (each one built and POSTed by the real sender, checked against its documented schema),
and `GET /api/v1/webhooks/endpoints/{id}/deliveries` lists an endpoint's recent deliveries to
its owner only."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from jsonschema import Draft202012Validator
from standardwebhooks.webhooks import Webhook

from quota.models import MonthlyUsage
from startups.changes import CREATED, startup_change_record
from startups.models import Startup
from tests.support.contract import openapi_document
from tests.support.factories import (
    bearer,
    make_api_key,
    make_startup,
    make_verification,
)
from tests.support.webhook_receiver import Receiver
from tests.support.webhooks import ENDPOINTS, drain, every_kind_of_write, register
from webhooks.limits import EVENT_TYPES, RETRY_DELAYS
from webhooks.schema import component_name

pytestmark = pytest.mark.django_db


def documented(event_type: str) -> Draft202012Validator:
    """A validator for the body the document's `webhooks` object gives `event_type`."""
    document = openapi_document()
    operation = document["webhooks"][event_type]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": f"#/components/schemas/{component_name(event_type)}"}
    root = {**schema, "components": document["components"]}
    return Draft202012Validator(root, format_checker=Draft202012Validator.FORMAT_CHECKER)


def test_the_document_describes_every_event_type_and_its_signature_headers():
    document = openapi_document()
    assert document["openapi"].startswith("3.1")
    assert set(document["webhooks"]) == set(EVENT_TYPES)
    for item in document["webhooks"].values():
        headers = {p["name"] for p in item["post"]["parameters"] if p["in"] == "header"}
        assert headers == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    Draft202012Validator.check_schema(documented("startup.created").schema)


def test_every_event_the_sender_emits_validates_against_its_documented_schema(
    api_client, client, fake_providers, settings
):
    _, raw = make_api_key()
    with Receiver() as receiver:
        endpoint = register(
            api_client, raw, receiver.base_url + "/hooks", revenueThresholdPercent=0
        )
        drain()
        every_kind_of_write(client, fake_providers, created_mrr=None, renamed="Acme <2>")
        # Figures that age without a write: a status change with no sequence number.
        aging = make_startup("Aging", slug="aging", mrr=10)
        make_verification(aging, verified_at=timezone.now())
        startup_change_record(startup=aging, kind=CREATED)
        drain()
        drain(now=timezone.now() + timedelta(hours=settings.VERIFICATION_STALE_HOURS + 1))
        # The aging event is signed at the driven (future) clock: read as sent, unverified.
        events = [json.loads(body) for _, body in receiver.received]
    hook = Webhook(endpoint["secret"])
    for headers, body in receiver.received[:-1]:
        hook.verify(body, headers)
    assert {event["type"] for event in events} == set(EVENT_TYPES)
    for event in events:
        errors = [error.message for error in documented(event["type"]).iter_errors(event)]
        assert errors == [], (event, errors)
    assert any(e["data"]["sequence"] is None for e in events)  # the aging one


def test_a_body_the_sender_never_builds_does_not_validate():
    validator = documented("startup.deleted")
    good = {
        "type": "startup.deleted",
        "timestamp": "2026-11-01T00:00:00.000Z",
        "data": {"sequence": 3, "slug": "acme", "reason": "deleted"},
    }
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "type": "startup.updated"})
    assert not validator.is_valid({**good, "data": {**good["data"], "reason": "gone"}})
    assert not validator.is_valid({**good, "data": {**good["data"], "extra": 1}})


def test_the_owner_lists_an_endpoints_deliveries_others_get_404_no_allowance_spent(
    api_client, watched
):
    now = timezone.now()
    with Receiver(statuses=(500, 200)) as receiver:
        endpoint = register(api_client, watched.raw, receiver.base_url, events=["startup.updated"])
        deliveries = f"{ENDPOINTS}/{endpoint['id']}/deliveries"
        assert api_client.get(deliveries, **bearer(watched.raw)).json() == {"data": []}
        drain(now=now)
        watched.edit("A2")
        drain(now=now)
        response = api_client.get(deliveries, **bearer(watched.raw))
        assert response.status_code == 200
        [pending] = response.json()["data"]
        assert pending["eventType"] == "startup.updated"
        assert pending["eventId"] == receiver.received[0][0]["webhook-id"]
        assert (pending["status"], pending["attempts"], pending["lastStatusCode"]) == (
            "pending",
            1,
            500,
        )
        next_at = now + RETRY_DELAYS[0]
        assert pending["nextAttemptAt"] == next_at.strftime("%Y-%m-%dT%H:%M:%S.") + (
            f"{next_at.microsecond // 1000:03d}Z"
        )
        drain(now=now + RETRY_DELAYS[0])
    [done] = api_client.get(f"{deliveries}/", **bearer(watched.raw)).json()["data"]
    assert (done["status"], done["attempts"], done["lastStatusCode"]) == ("delivered", 2, 200)
    assert done["nextAttemptAt"] is None and done["lastError"] is None

    _, stranger = make_api_key()
    for path in (deliveries, f"{ENDPOINTS}/999999/deliveries", f"{ENDPOINTS}/x%00/deliveries"):
        response = api_client.get(path, **bearer(stranger))
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "not_found"
    assert api_client.get(deliveries).status_code == 401
    assert api_client.head(deliveries, **bearer(watched.raw)).status_code == 200
    assert api_client.options(deliveries, **bearer(watched.raw)).status_code == 204
    assert not MonthlyUsage.objects.filter(account=watched.key.account).exclude(used=0).exists()
    assert Startup.objects.count() == 1
