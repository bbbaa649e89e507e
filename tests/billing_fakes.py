"""A local fake of the two Stripe endpoints the billing app calls through the official SDK
(Checkout Sessions and Customer Portal sessions), and Stripe's webhook signature scheme."""

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


class FakeStripe:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.fail_with: int | None = None

    def __enter__(self) -> "FakeStripe":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                fake.requests.append((self.path, self.headers.get("Authorization", ""), form))
                if fake.fail_with:
                    self.answer(fake.fail_with, {"error": {"message": "down", "type": "api_error"}})
                elif self.path == "/v1/checkout/sessions":
                    self.answer(
                        200,
                        {
                            "id": "cs_test_1",
                            "object": "checkout.session",
                            "mode": "subscription",
                            "url": "https://checkout.stripe.test/c/pay/cs_test_1",
                        },
                    )
                elif self.path == "/v1/billing_portal/sessions":
                    self.answer(
                        200,
                        {
                            "id": "bps_1",
                            "object": "billing_portal.session",
                            "url": "https://billing.stripe.test/p/session/bps_1",
                        },
                    )
                else:
                    self.answer(404, {"error": {"message": "no route", "type": "invalid_request"}})

            def answer(self, status: int, body: dict) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


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
