"""The only place that writes the plan and quota figures: X-Service-* headers and meta.

Every /api/v1 response carries them, errors included: metered DRF views get them from
`QuotaHeadersMixin.finalize_response` (which DRF runs for successes and handled errors alike);
`QuotaHeadersMiddleware` covers the rest (unknown /api/v1 paths, unhandled errors).
"""

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, NotRequired, TypedDict

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from core.errors import InvalidApiKey
from core.formats import iso_timestamp, month_start_at
from core.shapes import nested, timestamp, whole
from core.surfaces import is_rest
from quota.callers import caller_for, request_caller
from quota.plans import FREE, PRO
from quota.services import (
    Caller,
    QuotaStatus,
    Reservation,
    next_reset,
    quota_delivery,
    quota_reservation,
    quota_status,
)

PLAN_HEADER = "X-Service-Plan"


def status_of(*, caller: Caller) -> QuotaStatus:
    """The caller's status; uncapped plans need no database read."""
    if caller.plan.monthly_allowance is None:
        return QuotaStatus(plan=caller.plan, used=0, resets_at=next_reset(timezone.now()))
    return quota_status(caller=caller)


# The IETF draft RateLimit headers (draft-ietf-httpapi-ratelimit-headers) describe the monthly
# records allowance as the policy named "monthly"; one unit of quota is one record. Other
# policies (the per-minute fair-use limit) add their own items to the same list headers.
MONTHLY_POLICY = "monthly"


def ratelimit_items(status: QuotaStatus, now: datetime | None = None) -> dict[str, str]:
    """The "monthly" items of `RateLimit-Policy` and `RateLimit` (capped plans only): quota
    `q` per window `w` (this calendar month, in seconds), `r` records left, `t` seconds until
    the reset."""
    if status.limit is None:
        return {}
    now = now or timezone.now()
    window = status.resets_at - month_start_at(now)
    reset_in = max(0, math.ceil((status.resets_at - now).total_seconds()))
    name = f'"{MONTHLY_POLICY}"'
    return {
        "RateLimit-Policy": f"{name};q={status.limit};w={int(window.total_seconds())}",
        "RateLimit": f"{name};r={status.remaining};t={reset_in}",
    }


def quota_headers(status: QuotaStatus) -> dict[str, str]:
    headers = {PLAN_HEADER: status.plan.name, "X-Service-Max-Limit": str(status.plan.max_limit)}
    if status.limit is not None:
        headers["X-Service-Quota-Limit"] = str(status.limit)
        headers["X-Service-Quota-Remaining"] = str(status.remaining)
        headers["X-Service-Quota-Reset"] = iso_timestamp(status.resets_at)
    return headers


class QuotaMeta(TypedDict):
    limit: Annotated[int, whole(help_text="Records included this month.")]
    used: Annotated[int, whole()]
    remaining: Annotated[int, whole()]
    resets_at: Annotated[str, timestamp(help_text="1st of next month, 00:00 UTC.")]


# The keys `quota_meta` adds to the meta of every metered answer, for each meta shape to declare
# (restapi/shapes.py); `max_limit` is declared there, described on some shapes only.
PlanName = Annotated[str, serializers.ChoiceField(choices=[FREE.name, PRO.name])]
Quota = NotRequired[Annotated[QuotaMeta, nested(help_text="Free plan only.")]]


class PlanMeta(TypedDict):
    plan: PlanName
    max_limit: Annotated[int, whole()]
    quota: Quota


def quota_meta(status: QuotaStatus) -> PlanMeta:
    """meta.plan, meta.max_limit and (capped plans only) meta.quota of a metered answer."""
    meta: PlanMeta = {"plan": status.plan.name, "max_limit": status.plan.max_limit}
    if status.limit is not None:
        meta["quota"] = {
            "limit": status.limit,
            "used": min(status.used, status.limit),
            "remaining": status.remaining,
            "resets_at": iso_timestamp(status.resets_at),
        }
    return meta


def add_policy_items(response: HttpResponse, items: dict[str, str]) -> None:
    """Add policies' items to the `RateLimit`/`RateLimit-Policy` list headers, keeping any
    other policy's item already there (the monthly allowance and the fair-use limit)."""
    for name, item in items.items():
        existing = response.get(name)
        response[name] = f"{existing}, {item}" if existing else item


def stamp(response: HttpResponse, status: QuotaStatus) -> None:
    for name, value in quota_headers(status).items():
        response[name] = value
    add_policy_items(response, ratelimit_items(status))


class QuotaHeadersMixin:
    """For /api/v1 views: meter with `reserve`, and stamp the caller's plan and quota on every
    response (the figures the reservation left, else read once)."""

    quota_status: QuotaStatus | None = None

    @contextmanager
    def reserve(self, request: Request, *, wanted: int) -> Iterator[Reservation]:
        """`quota_reservation` for the request's caller; HEAD delivers no records, so it spends
        nothing. Once the block has run, `quota_status` holds the figures it left."""
        caller = request_caller(request)
        spend = request.method != "HEAD"
        with quota_reservation(caller=caller, wanted=wanted, spend=spend) as reservation:
            yield reservation
        self.quota_status = reservation.status

    def finalize_response(self, request: Request, response: Response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        status = self.quota_status or status_of(caller=request_caller(request))
        stamp(response, status)
        return response


class QuotaHeadersMiddleware:
    """Stamps /api/v1 responses that no metered view answered (unknown paths, 500s)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with quota_delivery() as deliver:
            response = self.get_response(request)
            deliver(response)
        # A 503 means the database is down: the plan cannot be looked up, so none is claimed.
        if is_rest(request.path) and PLAN_HEADER not in response and response.status_code != 503:
            stamp(response, status_of(caller=self._caller(request)))
        return response

    def _caller(self, request: HttpRequest) -> Caller:
        # No view authenticated this request, so the API's authentication (DRF's setting) does
        # it here. A bad key is reported on the Free figures of the client address, like a
        # request without a key.
        authenticators = [cls() for cls in api_settings.DEFAULT_AUTHENTICATION_CLASSES]
        try:
            return request_caller(Request(request, authenticators=authenticators))
        except InvalidApiKey:
            return caller_for(account=None, meta=request.META)
