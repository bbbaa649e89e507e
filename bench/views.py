"""Reference views for `make bench`, mounted only with BENCH_VIEWS=1.

Row 1 (`bare`): a plain Django view returning a fixed 4 KB JSON document: the framework floor.
Row 2 (`minimal`): the naive implementation of the list: the same selector query through the ORM
(count, then the page of model instances), plain dicts, Django's JsonResponse; no
authentication, no quota, no rank, no camelCase renderer.
Row 2d (`minimal detail`): the naive implementation of the detail: the profile through the ORM
(`startups.selectors.startup_get`: verification, owner and connection joined; founders, socials
and monthly revenue prefetched; the service reads it in one statement instead,
startups/profilerow.py), plain dicts, JsonResponse; no authentication, no quota, no cache.
"""

from django.http import Http404, HttpRequest, JsonResponse

from startups.selectors import StartupFilters, startup_get, startup_list

# A fixed document of about 4 KB (31 list-item-like objects).
BARE_DOCUMENT = {
    "data": [
        {
            "name": f"Startup {i:02d}",
            "slug": f"startup-{i:02d}",
            "category": "Developer Tools",
            "revenue": {"mrr": 1000 + i, "arr": 12000 + 12 * i},
            "onSale": False,
        }
        for i in range(31)
    ]
}


def bare(request: HttpRequest) -> JsonResponse:
    return JsonResponse(BARE_DOCUMENT)


def minimal_list(request: HttpRequest) -> JsonResponse:
    try:
        page = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        page = 1
    limit = 10
    qs = startup_list(filters=StartupFilters())
    total = qs.count()
    startups = qs[(page - 1) * limit : page * limit]
    data = [
        {
            "name": s.name,
            "slug": s.slug,
            "icon": s.icon,
            "description": s.description,
            "website": s.website,
            "category": s.category,
            "founderName": s.founder_name,
            "revenue": {"mrr": s.mrr, "arr": s.arr},
            "onSale": s.on_sale,
        }
        for s in startups
    ]
    meta = {"total": total, "page": page, "limit": limit, "hasMore": page * limit < total}
    return JsonResponse({"data": data, "meta": meta})


def _iso(value) -> str | None:
    return None if value is None else value.isoformat()


def minimal_detail(request: HttpRequest, slug: str) -> JsonResponse:
    startup = startup_get(slug=slug)
    if startup is None:
        raise Http404
    verification = getattr(startup, "verification", None)
    connection = getattr(startup, "provider_connection", None)
    data = {
        "name": startup.name,
        "slug": startup.slug,
        "icon": startup.icon,
        "description": startup.description,
        "website": startup.website,
        "category": startup.category,
        "country": startup.country,
        "founded": startup.founded,
        "teamSize": startup.team_size,
        "revenue": {"mrr": startup.mrr, "arr": startup.arr, "currency": startup.currency},
        "onSale": startup.on_sale,
        "askingPrice": startup.asking_price,
        "founders": [
            {"name": f.name, "title": f.title, "twitter": f.twitter, "linkedin": f.linkedin}
            for f in startup.founders.all()
        ],
        "socials": [{"platform": s.platform, "url": s.url} for s in startup.socials.all()],
        "verification": None
        if verification is None
        else {
            "provider": verification.provider,
            "level": verification.level,
            "verifiedAt": _iso(verification.verified_at),
            "mrr": verification.mrr,
            "customers": verification.customers,
            "monthly": [
                {"month": _iso(m.month), "gross": m.gross, "refunds": m.refunds}
                for m in verification.monthly.all()
            ],
            "lastSyncedAt": _iso(getattr(connection, "last_synced_at", None)),
            "status": getattr(connection, "status", None),
        },
    }
    return JsonResponse({"data": data})
