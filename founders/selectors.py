"""Reads for the founders' pages: only ever the signed-in account's own startups."""

from django.db.models import Prefetch, QuerySet

from accounts.models import User
from founders.models import PendingChange, StartupClaim
from startups.models import Startup
from verification import crypto
from verification.models import ProviderConnection


def owned_startups(*, account: User) -> QuerySet[Startup]:
    """The account's startups, with what their dashboard rows show."""
    return (
        Startup.objects.filter(owner=account)
        .select_related("verification", "provider_connection", "reported")
        .prefetch_related(
            Prefetch(
                "pending_changes",
                queryset=PendingChange.objects.filter(status=PendingChange.Status.PENDING),
                to_attr="waiting",
            )
        )
        .order_by("name", "slug")
    )


def owned_startup(*, account: User, slug: str) -> Startup | None:
    """One of the account's startups by slug; None for anyone else's (or no such) startup."""
    if "\x00" in slug:
        return None
    return owned_startups(account=account).filter(slug=slug).first()


def edit_form_initial(startup: Startup) -> dict:
    """What the edit form shows: the profile and the founder's reported MRR, or the values
    still waiting for an operator's review (so saving again keeps them waiting)."""
    from founders.forms import StartupForm
    from founders.reviews import pending_of

    initial = {name: getattr(startup, name) for name in StartupForm.base_fields if name != "mrr"}
    reported = getattr(startup, "reported", None)
    initial["mrr"] = reported.mrr if reported else startup.mrr
    pending = pending_of(startup=startup)
    if identity := pending.get(PendingChange.Kind.IDENTITY):
        initial.update(name=identity.name, website=identity.website)
    if figure := pending.get(PendingChange.Kind.MRR):
        initial["mrr"] = figure.mrr
    return initial


def account_claims(*, account: User) -> QuerySet[StartupClaim]:
    """The account's claims that are not approved yet (approved ones are owned startups)."""
    return (
        StartupClaim.objects.filter(account=account)
        .exclude(status=StartupClaim.Status.APPROVED)
        .select_related("startup")
    )


def connection_of(startup: Startup) -> ProviderConnection | None:
    try:
        return startup.provider_connection
    except ProviderConnection.DoesNotExist:
        return None


def key_last_four(connection: ProviderConnection) -> str:
    """The stored key's last four characters, the only part of it ever shown again."""
    try:
        return crypto.decrypt_key(connection.encrypted_key)[-4:]
    except crypto.UnreadableKey:
        return "????"


def sync_problem(connection: ProviderConnection | None) -> str | None:
    """What went wrong with the last sync, in a founder's words; None when it worked."""
    if connection is None or connection.status == ProviderConnection.Status.OK:
        return None
    from verification.keycheck import GUIDES

    guide = GUIDES.get(connection.provider)
    name = guide.label if guide else connection.provider
    Status = ProviderConnection.Status
    if connection.status == Status.KEY_REVOKED:
        return (
            f"{name} refused the key: it was revoked, expired, or lacks the Read permissions. "
            "Connect again with a new key. Your last verified figures are kept meanwhile."
        )
    if connection.status == Status.STALE and not connection.last_error:
        # Just connected (connecting clears the error): the first sync is still running.
        return "The first sync has not finished yet. Reload this page in a minute."
    if connection.status == Status.STALE:
        return (
            f"We could not reach {name} on the last try (it may be having an outage). We try "
            "again automatically; your last verified figures are kept."
        )
    return (
        f"The last sync with {name} did not work, so the figures were not updated "
        f"({connection.last_error or 'no details'}). We try again automatically every hour; "
        "your last verified figures are kept."
    )
