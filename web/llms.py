"""/llms.txt, generated from the URL configuration, settings, plans and the MCP tool registry.

Every named route (admin aside) is listed with its real path, so the file cannot drift from the
routes: a new route shows up on its own, described here when it has an entry in ROUTE_DOCS.
The file parses with the reference `llms-txt` parser (tests/web/test_llms_txt.py).
"""

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.views.decorators.http import require_safe

from core.formats import site_url
from mcpserver.arguments import DEFAULT_LIMIT, MAX_LIMIT
from mcpserver.protocol import SUPPORTED_VERSIONS
from mcpserver.tools import TOOLS
from quota.plans import FREE, PRO

# Routes that are not part of the public surface: "/" only redirects to this file; the
# dashboard's form actions and e-mailed links are reached from there, not addressed directly; the
# Routes that are not part of the public surface: the
# dashboard's form actions are reached from the dashboard page, not addressed directly; the
# health probes are for load balancers; the bench views exist only under `make bench`.
HIDDEN_ROUTES = {
    "logout",
    "key-create",
    "key-created",
    "key-revoke",
    # The e-mailed confirmation link and the dashboard's "send it again" button.
    "email-confirm",
    "email-confirm-resend",
    # Account management pages are reached from the dashboard, not addressed by agents.
    "account",
    "account-delete",
    "password_change",
    "password_change_done",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
    "healthz",
    "readyz",
    "bench-bare",
    "bench-minimal",
    # A founder's own startup pages and actions, and Stripe's webhook: not addressed directly.
    "founder-startup",
    "founder-startup-edit",
    "founder-startup-connect",
    "founder-startup-sync",
    # The dashboard's webhook form and "send again" button (webhooks/urls.py).
    "webhook-create",
    "webhook-resend",
    "founder-startup-disconnect",
    "billing-upgrade",
    "billing-manage",
    "stripe-webhook",
}
HIDDEN_NAMESPACES = {"admin"}


@dataclass(frozen=True)
class RouteDoc:
    section: str
    title: str
    method: str
    text: str
    # False when a key-less GET does not answer 200 (Pro only): written as code, not a link.
    linkable: bool = True


REST, AI, MCP, AUTHENTICATION, PLANS, FAIR_USE, DOCS, PAGES = (
    "REST API (/api/v1, camelCase)",
    "AI surface (/api/ai, snake_case)",
    "MCP server (/api/mcp)",
    "Authentication",
    "Plans and limits",
    "Fair use and data use",
    "Docs",
    "Pages",
)
SECTIONS = [REST, AI, MCP, AUTHENTICATION, PLANS, FAIR_USE, DOCS, PAGES]
ROUTE_DOCS = {
    "startup-list": RouteDoc(
        REST,
        "List startups",
        "GET",
        "Paginated list, `{data, meta}`. Query: page (from 1), limit (1 to the plan maximum, "
        f"default {FREE.default_limit}), sort (mrr-desc, mrr-asc, name-asc, name-desc, "
        "growth-desc, updated-desc), "
        "q (text in name, category, description), category (partial match), onSale (true/false), "
        "minMrr, maxMrr (USD, inclusive), verified (true/false), website (a domain), country, "
        "updatedSince (ISO 8601), fields (sparse fieldset), cursor (meta.nextCursor of the "
        "previous page; one the server did not issue is 400 invalid_cursor). Each item's "
        "revenue {mrr, arr, verified, lastSyncedAt, growth30d} tells verified figures from "
        "self-reported ones; profileUrl is the page to credit. Invalid parameters are never "
        "errors; meta.warnings names them.",
    ),
    "change-feed": RouteDoc(
        REST,
        "Change feed",
        "GET",
        "Every visible change to a startup, oldest first, resumable: `{data: [{sequence, kind, "
        "slug, fields, changedAt, startup}], meta: {nextCursor, hasMore}}`. kind created or "
        "updated: upsert startup (the list item now); deleted or unpublished: tombstone, remove "
        "slug. Send meta.nextCursor back as cursor (always set); at least once; entries kept 90 "
        "days (410 cursor_expired before that).",
    ),
    "category-list": RouteDoc(
        REST,
        "Categories",
        "GET",
        "`{data: [{name, count}]}`: every primary category with its number of startups. Spends "
        "no allowance.",
    ),
    "startup-export": RouteDoc(
        REST,
        "NDJSON export (Pro)",
        "GET",
        "The whole filtered list (the list's filters, sort and fields) as NDJSON, one item per "
        'line, then `{"meta": {"count": N}}`; gzip when asked. Pro only: 403 `pro_required`.',
        linkable=False,
    ),
    "startup-detail": RouteDoc(
        REST,
        "One startup",
        "GET",
        "`{data}` with founders, socials, revenue {mrr, arr, currency, verified, lastSyncedAt, "
        "growth30d} and the verification object (provider figures, monthly history, status "
        "ok|stale|key_revoked|error, lastSyncedAt, methodology, methodologyVersion) when "
        "verified. 404 `not_found` for an unknown slug.",
    ),
    "startup-history": RouteDoc(
        REST,
        "Daily history",
        "GET",
        "`{data: [{date, mrr, arr, customers, last30Days}], meta}`: one snapshot per UTC day a "
        "sync succeeded, filtered by from/to (YYYY-MM-DD, inclusive). One record on Free; 404 as "
        "the detail.",
    ),
    "startup-attestation": RouteDoc(
        REST,
        "Signed attestation",
        "GET",
        "`{data: {jws, keyId, leafIndex, logEntry, treeHead, inclusionProof}}`: a compact JWS "
        "(EdDSA, Ed25519) over the verified figures, verifiable offline with the keys at "
        "/.well-known/jwks.json (check its `iss`, `sub` (the slug) and `exp`), and its "
        "leaf's inclusion proof in a signed tree head of the transparency log. 404 unless "
        "verified; one record on Free.",
    ),
    "log-tree-head": RouteDoc(
        REST,
        "Transparency log: signed tree head",
        "GET",
        "`{data: {treeSize, timestamp, sha256RootHash, signature, keyId}}`: the latest signed "
        "head of the append-only log of attested statements (RFC 6962 Merkle tree, Ed25519 JWS "
        "with the JWKS key); `treeSize=N` for an earlier one. Spends no allowance.",
    ),
    "log-entries": RouteDoc(
        REST,
        "Transparency log: entries",
        "GET",
        "`start`, `end` (inclusive, at most 100): `{data: [{leafIndex, leafHash, entry}], meta}`, "
        "entries base64. Spends no allowance; bad parameters 400 `invalid_parameter`.",
        linkable=False,
    ),
    "log-inclusion-proof": RouteDoc(
        REST,
        "Transparency log: inclusion proof",
        "GET",
        "`leaf` (index or hex leaf hash), `treeSize`: `{data: {leafIndex, treeSize, leafHash, "
        "auditPath}}`. Spends no allowance.",
        linkable=False,
    ),
    "log-consistency-proof": RouteDoc(
        REST,
        "Transparency log: consistency proof",
        "GET",
        "`first`, `second` (tree sizes): `{data: {first, second, consistency}}`, proving the "
        "later tree extends the earlier one. Spends no allowance.",
        linkable=False,
    ),
    "jwks": RouteDoc(
        DOCS,
        "Attestation keys (JWKS)",
        "GET",
        "The public Ed25519 keys (JWK Set, `kid` per key) that verify attestations.",
    ),
    "methodology": RouteDoc(
        DOCS,
        "Methodology",
        "GET",
        "How every verified figure is computed (versioned: /docs/methodology/v2, v1 stays "
        "served); each verification object links the version of its figures.",
    ),
    "ai-discovery": RouteDoc(
        AI,
        "AI discovery index",
        "GET",
        "snake_case index of the startups with a live AI visibility add-on: source, site, "
        "updated_at, count, startups[] (name, slug, description, category, website, profile_url, "
        "api_url, verified). Filters: category and industry as slug-style words "
        '(`developer-tools` matches "Developer Tools"; category also matches secondary '
        "categories), verified=true|false (owner account verified; other values are ignored).",
    ),
    "ai-profile": RouteDoc(
        AI,
        "AI profile",
        "GET",
        "schema.org-style profile (type `Organization`): industry, categories, founders[] "
        "{name, title, url}, founded_year, technologies, verified and verification_status "
        "(`owner_verified` or `unverified`), revenue {mrr, arr, currency, verified, source, "
        "growth_30d, synced_at, status}, "
        "same_as links, api_url, discovery. 404 `not_found` unless the add-on is live.",
    ),
    "mcp": RouteDoc(
        MCP,
        "MCP endpoint",
        "POST",
        "Remote Model Context Protocol server: JSON-RPC 2.0 over Streamable HTTP, stateless, "
        "POST only (other methods get 405), JSON responses, no sessions. Serves the same "
        "AI-enabled set as the discovery index.",
    ),
    "openapi-schema": RouteDoc(
        DOCS,
        "OpenAPI 3.1 document",
        "GET",
        "Machine-readable contract of /api/v1 (camelCase) and /api/ai (snake_case): every "
        "parameter with type, default and range, every response field with its nullability, "
        "the error object, both key headers and the X-Service-* headers.",
    ),
    "api-docs": RouteDoc(
        DOCS,
        "Interactive API reference",
        "GET",
        "Swagger UI over the OpenAPI document (served by this site, works offline).",
    ),
    "api-guide": RouteDoc(
        DOCS,
        "API guide",
        "GET",
        "How to page with meta.hasMore, the plans and the monthly allowance, the headers, the "
        "MCP server, the Python client and the data-use rules.",
    ),
    "startup-profile": RouteDoc(
        PAGES,
        "Public profile page",
        "GET",
        "HTML page of one startup; `profileUrl` / `profile_url` / `service_profile` point here. "
        "Credit it when you show the data.",
    ),
    "llms-txt": RouteDoc(PAGES, "This file", "GET", "Plain-text overview for language models."),
    "home": RouteDoc(
        PAGES,
        "Home page",
        "GET",
        "What the service is, live counts, a sample request and answer, setup for MCP clients.",
    ),
    "startup-browse": RouteDoc(
        PAGES,
        "Startup list (HTML)",
        "GET",
        "Server-rendered leaderboard: q, category, verified=true, onSale=true, sort, page. "
        "Capped at the first pages and cached; use the REST API for data.",
    ),
    "startup-markdown": RouteDoc(
        PAGES,
        "Profile as Markdown",
        "GET",
        "The public profile as text/markdown, for agents: figures, whether they are verified "
        "(provider, last sync) or self-reported, founders, links, monthly history.",
    ),
    "startup-badge": RouteDoc(
        PAGES,
        "Embeddable badge",
        "GET",
        "image/svg+xml badge: verified MRR or 'self-reported'. Cached (Cache-Control public).",
    ),
    "signup": RouteDoc(
        PAGES, "Sign up", "GET", "Create a founder account (free) to get an API key."
    ),
    "login": RouteDoc(PAGES, "Sign in", "GET", "Sign in to the founders' dashboard."),
    "dashboard": RouteDoc(
        PAGES,
        "Founders' dashboard",
        "GET",
        "Create API keys (shown once), revoke them, see the plan and this month's usage.",
    ),
    "webhooks": RouteDoc(
        PAGES,
        "Webhooks",
        "GET",
        "Register webhook endpoints, see recent deliveries and send one again.",
    ),
    "webhook-endpoints": RouteDoc(
        REST,
        "Webhook endpoints",
        "GET",
        "With an API key: list (GET) or register (POST) signed webhook endpoints; the secret "
        "is answered once. Events and signing: the README's Webhooks section.",
        linkable=False,
    ),
    "webhook-endpoint": RouteDoc(
        REST,
        "One webhook endpoint",
        "GET",
        "With an API key: read (GET), change (PATCH) or delete (DELETE) one endpoint.",
        linkable=False,
    ),
    "webhook-deliveries": RouteDoc(
        REST,
        "A webhook endpoint's deliveries",
        "GET",
        "With an API key: the endpoint's recent deliveries, newest first (status, attempts, "
        "next attempt, last response code).",
        linkable=False,
    ),
    "founder-startups": RouteDoc(
        PAGES,
        "My startups",
        "GET",
        "A founder's startups and claims; connect a payment provider (read-only key) to verify.",
    ),
    "founder-startup-new": RouteDoc(
        PAGES, "Add a startup", "GET", "Add your startup with self-reported figures."
    ),
    "founder-startup-claim": RouteDoc(
        PAGES,
        "Claim a startup",
        "GET",
        "Ask to own a listed startup that has no owner; an operator approves the claim.",
    ),
}


@dataclass(frozen=True)
class Route:
    name: str
    path: str  # with {placeholders} for path parameters


def _walk(patterns: list, namespace: str | None = None):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace in HIDDEN_NAMESPACES:
                continue
            inner = pattern.namespace
            if namespace and inner:
                inner = f"{namespace}:{inner}"
            yield from _walk(pattern.url_patterns, inner or namespace)
        elif isinstance(pattern, URLPattern) and pattern.name:
            name = f"{namespace}:{pattern.name}" if namespace else pattern.name
            if name not in HIDDEN_ROUTES:
                yield name, list(pattern.pattern.regex.groupindex)


def public_routes() -> list[Route]:
    """Every public named route with its path, parameters written as `{name}`."""
    routes = []
    for name, params in _walk(get_resolver().url_patterns):
        path = reverse(name, kwargs={param: f"PARAM{param}PARAM" for param in params})
        for param in params:
            path = path.replace(f"PARAM{param}PARAM", "{" + param + "}")
        routes.append(Route(name=name, path=path))
    return routes


def _plan_text(plan) -> str:
    allowance = (
        f"{plan.monthly_allowance} records per calendar month (UTC)"
        if plan.monthly_allowance is not None
        else "no monthly cap"
    )
    return f"limit 1 to {plan.max_limit} per request, {allowance}."


def _linkable(route: Route) -> bool:
    """A plain link must answer a GET: no `{placeholder}` template, no POST-only endpoint."""
    doc = ROUTE_DOCS.get(route.name)
    return "{" not in route.path and (doc is None or (doc.method == "GET" and doc.linkable))


def llms_txt(request: HttpRequest) -> str:
    """The whole file as text, in the llms.txt format (https://llmstxt.org): an H1, a blockquote
    summary, prose (no headings) before the first H2, then H2 sections that hold nothing but
    `- [title](url): notes` link lines. Every link answers a GET; URL templates and the POST-only
    MCP endpoint are written as code in the prose, never as links."""
    base = site_url(request)
    name = settings.SERVICE_NAME
    routes = public_routes()
    guide = f"{base}{reverse('api-guide')}"

    by_section: dict[str, list[str]] = {section: [] for section in SECTIONS}
    patterns = []
    for route in routes:
        doc = ROUTE_DOCS.get(route.name)
        method = doc.method if doc else "GET"
        if not _linkable(route):
            patterns.append(f"- `{method} {route.path}`: {doc.title}. {doc.text}")
            continue
        patterns.append(f"- `{method} {route.path}`" + (f": {doc.title}." if doc else ""))
        if doc is None:
            by_section.setdefault("Other pages", []).append(f"- [{route.name}]({base}{route.path})")
            continue
        by_section[doc.section].append(f"- [{doc.title}]({base}{route.path}): {doc.text}")
    by_section[MCP] += [
        f"- [Connecting an MCP client]({guide}#mcp): POST JSON-RPC 2.0 to "
        f"`{base}{reverse('mcp')}` (Streamable HTTP, stateless, JSON responses, no sessions; "
        "other HTTP methods get 405). Protocol versions: "
        + ", ".join(SUPPORTED_VERSIONS)
        + " (initialize handshake, or `server/discover` with per-request `_meta` for "
        "2026-07-28). Results are in `structuredContent` and as JSON text in `content[0].text`; "
        "tool failures set `isError`; an unknown tool is JSON-RPC error -32602. `limit` defaults "
        f"to {DEFAULT_LIMIT}; values above {MAX_LIMIT} are capped at {MAX_LIMIT}.",
        *[f"- [Tool `{tool.name}`]({guide}#mcp): {tool.description}" for tool in TOOLS.values()],
    ]
    by_section[DOCS].append(
        f"- [Python client]({guide}#python): The official client, package `openstartup` "
        "(clients/python in the repository): auto-paging list, retries on 5xx and 429 "
        "honouring Retry-After, typed models, errors with code, message and request id."
    )
    by_section[AUTHENTICATION] = [
        f"- [Keys and headers]({guide}#headers): Optional everywhere; without a key you get Free "
        "limits, counted per IP address. Send a key as `Authorization: Bearer <API_KEY>` or "
        "`X-API-Key: <API_KEY>`; keep it server-side. A wrong or revoked key gets 401 "
        "`invalid_api_key`; it is never treated as no key.",
        f"- [Founders' dashboard]({base}{reverse('dashboard')}): Keys are created here (sign-in "
        "required) and shown once.",
    ]
    by_section[PLANS] = [
        f"- [{plan.name} plan]({guide}#plans): {_plan_text(plan)}" for plan in (FREE, PRO)
    ] + [
        f"- [Metering]({guide}#plans): Each startup in a /api/v1 list counts as one record, "
        "each single-startup call as one. Limits above the plan maximum are lowered "
        "(`meta.notice` says so); an exhausted Free allowance gives 429 "
        "`monthly_quota_exceeded` until the 1st (UTC). /api/ai and /api/mcp do NOT spend the "
        "monthly allowance; they serve the curated AI-enabled set. /api/ai answers are cached "
        f"for up to {settings.AI_CACHE_SECONDS // 60} minutes (ETag, 304 on If-None-Match).",
        f"- [Response headers]({guide}#headers): X-Service-Plan, X-Service-Max-Limit and, on "
        "Free, X-Service-Quota-Limit, X-Service-Quota-Remaining, X-Service-Quota-Reset.",
    ]
    by_section[FAIR_USE] = [
        f"- [Fair use]({guide}#data-use): About 60 requests per minute. Cache what you fetch, "
        "page instead of repeating queries; do not rotate IP addresses or create extra accounts "
        "to avoid the Free allowance. Abusive traffic may be blocked."
        + (
            f" Enforced: more than {settings.FAIR_USE_REQUESTS_PER_MINUTE} requests in a minute "
            "per caller (key account or address) get 429 `rate_limited` with Retry-After and "
            "RateLimit headers."
            if settings.FAIR_USE_REQUESTS_PER_MINUTE > 0
            else ""
        )
        + " Never put an API key in a URL: a query-string key gets 400 `api_key_in_query`.",
        f"- [Data use]({guide}#data-use): Credit the service with a link to the startup's "
        "profile URL where data is shown. Do not resell the raw dataset. Do not present "
        f"self-reported figures as verified. More than {PRO.max_limit} records per request or a "
        "bulk export: contact the operator.",
    ]

    lines = [
        f"# {name}",
        "",
        f"> {name} is a read-only data API of startup revenue figures: monthly and annual "
        "recurring revenue (MRR, ARR) in whole US dollars, with founders, categories and links. "
        "Every figure says whether it is verified (imported from the startup's payment provider) "
        "or self-reported.",
        "",
        "JSON is UTF-8; unknown values are null, never omitted and never 0; timestamps are ISO "
        "8601 UTC (`YYYY-MM-DDTHH:MM:SS.sssZ`), months `YYYY-MM`. Errors look like "
        '`{"error": {"code": "...", "message": "..."}}`. CORS allows any origin.',
        "",
        "URL patterns (`{slug}` is a startup's slug as returned by the list; templates are "
        "written as code, not links):",
        "",
        *patterns,
        "",
    ]
    for section, entries in by_section.items():
        if entries:
            lines += [f"## {section}", "", *entries, ""]
    return "\n".join(lines)


@require_safe
def llms_txt_view(request: HttpRequest) -> HttpResponse:
    """The llms.txt overview, generated from the URL configuration and settings."""
    return HttpResponse(llms_txt(request), content_type="text/plain; charset=utf-8")
