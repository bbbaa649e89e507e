"""Reference views for `make bench`, mounted only with BENCH_VIEWS=1.

Row 1 (`bare`): a plain Django view returning a fixed 4 KB JSON document: the framework floor.
Row 2 (`minimal`): the naive implementation of the list: the same selector query through the ORM
(count, then the page of model instances), plain dicts, Django's JsonResponse; no
authentication, no quota, no rank, no camelCase renderer.
"""

from django.http import HttpRequest, JsonResponse

from startups.selectors import StartupFilters, startup_list

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
