"""Query parameters of the /api/v1 dataset endpoints: lenient (a bad value is ignored and
reported), with the limits they accept."""

from datetime import date

from rest_framework import serializers

from core.cursors import cursor_sent
from core.errors import InvalidCursor
from quota.plans import FREE, PRO
from startups.filters import (
    MAX_TEXT,
    LenientBoolean,
    LenientChoice,
    LenientCursor,
    LenientDate,
    LenientDomain,
    LenientInteger,
    LenientMoney,
    LenientQuery,
    LenientText,
    LenientTimestamp,
)
from startups.selectors import DEFAULT_SORT, SORT_ORDERS, After, StartupFilters

MAX_PAGE = 1_000_000
MAX_FIELDS = 500
MAX_WARNINGS = 20


class StartupFilterSerializer(LenientQuery):
    """Query parameters of GET /api/v1/startups. Invalid values are ignored, never errors."""

    page = LenientInteger(
        openapi={"default": 1, "minimum": 1, "maximum": MAX_PAGE},
        help_text="Page number, from 1. Below 1 or not a number means 1; past the end gives an "
        "empty `data` with `hasMore: false`.",
    )
    limit = LenientInteger(
        openapi={"default": FREE.default_limit, "minimum": 1, "maximum": PRO.max_limit},
        help_text=f"Results per page: 1 to the plan maximum ({FREE.max_limit} Free, "
        f"{PRO.max_limit} Pro). Values out of range are clamped, never refused; when lowered, "
        "`meta.notice` says so. Not a number means the default.",
    )
    sort = LenientChoice(
        choices=list(SORT_ORDERS),
        openapi={"default": DEFAULT_SORT},
        help_text="Order. Startups without MRR sort last (`growth-desc`: without `growth30d`); "
        "an unknown value means the default.",
    )
    q = LenientText(
        help_text="Search text matched against name, category and description (case-insensitive; "
        f"cut to {MAX_TEXT} characters; `%`, `_` and `\\` match literally).",
    )
    category = LenientText(
        help_text="Partial, case-insensitive category match.",
    )
    onSale = LenientBoolean(  # noqa: N815 - the wire name
        source="on_sale",
        help_text="`true`: only startups listed for acquisition; `false`: only those not listed; "
        "omitted or any other value: all.",
    )
    minMrr = LenientMoney(  # noqa: N815
        rounding="up",
        source="min_mrr",
        help_text="Minimum MRR in USD, inclusive (decimals round up; not a finite number: "
        "ignored).",
    )
    maxMrr = LenientMoney(  # noqa: N815
        rounding="down",
        source="max_mrr",
        help_text="Maximum MRR in USD, inclusive (decimals round down; not a finite number: "
        "ignored).",
    )

    verified = LenientBoolean(
        help_text="`true`: only startups whose figures come from a connected payment provider "
        "(`revenue.verified`); `false`: only self-reported or public figures; omitted or any "
        "other value: all.",
    )
    cursor = LenientCursor(
        help_text="Cursor paging: `meta.nextCursor` of the previous page. The next page starts "
        "after the last startup that page showed, in the same order (the cursor carries its "
        "`sort`), so rows inserted or moved meanwhile never make others repeat or go missing. "
        "`page` is ignored with a cursor. A cursor is a token, not a filter: one this server "
        "did not issue (forged, edited, cut short) is refused with `400 invalid_cursor`.",
    )
    website = LenientDomain(
        help_text="A domain (`acme.com`) or address: startups whose website is on that domain or "
        "a subdomain of it (`acme.com` matches `https://www.acme.com/pricing`).",
    )
    country = LenientText(
        help_text="Headquarters country, case-insensitive exact match (e.g. `Germany`).",
    )
    updatedSince = LenientTimestamp(  # noqa: N815
        source="updated_since",
        help_text="Change feed: only startups changed at or after this moment (ISO 8601; no "
        "offset means UTC). Use with `sort=updated-desc`; each item has `updatedAt`.",
    )
    fields = LenientText(
        max_length=MAX_FIELDS,
        help_text="Sparse fieldset: comma-separated item fields to return, nested ones dotted "
        "(`name,slug,revenue.mrr`). Only those keys are sent; unknown names are ignored with a "
        "warning.",
    )

    def filters(self) -> StartupFilters:
        data = self.validated_data
        after = data.get("cursor")
        return StartupFilters(
            q=data.get("q"),
            category=data.get("category"),
            on_sale=data.get("on_sale"),
            min_mrr=data.get("min_mrr"),
            max_mrr=data.get("max_mrr"),
            verified=data.get("verified"),
            website=data.get("website"),
            country=data.get("country"),
            updated_since=data.get("updated_since"),
            # A cursor belongs to the order it was made in.
            sort=after.sort if after else data.get("sort") or DEFAULT_SORT,
        )

    def after(self) -> After | None:
        """The cursor's place; a cursor sent but not issued here is `400 invalid_cursor`."""
        after = self.validated_data.get("cursor")
        if after is None and cursor_sent(self.initial_data):
            raise InvalidCursor()
        return after

    def warnings(self) -> list[str]:
        """What this request sent that was ignored (meta.warnings): unknown parameters and
        values that are not valid for their parameter."""
        return ignored_parameters(self, self.initial_data, self.validated_data)

    def page_number(self) -> int:
        page = self.validated_data.get("page") or 1
        return max(1, min(page, MAX_PAGE))

    def requested_limit(self) -> int | None:
        return self.validated_data.get("limit")


class StartupExportFilterSerializer(StartupFilterSerializer):
    """Query parameters of the NDJSON export: the list's, without paging."""

    page = None
    limit = None
    cursor = None


def _quoted(raw: str) -> str:
    return repr(raw if len(raw) <= 60 else raw[:60] + "...")


def ignored_parameters(serializer: serializers.Serializer, query, data: dict) -> list[str]:
    """Warnings naming every query parameter the lenient `serializer` ignored."""
    declared = serializer.fields
    found = []
    for name in query:
        if name not in declared:
            found.append(f"Unknown query parameter {_quoted(name)} was ignored.")
            continue
        raw = str(query.get(name, "")).strip()
        field = declared[name]
        if raw and data.get(field.source) is None:
            if name == "sort":
                found.append(
                    f"sort {_quoted(raw)} is not one of {', '.join(SORT_ORDERS)}; "
                    f"{DEFAULT_SORT} was used."
                )
            else:
                found.append(f"{name}={_quoted(raw)} is not a valid value and was ignored.")
    after = data.get("cursor")
    if after is not None:
        if "page" in query:
            found.append("page was ignored: the cursor says where the page starts.")
        sort = data.get("sort")
        if sort and sort != after.sort:
            found.append(f"sort {sort} was ignored: the cursor continues {after.sort}.")
    return found[:MAX_WARNINGS]


class HistoryFilterSerializer(LenientQuery):
    """Query parameters of GET /api/v1/startups/{slug}/history; invalid dates are ignored."""

    # `from` is a Python keyword: declared under its wire name below.
    to = LenientDate(
        help_text="Last UTC date to include (YYYY-MM-DD, inclusive); anything else: no bound.",
    )

    def get_fields(self) -> dict:
        fields = super().get_fields()
        fields["from"] = LenientDate(
            help_text="First UTC date to include (YYYY-MM-DD, inclusive); anything else: no bound.",
        )
        return fields

    def bounds(self) -> tuple[date | None, date | None]:
        return self.validated_data.get("from"), self.validated_data.get("to")
