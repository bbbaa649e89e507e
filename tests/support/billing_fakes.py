"""A local fake of the Stripe endpoints the billing app calls through the official SDK
(Checkout Sessions, Customer Portal sessions, and cancelling a subscription) on the shared local
server (tests/support/fake_server.py), and Stripe's webhook signature scheme."""

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from tests.support.fake_server import FakeServer, answer

SECRET = "whsec_test_secret"  # noqa: S105 - the tests' own webhook secret
WEBHOOK = "/billing/stripe/webhook"


class FakeStripe(FakeServer):
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.fail_with: int | None = None
        # Subscriptions Stripe knows, by id (a DELETE of any other answers 404 resource_missing).
        self.subscriptions: dict[str, dict] = {}
        self.cancelled: list[str] = []

    def delete(self, request: BaseHTTPRequestHandler) -> None:
        """DELETE /v1/subscriptions/{id}: cancel at once; the subscription object answers, as in
        Stripe's API reference ("Cancel a subscription")."""
        url = urlsplit(request.path)
        self.requests.append(
            (f"DELETE {url.path}", request.headers.get("Authorization", ""), parse_qs(url.query))
        )
        subscription_id = url.path.removeprefix("/v1/subscriptions/")
        if self.fail_with:
            answer(request, self.fail_with, {}, {"error": {"message": "down", "type": "api_error"}})
        elif not url.path.startswith("/v1/subscriptions/"):
            answer(request, 404, {}, {"error": {"message": "no route", "type": "invalid_request"}})
        elif subscription_id not in self.subscriptions:
            body = {
                "error": {
                    "code": "resource_missing",
                    "doc_url": "https://stripe.com/docs/error-codes/resource-missing",
                    "message": f"No such subscription: '{subscription_id}'",
                    "param": "id",
                    "type": "invalid_request_error",
                }
            }
            answer(request, 404, {}, body)
        else:
            now = int(time.time())
            subscription = self.subscriptions[subscription_id]
            subscription.update(
                status="canceled",
                canceled_at=now,
                ended_at=now,
                cancel_at_period_end=False,
                cancellation_details={
                    "comment": None,
                    "feedback": None,
                    "reason": "cancellation_requested",
                },
            )
            self.cancelled.append(subscription_id)
            answer(request, 200, {}, {"object": "subscription", "livemode": False, **subscription})

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


@contextmanager
def operator_stripe(settings) -> Iterator[FakeStripe]:
    """The operator's Stripe billing (Pro at `price_pro`, webhooks signed with SECRET) served
    by a local FakeStripe."""
    settings.STRIPE_SECRET_KEY = "sk_test_operator"
    settings.STRIPE_PRO_PRICE_ID = "price_pro"
    settings.STRIPE_WEBHOOK_SECRET = SECRET
    with FakeStripe() as fake:
        settings.STRIPE_API_BASE = fake.base_url
        yield fake


def subscription(
    account, status: str, *, ends_in: int = 30 * 86400, price: str = "price_pro"
) -> dict:
    """A Stripe subscription object (API 2025+: the period end is on its items)."""
    return {
        "id": "sub_pro_1",
        "object": "subscription",
        "customer": "cus_1",
        "status": status,
        "metadata": {"account_id": str(account.pk)},
        "items": {
            "object": "list",
            "data": [
                {
                    "id": "si_1",
                    "object": "subscription_item",
                    "price": {"id": price, "object": "price", "product": "prod_1"},
                    "quantity": 1,
                    "current_period_end": int(time.time()) + ends_in,
                }
            ],
        },
    }
