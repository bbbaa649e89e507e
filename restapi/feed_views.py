"""GET /api/v1/changes: the change feed a consumer syncs a copy of the dataset from
(startups/feed.py has its semantics; the README's "Change feed" section documents them)."""

from drf_spectacular.utils import OpenApiExample
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from core.cursors import MAX_CURSOR, cursor_sent
from core.errors import CursorExpired, InvalidCursor
from core.openapi import CURSOR_EXPIRED, INVALID_CURSOR, rest_operation
from core.shapes import declared
from quota.callers import request_caller
from quota.plans import FREE, PRO
from quota.views import RestView
from restapi.paging import page_notice, page_request
from restapi.shapes import ChangeFeed, change_entry, change_feed_page
from restapi.views import _LIST_EXAMPLE
from startups.feed import change_feed, feed_cursor, feed_position, position_expired
from startups.filters import LenientInteger, LenientQuery


class ChangeFeedQuerySerializer(LenientQuery):
    """Query parameters of GET /api/v1/changes (`limit` lenient as the list's; `cursor` not)."""

    limit = LenientInteger(
        openapi={"default": FREE.default_limit, "minimum": 1, "maximum": PRO.max_limit},
        help_text=f"Entries per page: 1 to the plan maximum ({FREE.max_limit} Free, "
        f"{PRO.max_limit} Pro); out of range is clamped, never refused.",
    )
    cursor = serializers.CharField(
        required=False,
        max_length=MAX_CURSOR,
        help_text="`meta.nextCursor` of the previous page: resume after the last entry it "
        "showed. Leave out to start from the oldest entry kept. One this server did not issue "
        "is `400 invalid_cursor`; one from before entries were pruned is `410 cursor_expired`.",
    )


_EXAMPLE = {
    "data": [
        {
            "sequence": 1041,
            "kind": "updated",
            "slug": "acme-analytics",
            "fields": ["revenue.arr", "revenue.mrr"],
            "changed_at": "2026-11-20T09:30:00.123Z",
            "startup": _LIST_EXAMPLE["data"][0],
        },
        {
            "sequence": 1042,
            "kind": "deleted",
            "slug": "old-co",
            "fields": [],
            "changed_at": "2026-11-20T09:31:12.004Z",
            "startup": None,
        },
    ],
    "meta": {
        "limit": 10,
        "has_more": False,
        "next_cursor": "WzEwNDJdx3Zk2m0yqf1uXw",
        "plan": "Free",
        "max_limit": 10,
        "quota": _LIST_EXAMPLE["meta"]["quota"],
    },
}


class ChangeFeedView(RestView):
    @rest_operation(
        operation_id="listChanges",
        summary="Change feed (oldest first, resumable)",
        description="Every visible change to a startup, oldest first, in the order of the "
        "change sequence (commit order): creations, edits, new figures, status changes, and "
        "tombstones for startups deleted or unpublished. Resume with `meta.nextCursor`: "
        "nothing committed after it is skipped. Delivery is at least once; entries are kept "
        "90 days (CHANGE_RETENTION_DAYS). Each entry with a `startup` counts as one record "
        "against the Free monthly allowance; tombstones are free. For the newest-first view "
        "of what changed, see `GET /api/v1/startups?sort=updated-desc&updatedSince=`.",
        parameters=(ChangeFeedQuerySerializer,),
        ok=declared(ChangeFeed),
        errors=(400, INVALID_CURSOR, 401, 403, 405, CURSOR_EXPIRED, 429, 500),
        examples=[OpenApiExample("A page", value=_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        params = ChangeFeedQuerySerializer(data=request.query_params)
        params.is_valid()
        after = 0
        if cursor_sent(request.query_params):
            after = feed_position(str(request.query_params["cursor"]).strip())
            if after is None:
                raise InvalidCursor()
            if position_expired(after):
                raise CursorExpired()
        plan = request_caller(request).plan
        paging = page_request(
            requested=params.validated_data.get("limit"), page=1, after=None, plan=plan
        )
        with self.reserve(request, wanted=paging.size) as reservation:
            page = change_feed(after=after, limit=reservation.granted)
            reservation.use(sum(entry.startup is not None for entry in page.entries))
        data = [change_entry(entry, request=request) for entry in page.entries]
        return Response(
            change_feed_page(
                data,
                limit=reservation.granted,
                has_more=page.has_more,
                next_cursor=feed_cursor(page.last),
                status=reservation.status,
                notice=page_notice(paging=paging, reservation=reservation),
            )
        )
