"""All reads of the dataset. REST, AI and MCP call these; none writes its own query."""

from dataclasses import dataclass
from itertools import islice
from typing import Literal

from django.db.models import Count, F, Prefetch, Q, QuerySet, Window
from django.db.models.functions import Lower, RowNumber
from django.db.models.lookups import IsNull
from django.utils import timezone
from django.utils.text import slugify

from startups.models import Founder, MonthlyRevenue, Social, Startup

Sort = Literal["mrr-desc", "mrr-asc", "name-asc", "name-desc"]
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
)

# Rank order: MRR high to low, ties by name then slug; startups without MRR have no rank.
RANK_ORDER = (F("mrr").desc(nulls_last=True), Lower("name"), "slug")

# Every sort puts startups without MRR last, then breaks ties so paging is stable.
SORT_ORDERS: dict[str, tuple] = {
    "mrr-desc": RANK_ORDER,
    "mrr-asc": (F("mrr").asc(nulls_last=True), Lower("name"), "slug"),
    "name-asc": (IsNull(F("mrr"), True), Lower("name"), "slug"),
    "name-desc": (IsNull(F("mrr"), True), Lower("name").desc(), F("slug").desc()),
}


@dataclass(frozen=True)
class StartupFilters:
    q: str | None = None
    category: str | None = None
    on_sale: bool | None = None
    min_mrr: int | None = None
    max_mrr: int | None = None
    sort: Sort = DEFAULT_SORT
    # True: only startups whose figures a provider sync verified; False: only the others.
    verified: bool | None = None


@dataclass(frozen=True)
class StartupPage:
    startups: list[Startup]
    total: int


def published_startups(*, db: str | None = None) -> QuerySet[Startup]:
    """Startups published to the REST surface. `db` names the database to read: the read
    cache passes the primary when it fills a copy (openstartup/readcache.py); None lets the
    router choose."""
    return Startup.objects.db_manager(db).filter(is_published=True)


def startup_list(*, filters: StartupFilters) -> QuerySet[Startup]:
    """The filtered startups in the requested order (not yet paged, not yet ranked)."""
    qs = published_startups()
    if filters.q:
        qs = qs.filter(
            Q(name__icontains=filters.q)
            | Q(category__icontains=filters.q)
            | Q(description__icontains=filters.q)
        )
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
    return qs.order_by(*SORT_ORDERS[filters.sort])


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
    return published_startups(db=db).only(*LIST_COLUMNS).in_bulk(ids)


def _ranked_page(qs: QuerySet[Startup], *, offset: int, limit: int) -> list[Startup]:
    """One page of `qs` in its own order, each startup carrying `rank` (position by MRR within
    the whole filtered set), in one query: the page joined to a narrow ROW_NUMBER over the
    filtered set. The window walks the rank-order index (index-only on PostgreSQL) instead of
    sorting every row with all its columns, as a window on the page query itself would."""
    page_sql, page_params = qs[offset : offset + limit].query.sql_with_params()
    ranked = (
        qs.filter(mrr__isnull=False)
        .order_by()
        .annotate(rank=Window(RowNumber(), order_by=RANK_ORDER))
        .values("id", "rank")
    )
    ranked_sql, ranked_params = ranked.query.sql_with_params()
    # row_number() OVER () keeps the page's own order through the join.
    sql = (
        "SELECT page.*, ranked.rank FROM ("  # noqa: S608 - both parts are compiled querysets
        f"SELECT p.*, row_number() OVER () AS page_position FROM ({page_sql}) p) page "
        f"LEFT JOIN ({ranked_sql}) ranked ON ranked.id = page.id "
        "ORDER BY page.page_position"
    )
    return list(Startup.objects.db_manager(qs.db).raw(sql, [*page_params, *ranked_params]))


def startup_page(
    *, filters: StartupFilters, offset: int, limit: int, db: str | None = None
) -> StartupPage:
    """One page of `startup_list`, each startup carrying `rank` (its position by MRR within the
    filtered set; None without MRR), and the filtered set's exact total. The read cache keeps
    pages (openstartup/readcache.py); this is the plain query."""
    qs = startup_list(filters=filters).only(*LIST_COLUMNS).using(db)
    total = qs.count()
    if limit <= 0 or offset >= total:
        return StartupPage(startups=[], total=total)
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


def storable_slug(slug: str) -> bool:
    """Whether `slug` could be stored at all. PostgreSQL text cannot hold NUL and refuses to
    even compare it, so such a slug is answered as unknown without asking the database."""
    return "\x00" not in slug


def _people_and_links() -> tuple[Prefetch, Prefetch]:
    """Founders and socials in the order every profile shows them."""
    return (
        Prefetch("founders", queryset=Founder.objects.order_by("position", "id")),
        Prefetch("socials", queryset=Social.objects.order_by("platform", "id")),
    )


def startup_get(*, slug: str, db: str | None = None) -> Startup | None:
    """One published startup with everything its detail view shows, or None."""
    if not storable_slug(slug):
        return None
    return (
        published_startups(db=db)
        .select_related("verification", "owner")
        .prefetch_related(
            *_people_and_links(),
            Prefetch("verification__monthly", queryset=MonthlyRevenue.objects.order_by("month")),
        )
        .filter(slug=slug)
        .first()
    )


def ai_enabled_startups(*, db: str | None = None) -> QuerySet[Startup]:
    """Startups with a live AI visibility add-on: the set /api/ai and MCP serve."""
    return published_startups(db=db).filter(
        Q(ai_addon_expires_at__isnull=True) | Q(ai_addon_expires_at__gt=timezone.now()),
        ai_addon_active=True,
    )


def slug_word(value: str | None) -> str:
    """A category or industry as the slug-style word the AI filters use ("Developer Tools" ->
    "developer-tools"); the one place that rule lives."""
    return slugify(value or "", allow_unicode=True)


def ai_startup_list(
    *,
    query: str | None = None,
    category: str | None = None,
    industry: str | None = None,
    verified: bool | None = None,
    min_mrr: int | None = None,
    max_mrr: int | None = None,
    has_mrr: bool = False,
    limit: int | None = None,
    db: str | None = None,
) -> list[Startup]:
    """AI-enabled startups matching the filters, highest MRR first (one query).

    `category` and `industry` are slug-style words compared with `slug_word` of the stored
    values; `category` matches the primary category or any extra one. Those two are applied in
    Python because slugify has no portable SQL form and the AI set is small and curated.
    `verified` is the owner account's `is_verified`; `has_mrr` drops startups without MRR.
    """
    qs = ai_enabled_startups(db=db).select_related("owner", "verification")
    if query:
        qs = qs.filter(
            Q(name__icontains=query)
            | Q(description__icontains=query)
            | Q(category__icontains=query)
            | Q(industry__icontains=query)
        )
    if verified is True:
        qs = qs.filter(owner__is_verified=True)
    elif verified is False:
        qs = qs.filter(Q(owner__isnull=True) | Q(owner__is_verified=False))
    if has_mrr:
        qs = qs.filter(mrr__isnull=False)
    if min_mrr is not None:
        qs = qs.filter(mrr__gte=min_mrr)
    if max_mrr is not None:
        qs = qs.filter(mrr__lte=max_mrr)
    qs = qs.order_by(*RANK_ORDER)
    category, industry = slug_word(category), slug_word(industry)
    if not category and not industry:
        return list(qs if limit is None else qs[:limit])

    def matches(startup: Startup) -> bool:
        categories = {slug_word(c) for c in [startup.category, *(startup.categories or [])]}
        return (not category or category in categories) and (
            not industry or slug_word(startup.industry) == industry
        )

    # Stream in rank order and stop at `limit`: no need to load the whole AI set.
    return list(islice(filter(matches, qs.iterator(chunk_size=200)), limit))


def ai_startup_get(*, slug: str, db: str | None = None) -> Startup | None:
    """One AI-enabled startup with everything its AI profile shows, or None."""
    if not storable_slug(slug):
        return None
    return (
        ai_enabled_startups(db=db)
        .select_related("owner", "verification")
        .prefetch_related(
            *_people_and_links(),
        )
        .filter(slug=slug)
        .first()
    )
