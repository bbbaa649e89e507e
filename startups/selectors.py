"""All reads of the dataset. REST, AI and MCP call these; none writes its own query."""

import copy
import hashlib
from dataclasses import asdict, dataclass
from itertools import islice
from typing import Literal

import orjson
from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, F, Prefetch, Q, QuerySet, Window
from django.db.models.functions import Lower, RowNumber
from django.db.models.lookups import IsNull
from django.utils import timezone
from django.utils.text import slugify

from openstartup import readcache
from startups.models import Founder, MonthlyRevenue, Social, Startup

Sort = Literal["mrr-desc", "mrr-asc", "name-asc", "name-desc"]
DEFAULT_SORT: Sort = "mrr-desc"
LIST_CACHE_VERSION = "list-v1"
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


def published_startups() -> QuerySet[Startup]:
    """Startups published to the REST surface."""
    return Startup.objects.filter(is_published=True)


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


# Per-process copies of list rows by id, dropped on every server by any data write.
_LIST_ROWS = readcache.LocalCache("data", max_entries=20_000)


def _list_cache_key(filters: StartupFilters, offset: int, limit: int, token: bytes | None) -> str:
    raw = orjson.dumps({**asdict(filters), "offset": offset, "limit": limit})
    # Under the data generation token when there is one: a write anywhere starts new entries,
    # so the cached total, ids and ranks are as exact as the database. Without one (no shared
    # cache), entries simply age out after LIST_CACHE_SECONDS.
    generation = token.hex() if token else "-"
    return f"{LIST_CACHE_VERSION}:{generation}:{hashlib.sha256(raw).hexdigest()}"


def _list_rows(ids: list[int]) -> dict[int, Startup]:
    """The published startups among `ids` (list columns only): this process's current copies,
    the rest in one primary-key query."""
    rows, token = _LIST_ROWS.lookup(ids)
    missing = [startup_id for startup_id in ids if startup_id not in rows]
    if missing:
        with readcache.filling():
            fetched = published_startups().only(*LIST_COLUMNS).in_bulk(missing)
        rows.update(fetched)
        if token is not None:
            for startup_id, startup in fetched.items():
                _LIST_ROWS.put(startup_id, startup, token)
    return rows


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
    return list(Startup.objects.raw(sql, [*page_params, *ranked_params]))


def _build_page(qs: QuerySet[Startup], filters: StartupFilters, offset: int, limit: int) -> dict:
    total = qs.count()
    if limit <= 0 or offset >= total:
        return {"total": total, "startups": []}
    if filters.sort == DEFAULT_SORT:
        # The page is already in rank order: the rank is the position, no window needed.
        startups = list(qs[offset : offset + limit])
        for position, startup in enumerate(startups, start=offset + 1):
            startup.rank = position
    else:
        startups = _ranked_page(qs, offset=offset, limit=limit)
    return {"total": total, "startups": startups}


def startup_page(*, filters: StartupFilters, offset: int, limit: int) -> StartupPage:
    """One page of `startup_list`, each startup carrying `rank` within the filtered set.

    The expensive parts (the exact total, which startups are on the page and their ranks) are
    kept in the shared cache per filter set and page, under the data generation token (so a
    write anywhere starts afresh) and for LIST_CACHE_SECONDS at most; 0 turns that off. The
    rows come from this process's current copies, the rest from one primary-key query.
    """
    seconds = settings.LIST_CACHE_SECONDS
    token = _LIST_ROWS.token()  # read before the database, for the skeleton and the rows
    key = _list_cache_key(filters, offset, limit, token) if seconds > 0 else None
    cached = cache.get(key) if key else None
    if cached is None:
        qs = startup_list(filters=filters).only(*LIST_COLUMNS)
        with readcache.filling():
            built = _build_page(qs, filters, offset, limit)
        startups, total = built["startups"], built["total"]
        if token is not None:
            for startup in startups:
                _LIST_ROWS.put(startup.id, copy.copy(startup), token)
        if key:
            skeleton = {
                "total": total,
                "ids": [startup.id for startup in startups],
                "ranks": [startup.rank for startup in startups],
            }
            cache.set(key, skeleton, timeout=seconds)
    else:
        total = cached["total"]
        rows = _list_rows(cached["ids"]) if cached["ids"] else {}
        startups = []
        for startup_id, rank in zip(cached["ids"], cached["ranks"], strict=True):
            if (startup := rows.get(startup_id)) is not None:  # unpublished since: left out
                startup = copy.copy(startup)  # copies are shared; the rank is this page's
                startup.rank = rank
                startups.append(startup)
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


def startup_get(*, slug: str) -> Startup | None:
    """One published startup with everything its detail view shows, or None."""
    if not storable_slug(slug):
        return None
    return (
        published_startups()
        .select_related("verification", "owner")
        .prefetch_related(
            *_people_and_links(),
            Prefetch("verification__monthly", queryset=MonthlyRevenue.objects.order_by("month")),
        )
        .filter(slug=slug)
        .first()
    )


def ai_enabled_startups() -> QuerySet[Startup]:
    """Startups with a live AI visibility add-on: the set /api/ai and MCP serve."""
    return published_startups().filter(
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
) -> list[Startup]:
    """AI-enabled startups matching the filters, highest MRR first (one query).

    `category` and `industry` are slug-style words compared with `slug_word` of the stored
    values; `category` matches the primary category or any extra one. Those two are applied in
    Python because slugify has no portable SQL form and the AI set is small and curated.
    `verified` is the owner account's `is_verified`; `has_mrr` drops startups without MRR.
    """
    qs = ai_enabled_startups().select_related("owner", "verification")
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


def ai_startup_get(*, slug: str) -> Startup | None:
    """One AI-enabled startup with everything its AI profile shows, or None."""
    if not storable_slug(slug):
        return None
    return (
        ai_enabled_startups()
        .select_related("owner", "verification")
        .prefetch_related(
            *_people_and_links(),
        )
        .filter(slug=slug)
        .first()
    )
