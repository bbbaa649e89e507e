"""What the webhook tests share: registering an endpoint through the API, running the delivery
loop until nothing is due, reading what a receiver got with the `standardwebhooks` library, and
a watched startup whose founder's edits are the events, and the writes that make every kind of
event."""

from dataclasses import dataclass

from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from apikeys.models import ApiKey
from founders.services import startup_create, startup_update
from startups.models import Startup
from tests.support.admin import admin_form, operator_client
from tests.support.factories import PROFILE, bearer, make_account
from tests.support.verification_fakes import stripe_connected
from tests.support.webhook_receiver import Receiver
from verification.services import revenue_sync
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


def every_kind_of_write(client, fake_providers, *, created_mrr: int | None, renamed: str) -> None:
    """A founder creates "Acme" (MRR `created_mrr`) and renames it `renamed` (MRR 100), the fake
    Stripe verifies it, an operator (`client`, signed in) unpublishes it, the founder creates
    "Other" and the operator deletes it: the delivery loop is drained after each step."""
    operator_client(client)
    founder = make_account()
    startup = startup_create(owner=founder, profile=PROFILE, mrr=created_mrr)
    drain()
    startup_update(startup=startup, profile={**PROFILE, "name": renamed}, mrr=100)
    drain()
    connection = stripe_connected(fake_providers, slug=startup.slug)
    revenue_sync(connection=connection, now=timezone.now())
    drain()
    url = f"/admin/startups/startup/{startup.pk}/change/"
    unpublish = admin_form(name="Acme 2", slug=startup.slug, is_published=None)
    assert client.post(url, unpublish).status_code == 302
    other = startup_create(owner=founder, profile={**PROFILE, "name": "Other"}, mrr=5)
    drain()
    delete = client.post(f"/admin/startups/startup/{other.pk}/delete/", {"post": "yes"})
    assert delete.status_code == 302
    drain()


@dataclass(frozen=True)
class Watched:
    """An API key (a Free account's) and startup "A" of another founder, MRR $10."""

    key: ApiKey
    raw: str
    startup: Startup

    def edit(self, name: str) -> None:
        """The founder renames the startup: one `startup.updated` event."""
        startup_update(startup=self.startup, profile={"name": name}, mrr=10)
