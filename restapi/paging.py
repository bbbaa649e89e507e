"""Paging of /api/v1 lists: which page a request asks for, the list's answer (its body is
the `StartupPage` shape, restapi/shapes.py) with the notice and the Link header.

The one place for the list's page arithmetic (as HackSoft's `get_paginated_response`).
"""

from dataclasses import dataclass
from urllib.parse import quote

from django.http import QueryDict
from rest_framework.request import Request
from rest_framework.response import Response

from core.formats import iso_timestamp, site_url
from quota.plans import AppliedLimit, PlanLimits, apply_limit, remaining_notice
from quota.services import Reservation
from restapi.shapes import startup_page
from startups.selectors import After, StartupPage, after_of, encode_cursor


@dataclass(frozen=True)
class PageRequest:
    """The page a list request asks for: by number, or after a cursor (`page` None), at the
    plan's page size (`limit`, with its notice when the requested size was lowered)."""

    requested: int | None
    limit: AppliedLimit
    page: int | None
    after: After | None

    @property
    def size(self) -> int:
        return self.limit.value

    @property
    def offset(self) -> int:
        # Pages keep the plan's page size so `page` means the same rows when records run low.
        return 0 if self.page is None else (self.page - 1) * self.size


def page_request(
    *, requested: int | None, page: int, after: After | None, plan: PlanLimits
) -> PageRequest:
    """The page asked for: `page` counts only without a cursor."""
    return PageRequest(
        requested=requested,
        limit=apply_limit(requested=requested, plan=plan),
        page=None if after else page,
        after=after,
    )


def page_notice(*, paging: PageRequest, reservation: Reservation) -> str | None:
    """meta.notice: the page was cut to the records left this month, or the requested size
    was lowered to the plan's maximum."""
    if reservation.granted < paging.size:
        return remaining_notice(
            wanted=paging.requested or paging.size,
            granted=reservation.granted,
            plan=reservation.caller.plan,
            resets_on=iso_timestamp(reservation.status.resets_at),
        )
    return paging.limit.notice


def paginated_response(
    request: Request,
    data: list,
    *,
    result: StartupPage,
    paging: PageRequest,
    reservation: Reservation,
    sort: str,
    warnings: list[str],
) -> Response:
    """The list's answer: the page's items, its meta (counts, next cursor, the caller's
    figures, notice, warnings) and the Link header to the first, previous and next pages."""
    page = paging.page
    has_more = result.more if page is None else page * paging.size < result.total
    last = result.startups[-1] if result.startups else None
    next_cursor = encode_cursor(after_of(last, sort)) if has_more and last else None
    body = startup_page(
        data,
        total=result.total,
        page=page,
        limit=reservation.granted,
        has_more=bool(has_more),
        next_cursor=next_cursor,
        status=reservation.status,
        notice=page_notice(paging=paging, reservation=reservation),
        warnings=warnings,
    )
    links = page_links(
        request,
        first={},
        prev={"page": str(page - 1)} if page and page > 1 else None,
        next=(
            ({"cursor": next_cursor} if page is None else {"page": str(page + 1)})
            if has_more and next_cursor
            else None
        ),
    )
    return Response(body, headers={"Link": links})


def page_links(request: Request, **rels: dict[str, str] | None) -> str:
    """An RFC 8288 Link header: each rel is the request's own query without `page` and
    `cursor`, plus the given ones; a None rel is left out."""
    base = site_url(request) + quote(request.path)
    links = []
    for rel, changes in rels.items():
        if changes is None:
            continue
        query = QueryDict(mutable=True)
        query.update(request.query_params)
        for name in ("page", "cursor"):
            query.pop(name, None)
        for name, value in changes.items():
            query[name] = value
        url = f"{base}?{query.urlencode()}" if query else base
        links.append(f'<{url}>; rel="{rel}"')
    return ", ".join(links)
