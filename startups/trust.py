"""What a visitor is told about a startup's figures on every list and page: a badge (verified
by which provider, self-reported, or demo), the freshness status when it is not `ok`, and the
founders shown (the same on the list and the profile)."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from startups.freshness import OK, status_of
from startups.models import Startup
from startups.profilerow import FounderRow

DEMO = "demo"

# The providers' names as people know them, by provider name: verification knows its providers
# and registers them here from its apps.py (the dataset sits below verification).
PROVIDER_TITLES: dict[str, str] = {}


def provider_titles_register(titles: Mapping[str, str]) -> None:
    """Add providers' display titles (called by VerificationConfig.ready)."""
    PROVIDER_TITLES.update(titles)


STATUS_LABELS = {"stale": "Stale", "key_revoked": "Key revoked", "error": "Sync failing"}
# `revenue.source` on every API surface, by Trust.kind.
SOURCES = {"verified": "verified", "self": "self_reported", "demo": "demo"}
SOURCE_HELP = (
    "Where the figures come from: `verified` (synced from the startup's payment provider), "
    "`self_reported` (typed by the founder, or from public sources for an unclaimed startup) "
    "or `demo` (the invented demo dataset; never real revenue). Always present."
)


@dataclass(frozen=True)
class Trust:
    provider: str | None = None  # None: self-reported
    status: str | None = None  # ok, stale, key_revoked, error; None when self-reported
    synced_at: datetime | str | None = None

    @property
    def kind(self) -> str:
        """`verified`, `demo` (the invented demo dataset) or `self` (self-reported)."""
        if self.provider is None:
            return "self"
        return "demo" if self.provider == DEMO else "verified"

    @property
    def label(self) -> str:
        if self.kind == "self":
            return "Self-reported"
        if self.kind == "demo":
            return "Demo data"
        return f"Verified · {self.provider_title}"

    @property
    def provider_title(self) -> str:
        """The provider's name as people know it ("Lemon Squeezy")."""
        name = self.provider or ""
        return PROVIDER_TITLES[name] if name in PROVIDER_TITLES else name.capitalize()

    @property
    def status_label(self) -> str:
        """Empty while the figures are fresh (or self-reported)."""
        return "" if self.status in (None, OK) else STATUS_LABELS[self.status]


def revenue_source(provider: str | None) -> str:
    """The API's `revenue.source` for a verification's provider (None: no verification)."""
    return SOURCES[Trust(provider).kind]


def trust_of(startup: Startup) -> Trust:
    """From a startup whose `verification` and `provider_connection` are loaded (or loadable)."""
    verification = getattr(startup, "verification", None)
    if verification is None:
        return Trust()
    connection = getattr(startup, "provider_connection", None)
    status = status_of(verification.verified_at, connection and connection.status)
    return Trust(verification.provider, status, verification.verified_at)


def trust_by_id(ids: list[int]) -> dict[int, Trust]:
    """The badges of a page of rows, in one query."""
    rows = Startup.objects.filter(id__in=ids).values_list(
        "id", "verification__provider", "verification__verified_at", "provider_connection__status"
    )
    found = {}
    for startup_id, provider, verified_at, connection_status in rows:
        if provider is None:
            found[startup_id] = Trust()
        else:
            found[startup_id] = Trust(
                provider, status_of(verified_at, connection_status), verified_at
            )
    return found


def shown_founders(founders: list[FounderRow], founder_name: str | None) -> list[FounderRow]:
    """The founders a profile lists: its founder rows, or else the one founder name the list
    shows (a founder who typed only a name), so list and profile never disagree."""
    if not founders and founder_name:
        return [{"name": founder_name, "title": None, "twitter": None, "linkedin": None}]
    return founders
