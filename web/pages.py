"""The public HTML pages: landing, startup list, profile and its Markdown and badge twins.

They spend no API allowance, so each answer is kept whole in the shared cache for
PUBLIC_PAGE_CACHE_SECONDS, keyed by the data token (core/readcache.py) as the API's
answers are: a write makes every page afresh on the next request. The list stops at
PUBLIC_LIST_MAX_PAGES pages: a crawler gets nothing here faster than the API would give it.
Reads go through the same selectors and serializers as the API.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

import orjson
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import cache_page
from django.views.decorators.http import require_safe

from billing.templatetags.plans import pro_offer
from core import readcache
from core.formats import site_url, usd_text
from restapi.params import (
    StartupFilterSerializer,
)
from restapi.profiles import startup_profile_json
from startups.pagecache import startup_page
from startups.presentation import badge_embed_html, badge_svg, revenue_chart, startup_markdown
from startups.profilerow import startup_profile
from startups.selectors import (
    SORT_ORDERS,
    StartupFilters,
    dataset_counts,
)
from startups.serializers import (
    profile_data,
    shape_list_rows,
)
from startups.trust import Trust, trust_by_id

PREVIEW_SIZE = 5  # the landing page's top verified startups

SORT_LABELS = {
    "mrr-desc": "MRR, highest first",
    "mrr-asc": "MRR, lowest first",
    "name-asc": "Name, A to Z",
    "name-desc": "Name, Z to A",
    "growth-desc": "MRR growth (30 days), highest first",
    "updated-desc": "Recently updated first",
}


def public_page(view: Callable[..., HttpResponse] | None = None, *, fresh: bool = False) -> Any:
    """GET/HEAD only, the whole answer kept in the shared cache (per site address and URL).
    `fresh`: the page shows a sync time, which a sync that changed nothing moves too."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            seconds = settings.PUBLIC_PAGE_CACHE_SECONDS
            if seconds <= 0:
                return view(request, *args, **kwargs)
            # Keyed by the data token: any write to the dataset starts every page afresh
            # (and a sync's stamp those showing the sync time: the fresh token).
            prefix = f"public-page:{readcache.current('data')}"
            if fresh:
                prefix += f":{readcache.current('fresh')}"
            return cache_page(seconds, key_prefix=prefix)(view)(request, *args, **kwargs)

        return require_safe(wrapped)

    return decorate if view is None else decorate(view)


def _detail(request: HttpRequest, slug: str) -> dict:
    profile = startup_profile(slug=slug)
    if profile is None:
        raise Http404("No such startup")
    return profile_data(profile, request)


def list_rows(startups: list) -> list[dict]:
    """A page of list items (what the API serves) with each row's badge (`trust`)."""
    trusts = trust_by_id([startup.id for startup in startups])
    rows = shape_list_rows(startups)
    return [{**row, "trust": trusts[s.id]} for row, s in zip(rows, startups, strict=True)]


def profile_description(startup: dict, trust: Trust) -> str:
    """The profile's one-line summary for search results and link previews."""
    mrr = startup["revenue"]["mrr"]
    parts = [f"{startup['name']}: " + (f"{usd_text(mrr)} MRR, " if mrr is not None else "")]
    parts.append(f"{trust.label.lower()} revenue")
    if startup["category"]:
        parts.append(f" ({startup['category']})")
    if startup["description"]:
        parts.append(f". {startup['description'][:140]}")
    return "".join(parts)


def api_examples(base: str) -> dict[str, str]:
    """The same request in curl, Python (httpx) and JavaScript (fetch), with this site's URL."""
    url = f"{base}/api/v1/startups?limit=3&sort=mrr-desc"
    return {
        "curl": f'curl -s "{url}" \\\n  -H "Authorization: Bearer $OPENSTARTUP_API_KEY"',
        "python": (
            "import os\nimport httpx\n\n"
            "response = httpx.get(\n"
            f'    "{base}/api/v1/startups",\n'
            '    params={"limit": 3, "sort": "mrr-desc"},\n'
            '    headers={"Authorization": f"Bearer {os.environ[\'OPENSTARTUP_API_KEY\']}"},\n'
            ")\n"
            'for startup in response.json()["data"]:\n'
            '    print(startup["name"], startup["revenue"]["mrr"])'
        ),
        "javascript": (
            f'const response = await fetch("{url}", {{\n'
            "  headers: { Authorization: `Bearer ${process.env.OPENSTARTUP_API_KEY}` },\n"
            "});\n"
            "const { data, meta } = await response.json();\n"
            "console.log(data.map((s) => s.name), meta.hasMore);"
        ),
    }


def mcp_configs(base: str) -> dict[str, str]:
    """MCP client configuration for this server (Claude Desktop, Cursor, VS Code)."""
    url = f"{base}/api/mcp"
    remote = {"mcpServers": {"openstartup": {"command": "npx", "args": ["mcp-remote", url]}}}
    cursor = {"mcpServers": {"openstartup": {"url": url}}}
    vscode = {"servers": {"openstartup": {"type": "http", "url": url}}}

    def dump(value: dict) -> str:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()

    return {
        "claude": dump(remote),
        "cursor": dump(cursor),
        "vscode": dump(vscode),
    }


def docs_context(request: HttpRequest) -> dict:
    """What the landing page and the guide share: runnable examples with this site's URL."""
    base = site_url(request)
    return {"base_url": base, "examples": api_examples(base), "mcp": mcp_configs(base)}


@public_page
def api_guide(request: HttpRequest) -> HttpResponse:
    """The hand-written guide, its examples filled in with this site's address."""
    context = {**pro_offer(), **docs_context(request)}
    return render(request, "docs/guide.html", context)


@public_page
def landing(request: HttpRequest) -> HttpResponse:
    """What the service is, live counts, a real request and its answer, where to go next."""
    top = startup_page(filters=StartupFilters(), offset=0, limit=1).startups
    sample = None
    if top:
        profile = startup_profile_json(slug=top[0].slug, request=request)
        body = orjson.dumps({"data": orjson.loads(profile)}, option=orjson.OPT_INDENT_2)
        sample = {"slug": top[0].slug, "body": body.decode()}
    verified = startup_page(filters=StartupFilters(verified=True), offset=0, limit=PREVIEW_SIZE)
    context = {
        "counts": dataset_counts(),
        "sample": sample,
        "preview": list_rows(verified.startups),
        **docs_context(request),
    }
    return render(request, "startups/landing.html", context)


def _page_url(query: dict, page: int) -> str:
    return "?" + urlencode({**query, "page": page})


@public_page
def startup_browse(request: HttpRequest) -> HttpResponse:
    """The leaderboard: search, category, verified-only, on-sale, sort and pages (plain links)."""
    params = StartupFilterSerializer(data=request.GET)
    params.is_valid()
    filters = params.filters()
    size, max_pages = settings.PUBLIC_LIST_PAGE_SIZE, settings.PUBLIC_LIST_MAX_PAGES
    requested = params.page_number()
    page = min(requested, max_pages)
    result = startup_page(filters=filters, offset=(page - 1) * size, limit=size)
    pages = min(max_pages, max(1, -(-result.total // size)))
    query = {
        key: value
        for key, value in {
            "q": filters.q or "",
            "category": filters.category or "",
            "verified": "true" if filters.verified else "",
            "onSale": "true" if filters.on_sale else "",
            "sort": filters.sort if filters.sort != "mrr-desc" else "",
        }.items()
        if value
    }
    context = {
        "startups": list_rows(result.startups),
        "total": result.total,
        "filters": filters,
        "sorts": [(value, SORT_LABELS[value]) for value in SORT_ORDERS],
        "page": page,
        "pages": pages,
        "first_rank": (page - 1) * size + 1,
        "capped": requested > max_pages or result.total > max_pages * size,
        "max_pages": max_pages,
        "page_size": size,
        "previous_url": _page_url(query, page - 1) if page > 1 else None,
        "next_url": _page_url(query, page + 1) if page < pages else None,
        "page_links": [(n, _page_url(query, n)) for n in range(1, pages + 1)],
    }
    return render(request, "startups/list.html", context)


@public_page(fresh=True)
def profile_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The public profile page that profileUrl points to."""
    startup = _detail(request, slug)
    verification = startup["verification"]
    chart = revenue_chart(verification["monthly"]) if verification else None
    trust = Trust()
    if verification:
        trust = Trust(
            verification["provider"], verification["status"], verification["last_synced_at"]
        )
    context = {
        "startup": startup,
        "chart": chart,
        "badge_embed": badge_embed_html(startup),
        "trust": trust,
        "meta_title": f"{startup['name']} on OpenStartup",
        "meta_description": profile_description(startup, trust),
    }
    return render(request, "startups/profile.html", context)


@public_page
def profile_markdown(request: HttpRequest, slug: str) -> HttpResponse:
    """The profile as Markdown, for agents."""
    return HttpResponse(
        startup_markdown(_detail(request, slug)), content_type="text/markdown; charset=utf-8"
    )


@public_page
def profile_badge(request: HttpRequest, slug: str) -> HttpResponse:
    """An embeddable SVG badge: verified MRR, or 'self-reported'."""
    response = HttpResponse(badge_svg(_detail(request, slug)), content_type="image/svg+xml")
    # Embedded on other sites: any cache may keep it a few minutes.
    response["Cache-Control"] = f"public, max-age={settings.PUBLIC_PAGE_CACHE_SECONDS}"
    return response
