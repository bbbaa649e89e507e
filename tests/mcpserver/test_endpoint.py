"""POST /api/mcp: raw JSON-RPC over HTTP for every rule and error case, then the official SDK."""

import json
from datetime import UTC, date, datetime

import anyio
import jsonschema
import pytest
from django.test import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcpserver.protocol import HANDSHAKE_VERSIONS
from quota.models import MonthlyUsage
from startups.models import RevenueSnapshot, Startup
from tests.support.caches import clear_caches
from tests.support.factories import make_ai_startup, make_founder, make_social, make_verification

URL = "/api/mcp"
MODERN = "2026-07-28"
TOOL_NAMES = [
    "search_startups",
    "get_startup",
    "find_verified_startups",
    "search_by_category",
    "search_by_industry",
    "search_by_revenue",
    "get_startup_history",
]
# One successful call per tool, against `dataset`.
GOOD_CALLS = {
    "search_startups": {"query": "acme", "category": "developer-tools", "limit": 5},
    "get_startup": {"slug": "acme"},
    "find_verified_startups": {},
    "search_by_category": {"category": "marketing"},
    "search_by_industry": {"industry": "financial-services", "limit": 3},
    "search_by_revenue": {"min_mrr": 100, "max_mrr": 5000},
    "get_startup_history": {"slug": "acme", "from": "2026-11-02"},
}


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_caches()
    yield
    clear_caches()


def make_dataset() -> None:
    acme = make_ai_startup(
        slug="acme",
        name="Acme",
        category="Developer Tools",
        mrr=1000,
        arr=12000,
        owner_verified=True,
    )
    make_founder(acme, name="Ada", twitter="https://x.com/ada")
    make_social(acme)
    make_verification(acme)
    make_ai_startup(slug="beta", name="Beta", category="Marketing", mrr=3000, arr=36000)
    make_ai_startup(
        slug="cash", name="Cash", category="Fintech", industry="Financial Services", mrr=None
    )
    make_ai_startup(slug="delta", name="Delta", category="Marketing", mrr=9000, owner_verified=True)
    for day, mrr in ((1, 900), (2, None), (3, 1000)):
        RevenueSnapshot.objects.create(
            startup=acme,
            date=date(2026, 11, day),
            provider="stripe",
            mrr=mrr,
            arr=None if mrr is None else mrr * 12,
            customers=10 + day,
            last_30_days=100 * day,
            total_revenue=5000,
            synced_at=datetime(2026, 11, day, 23, tzinfo=UTC),
        )


@pytest.fixture
def dataset(db) -> None:
    make_dataset()


def post(client: Client, body, *, headers: dict | None = None, raw: bool = False):
    data = body if raw else json.dumps(body)
    return client.post(URL, data=data, content_type="application/json", headers=headers or {})


def rpc(client: Client, method: str, params: dict | None = None, *, headers=None, id=1) -> dict:
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    response = post(client, message, headers=headers)
    assert response["Content-Type"] == "application/json"
    body = response.json()
    body["_status"] = response.status_code
    return body


def call_tool(client: Client, name: str, arguments: dict | None = None) -> dict:
    body = rpc(client, "tools/call", {"name": name, "arguments": arguments or {}})
    assert body["_status"] == 200
    return body["result"]


def tool_schemas(client: Client) -> dict[str, dict]:
    return {tool["name"]: tool for tool in rpc(client, "tools/list")["result"]["tools"]}


def modern_meta(version: str = MODERN) -> dict:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    }


def modern_headers(method: str, version: str = MODERN) -> dict:
    return {"MCP-Protocol-Version": version, "Mcp-Method": method}


# --- Lifecycle ---


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_echoes_a_supported_version(client, version):
    body = rpc(client, "initialize", {"protocolVersion": version, "capabilities": {}})
    result = body["result"]
    assert body["_status"] == 200
    assert body["id"] == 1
    assert result["protocolVersion"] == version
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] and result["serverInfo"]["version"]
    assert result["instructions"]
    assert "resultType" not in result


def test_initialize_answers_the_latest_version_for_an_unknown_one(client):
    result = rpc(client, "initialize", {"protocolVersion": "1999-01-01"})["result"]
    assert result["protocolVersion"] == "2025-11-25"


def test_no_session_id_is_minted(client):
    response = post(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response
    assert "sessionid" not in response.cookies


def test_initialize_is_never_required(client, dataset):
    assert [t["name"] for t in rpc(client, "tools/list")["result"]["tools"]] == TOOL_NAMES


@pytest.mark.parametrize(
    "method", ["notifications/initialized", "notifications/cancelled", "notifications/whatever"]
)
def test_notifications_get_202_and_an_empty_body(client, method):
    response = post(client, {"jsonrpc": "2.0", "method": method, "params": {"requestId": 1}})
    assert response.status_code == 202
    assert response.content == b""


def test_a_posted_response_gets_202(client):
    response = post(client, {"jsonrpc": "2.0", "id": 7, "result": {}})
    assert response.status_code == 202


def test_ping_answers_an_empty_object(client):
    body = rpc(client, "ping", id="abc")
    assert body["id"] == "abc"
    assert body["result"] == {}


# --- tools/list ---


def test_tools_list_has_the_seven_tools_with_schemas_and_annotations(client):
    tools = rpc(client, "tools/list")["result"]["tools"]
    assert [tool["name"] for tool in tools] == TOOL_NAMES
    for tool in tools:
        assert len(tool["description"]) > 30
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["outputSchema"]["type"] == "object"
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["openWorldHint"] is False
        if "limit" in schema["properties"]:
            # Values above 50 are capped, not refused, so the schema declares no maximum and its
            # description says so.
            assert schema["properties"]["limit"] == {
                "type": "integer",
                "minimum": 1,
                "default": 10,
                "description": schema["properties"]["limit"]["description"],
            }
            assert (
                "above 50 are accepted and capped at 50"
                in (schema["properties"]["limit"]["description"])
            )


def test_required_arguments_are_declared(client):
    tools = tool_schemas(client)
    required = {name: tools[name]["inputSchema"]["required"] for name in TOOL_NAMES}
    assert required == {
        "search_startups": [],
        "get_startup": ["slug"],
        "find_verified_startups": [],
        "search_by_category": ["category"],
        "search_by_industry": ["industry"],
        "search_by_revenue": [],
        "get_startup_history": ["slug"],
    }
    props = tools["search_startups"]["inputSchema"]["properties"]
    assert {k: v["type"] for k, v in props.items()} == {
        "query": "string",
        "category": "string",
        "industry": "string",
        "verified": "boolean",
        "limit": "integer",
        "detail": "boolean",
    }
    revenue = tools["search_by_revenue"]["inputSchema"]["properties"]
    assert revenue["min_mrr"]["type"] == revenue["max_mrr"]["type"] == "number"


# --- tools/call ---


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_each_tool_answers_structured_content_matching_its_output_schema(client, dataset, name):
    schema = tool_schemas(client)[name]["outputSchema"]
    result = call_tool(client, name, GOOD_CALLS[name])
    assert result["isError"] is False
    structured = result["structuredContent"]
    assert isinstance(structured, dict)
    jsonschema.validate(structured, schema)
    assert result["content"][0]["type"] == "text"
    assert json.loads(result["content"][0]["text"]) == structured


def test_search_startups_filters_and_orders_by_mrr(client, dataset):
    result = call_tool(client, "search_startups", {"category": "marketing"})["structuredContent"]
    assert [s["slug"] for s in result["startups"]] == ["delta", "beta"]
    assert result["count"] == 2
    verified = call_tool(client, "search_startups", {"verified": True})["structuredContent"]
    assert {s["slug"] for s in verified["startups"]} == {"acme", "delta"}
    text = call_tool(client, "search_startups", {"query": "Fintech"})["structuredContent"]
    assert [s["slug"] for s in text["startups"]] == ["cash"]


def test_get_startup_returns_the_ai_profile(client, dataset):
    profile = call_tool(client, "get_startup", {"slug": "acme"})["structuredContent"]
    http = client.get("/api/ai/startups/acme").json()
    assert profile == http


def test_find_verified_startups_uses_the_owner_account(client, dataset):
    result = call_tool(client, "find_verified_startups")["structuredContent"]
    assert [s["slug"] for s in result["startups"]] == ["delta", "acme"]
    assert all(s["verified"] for s in result["startups"])


def test_search_by_industry_takes_a_slug_style_word(client, dataset):
    result = call_tool(client, "search_by_industry", {"industry": "Financial Services"})
    assert [s["slug"] for s in result["structuredContent"]["startups"]] == ["cash"]


def test_get_startup_history_returns_the_daily_snapshots_in_range(client, dataset):
    full = call_tool(client, "get_startup_history", {"slug": "acme"})["structuredContent"]
    assert full == {
        "slug": "acme",
        "count": 3,
        "history": [
            {"date": "2026-11-01", "mrr": 900, "arr": 10800, "customers": 11, "last_30_days": 100},
            {"date": "2026-11-02", "mrr": None, "arr": None, "customers": 12, "last_30_days": 200},
            {"date": "2026-11-03", "mrr": 1000, "arr": 12000, "customers": 13, "last_30_days": 300},
        ],
    }
    ranged = call_tool(
        client, "get_startup_history", {"slug": "acme", "from": "2026-11-02", "to": "2026-11-02"}
    )["structuredContent"]
    assert [day["date"] for day in ranged["history"]] == ["2026-11-02"]
    none = call_tool(client, "get_startup_history", {"slug": "beta"})["structuredContent"]
    assert none == {"slug": "beta", "count": 0, "history": []}


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"slug": "nope"}, "No AI-enabled startup has slug 'nope'"),
        ({"slug": "acme", "from": "2026-11-05", "to": "2026-11-01"}, "from: must not be after to"),
        ({"slug": "acme", "from": "11/01/2026"}, "from: Date has wrong format"),
        ({"slug": "acme", "to": 20261101}, "to: Date has wrong format"),
    ],
)
def test_get_startup_history_failures_come_back_in_band(client, dataset, arguments, fragment):
    result = call_tool(client, "get_startup_history", arguments)
    assert result["isError"] is True
    assert fragment in result["content"][0]["text"]


def test_search_by_revenue_excludes_startups_without_mrr(client, dataset):
    everything = call_tool(client, "search_by_revenue")["structuredContent"]
    assert [s["slug"] for s in everything["startups"]] == ["delta", "beta", "acme"]
    ranged = call_tool(client, "search_by_revenue", {"min_mrr": 999.5, "max_mrr": 3000})
    assert [s["slug"] for s in ranged["structuredContent"]["startups"]] == ["beta", "acme"]


def test_limit_defaults_to_10_and_is_capped_at_50(client, db):
    for n in range(55):
        make_ai_startup(slug=f"s{n:02d}", mrr=n)
    assert call_tool(client, "search_startups")["structuredContent"]["count"] == 10
    assert call_tool(client, "search_startups", {"limit": 3})["structuredContent"]["count"] == 3
    capped = call_tool(client, "search_startups", {"limit": 500})["structuredContent"]
    assert capped["count"] == 50
    # What the server accepts, the advertised schema accepts too.
    schema = tool_schemas(client)["search_startups"]["inputSchema"]
    jsonschema.validate({"limit": 500}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"limit": 0}, schema)


def test_industry_arguments_give_an_industry_as_example(client):
    tools = tool_schemas(client)
    search = tools["search_startups"]["inputSchema"]["properties"]
    assert "'financial-services'" in search["industry"]["description"]
    assert "'developer-tools'" in search["category"]["description"]
    by_industry = tools["search_by_industry"]["inputSchema"]["properties"]["industry"]
    assert "'software'" in by_industry["description"]
    for description in (search["industry"]["description"], by_industry["description"]):
        assert "developer-tools" not in description and "marketing" not in description


@pytest.mark.parametrize(
    ("name", "arguments", "fragment"),
    [
        ("get_startup", {"slug": "nope"}, "No AI-enabled startup has slug 'nope'"),
        ("get_startup", {}, "slug: This field is required"),
        ("get_startup", {"slug": 42}, "slug: Not a valid string"),
        ("search_by_category", {}, "category: This field is required"),
        ("search_by_industry", {"industry": None}, "industry: This field may not be null"),
        ("search_startups", {"verified": "yes"}, "verified: Must be a valid boolean"),
        ("search_startups", {"limit": "5"}, "limit: A valid integer is required"),
        ("search_startups", {"limit": 0}, "limit: Ensure this value is greater than or equal to 1"),
        ("search_startups", {"sort": "mrr"}, "sort: unknown argument (allowed: query, category"),
        ("search_by_revenue", {"min_mrr": "1k"}, "min_mrr: A number of US dollars"),
        ("search_by_revenue", {"min_mrr": 10, "max_mrr": 5}, "must not be greater than max_mrr"),
    ],
)
def test_tool_failures_come_back_in_band(client, dataset, name, arguments, fragment):
    body = rpc(client, "tools/call", {"name": name, "arguments": arguments})
    assert body["_status"] == 200
    result = body["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert fragment in result["content"][0]["text"]


def test_an_unknown_tool_is_a_32602_protocol_error(client):
    # A protocol error, not an in-band isError result: the MCP spec makes it -32602.
    body = rpc(client, "tools/call", {"name": "no_such_tool", "arguments": {}}, id=9)
    assert body["_status"] == 200
    assert body["id"] == 9
    assert "result" not in body
    assert body["error"]["code"] == -32602
    assert (
        "Unknown tool 'no_such_tool'. Available tools: search_startups"
        in (body["error"]["message"])
    )
    assert body["error"]["data"] == {"name": "no_such_tool"}


def test_null_or_empty_optional_arguments_count_as_omitted(client, dataset):
    arguments = {"query": "", "category": None, "verified": None, "limit": None}
    result = call_tool(client, "search_startups", arguments)
    assert result["isError"] is False
    assert result["structuredContent"]["count"] == 4
    revenue = call_tool(client, "search_by_revenue", {"min_mrr": None, "max_mrr": None})
    assert revenue["structuredContent"]["count"] == 3


def test_blank_required_argument_is_a_tool_error(client, dataset):
    result = call_tool(client, "get_startup", {"slug": ""})
    assert result["isError"] is True
    assert "slug: This field may not be blank" in result["content"][0]["text"]


def test_oversized_body_is_413_json(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "y" * 200}}
    response = post(client, body)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32600


def test_arguments_may_be_omitted(client, dataset):
    body = rpc(client, "tools/call", {"name": "find_verified_startups"})
    assert body["result"]["isError"] is False


@pytest.mark.parametrize(
    ("name", "queries"),
    [
        ("search_startups", 1),
        ("get_startup", 3),  # startup (+owner, verification), founders, socials
        ("find_verified_startups", 1),
        ("search_by_category", 1),
        ("search_by_industry", 1),
        ("search_by_revenue", 1),
        ("get_startup_history", 2),  # startup, snapshots
    ],
)
def test_tool_query_counts_are_pinned(client, dataset, django_assert_num_queries, name, queries):
    # One more: the request reads the generation tokens (core/readcache.py).
    with django_assert_num_queries(queries + 1):
        result = call_tool(client, name, GOOD_CALLS[name])
    assert result["isError"] is False
    # The same call again is answered from the result kept under the data token.
    with django_assert_num_queries(1):
        assert call_tool(client, name, GOOD_CALLS[name]) == result


def test_a_write_shows_in_the_next_tool_call(client, dataset):
    def acme_mrr() -> int:
        found = call_tool(client, "search_startups", {"query": "acme"})["structuredContent"]
        return next(s["revenue"]["mrr"] for s in found["startups"] if s["slug"] == "acme")

    before = acme_mrr()
    assert acme_mrr() == before  # kept
    startup = Startup.objects.get(slug="acme")
    startup.mrr = before + 1234
    startup.save()
    assert acme_mrr() == before + 1234


# --- JSON-RPC protocol errors ---


def test_unknown_method_is_32601(client):
    body = rpc(client, "resources/list", id=5)
    assert body["_status"] == 200
    assert body["id"] == 5
    assert body["error"]["code"] == -32601


@pytest.mark.parametrize(
    "params", [[1, 2], "x", {"arguments": {}}, {"name": 3}, {"name": "get_startup", "arguments": 1}]
)
def test_bad_params_are_32602(client, params):
    body = rpc(client, "tools/call", params)
    assert body["error"]["code"] == -32602
    assert body["_status"] == 200


@pytest.mark.parametrize("raw", ["{not json", "", '{"jsonrpc": "2.0", "id": 1,', "\xff"])
def test_invalid_json_is_400_parse_error_with_null_id(client, raw):
    response = post(client, raw, raw=True)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": response.json()["error"]["message"]},
    }


@pytest.mark.parametrize(
    "body",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        [],
        {"id": 1, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        "ping",
        3,
    ],
)
def test_not_a_json_rpc_request_is_400_invalid_request(client, body):
    response = post(client, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
    assert response.json()["jsonrpc"] == "2.0"


@pytest.mark.parametrize("method", ["get", "put", "delete", "patch"])
def test_other_http_methods_get_405_with_allow_post(client, method):
    response = getattr(client, method)(URL)
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == -32600


def test_the_endpoint_never_redirects(client):
    for path in ("/api/mcp", "/api/mcp/"):
        response = client.post(
            path,
            data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            content_type="application/json",
        )
        assert response.status_code == 200, path


def test_csrf_is_not_required():
    strict = Client(enforce_csrf_checks=True)
    assert rpc(strict, "ping")["_status"] == 200


# --- HTTP headers ---


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_supported_protocol_version_headers_are_accepted(client, version):
    assert rpc(client, "ping", headers={"MCP-Protocol-Version": version})["_status"] == 200


def test_an_unsupported_protocol_version_header_is_400(client):
    body = rpc(client, "ping", headers={"MCP-Protocol-Version": "2023-01-01"})
    assert body["_status"] == 400
    assert body["error"]["code"] == -32022
    assert "2025-06-18" in body["error"]["data"]["supported"]


@pytest.mark.parametrize("origin", ["https://evil.example", "http://testserver", "null"])
def test_a_foreign_origin_is_403(client, origin):
    response = post(
        client,
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Origin": origin},
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == -32600


def test_allow_listed_and_own_origins_pass(client, settings):
    settings.MCP_ALLOWED_ORIGINS = ["https://app.example"]
    settings.SITE_URL = "https://openstartup.example"
    for origin in ("https://app.example", "https://openstartup.example"):
        body = rpc(client, "ping", headers={"Origin": origin})
        assert body["_status"] == 200, origin


@pytest.mark.parametrize(
    "accept",
    [
        "application/json",
        "text/event-stream",
        "application/json, text/event-stream",
        "*/*",
        "text/html",
        None,
    ],
)
def test_accept_header_never_causes_406(client, accept):
    headers = {"Accept": accept} if accept else {}
    body = rpc(client, "ping", headers=headers)
    assert body["_status"] == 200


@pytest.mark.parametrize(
    "headers",
    [{"Authorization": "Bearer osk_wrong"}, {"X-API-Key": "nope"}, {"Authorization": "Basic x"}],
)
def test_wrong_api_key_gets_401(client, headers):
    response = post(client, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["data"]["code"] == "invalid_api_key"
    assert response["WWW-Authenticate"].startswith("Bearer ")
    assert response.json()["id"] == 1


@pytest.mark.parametrize(
    ("body", "expected_id"),
    [
        ({"jsonrpc": "2.0", "id": "req-7", "method": "tools/list"}, "req-7"),
        ({"jsonrpc": "2.0", "id": 42, "method": "initialize", "params": {}}, 42),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
        ("{not json", None),
    ],
)
def test_a_401_echoes_the_request_id_when_readable(client, body, expected_id):
    raw = body if isinstance(body, str) else json.dumps(body)
    response = post(client, raw, raw=True, headers={"Authorization": "Bearer osk_wrong"})
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="mcp", error="invalid_token"'
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": expected_id,
        "error": {
            "code": -32010,
            "message": "The API key is wrong or was revoked.",
            "data": {"code": "invalid_api_key"},
        },
    }


def test_valid_key_is_served_and_spends_no_allowance(client, api_key):
    _, raw = api_key
    response = post(
        client,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search_startups", "arguments": {}},
        },
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 200
    assert "result" in response.json()
    assert not MonthlyUsage.objects.exists()


# --- 2026-07-28: server/discover, per-request _meta, resultType ---


def test_server_discover_advertises_versions_and_capabilities(client):
    body = rpc(
        client,
        "server/discover",
        {"_meta": modern_meta()},
        headers=modern_headers("server/discover"),
    )
    result = body["result"]
    assert body["_status"] == 200
    assert MODERN in result["supportedVersions"]
    assert "2025-11-25" in result["supportedVersions"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["resultType"] == "complete"
    assert result["cacheScope"] == "public"
    assert result["ttlMs"] >= 0
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]


def test_modern_results_carry_result_type_and_server_info(client, dataset):
    tools = rpc(
        client, "tools/list", {"_meta": modern_meta()}, headers=modern_headers("tools/list")
    )["result"]
    assert tools["resultType"] == "complete"
    assert tools["cacheScope"] == "public"
    assert [t["name"] for t in tools["tools"]] == TOOL_NAMES
    headers = {**modern_headers("tools/call"), "Mcp-Name": "get_startup"}
    params = {"name": "get_startup", "arguments": {"slug": "acme"}, "_meta": modern_meta()}
    called = rpc(client, "tools/call", params, headers=headers)["result"]
    assert called["resultType"] == "complete"
    assert called["structuredContent"]["slug"] == "acme"
    assert "io.modelcontextprotocol/serverInfo" in called["_meta"]


def test_modern_envelope_with_an_unsupported_version_is_32022(client):
    body = rpc(
        client,
        "server/discover",
        {"_meta": modern_meta("2099-01-01")},
        headers={"Mcp-Method": "server/discover"},
    )
    assert body["_status"] == 400
    assert body["error"]["code"] == -32022
    assert body["error"]["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


def test_modern_header_mismatch_is_32020(client):
    body = rpc(client, "tools/list", {"_meta": modern_meta()}, headers=modern_headers("ping"))
    assert body["_status"] == 400
    assert body["error"]["code"] == -32020


def test_modern_header_without_envelope_is_32602(client):
    body = rpc(client, "tools/list", {}, headers=modern_headers("tools/list"))
    assert body["_status"] == 400
    assert body["error"]["code"] == -32602


def test_modern_unknown_method_is_404(client):
    body = rpc(
        client, "prompts/list", {"_meta": modern_meta()}, headers=modern_headers("prompts/list")
    )
    assert body["_status"] == 404
    assert body["error"]["code"] == -32601


# --- The official MCP Python SDK against a live server ---


async def _exercise(url: str, mode: str) -> dict:
    """Connect with the SDK (legacy handshake or 2026-07-28 discover), list, call every tool."""
    outcome: dict = {}
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            if mode == "legacy":
                outcome["version"] = (await session.initialize()).protocol_version
            else:
                await session.discover()
                outcome["version"] = session.protocol_version
            tools = (await session.list_tools()).tools
            outcome["tools"] = {tool.name: tool for tool in tools}
            outcome["results"] = {}
            for name, arguments in GOOD_CALLS.items():
                # call_tool itself validates structuredContent against the outputSchema.
                outcome["results"][name] = await session.call_tool(name, arguments)
            outcome["failure"] = await session.call_tool("get_startup", {"slug": "missing"})
            try:
                await session.call_tool("no_such_tool", {})
            except MCPError as error:
                outcome["unknown_tool"] = (error.code, error.message)
    return outcome


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("modern", MODERN)])
def test_official_sdk_client_lists_and_calls_every_tool(
    live_server, transactional_db, mode, version
):
    make_dataset()
    outcome = anyio.run(_exercise, f"{live_server.url}/api/mcp", mode)

    assert outcome["version"] == version
    assert list(outcome["tools"]) == TOOL_NAMES
    for name, result in outcome["results"].items():
        assert result.is_error is False, result.content
        jsonschema.validate(result.structured_content, outcome["tools"][name].output_schema)
        assert json.loads(result.content[0].text) == result.structured_content
    assert outcome["results"]["get_startup"].structured_content["slug"] == "acme"
    assert outcome["failure"].is_error is True
    assert "missing" in outcome["failure"].content[0].text
    code, message = outcome["unknown_tool"]
    assert code == -32602
    assert "Unknown tool 'no_such_tool'" in message


def test_official_sdk_high_level_client_negotiates_automatically(live_server, transactional_db):
    from mcp import Client as McpClient

    make_dataset()

    async def run() -> tuple:
        async with McpClient(f"{live_server.url}/api/mcp") as mcp:
            result = await mcp.call_tool("search_by_revenue", {"min_mrr": 2000})
            return result

    result = anyio.run(run)
    assert [s["slug"] for s in result.structured_content["startups"]] == ["delta", "beta"]


def test_official_sdk_reports_a_wrong_key_as_invalid_api_key(live_server, transactional_db):
    import httpx2

    async def run() -> MCPError:
        headers = {"Authorization": "Bearer osk_wrong"}
        async with httpx2.AsyncClient(headers=headers) as http:
            async with streamable_http_client(f"{live_server.url}/api/mcp", http_client=http) as (
                read,
                write,
            ):
                async with ClientSession(read, write) as session:
                    try:
                        await session.initialize()
                    except MCPError as error:
                        return error
        raise AssertionError("initialize succeeded with a wrong key")

    error = anyio.run(run)
    # The server's own JSON-RPC error, not an OAuth or transport stand-in.
    assert error.code == -32010
    assert error.message == "The API key is wrong or was revoked."
    assert error.data == {"code": "invalid_api_key"}
