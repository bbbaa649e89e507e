"""The OpenAPI 3.1 `webhooks` object: each event the sender (webhooks/events.py) can POST, with
its exact body, so generated clients get typed events and a consumer can validate one. Added by
a drf-spectacular postprocessing hook (settings.SPECTACULAR_SETTINGS); tests/webhooks/test_schema.py
checks every event the real sender builds against it."""

from typing import Any

from startups.changes import TOMBSTONES
from startups.freshness import STATUSES
from webhooks.transport import TIMEOUT_SECONDS

LIST_ITEM = "#/components/schemas/StartupList"
TAG = {
    "name": "Webhooks",
    "description": "Events POSTed to the endpoints registered under "
    "`/api/v1/webhooks/endpoints`, signed per the Standard Webhooks specification.",
}
HEADERS = {
    "webhook-id": "The event's id (`msg_...`): the same on every attempt; deduplicate on it.",
    "webhook-timestamp": "Unix seconds when this attempt was signed.",
    "webhook-signature": "`v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>` with the "
    "endpoint's secret (Standard Webhooks); verify before trusting the body.",
}


def _object(properties: dict, description: str = "") -> dict:
    schema = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    return {"description": description, **schema} if description else schema


def _nullable(kind: str, **more: Any) -> dict:
    return {"type": [kind, "null"], **more}


_SEQUENCE = {
    "type": "integer",
    "description": "The change sequence number this event comes from (the change feed's "
    "`sequence`).",
}
_SLUG = {"type": "string", "description": "The startup's slug."}
_STATUS = {
    "enum": [*STATUSES, None],
    "description": "Freshness of the verified figures; null when not verified.",
}
_MRR = _nullable("integer", minimum=0, description="MRR in whole US dollars; null when none.")

# Event type -> (summary, description, the `data` object's schema).
EVENTS: dict[str, tuple[str, str, dict]] = {
    "startup.created": (
        "A startup was published",
        "A new startup, as a list item of `GET /api/v1/startups`.",
        _object(
            {
                "sequence": _SEQUENCE,
                "slug": _SLUG,
                "fields": {"type": "array", "items": {"type": "string"}},
                "startup": {"$ref": LIST_ITEM},
            }
        ),
    ),
    "startup.updated": (
        "A startup changed",
        "`fields` names what changed (API names, e.g. `name`, `revenue.mrr`, `verification`); "
        "`startup` is the startup as it is now, as a list item.",
        _object(
            {
                "sequence": _SEQUENCE,
                "slug": _SLUG,
                "fields": {"type": "array", "items": {"type": "string"}},
                "startup": {"$ref": LIST_ITEM},
            }
        ),
    ),
    "startup.deleted": (
        "A startup was deleted or unpublished",
        "Drop it from your copy: `reason` says whether it was deleted or unpublished.",
        _object(
            {
                "sequence": _SEQUENCE,
                "slug": _SLUG,
                "reason": {"enum": [str(kind) for kind in TOMBSTONES]},
            }
        ),
    ),
    "verification.status_changed": (
        "The freshness of verified figures changed",
        "`ok`, `stale`, `key_revoked` or `error` (null: not verified). Figures that age past "
        "VERIFICATION_STALE_HOURS without any write send one with `sequence: null`.",
        _object(
            {
                "sequence": {**_SEQUENCE, "type": ["integer", "null"]},
                "slug": _SLUG,
                "previousStatus": _STATUS,
                "status": _STATUS,
            }
        ),
    ),
    "revenue.changed": (
        "MRR moved past the endpoint's threshold",
        "Sent when MRR moves by at least the endpoint's `revenueThresholdPercent` of the "
        "previous MRR, or from or to no MRR.",
        _object(
            {
                "sequence": _SEQUENCE,
                "slug": _SLUG,
                "previousMrr": _MRR,
                "mrr": _MRR,
                "currency": {"const": "USD"},
            }
        ),
    ),
    "attestation.issued": (
        "Verified figures were signed",
        "A compact JWS of the new verified figures (as `GET /api/v1/startups/{slug}/attestation`"
        "), verifiable with the key `kid` of `/.well-known/jwks.json`.",
        _object(
            {
                "sequence": _SEQUENCE,
                "slug": _SLUG,
                "attestation": {"type": "string", "description": "Compact JWS."},
                "kid": {"type": "string", "description": "The signing key's id (JWKS)."},
            }
        ),
    ),
}


def component_name(event_type: str) -> str:
    """`startup.status_changed` -> `WebhookStartupStatusChanged`."""
    words = event_type.replace(".", "_").split("_")
    return "Webhook" + "".join(word.capitalize() for word in words)


def event_schema(event_type: str) -> dict:
    """The whole body of one event type: `{type, timestamp, data}`."""
    return _object(
        {
            "type": {"const": event_type},
            "timestamp": {
                "type": "string",
                "format": "date-time",
                "description": "When the change happened (ISO 8601 UTC, milliseconds, `Z`).",
            },
            "data": EVENTS[event_type][2],
        },
        EVENTS[event_type][1],
    )


def document_webhooks(result: dict, **kwargs: Any) -> dict:
    """drf-spectacular postprocessing hook: the top-level `webhooks` object (OpenAPI 3.1)."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    webhooks = {}
    for event_type, (summary, description, _) in EVENTS.items():
        name = component_name(event_type)
        schemas[name] = event_schema(event_type)
        webhooks[event_type] = {
            "post": {
                "operationId": name[0].lower() + name[1:],
                "summary": summary,
                "description": description + " Signed per the Standard Webhooks specification "
                f"(README, Webhooks); answer 2xx within {TIMEOUT_SECONDS:g} seconds, or it is "
                "retried.",
                "tags": [TAG["name"]],
                "parameters": [
                    {
                        "name": header,
                        "in": "header",
                        "required": True,
                        "description": text,
                        "schema": {"type": "string"},
                    }
                    for header, text in HEADERS.items()
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": _ref(name)}}},
                },
                "responses": {
                    "2XX": {"description": "Received: not sent again."},
                    "default": {"description": "Not received: retried on the schedule."},
                },
            }
        }
    result["webhooks"] = webhooks
    tags = result.setdefault("tags", [])
    if TAG["name"] not in {tag["name"] for tag in tags}:
        tags.append(TAG)
    return result


def _ref(name: str) -> str:
    return f"#/components/schemas/{name}"
