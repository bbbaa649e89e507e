"""All reads of the dataset. REST, AI and MCP call these; none writes its own query."""

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import orjson
from django.core.exceptions import EmptyResultSet
from django.db.models import Count, F, OuterRef, Prefetch, Q, QuerySet, Subquery, Value, Window
from django.db.models.functions import Lower, RowNumber
from django.db.models.lookups import IsNull

from core.cursors import cursor_open, cursor_seal
from startups.models import Founder, MonthlyRevenue, Social, Startup, Verification

Sort = Literal["mrr-desc", "mrr-asc", "name-asc", "name-desc", "growth-desc", "updated-desc"]
DEFAULT_SORT: Sort = "mrr-desc"
# The columns a list item shows: loading only these skips the JSON columns and long texts the
# list never needs (decoding them is most of the ORM's cost per row).
LIST_COLUMNS = (
    "id",
    "name",
    "slug",
    "icon",
    "description",
    "website",
    "category",
    "founder_name",
    "mrr",
    "arr",
    "on_sale",
    "growth_30d",
    "updated_at",
)

# Rank order: MRR high to low, ties by name then slug; startups without MRR have no rank.
RANK_ORDER = (F("mrr").desc(nulls_last=True), Lower("name"), "slug")

# Every sort puts startups without MRR last, then breaks ties so paging is stable.
SORT_ORDERS: dict[str, tuple] = {
    "mrr-desc": RANK_ORDER,
    "mrr-asc": (F("mrr").asc(nulls_last=True), Lower("name"), "slug"),
    "name-asc": (IsNull(F("mrr"), True), Lower("name"), "slug"),
    "name-desc": (IsNull(F("mrr"), True), Lower("name").desc(), F("slug").desc()),
    "growth-desc": (F("growth_30d").desc(nulls_last=True), Lower("name"), "slug"),
    # The change feed: most recently changed first.
    "updated-desc": (F("updated_at").desc(), "slug"),
}


def with_synced_at(qs: QuerySet[Startup]) -> QuerySet[Startup]:
    """Each startup's last successful sync as `synced_at` (None: not verified) and its
    provider as `synced_provider` (`demo` for the demo dataset), read per row of the page only
    (correlated subqueries in the same statement, not a join over the whole filtered set)."""
    verification = Verification.objects.filter(startup=OuterRef("pk"))
    return qs.annotate(
        synced_at=Subquery(verification.values("verified_at")[:1]),
        synced_provider=Subquery(verification.values("provider")[:1]),
    )


@dataclass(frozen=True)
class StartupFilters:
    q: str | None = None
    category: str | None = None
    on_sale: bool | None = None
    min_mrr: int | None = None
    max_mrr: int | None = None
    verified: bool | None = None
    website: str | None = None  # a bare domain: "acme.com" (see website_domain)
    country: str | None = None
    updated_since: datetime | None = None
    sort: Sort = DEFAULT_SORT


@dataclass(frozen=True)
class StartupPage:
    startups: list[Startup]
    total: int
    # Cursor pages only: whether startups follow the last one (page mode counts instead).
    more: bool | None = None


def published_startups(*, db: str | None = None) -> QuerySet[Startup]:
    """Startups published to the REST surface. `db` names the database to read: the read
    cache passes the primary when it fills a copy (core/readcache.py); None lets the
    router choose."""
    return Startup.objects.db_manager(db).filter(is_published=True)


def search(term: str) -> Q:
    """What `q` finds: the term in the name, the category or the description, any case."""
    return Q(name__icontains=term) | Q(category__icontains=term) | Q(description__icontains=term)


def startup_list(*, filters: StartupFilters) -> QuerySet[Startup]:
    """The filtered startups in the requested order (not yet paged, not yet ranked)."""
    qs = published_startups()
    if filters.q:
        qs = qs.filter(search(filters.q))
    if filters.category:
        qs = qs.filter(category__icontains=filters.category)
    if filters.on_sale is not None:
        qs = qs.filter(on_sale=filters.on_sale)
    if filters.min_mrr is not None:
        qs = qs.filter(mrr__gte=filters.min_mrr)
    if filters.max_mrr is not None:
        qs = qs.filter(mrr__lte=filters.max_mrr)
    if filters.verified is not None:
        qs = qs.filter(verification__isnull=not filters.verified)
    if filters.website:
        qs = qs.filter(website__iregex=_domain_pattern(filters.website))
    if filters.country:
        qs = qs.filter(country__iexact=filters.country)
    if filters.updated_since is not None:
        qs = qs.filter(updated_at__gte=filters.updated_since)
    return qs.order_by(*SORT_ORDERS[filters.sort])


_DOMAIN = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+")


def website_domain(value: str) -> str | None:
    """The bare domain of what a client typed ("https://www.Acme.com/pricing" -> "acme.com"),
    or None when it is not a domain with at least one dot."""
    text = value.strip().lower()
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text)
    text = re.split(r"[/?#]", text, maxsplit=1)[0].rsplit("@", 1)[-1].split(":", 1)[0]
    text = text.removeprefix("www.").rstrip(".")
    return text if _DOMAIN.fullmatch(text) else None


def _domain_pattern(domain: str) -> str:
    """A regex (valid in PostgreSQL and SQLite/Python) matching a stored website whose host is
    `domain` or one of its subdomains, with or without scheme, port or path."""
    return (
        r"^([a-z][a-z0-9+.-]*://)?([^/@]*@)?([^/?#@]*\.)?"
        + domain.replace(".", r"\.")
        + r"(:[0-9]*)?([/?#]|$)"
    )


# --- cursor (keyset) paging -------------------------------------------------------------------
# A cursor names the last startup a page showed by its sort key and slug; the next page is the
# startups after it in the sort order (a range condition the sort's index answers, no OFFSET).
# Rows that keep their place are never repeated nor skipped, whatever is inserted or moved.


@dataclass(frozen=True)
class After:
    """The sort key of the last startup shown: where the next page starts."""

    sort: str
    slug: str
    name: str
    mrr: int | None = None
    updated_at: datetime | None = None
    growth: float | None = None  # growth-desc only


def after_of(startup: Startup, sort: str) -> After:
    return After(
        sort=sort,
        slug=startup.slug,
        name=startup.name,
        mrr=startup.mrr,
        updated_at=startup.updated_at if sort == "updated-desc" else None,
        growth=startup.growth_30d if sort == "growth-desc" else None,
    )


def encode_cursor(after: After) -> str:
    # Full precision: a timestamp cut to milliseconds would skip rows changed in the same one.
    updated = after.updated_at.isoformat() if after.updated_at else None
    raw = orjson.dumps([after.sort, after.slug, after.name, after.mrr, updated, after.growth])
    return cursor_seal("list", raw)


def decode_cursor(cursor: str) -> After | None:
    """The cursor's position, or None when it is not one this API made."""
    raw = cursor_open("list", cursor)
    if raw is None:
        return None
    try:
        sort, slug, name, mrr, updated, growth = orjson.loads(raw)
        if sort not in SORT_ORDERS or not isinstance(slug, str) or not isinstance(name, str):
            return None
        if mrr is not None and (not isinstance(mrr, int) or not 0 <= mrr < 2**63):
            return None
        updated_at = datetime.fromisoformat(updated) if isinstance(updated, str) else None
        if (sort == "updated-desc") != (updated_at is not None):
            return None
        if growth is not None and (
            sort != "growth-desc"
            or not isinstance(growth, int | float)
            or not math.isfinite(growth)
        ):
            return None
        if not storable_slug(slug) or not storable_slug(name):
            return None
        return After(sort=sort, slug=slug, name=name, mrr=mrr, updated_at=updated_at, growth=growth)
    except (ValueError, TypeError, orjson.JSONDecodeError):
        return None


def after_name(after: After, descending: bool) -> Q:
    """(lower(name), slug) strictly after the cursor's, in the sort's direction."""
    name = Lower(Value(after.name))
    if descending:
        return Q(sort_name__lt=name) | Q(sort_name=name, slug__lt=after.slug)
    return Q(sort_name__gt=name) | Q(sort_name=name, slug__gt=after.slug)


def _keyset(after: After) -> Q:
    """The startups after `after` in its sort's order (SORT_ORDERS), NULL MRR last."""
    if after.sort == "updated-desc":
        return Q(updated_at__lt=after.updated_at) | Q(
            updated_at=after.updated_at, slug__gt=after.slug
        )
    descending = after.sort == "name-desc"
    same = after_name(after, descending)
    if after.sort == "growth-desc":  # growth high to low, startups without it last
        if after.growth is None:
            return Q(growth_30d__isnull=True) & same
        return (
            Q(growth_30d__lt=after.growth)
            | Q(growth_30d=after.growth) & same
            | Q(growth_30d__isnull=True)
        )
    if after.mrr is None:  # in the trailing block of startups without MRR
        return Q(mrr__isnull=True) & same
    if after.sort in ("name-asc", "name-desc"):
        return Q(mrr__isnull=True) | (Q(mrr__isnull=False) & same)
    beyond = Q(mrr__lt=after.mrr) if after.sort == "mrr-desc" else Q(mrr__gt=after.mrr)
    return beyond | Q(mrr=after.mrr) & same | Q(mrr__isnull=True)


def startups_after(qs: QuerySet[Startup], after: After) -> QuerySet[Startup]:
    """`qs` (in `after.sort` order) from the startup after the cursor on."""
    return qs.alias(sort_name=Lower("name")).filter(_keyset(after))


@dataclass(frozen=True)
class DatasetCounts:
    startups: int
    verified: int
    on_sale: int


def dataset_counts() -> DatasetCounts:
    """How many published startups there are, how many verified, how many on sale (one query)."""
    counts = published_startups().aggregate(
        startups=Count("id"),
        verified=Count("id", filter=Q(verification__isnull=False)),
        on_sale=Count("id", filter=Q(on_sale=True)),
    )
    return DatasetCounts(**counts)


def list_rows(ids: list[int], *, db: str | None = None) -> dict[int, Startup]:
    """The published startups among `ids`, list columns only, by id (one query)."""
    return with_synced_at(published_startups(db=db).only(*LIST_COLUMNS)).in_bulk(ids)


def _ranked_page(
    qs: QuerySet[Startup], *, offset: int, limit: int, page_qs: QuerySet[Startup] | None = None
) -> list[Startup]:
    """One page of `qs` (or of `page_qs`, the part of it after a cursor) in its own order,
    each startup carrying `rank` (position by MRR within the whole filtered set), in one
    query: the page joined to a narrow ROW_NUMBER over the filtered set. The window walks the
    rank-order index (index-only on PostgreSQL) instead of sorting every row with all its
    columns, as a window on the page query itself would."""
    page_qs = qs if page_qs is None else page_qs
    ranked = (
        qs.filter(mrr__isnull=False)
        .order_by()
        .annotate(rank=Window(RowNumber(), order_by=RANK_ORDER))
        .values("id", "rank")
    )
    try:
        page_sql, page_params = page_qs[offset : offset + limit].query.sql_with_params()
        ranked_sql, ranked_params = ranked.query.sql_with_params()
    except EmptyResultSet:  # filters no row can meet (e.g. an MRR bound below zero)
        return []
    # row_number() OVER () keeps the page's own order through the join.
    sql = (
        "SELECT page.*, ranked.rank FROM ("  # noqa: S608 - both parts are compiled querysets
        f"SELECT p.*, row_number() OVER () AS page_position FROM ({page_sql}) p) page "
        f"LEFT JOIN ({ranked_sql}) ranked ON ranked.id = page.id "
        "ORDER BY page.page_position"
    )
    return list(Startup.objects.db_manager(qs.db).raw(sql, [*page_params, *ranked_params]))


def startup_page(
    *,
    filters: StartupFilters,
    offset: int,
    limit: int,
    after: After | None = None,
    db: str | None = None,
) -> StartupPage:
    """One page of `startup_list`, each startup carrying `rank` (its position by MRR within the
    filtered set; None without MRR), and the filtered set's exact total: from `offset`, or
    (cursor paging) from the startup after `after`, whose sort must be the filters' sort. The
    read cache keeps pages (core/readcache.py); this is the plain query."""
    qs = startup_list(filters=filters).only(*LIST_COLUMNS).using(db)
    total = qs.count()  # before the per-row annotation: the count needs none
    if after is not None:
        # One row more than the page says whether another page follows.
        rest = with_synced_at(startups_after(qs, after))
        startups = _ranked_page(qs, offset=0, limit=limit + 1, page_qs=rest) if limit > 0 else []
        for startup in startups:
            if startup.mrr is None:
                startup.rank = None
        return StartupPage(startups=startups[:limit], total=total, more=len(startups) > limit)
    if limit <= 0 or offset >= total:
        return StartupPage(startups=[], total=total)
    qs = with_synced_at(qs)
    if filters.sort == DEFAULT_SORT:
        # The page is already in rank order: the rank is the position, no window needed.
        startups = list(qs[offset : offset + limit])
        for position, startup in enumerate(startups, start=offset + 1):
            startup.rank = position
    else:
        startups = _ranked_page(qs, offset=offset, limit=limit)
    for startup in startups:
        if startup.mrr is None:
            startup.rank = None
    return StartupPage(startups=startups, total=total)


def startup_export(*, filters: StartupFilters, chunk_size: int = 1000) -> Iterator[Startup]:
    """Every startup of `startup_list` in order, each with `rank`, fetched in keyset batches
    of `chunk_size`: memory stays the same whatever the dataset's size, with or without
    server-side cursors (PgBouncer), and no transaction is held open while a client reads."""
    qs = with_synced_at(startup_list(filters=filters).only(*LIST_COLUMNS))
    after, position = None, 0
    while True:
        rest = qs if after is None else startups_after(qs, after)
        if filters.sort == DEFAULT_SORT:  # rank order: the rank is the position
            batch = list(rest[:chunk_size])
            for number, startup in enumerate(batch, start=position + 1):
                startup.rank = number
            position += len(batch)
        else:
            batch = _ranked_page(qs, offset=0, limit=chunk_size, page_qs=rest)
        for startup in batch:
            if startup.mrr is None:
                startup.rank = None
            yield startup
        if len(batch) < chunk_size:
            return
        after = after_of(batch[-1], filters.sort)


def category_counts() -> list[dict]:
    """Primary categories of the published startups with how many each has, largest first."""
    return list(
        published_startups()
        .exclude(category__isnull=True)
        .exclude(category="")
        .values("category")
        .annotate(count=Count("id"))
        .order_by("-count", "category")
    )


def storable_slug(slug: str) -> bool:
    """Whether `slug` could be stored at all. PostgreSQL text cannot hold NUL and refuses to
    even compare it, so such a slug is answered as unknown without asking the database."""
    return "\x00" not in slug


def profile_in(startups: QuerySet[Startup], slug: str, *more: Prefetch) -> Startup | None:
    """The startup named `slug` among `startups`, with what every profile shows (its
    verification, owner and connection; founders and socials in the order shown), or None."""
    if not storable_slug(slug):
        return None
    return (
        startups.select_related("verification", "owner", "provider_connection")
        .prefetch_related(
            Prefetch("founders", queryset=Founder.objects.order_by("position", "id")),
            Prefetch("socials", queryset=Social.objects.order_by("platform", "id")),
            *more,
        )
        .filter(slug=slug)
        .first()
    )


def startup_get(*, slug: str, db: str | None = None) -> Startup | None:
    """One published startup with everything its detail view shows, or None."""
    monthly = Prefetch("verification__monthly", queryset=MonthlyRevenue.objects.order_by("month"))
    return profile_in(published_startups(db=db), slug, monthly)
