"""Reads of the AI-enabled set that /api/ai and MCP serve (the rest of the dataset's reads are
startups/selectors.py)."""

from dataclasses import dataclass
from itertools import islice

from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.text import slugify

from startups.models import Startup
from startups.selectors import RANK_ORDER, profile_in, published_startups


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


@dataclass(frozen=True)
class AiFilters:
    """What an AI list asks (/api/ai discovery, the MCP search tools): `ai_startup_list`
    answers it and `ai_startup_may_join` checks a startup against the same value.

    `query` is free text found in the name, description, category or industry. `category` and
    `industry` are slug-style words compared with `slug_word` of the stored values; `category`
    matches the primary category or any extra one. `verified` is the owner account's
    `is_verified`; `has_mrr` drops startups without MRR; `limit` caps the answer.
    """

    query: str | None = None
    category: str | None = None
    industry: str | None = None
    verified: bool | None = None
    min_mrr: int | None = None
    max_mrr: int | None = None
    has_mrr: bool = False
    limit: int | None = None


def ai_startup_list(*, filters: AiFilters, db: str | None = None) -> list[Startup]:
    """AI-enabled startups matching `filters`, highest MRR first (one query).

    Category and industry are applied in Python because slugify has no portable SQL form and
    the AI set is small and curated.
    """
    query, verified, limit = filters.query, filters.verified, filters.limit
    min_mrr, max_mrr = filters.min_mrr, filters.max_mrr
    qs = ai_enabled_startups(db=db).select_related("owner", "verification", "provider_connection")
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
    if filters.has_mrr:
        qs = qs.filter(mrr__isnull=False)
    if min_mrr is not None:
        qs = qs.filter(mrr__gte=min_mrr)
    if max_mrr is not None:
        qs = qs.filter(mrr__lte=max_mrr)
    qs = qs.order_by(*RANK_ORDER)
    category, industry = slug_word(filters.category), slug_word(filters.industry)
    if not category and not industry:
        return list(qs if limit is None else qs[:limit])

    def matches(startup: Startup) -> bool:
        categories = {slug_word(c) for c in [startup.category, *(startup.categories or [])]}
        return (not category or category in categories) and (
            not industry or slug_word(startup.industry) == industry
        )

    # Stream in rank order and stop at `limit`: no need to load the whole AI set.
    return list(islice(filter(matches, qs.iterator(chunk_size=200)), limit))


def ai_startup_may_join(
    startup: Startup, *, filters: AiFilters, shown: int = 0, lowest_mrr: int | None = None
) -> bool:
    """Whether `startup` (AI-enabled, read with its owner) may be among `ai_startup_list`'s
    answer to `filters`, which showed `shown` startups, the last with MRR `lowest_mrr`:
    never False for one that would be (kept /api/ai and MCP answers rely on it).

    `query` is compared as SQL does (case-insensitive substring) when the text is ASCII;
    otherwise the database's case folding decides, so the startup may match. A full answer
    (`limit` reached) only changes for a startup ranked above its last one (MRR first)."""
    query, verified, limit = filters.query, filters.verified, filters.limit
    min_mrr, max_mrr = filters.min_mrr, filters.max_mrr
    if filters.has_mrr and startup.mrr is None:
        return False
    if min_mrr is not None and (startup.mrr is None or startup.mrr < min_mrr):
        return False
    if max_mrr is not None and (startup.mrr is None or startup.mrr > max_mrr):
        return False
    owner_verified = startup.owner is not None and startup.owner.is_verified
    if verified is not None and verified != owner_verified:
        return False
    texts = [startup.name, startup.description, startup.category, startup.industry]
    if query and all(text is None or text.isascii() for text in [query, *texts]):
        needle = query.lower()
        if not any(text and needle in text.lower() for text in texts):
            return False
    categories = {slug_word(c) for c in [startup.category, *(startup.categories or [])]}
    if (category := slug_word(filters.category)) and category not in categories:
        return False
    if (industry := slug_word(filters.industry)) and slug_word(startup.industry) != industry:
        return False
    if limit is None or shown < limit or lowest_mrr is None:
        return True
    return startup.mrr is not None and startup.mrr >= lowest_mrr


def ai_startup_get(*, slug: str, db: str | None = None) -> Startup | None:
    """One AI-enabled startup with everything its AI profile shows, or None."""
    return profile_in(ai_enabled_startups(db=db), slug)
