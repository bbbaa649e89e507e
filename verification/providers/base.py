"""The one small interface every connector implements: fetch raw data, then compute figures.

`fetch(http=..., now=...)` does all the HTTP (paginating to the end) and returns plain data;
`compute(raw=..., now=...)` is pure arithmetic on it, in minor units per currency.
Optionally, `identify(http=...)` names the provider account a key reads (AccountIdentity), so that
one provider account verifies one startup; without it (the default) the identity is unknown and
nothing is refused (`Provider.account_identity`).
"""

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from core.formats import month_start
from startups.models import Credential
from verification.http import Pages, ProviderError, ProviderHttp
from verification.money import Money, money_add

LAST_DAYS = 30
# Months per billing interval, to normalise every price to one month.
PER_MONTH = {
    "day": Decimal(365) / 12,
    "week": Decimal(52) / 12,
    "month": Decimal(1),
    "year": Decimal(1) / 12,
}


@dataclass
class MonthFigures:
    gross: Money = field(default_factory=dict)
    refunds: Money = field(default_factory=dict)


# `ProviderReported.period`: MRR only, at the sync; or revenue over the 30 days before the sync
# (and MRR, if given, at the sync).
CURRENT = "current"
LAST_30_DAYS = "last_30_days"


@dataclass(frozen=True)
class ProviderReported:
    """The provider's own figure, as its API publishes it (its definition, not ours), shown
    beside ours with the difference. `definition` says what it is, in words."""

    definition: str
    period: str
    mrr: Money | None = None
    revenue: Money | None = None


@dataclass
class ProviderFigures:
    """What a connector found, before conversion; `mrr` None means no subscription data.
    `provider_reported`: the provider's own figure where its API publishes one, else None."""

    mrr: Money | None
    monthly: dict[date, MonthFigures]
    last_30_days: Money
    customers: int
    provider_reported: ProviderReported | None = None


class TestModeData(ProviderError):
    """Test-mode or sandbox data: never real revenue, never verified."""

    __test__ = False  # not a pytest test class


@dataclass(frozen=True)
class AccountIdentity:
    """Which account at the provider a key reads: its stable id, and the business name and
    domain the provider itself holds for it (None where it gives none)."""

    id: str
    name: str | None = None
    domain: str | None = None


def account_identity(account_id: object, *, name: object = None, url: object = None):
    """An AccountIdentity from a provider's answer, checked: a missing id stops the connect
    (ProviderError), a name is trimmed to 300 characters, `url` becomes its host."""
    from core.domains import host_of

    if account_id in (None, "") or isinstance(account_id, dict | list | bool):
        raise ProviderError("the provider did not say which account this key belongs to")
    text = str(name).strip()[:300] if isinstance(name, str) and name.strip() else None
    host = host_of(url) if isinstance(url, str) else None
    return AccountIdentity(
        id=str(account_id)[:200], name=text, domain=host.removeprefix("www.") if host else None
    )


# --- credentials pasted as the key alone or as one line of JSON (RevenueCat, Whop) ---------

KEY_TEXT = "A key is one line of letters, digits and symbols: paste only the key."


def key_or_json(raw: str, *, field: str, bad_json: str, no_key: str) -> tuple[str, Any]:
    """A credential pasted as the key alone, or as one line of JSON `{"api_key", field}`:
    (the key, stripped; the JSON's `field` as sent, None when absent or the key came alone).
    Raises ValueError with `bad_json` (not JSON) or `no_key` (no `api_key` text): each
    connector's message says what its JSON looks like. The connector judges `field`."""
    raw = raw.strip()
    if not raw.startswith("{"):
        return raw, None
    try:
        parsed = json.loads(raw)
    except ValueError:
        raise ValueError(bad_json) from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("api_key"), str):
        raise ValueError(no_key)
    return parsed["api_key"].strip(), parsed.get(field)


def key_text_check(key: str) -> None:
    """Refuse (ValueError) a key that cannot be one: empty, several lines, spaces, non-ASCII."""
    if not key or not key.isascii() or not key.isprintable() or any(c.isspace() for c in key):
        raise ValueError(KEY_TEXT)


@dataclass(frozen=True)
class Provider:
    name: str
    default_api_base: str
    auth_headers: Callable[[str], dict[str, str]]
    fetch: Callable[..., Any]
    compute: Callable[..., ProviderFigures]
    # How founders and the docs name it, and which key to create (shown at connect time).
    title: str = ""
    key_hint: str = ""
    # False where the provider cannot issue a read-only key: connect instructions say so.
    read_only_key: bool = True
    # Keys that are test-mode keys by their prefix, and the provider's sandbox hosts: refused.
    test_key_prefixes: tuple[str, ...] = ()
    sandbox_hosts: tuple[str, ...] = ()
    # probe(http=...) looks at a sample of the account's data at connect time and raises
    # TestModeData for test-mode data; for providers whose keys do not tell.
    probe: Callable[..., None] | None = None
    # identify(http=...) asks the provider which account the key reads (one documented GET,
    # e.g. Stripe's /v1/account) and returns an AccountIdentity; see `account_identity`.
    identify: Callable[..., AccountIdentity] | None = None

    def account_identity(self, *, http: ProviderHttp) -> AccountIdentity | None:
        """The provider account a key reads, recorded at connect so that one provider account
        verifies one startup (unless an operator allows it to be shared). A connector without
        `identify` (the default, e.g. one added later) answers None: the identity is unknown,
        nothing is refused and the profile shows no provider business name."""
        return None if self.identify is None else self.identify(http=http)

    # The kind of key (`verification.credential`) judged from the raw key at connect; None: the
    # default of `credential()`, so a connector that says nothing still works.
    credential_of: Callable[[str], str] | None = None

    def credential(self, raw_key: str) -> str:
        """`restricted_read`, `read_only`, `full_access` or `metrics_token`: the connector's
        own judgement, else `read_only` or, without a read-only key, `full_access`."""
        if self.credential_of is not None:
            return self.credential_of(raw_key)
        return Credential.READ_ONLY if self.read_only_key else Credential.FULL_ACCESS


@dataclass(frozen=True)
class Tier:
    """One tier of a tiered price: up to `up_to` units (None: no limit), `unit` per unit and a
    `flat` amount, in minor units."""

    up_to: int | None
    unit: Decimal
    flat: Decimal


def tiered_amount(mode: str, tiers: list[Tier], quantity: int) -> Decimal:
    """What a tiered price bills for `quantity`, per billing interval (Stripe and Lemon Squeezy).

    volume: the whole quantity at the tier it falls in (that tier's flat + unit x quantity).
    graduated: each tier's slice of the quantity at that tier's unit amount, plus the flat amount
    of every tier the quantity reaches.
    """
    if quantity <= 0:
        return Decimal(0)
    if mode == "volume":
        for tier in tiers:
            if tier.up_to is None or quantity <= tier.up_to:
                return tier.flat + tier.unit * quantity
        return Decimal(0)
    amount, below = Decimal(0), 0
    for tier in tiers:
        top = quantity if tier.up_to is None else min(quantity, tier.up_to)
        if top <= below:
            break
        amount += tier.unit * (top - below) + tier.flat
        below = top
    return amount


def refuse_test_mode(provider: str, what: str) -> None:
    raise TestModeData(
        f"{provider} sent test-mode data ({what}): test data is not real revenue and is never "
        "verified. Connect a live-mode key."
    )


def bearer_headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def pages_after_last_id(
    http: ProviderHttp,
    path: str,
    params: list[tuple[str, Any]],
    *,
    cursor: str,
    has_more: Callable[[dict], bool],
) -> Iterator[dict]:
    """Every object of a list that pages with `<cursor>=<id of the last object>` while
    `has_more(page)` (Stripe's `starting_after`, Paddle's `after`)."""
    after, pages = None, Pages(http, path)
    while True:
        page = http.get(path, params=[*params, (cursor, after)] if after else params)
        data = page.get("data") or []
        yield from data
        if not has_more(page) or not data:
            return
        after = data[-1]["id"]
        pages.advance(after)


def numbered_pages(
    http: ProviderHttp,
    path: str,
    params: Callable[[int], dict[str, Any]],
    *,
    items: str,
    last_page: Callable[[dict], int | None],
    stop_when_empty: bool,
) -> Iterator[dict]:
    """Every item of a list paged by number, from `params(1)` to `last_page(page)` (no last
    page given: the first is the last); with `stop_when_empty`, an empty page ends it too."""
    number, pages = 1, Pages(http, path)
    while True:
        page = http.get(path, params=params(number))
        yield from page.get(items) or []
        if number >= int(last_page(page) or number) or (stop_when_empty and not page.get(items)):
            return
        number += 1
        pages.advance(number)


def known_mrr(mrr: Money, subscriptions: list) -> Money | None:
    """`mrr`, or None (unknown) when the account has no subscription of any status: then there
    is no subscription data, which is not the same as an MRR of zero."""
    return mrr if subscriptions else None


def customer_count(paying: set) -> int:
    """How many paying customers `paying` (their ids) holds; a None id is no customer."""
    return len(paying - {None})


def next_month(month: date) -> date:
    return date(month.year + (month.month == 12), month.month % 12 + 1, 1)


# No payment provider has data before this; an earlier date is broken data, never history.
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)


def parse_timestamp(value: str | int | float) -> datetime:
    """Unix seconds or ISO 8601 (with Z or an offset) to an aware UTC datetime, refusing dates
    before 2000 or after 2100 (a year-1 timestamp would otherwise make thousands of months)."""
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            moment = datetime.fromtimestamp(value, tz=UTC)
        else:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            moment = moment.astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        raise ProviderError(f"the provider sent an unreadable date {str(value)[:40]!r}") from None
    if not EARLIEST <= moment < LATEST:
        raise ProviderError(
            f"the provider sent an impossible date {str(value)[:40]!r} "
            f"({moment:%Y-%m-%d}); nothing was written"
        )
    return moment


def refused(field: str, value: object, rule: str) -> ProviderError:
    """The error for a value that contradicts the provider's documented shape: it names the
    field, the value and the rule it broke; the sync then writes nothing."""
    return ProviderError(
        f"the provider sent {field} = {str(value)[:40]!r}, which breaks the rule: {rule}; "
        "nothing was written"
    )


NOT_NEGATIVE = "an amount in minor units, never negative"
SIGNED = "an amount in minor units"


def checked_amount(value: object, field: str, *, rule: str = NOT_NEGATIVE) -> Decimal:
    """The amount in minor units at `field`; not negative unless `rule` is SIGNED (where the
    provider documents negative values). Anything else stops the sync before any write."""
    try:
        amount = Decimal(str(value))
    except ArithmeticError:
        raise refused(field, value, rule) from None
    if not amount.is_finite() or (amount < 0 and rule != SIGNED):
        raise refused(field, value, rule)
    return amount


class Ledger:
    """Money in and out by UTC month, plus the rolling last 30 days before `now`."""

    def __init__(self, *, now: datetime):
        self.now = now
        self.window_start = now - timedelta(days=LAST_DAYS)
        self.monthly: dict[date, MonthFigures] = {}
        self.last_30_days: Money = {}

    def sale(
        self, *, at: datetime, currency: str, minor: int | Decimal, field: str = "sale amount"
    ) -> None:
        """Money in, read from `field` (named if it breaks the rules)."""
        self._record(at, currency, checked_amount(minor, field), refund=False)

    def refund(
        self, *, at: datetime, currency: str, minor: int | Decimal, field: str = "refund amount"
    ) -> None:
        """Money returned (a refund, or a clawback: a lost dispute or chargeback), counted in the
        month it happened, whatever month the sale was in; `field` names where it was read."""
        self._record(at, currency, checked_amount(minor, field), refund=True)

    def _record(self, at: datetime, currency: str, minor: Decimal, *, refund: bool) -> None:
        """Money at `at` (nothing after `now`), in its month and, if recent, the last 30 days."""
        if at > self.now:
            return
        month = self._month(at)
        money_add(month.refunds if refund else month.gross, currency, minor)
        if at >= self.window_start:
            money_add(self.last_30_days, currency, -minor if refund else minor)

    def months(self) -> dict[date, MonthFigures]:
        """Every month from the first with money to the current one, gaps filled with zeros."""
        if not self.monthly:
            return {}
        filled: dict[date, MonthFigures] = {}
        month, last = min(self.monthly), month_start(self.now)
        while month <= last:
            filled[month] = self.monthly.get(month, MonthFigures())
            month = next_month(month)
        return filled

    def figures(self, *, mrr: Money | None, customers: int) -> ProviderFigures:
        """What the connector found: `mrr` (None without subscription data), the months and
        the last 30 days recorded here, and the customer count."""
        return ProviderFigures(
            mrr=mrr, monthly=self.months(), last_30_days=self.last_30_days, customers=customers
        )

    def subscription_figures(self, *, mrr: Money, subscriptions: list, paying: set):
        """`figures()` of a connector that reads subscriptions: MRR unknown without any
        subscription (`known_mrr`), customers counted from their ids (`customer_count`)."""
        return self.figures(mrr=known_mrr(mrr, subscriptions), customers=customer_count(paying))

    def _month(self, at: datetime) -> MonthFigures:
        return self.monthly.setdefault(month_start(at), MonthFigures())
