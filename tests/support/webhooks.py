"""What the webhook tests share: registering an endpoint through the API, running the delivery
loop until nothing is due, reading what a receiver got with the `standardwebhooks` library, and
a watched startup whose founder's edits are the events."""

from dataclasses import dataclass

from standardwebhooks.webhooks import Webhook

from apikeys.models import ApiKey
from founders.services import startup_update
from startups.models import Startup
from tests.support.factories import bearer
from tests.support.webhook_receiver import Receiver
from webhooks.delivery import webhooks_run_once

ENDPOINTS = "/api/v1/webhooks/endpoints"


def register(client, raw_key: str, url: str, **fields) -> dict:
    """Register an endpoint through the API; it must be created (201)."""
    response = client.post(ENDPOINTS, {"url": url, **fields}, format="json", **bearer(raw_key))
    assert response.status_code == 201, response.content
    return response.json()["data"]


def drain(now=None, rounds: int = 50) -> None:
    """Run the delivery loop until nothing is due (one event per endpoint per round)."""
    for _ in range(rounds):
        if not webhooks_run_once(now=now):
            return


def verified_events(receiver: Receiver, secret: str) -> list[dict]:
    """Every body the receiver got, each checked with the standardwebhooks library."""
    hook = Webhook(secret)
    events = []
    for headers, body in receiver.received:
        events.append(hook.verify(body, headers))
        assert headers["webhook-id"].startswith("msg_")
    return events


@dataclass(frozen=True)
class Watched:
    """An API key (a Free account's) and startup "A" of another founder, MRR $10."""

    key: ApiKey
    raw: str
    startup: Startup

    def edit(self, name: str) -> None:
        """The founder renames the startup: one `startup.updated` event."""
        startup_update(startup=self.startup, profile={"name": name}, mrr=10)
