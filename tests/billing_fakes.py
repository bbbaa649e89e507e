"""A local fake of the two Stripe endpoints the billing app calls through the official SDK
(Checkout Sessions and Customer Portal sessions) on the shared local server
(tests/fake_server.py), and Stripe's webhook signature scheme."""

import hashlib
import hmac
import json
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs

from tests.fake_server import FakeServer, answer


class FakeStripe(FakeServer):
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.fail_with: int | None = None

    def post(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        form = parse_qs(request.rfile.read(length).decode())
        self.requests.append((request.path, request.headers.get("Authorization", ""), form))
        if self.fail_with:
            body = {"error": {"message": "down", "type": "api_error"}}
            answer(request, self.fail_with, {}, body)
        elif request.path == "/v1/checkout/sessions":
            body = {
                "id": "cs_test_1",
                "object": "checkout.session",
                "mode": "subscription",
                "url": "https://checkout.stripe.test/c/pay/cs_test_1",
            }
            answer(request, 200, {}, body)
        elif request.path == "/v1/billing_portal/sessions":
            body = {
                "id": "bps_1",
                "object": "billing_portal.session",
                "url": "https://billing.stripe.test/p/session/bps_1",
            }
            answer(request, 200, {}, body)
        else:
            answer(request, 404, {}, {"error": {"message": "no route", "type": "invalid_request"}})


def signature(payload: str, *, secret: str, at: int | None = None) -> str:
    """The Stripe-Signature header Stripe would send for `payload`."""
    at = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{at}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


def event(event_id: str, kind: str, obj: dict, *, created: int) -> str:
    return json.dumps(
        {
            "id": event_id,
            "object": "event",
            "type": kind,
            "created": created,
            "livemode": False,
            "data": {"object": obj},
        }
    )
