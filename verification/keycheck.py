"""Before a founder's key is stored: what key each provider needs, its format rules, and one
cheap read-only call that proves the provider accepts it. Messages are for founders."""

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from verification.http import KeyRejected, ProviderError, ProviderHttp
from verification.providers import (
    CREDENTIAL_RULES,
    PROVIDERS,
    credential_problem,
    provider_named,
    whop,
)


@dataclass(frozen=True)
class KeyGuide:
    provider: str
    instructions: str
    # One inexpensive GET that needs the same read permission as the sync ("": the connector's
    # probe at connect makes the check, as the only call that proves the permission is not JSON).
    check_path: str
    check_params: dict
    # More query parameters taken from the credential (a JSON line's company id).
    credential_params: Callable[[str], dict] | None = None

    @property
    def label(self) -> str:
        """The provider's name as founders know it: its connector's title."""
        return provider_named(self.provider).title


GUIDES: dict[str, KeyGuide] = {
    "stripe": KeyGuide(
        "stripe",
        instructions=(
            "In the Stripe Dashboard (live mode), open Developers → API keys → Create restricted "
            "key. Give it Read access to Balance transactions, Subscriptions, Customers and "
            "Disputes, and Accounts (under Connect: it lets us read your own account's ID and "
            "business name) and nothing else, then paste the key (it starts with rk_live_). Do "
            "not paste your secret key (sk_live_): it can move money, and we never need that."
        ),
        check_path="/v1/balance_transactions",
        check_params={"limit": 1},
    ),
    "lemonsqueezy": KeyGuide(
        "lemonsqueezy",
        instructions=(
            "In Lemon Squeezy, open Settings → API and create an API key for your live store "
            "(not a test-mode key). We only read stores, subscriptions, orders and invoices."
        ),
        check_path="/v1/stores",
        check_params={"page[size]": 1},
    ),
    "polar": KeyGuide(
        "polar",
        instructions=(
            "In Polar, open Settings → Developers and create an organization access token with "
            "the read scopes metrics:read, customers:read, refunds:read and organizations:read "
            "only. Use your "
            "production organization, not the sandbox."
        ),
        check_path="/v1/metrics/limits",
        check_params={},
    ),
    "gumroad": KeyGuide(
        "gumroad",
        instructions=(
            "In Gumroad, open Settings → Advanced → Applications, create an application and "
            "generate an access token with the view_sales and view_profile scopes only."
        ),
        check_path="/v2/sales",
        check_params={},
    ),
    # Shown once the Paddle connector is installed (only supported providers are listed).
    "paddle": KeyGuide(
        "paddle",
        instructions=(
            "In Paddle (your live account, not the sandbox), open Developer tools → "
            "Authentication → API keys and create a key with only these read permissions: "
            "subscription.read, transaction.read, adjustment.read, discount.read, address.read "
            "and account.read (add metrics.read, optional, to show Paddle's own MRR beside ours)."
        ),
        check_path="/subscriptions",
        check_params={"per_page": 1},
    ),
    "dodo_payments": KeyGuide(
        "dodo_payments",
        instructions=(
            "In Dodo Payments, switch to Live mode, open Developer → API Keys → Add API Key, name "
            'it OpenStartup and leave the "Enable write access" box unticked (a read-only '
            "key), then paste it. We read payments, subscriptions, refunds and disputes only. "
            "A Test mode key is refused: test data never verifies."
        ),
        check_path="/payments",
        check_params={"page_size": 1, "page_number": 0},
    ),
    "revenuecat": KeyGuide(
        "revenuecat",
        instructions=(
            "In RevenueCat, open Project settings → API keys → + New secret API key, choose API "
            "version V2, and set only these permissions to Read only: Charts metrics "
            "(charts_metrics), Customer information (customer_information) and Project "
            "configuration (project_configuration); leave everything else on No access. Paste "
            "the key (it starts with sk_). If the key sees several projects, paste one line: "
            '{"api_key": "sk_...", "project_id": "proj..."}. Never paste a public app key '
            "(appl_, goog_, amzn_...): it is not secret and cannot read metrics."
        ),
        check_path="/v2/projects",
        check_params={"limit": 1},
    ),
    "whop": KeyGuide(
        "whop",
        instructions=(
            "In your Whop dashboard, open Developer → Company API keys → Create, name it "
            "OpenStartup and tick only these read permissions: payment:basic:read, "
            "member:basic:read (memberships) and plan:basic:read; leave every write and "
            "manage permission unticked. Paste the key, or one line with your company id "
            '(Settings, it starts with biz_): {"api_key": "...", "company_id": "biz_..."}.'
        ),
        check_path="/api/v1/payments",
        check_params={"first": 1},
        credential_params=whop.company_params_of,
    ),
    "app_store_connect": KeyGuide(
        "app_store_connect",
        instructions=(
            "In App Store Connect, open Users and Access → Integrations → App Store Connect API "
            "→ Team Keys and generate a key with the Sales role only (Finance also works; never "
            "Admin or App Manager). Download the .p8 file (Apple shows it once) and note the Key "
            "ID and the Issuer ID; your vendor number is under Payments and Financial Reports. "
            'Paste one line: {"key_id": "…", "issuer_id": "…", "private_key": "-----BEGIN '
            'PRIVATE KEY-----…-----END PRIVATE KEY-----", "vendor_number": "8…"}. The key '
            "signs short-lived tokens; we only download sales and subscription reports."
        ),
        check_path="",  # the probe downloads one daily sales report instead
        check_params={},
    ),
}


def supported_guides() -> dict[str, KeyGuide]:
    """The instructions of every provider this service can connect, in the connectors' order."""
    return {name: GUIDES[name] for name in PROVIDERS if name in GUIDES}


class KeyRefused(Exception):
    """The key cannot verify revenue; the message tells the founder why and what to do."""


def provider_choices() -> list[tuple[str, str]]:
    """(name, label) of every real provider a founder can connect: those with instructions. The
    `demo` provider invents its figures and is for the demo seed only, never a founder's."""
    return [(name, guide.label) for name, guide in supported_guides().items()]


def provider_api_base(provider: str) -> str | None:
    """The host configured in PROVIDER_API_BASES for this provider (fakes, staging), or None
    for the provider's own API."""
    return (settings.PROVIDER_API_BASES or {}).get(provider) or None


def key_format_problem(*, provider: str, raw: str) -> str | None:
    """Why this key can never be used for verification, judged from its text alone."""
    raw = raw.strip()
    if not raw:
        return "Paste the key."
    if provider in CREDENTIAL_RULES:
        return credential_problem(provider, raw)
    if not raw.isascii() or not raw.isprintable() or any(c.isspace() for c in raw):
        return "A key is one line of letters, digits and symbols: paste only the key."
    if provider == "stripe":
        if raw.startswith(("sk_test_", "rk_test_", "pk_test_")):
            return (
                "This is a test-mode key. Verification needs your real (live-mode) data: "
                "create a restricted key in live mode (it starts with rk_live_)."
            )
        if raw.startswith("sk_live_"):
            return (
                "This is your full secret key, which can move money and change your account. "
                "Create a restricted key with Read access only (it starts with rk_live_)."
            )
        if raw.startswith("pk_"):
            return "This is a publishable key. Create a restricted key (rk_live_…) instead."
        if not raw.startswith("rk_live_"):
            return "A Stripe restricted key starts with rk_live_; this key does not."
    return None


def key_check(*, provider: str, raw: str) -> None:
    """Refuse a key with KeyRefused unless the provider answers one read-only call with it."""
    connector = provider_named(provider)
    if problem := key_format_problem(provider=provider, raw=raw):
        raise KeyRefused(problem)
    raw = raw.strip()
    guide = GUIDES.get(provider)
    if guide is None or not guide.check_path:
        return
    base = provider_api_base(provider) or connector.default_api_base
    try:
        with ProviderHttp(
            base_url=base, headers=connector.auth_headers(raw), secret=raw, sleep=lambda s: None
        ) as http:
            http.retries = 0  # one call: the founder is waiting
            params = dict(guide.check_params)
            if guide.credential_params:
                params |= guide.credential_params(raw)
            http.get(guide.check_path, params=params or None)
    except KeyRejected:
        raise KeyRefused(
            f"{guide.label} refused this key: it may be revoked, mistyped, or missing the read "
            "permissions listed above."
        ) from None
    except ProviderError:
        raise KeyRefused(
            f"We could not reach {guide.label} to check the key just now. Nothing was saved; "
            "please try again in a few minutes."
        ) from None
