"""Registering webhook endpoints: the rules every entry point (API, dashboard) goes through."""

import base64
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from accounts.models import User
from verification.crypto import UnreadableKey, encrypt_key, reencrypt_key
from webhooks.limits import ENDPOINTS, EVENT_TYPES
from webhooks.models import Endpoint
from webhooks.transport import literal_refused

MAX_FILTER_ENTRIES = 100


class EndpointRefused(ValueError):
    """Why an endpoint cannot be registered or changed (a 400 with this message)."""


class EndpointLimit(EndpointRefused):
    """The plan's number of endpoints is reached (a 403)."""


@dataclass(frozen=True)
class CreatedEndpoint:
    endpoint: Endpoint
    secret: str  # shown once


def _secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def endpoint_url_check(url: str) -> str:
    """The URL as stored, or EndpointRefused: https (http only in development), a host, no
    credentials, and not an address deliveries would refuse."""
    url = url.strip()
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise EndpointRefused("`url` must not contain spaces or control characters.")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise EndpointRefused("`url` is not a valid URL.") from None
    allowed = ("https", "http") if settings.WEBHOOKS_ALLOW_HTTP else ("https",)
    if parts.scheme not in allowed:
        raise EndpointRefused("`url` must start with https://.")
    if not parts.hostname or parts.username or parts.password:
        raise EndpointRefused("`url` needs a host and no user name or password.")
    if literal_refused(parts.hostname):
        raise EndpointRefused(
            "`url` points at a loopback, private or reserved address: webhooks go to public "
            "addresses only."
        )
    return url


def _strings(value: list, name: str) -> list[str]:
    if len(value) > MAX_FILTER_ENTRIES:
        raise EndpointRefused(f"`{name}` holds at most {MAX_FILTER_ENTRIES} entries.")
    return sorted({item.strip() for item in value if item.strip()})


def endpoint_fields(data: dict) -> dict:
    """Validated model fields from API names already typed by the serializer."""
    fields = {}
    if "url" in data:
        fields["url"] = endpoint_url_check(data["url"])
    if "events" in data:
        unknown = sorted(set(data["events"]) - set(EVENT_TYPES))
        if unknown:
            raise EndpointRefused(f"Unknown event type {unknown[0]!r}: one of {EVENT_TYPES}.")
        fields["events"] = sorted(set(data["events"])) or list(EVENT_TYPES)
    for name in ("slugs", "categories"):
        if name in data:
            fields[name] = _strings(data[name], name)
    for name in ("verified_only", "revenue_threshold_percent", "description", "enabled"):
        if name in data:
            fields[name] = data[name]
    return fields


def endpoint_create(*, account: User, plan_name: str, data: dict) -> CreatedEndpoint:
    fields = endpoint_fields(data)
    if "url" not in fields:
        raise EndpointRefused("`url` is required.")
    fields.setdefault("events", list(EVENT_TYPES))
    fields.pop("enabled", None)
    secret = _secret()
    with transaction.atomic():
        # Lock the account row so two requests at once cannot pass the limit together.
        User.objects.select_for_update().filter(pk=account.pk).first()
        if Endpoint.objects.filter(account_id=account.pk).count() >= ENDPOINTS[plan_name]:
            raise EndpointLimit(
                f"The {plan_name} plan allows {ENDPOINTS[plan_name]} webhook endpoints; delete "
                "one first" + (" or upgrade to Pro." if plan_name == "Free" else ".")
            )
        endpoint = Endpoint.objects.create(
            account_id=account.pk, secret=encrypt_key(secret), **fields
        )
    return CreatedEndpoint(endpoint=endpoint, secret=secret)


def endpoint_update(*, endpoint: Endpoint, data: dict) -> Endpoint:
    fields = endpoint_fields(data)
    if fields.get("enabled"):
        fields["disabled_reason"] = ""
    for name, value in fields.items():
        setattr(endpoint, name, value)
    endpoint.save()
    return endpoint


def endpoint_delete(*, endpoint: Endpoint) -> None:
    endpoint.delete()


def endpoint_secrets_rotate() -> int:
    """Re-encrypt every signing secret under the current first key; returns how many. A secret
    no configured key decrypts is left as it is (its endpoint is disabled at its next delivery)."""
    rotated = 0
    for endpoint in Endpoint.objects.only("pk", "secret").iterator():
        try:
            token = reencrypt_key(endpoint.secret)
        except UnreadableKey:
            continue
        Endpoint.objects.filter(pk=endpoint.pk).update(secret=token)
        rotated += 1
    return rotated
