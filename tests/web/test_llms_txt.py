"""GET /llms.txt: plain text, generated from the routes and settings so it cannot drift."""

from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from llms_txt import parse_llms_file

from mcpserver.tools import TOOLS
from quota.plans import FREE, PRO
from web.llms import HIDDEN_ROUTES, ROUTE_DOCS, SECTIONS, public_routes


@pytest.fixture
def text(settings) -> str:
    settings.SITE_URL = "https://openstartup.example"
    response = Client().get("/llms.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    return response.content.decode()


def _all_named_routes(patterns, namespace=None):
    """An independent walk of the URL configuration: every named route but the admin's."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace == "admin":
                continue
            yield from _all_named_routes(pattern.url_patterns, pattern.namespace or namespace)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield f"{namespace}:{pattern.name}" if namespace else pattern.name


def test_follows_the_llms_txt_convention(text, settings):
    lines = text.splitlines()
    assert lines[0] == f"# {settings.SERVICE_NAME}"
    assert lines[2].startswith("> ")
    for heading in (
        "## REST API",
        "## AI surface",
        "## MCP server",
        "## Authentication",
        "## Plans and limits",
        "## Fair use and data use",
        "## Docs",
        "## Pages",
    ):
        assert f"\n{heading}" in text
    # Each API section names its base path and its casing.
    assert "\n## REST API (/api/v1, camelCase)\n" in text
    assert "\n## AI surface (/api/ai, snake_case)\n" in text
    assert "\n## MCP server (/api/mcp)\n" in text
    # An H2 holds only links, so the URL patterns (templates) are prose before the first H2:
    # the reference parser rejects a section of code lines.
    assert text.index("URL patterns") < text.index("\n## ")


PARAMETERS_REQUIRED = ("log-entries", "log-inclusion-proof", "log-consistency-proof")


def test_names_every_public_route(text):
    names = set(_all_named_routes(get_resolver().url_patterns)) - HIDDEN_ROUTES
    routes = {route.name: route.path for route in public_routes()}
    assert set(routes) == names
    for name, path in routes.items():
        assert f" {path}`" in text, name
        # Templates and the POST-only endpoint are never links (they 404 / 405),
        # nor is the Pro-only export (a key-less GET is 403), nor the log's entries and proofs
        # (their parameters are required: a bare GET is a 400).
        linked = f"(https://openstartup.example{path})" in text
        # Nor the webhook routes: they need an API key (a key-less GET is a 401).
        keyed = ("webhook-endpoints", "webhook-endpoint", "webhook-deliveries")
        unlinked = ("mcp", "startup-export", *PARAMETERS_REQUIRED, *keyed)
        assert linked == ("{" not in path and name not in unlinked), name


def test_parses_with_the_reference_llms_txt_parser(text, settings):
    # The reference parser raises on any line in an H2 section that is not `- [title](url)`.
    parsed = parse_llms_file(text)
    assert parsed.title == settings.SERVICE_NAME
    assert parsed.summary.startswith(f"{settings.SERVICE_NAME} is a read-only data API")
    assert "#" not in "".join(line[:1] for line in parsed.info.splitlines())
    assert "`GET /api/v1/startups/{slug}`" in parsed.info
    assert "`POST /api/mcp`" in parsed.info
    # Every declared section is rendered, in order (their headings are checked by name above).
    assert list(parsed.sections) == SECTIONS
    assert [title.split(" (")[0] for title in SECTIONS[:3]] == [
        "REST API",
        "AI surface",
        "MCP server",
    ]
    for section, links in parsed.sections.items():
        assert links, section
        for link in links:
            assert link["title"] and link["desc"], link


@pytest.mark.django_db
def test_every_link_answers_a_get(text):
    links = [link for links in parse_llms_file(text).sections.values() for link in links]
    assert len(links) > 15
    for link in links:
        url = urlsplit(link["url"])
        assert f"{url.scheme}://{url.netloc}" == "https://openstartup.example", link
        assert "{" not in url.path, link
        assert resolve(url.path).url_name != "mcp", link
        response = Client().get(url.path, follow=True, secure=True)
        assert response.status_code == 200, link
        if url.fragment:
            assert f'id="{url.fragment}"'.encode() in response.content, link


def test_every_public_route_is_described(text):
    undocumented = {route.name for route in public_routes()} - set(ROUTE_DOCS)
    assert not undocumented, f"add these to web.llms.ROUTE_DOCS: {undocumented}"


def test_paths_come_from_the_url_configuration(text):
    assert f"`GET {reverse('ai-discovery')}`" in text
    assert "`GET /api/ai/startups/{slug}`" in text
    assert "`POST /api/mcp`" in text
    assert "`GET /api/v1/startups/{slug}`" in text
    assert "`GET /llms.txt`" in text


def test_lists_every_mcp_tool(text):
    for name in TOOLS:
        assert f"`{name}`" in text


def test_states_plans_limits_and_that_ai_and_mcp_are_free(text):
    assert f"{FREE.monthly_allowance} records per calendar month" in text
    assert f"limit 1 to {FREE.max_limit}" in text
    assert f"limit 1 to {PRO.max_limit}" in text
    assert "/api/ai and /api/mcp do NOT spend the monthly allowance" in text
    assert "invalid_api_key" in text
    assert "Do not present self-reported figures as verified" in text


def test_links_follow_the_request_host_without_site_url(settings):
    settings.SITE_URL = ""
    text = Client().get("/llms.txt", HTTP_HOST="localhost").content.decode()
    assert "http://localhost/api/ai/discovery" in text


def test_only_get_and_head(settings):
    assert Client().post("/llms.txt").status_code == 405
    assert Client().head("/llms.txt").status_code == 200
