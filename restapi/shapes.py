"""The metered envelopes of /api/v1 (`{data, meta}`): each shape declared once as a `TypedDict`
(core/shapes.py) beside the function that builds it. The OpenAPI document reads the shapes
(`declared`); the answers are the dicts the builders return, in the shapes' key order. The items
inside are the dataset's shapes (startups/serializers.py); the plan and quota figures every meta
carries are written by `quota_meta` (quota/headers.py) alone.
"""

from typing import Annotated, NotRequired, TypedDict

from django.http import HttpRequest
from rest_framework import serializers

from core.formats import iso_timestamp
from core.shapes import document_last, text, timestamp, whole
from quota.headers import PlanName, Quota, quota_meta
from quota.services import QuotaStatus
from startups.feed import FeedEntry
from startups.models import Change
from startups.serializers import SnapshotSerializer, StartupListSerializer

# --- GET /api/v1/startups ---------------------------------------------------------------------


@document_last("next_cursor")
class StartupPageMeta(TypedDict):
    total: Annotated[int, whole(help_text="Matching startups across all pages.")]
    page: Annotated[
        int | None, whole(null=True, help_text="Current page; null when paging by `cursor`.")
    ]
    limit: Annotated[int, whole(help_text="Results per page actually applied.")]
    has_more: Annotated[bool, serializers.BooleanField(help_text="True while more pages follow.")]
    next_cursor: Annotated[
        str | None,
        text(
            null=True,
            help_text="Send as `cursor` for the next page (cursor paging); null on the last page.",
        ),
    ]
    plan: PlanName
    max_limit: Annotated[int, whole(help_text="Most records one request can return on the plan.")]
    quota: Quota
    notice: NotRequired[
        Annotated[
            str,
            text(
                help_text="Only when `limit` was lowered to the plan maximum or to the records "
                "left."
            ),
        ]
    ]
    warnings: NotRequired[
        Annotated[
            list[str],
            serializers.ListField(
                child=text(),
                help_text="Only when something the request sent was ignored: one sentence per "
                "unknown query parameter, invalid value (an unknown `sort` included) or unknown "
                "`fields` name. The request is still answered (invalid parameters are never "
                "errors).",
            ),
        ]
    ]


class StartupPage(TypedDict):
    """GET /api/v1/startups: `{data, meta}` (declared for the OpenAPI document)."""

    data: Annotated[list[dict], StartupListSerializer(many=True)]
    meta: StartupPageMeta


def startup_page(
    data: list,
    *,
    total: int,
    page: int | None,
    limit: int,
    has_more: bool,
    next_cursor: str | None,
    status: QuotaStatus,
    notice: str | None,
    warnings: list[str],
) -> StartupPage:
    """The list's answer body: the page's items, its counts, the caller's figures, and the
    notice and the warnings when there are any."""
    meta: StartupPageMeta = {
        "total": total,
        "page": page,
        "limit": limit,
        "has_more": has_more,
        "next_cursor": next_cursor,
        **quota_meta(status),
    }
    if notice:
        meta["notice"] = notice
    if warnings:
        meta["warnings"] = warnings
    return {"data": data, "meta": meta}


# --- GET /api/v1/startups/{slug}/history -----------------------------------------------------

# `from` is a Python keyword: the functional form.
HistoryMeta = document_last("from")(
    TypedDict(
        "HistoryMeta",
        {
            "slug": Annotated[str, text()],
            "count": Annotated[int, whole(help_text="Snapshots in `data`.")],
            "from": Annotated[
                str | None,
                serializers.DateField(
                    allow_null=True, help_text="The `from` bound applied (null: none)."
                ),
            ],
            "to": Annotated[
                str | None,
                serializers.DateField(
                    allow_null=True, help_text="The `to` bound applied (null: none)."
                ),
            ],
            "plan": PlanName,
            "max_limit": Annotated[int, whole()],
            "quota": Quota,
        },
    )
)


class HistoryPage(TypedDict):
    """GET /api/v1/startups/{slug}/history: daily snapshots, oldest first."""

    data: Annotated[list[dict], SnapshotSerializer(many=True)]
    meta: HistoryMeta


def history_page(
    data: list, *, slug: str, start: str | None, end: str | None, status: QuotaStatus
) -> HistoryPage:
    """The history's answer body: the snapshots, the bounds applied and the caller's figures."""
    meta: HistoryMeta = {
        "slug": slug,
        "count": len(data),
        "from": start,
        "to": end,
        **quota_meta(status),
    }
    return {"data": data, "meta": meta}


# --- GET /api/v1/changes ---------------------------------------------------------------------


class ChangeEntry(TypedDict):
    sequence: Annotated[
        int, whole(help_text="Position in the change sequence: strictly increasing, not dense.")
    ]
    kind: Annotated[
        str,
        serializers.ChoiceField(
            choices=list(Change.Kind.values),
            help_text="`created` and `updated`: upsert `startup`; `deleted` and `unpublished` "
            "(tombstones): remove the startup with this `slug`.",
        ),
    ]
    slug: Annotated[str, text(help_text="The startup's slug when the change was made.")]
    fields: Annotated[
        list[str],
        serializers.ListField(
            child=text(),
            help_text="What changed, by API name (`revenue.mrr`, `verification.status`); empty "
            "when not itemised (creations, deletions, imports).",
        ),
    ]
    changed_at: Annotated[str, timestamp(help_text="When the change was committed (ms, UTC).")]
    startup: Annotated[
        dict | None,
        StartupListSerializer(
            allow_null=True,
            help_text="The startup's list item as it is now; null for tombstones and for "
            "startups no longer published under this slug (their tombstone follows).",
        ),
    ]


def change_entry(entry: FeedEntry, *, request: HttpRequest) -> ChangeEntry:
    """One change of the feed, with its startup's list item as it is now."""
    change = entry.change
    return {
        "sequence": change.id,
        "kind": change.kind,
        "slug": change.slug,
        "fields": change.fields,
        "changed_at": iso_timestamp(change.at),
        "startup": None
        if entry.startup is None
        else StartupListSerializer(entry.startup, context={"request": request}).data,
    }


class ChangeFeedMeta(TypedDict):
    limit: Annotated[int, whole(help_text="Entries per page actually applied.")]
    has_more: Annotated[
        bool, serializers.BooleanField(help_text="True while more entries follow now.")
    ]
    next_cursor: Annotated[
        str,
        text(
            help_text="Always set: send it as `cursor` to resume after this page (also once "
            "`hasMore` is false, to poll for later changes)."
        ),
    ]
    plan: PlanName
    max_limit: Annotated[int, whole()]
    quota: Quota
    notice: NotRequired[Annotated[str, text(help_text="Only when `limit` was lowered.")]]


class ChangeFeed(TypedDict):
    data: list[ChangeEntry]
    meta: ChangeFeedMeta


def change_feed_page(
    data: list[ChangeEntry],
    *,
    limit: int,
    has_more: bool,
    next_cursor: str,
    status: QuotaStatus,
    notice: str | None,
) -> ChangeFeed:
    """The feed's answer body: the entries, where to resume, the caller's figures and the
    notice when there is one."""
    meta: ChangeFeedMeta = {
        "limit": limit,
        "has_more": has_more,
        "next_cursor": next_cursor,
        **quota_meta(status),
    }
    if notice:
        meta["notice"] = notice
    return {"data": data, "meta": meta}
