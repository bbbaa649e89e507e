"""Typed models of every resource, as `TypedDict`s of the JSON the API sends (camelCase keys).

They are plain dicts at run time, so a field the server adds later never breaks a client; type
checkers and editors see the declared keys. Unknown values are `None` (the API never omits a
field and never uses 0 for unknown). Money is whole US dollars unless `currency` says otherwise;
timestamps are ISO 8601 UTC strings (`YYYY-MM-DDTHH:MM:SS.sssZ`), dates `YYYY-MM-DD`, months
`YYYY-MM`.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

# Where a startup's figures come from (`revenue.source`).
RevenueSource = Literal["verified", "self_reported", "demo"]


class ListRevenue(TypedDict, total=False):
    mrr: int | None
    arr: int | None
    verified: bool
    # `demo` marks the invented demo dataset's figures: never real revenue.
    source: RevenueSource
    lastSyncedAt: str | None
    growth30d: float | None


class _StartupBase(TypedDict, total=False):
    """The fields a list item and a detail share."""

    name: str
    slug: str
    icon: str | None
    description: str | None
    website: str | None
    category: str | None
    onSale: bool
    updatedAt: str


class Startup(_StartupBase, total=False):
    """One item of `GET /api/v1/startups`."""

    founderName: str | None
    revenue: ListRevenue
    rank: int | None
    profileUrl: str  # credit it wherever the data is shown


class Founder(TypedDict):
    name: str
    title: str | None
    twitter: str | None
    linkedin: str | None


class Social(TypedDict):
    platform: str
    url: str


class MonthlyRevenue(TypedDict):
    month: str
    gross: int
    refunds: int
    net: int


class Verification(TypedDict, total=False):
    provider: str
    level: str
    verifiedAt: str
    currency: str
    mrr: int | None
    arr: int | None
    totalRevenue: int
    last30Days: int
    customers: int
    historyMonths: int
    monthly: list[MonthlyRevenue]
    status: Literal["ok", "stale", "key_revoked", "error"]
    lastSyncedAt: str
    methodology: str
    methodologyVersion: str
    credential: Literal["restricted_read", "read_only", "full_access", "metrics_token"] | None
    providerReported: dict[str, Any] | None


class DetailRevenue(TypedDict, total=False):
    mrr: int | None
    arr: int | None
    currency: str
    verified: bool
    source: RevenueSource
    lastSyncedAt: str | None
    growth30d: float | None


class ProviderAccount(TypedDict):
    """The payment-provider account behind verified figures, as the provider names it."""

    name: str | None
    domain: str | None


class StartupDetail(_StartupBase, total=False):
    """`GET /api/v1/startups/{slug}` (the `data` object)."""

    businessType: str | None
    founded: int | None
    country: str | None
    teamSize: str | None
    founders: list[Founder]
    technologies: list[str]
    socials: list[Social]
    revenue: DetailRevenue
    verification: Verification | None
    providerAccount: ProviderAccount | None
    askingPrice: int | None
    profileUrl: str


class Quota(TypedDict):
    limit: int
    used: int
    remaining: int
    resetsAt: str


class PageMeta(TypedDict, total=False):
    """`meta` of a list answer. `nextCursor` is present where the server pages by cursor."""

    total: int
    page: int | None  # None when paging by cursor
    limit: int
    hasMore: bool
    nextCursor: str | None
    plan: Literal["Free", "Pro"]
    maxLimit: int
    quota: Quota | None
    notice: str
    warnings: list[str]  # what the request sent that the server ignored


class StartupPage(TypedDict):
    data: list[Startup]
    meta: PageMeta


class HistoryPoint(TypedDict, total=False):
    """One day of `GET /api/v1/startups/{slug}/history`."""

    date: str
    mrr: int | None
    arr: int | None
    customers: int | None
    last30Days: int | None


class Attestation(TypedDict):
    """`GET /api/v1/startups/{slug}/attestation`: a compact JWS (EdDSA) and its key id."""

    jws: str
    keyId: str
    leafIndex: int
    logEntry: str
    treeHead: dict[str, Any]
    inclusionProof: list[str]


class ErrorDetail(TypedDict, total=False):
    code: str
    message: str
    requestId: str
