"""Hostile input to every endpoint: each gets a documented 2xx/4xx JSON answer, never a 500,
and a Free caller is never charged for a request that failed.

Endpoints: /api/v1/startups, /api/v1/startups/{slug}, /api/ai/discovery, /api/ai/startups/{slug},
/api/mcp and /llms.txt. Responses under /api/v1 and /api/ai are also checked against the
OpenAPI document by conftest.py, so "documented" is enforced, not just "not a 500".
"""

import json
from urllib.parse import quote

import pytest
from django.conf import settings
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from quota.models import MonthlyUsage
from tests.support.factories import (
    make_account,
    make_ai_startup,
    make_api_key,
    make_founder,
    make_startup,
    make_subscription,
    make_verification,
)

pytestmark = pytest.mark.django_db

LIST = "/api/v1/startups"
DETAIL = "/api/v1/startups/acme"
DISCOVERY = "/api/ai/discovery"
PROFILE = "/api/ai/startups/acme"
MCP = "/api/mcp"
LLMS = "/llms.txt"
GET_ENDPOINTS = [LIST, DETAIL, DISCOVERY, PROFILE, LLMS]
REST_ENDPOINTS = [LIST, DETAIL]

HUGE = "9" * 5000
NUMBERS = [
    HUGE,
    "-" + HUGE,
    "-1",
    "0",
    "-0",
    "1e309",
    "-1e309",
    "1e-400",
    "NaN",
    "nan",
    "Infinity",
    "-Infinity",
    "inf",
    "0x10",
    "1_000",
    "٣",  # an Arabic-Indic digit: int() accepts it
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "1.5",
    " 7 ",
    "",
]
NASTY_TEXT = ["%", "_", "'", "\\", "%_'\\", "' OR 1=1 --", "'; DROP TABLE startups_startup; --"]
NASTY_TEXT += ["\x00", "a\x00b", "\u202e", "🚀", "é" * 300, "\\%", "[a-z]", "*", "?"]


@pytest.fixture
def dataset():
    acme = make_ai_startup(slug="acme", name="Acme", mrr=1000, owner_verified=True, on_sale=True)
    make_founder(acme)
    make_verification(acme)
    make_startup(name="Percent % Co", slug="percent", category="100% Growth_Tools", mrr=50)
    make_startup(name="Quote's", slug="quote", category="O'Reilly \\ Backslash", mrr=None)
    make_ai_startup(slug="ünïcødé", name="Ünïcødé", mrr=20)


def used_records() -> int:
    return sum(MonthlyUsage.objects.values_list("used", flat=True))


def assert_json_answer(response, *, allowed=(200, 304, 400, 401, 404, 405, 413, 415)) -> None:
    """A documented status with a JSON body (plain text for /llms.txt)."""
    assert response.status_code in allowed, (response.status_code, response.content[:300])
    if response.status_code in (202, 304) or response.get("Content-Type", "").startswith(
        "text/plain"
    ):
        return
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = json.loads(response.content)
    if response.status_code >= 400 and not response.request["PATH_INFO"].startswith(MCP):
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "requestId"}


@pytest.fixture
def client() -> Client:
    # Real 500s come back as responses (they are what this module looks for), not exceptions.
    return Client(raise_request_exception=False)


@pytest.fixture
def charged(client):
    """Send a request; fail when a Free caller paid for a request that failed."""

    def send(method: str, path: str, **kwargs):
        before = used_records()
        response = getattr(client, method)(path, **kwargs)
        if response.status_code >= 400:
            assert used_records() == before, f"charged for {response.status_code} on {path}"
        assert_json_answer(response)
        return response

    return send


# --- query strings ------------------------------------------------------------------------


@pytest.mark.parametrize("path", GET_ENDPOINTS)
@pytest.mark.parametrize("name", ["page", "limit", "minMrr", "maxMrr", "verified", "onSale"])
def test_numbers_of_every_size_and_kind_are_never_errors(dataset, charged, path, name):
    for number in NUMBERS:
        response = charged("get", path, QUERY_STRING=f"{name}={quote(number)}")
        assert response.status_code == 200 or path in (DETAIL, PROFILE)


@pytest.mark.parametrize("path", GET_ENDPOINTS)
@pytest.mark.parametrize("name", ["q", "category", "industry", "sort"])
def test_sql_and_like_metacharacters_are_matched_literally(dataset, charged, path, name):
    for text in NASTY_TEXT:
        response = charged("get", path, QUERY_STRING=f"{name}={quote(text)}")
        assert response.status_code == 200


def test_like_wildcards_in_q_and_category_match_only_themselves(dataset, client):
    def slugs(query: str) -> list[str]:
        return [s["slug"] for s in client.get(f"{LIST}?{query}").json()["data"]]

    assert slugs("q=%25") == ["percent"]
    assert slugs("category=%25") == ["percent"]
    assert slugs("category=_") == ["percent"]
    assert slugs("q=%27") == ["quote"]
    assert slugs("category=%5C") == ["quote"]
    assert client.get(f"{LIST}?q=%27%20OR%201%3D1%20--").json()["data"] == []


@pytest.mark.parametrize("path", GET_ENDPOINTS)
def test_non_utf8_and_nul_bytes_in_query_strings(dataset, charged, path):
    for raw in ["q=%FF%FE", "q=%00", "category=%C0%80", "q=%ED%A0%80", "%FF=%FF", "q", "=&&=",
                "limit=%00", "sort=%FF", "q=a%00b&category=%00"]:  # fmt: skip
        response = charged("get", path, QUERY_STRING=raw)
        assert response.status_code in (200, 404)


@pytest.mark.parametrize("path", GET_ENDPOINTS)
def test_ten_kilobyte_query_strings(dataset, charged, path):
    assert charged("get", path, QUERY_STRING="q=" + "a" * 10_240).status_code in (200, 404)
    many = "&".join(f"x{i}=1" for i in range(900))
    assert charged("get", path, QUERY_STRING=many).status_code in (200, 404)


@pytest.mark.parametrize("path", GET_ENDPOINTS)
def test_more_query_parameters_than_django_parses_get_a_json_400(dataset, charged, path):
    count = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1
    response = charged("get", path, QUERY_STRING="&".join(["a=1"] * count))
    if path in (LIST, DETAIL, DISCOVERY):  # the views that read their query string
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_request"
    else:
        assert response.status_code == 200


@pytest.mark.parametrize("path", GET_ENDPOINTS)
def test_repeated_parameters_use_the_last_value(dataset, charged, path):
    response = charged("get", path, QUERY_STRING="limit=1&limit=2&sort=x&sort=name-asc&q=&q=acm")
    assert response.status_code == 200
    if path == LIST:
        assert response.json()["meta"]["limit"] == 2
        assert [s["slug"] for s in response.json()["data"]] == ["acme"]


# --- paths --------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["/api/v1/startups/", "/api/ai/startups/"])
def test_unknown_and_strange_slugs_get_the_json_404(dataset, charged, prefix):
    for slug in ["%00", "a%00b", "%FF%FE", "%C0%80", "..%2F..%2Fetc%2Fpasswd", "a/b/c", "🚀",
                 "x" * 5000, "%25", "_", "'", "%5C", "acme%20", " acme", "ACME"]:  # fmt: skip
        response = charged("get", prefix + slug)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("prefix", ["/api/v1/startups/", "/api/ai/startups/"])
def test_unicode_slugs_are_served(dataset, charged, prefix):
    response = charged("get", prefix + quote("ünïcødé"))
    assert response.status_code == 200


def test_nul_and_non_utf8_bytes_in_other_paths(dataset, charged):
    for path in ["/api/v1/%00", "/api/ai/%FF", "/api/v1/startups%00", "/api/mcp%00"]:
        response = charged("get", path)
        assert response.status_code == 404


# --- headers ------------------------------------------------------------------------------


@pytest.fixture
def key(db) -> str:
    return make_api_key()[1]


@pytest.mark.parametrize("path", [*GET_ENDPOINTS, MCP])
def test_bad_keys_get_401_and_are_never_anonymous(dataset, charged, key, path):
    bad = [
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer    "},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "bearer\x00" + key},
        {"Authorization": "Bearer " + key + "\x00"},
        {"Authorization": "Bearer \xff\xfe\xfd"},
        {"Authorization": "Bearer " + "k" * 10_000},
        {"X-API-Key": ""},
        {"X-API-Key": "\x00"},
        {"X-API-Key": "osk_" + "\xe9" * 46},
        {"Authorization": f"Bearer {key}", "X-API-Key": make_api_key()[1]},
    ]
    method = "post" if path == MCP else "get"
    for headers in bad:
        kwargs = {"headers": headers}
        if path == MCP:
            kwargs.update(
                data=b'{"jsonrpc":"2.0","id":1,"method":"ping"}', content_type="application/json"
            )
        response = charged(method, path, **kwargs)
        if path == LLMS:
            assert response.status_code == 200  # no key is read: nothing to refuse
            continue
        assert response.status_code == 401, headers
        body = response.json()
        code = body["error"]["data"]["code"] if path == MCP else body["error"]["code"]
        assert code == "invalid_api_key"


@pytest.mark.parametrize("path", [LIST, DETAIL, DISCOVERY, PROFILE])
def test_the_same_key_in_both_headers_is_accepted(dataset, charged, key, path):
    headers = {"Authorization": f"Bearer {key}", "X-API-Key": key}
    assert charged("get", path, headers=headers).status_code == 200


@pytest.mark.parametrize("path", GET_ENDPOINTS)
def test_junk_in_other_headers_is_ignored(dataset, charged, path):
    headers = {
        "If-None-Match": '"\x00", W/"\xff", *, ' + "x" * 5000,
        "X-Forwarded-For": "\x00, 999.1.1.1, ::g, " + "1," * 500,
        "Accept": "\xff/\x00",
        "Accept-Encoding": "\x00",
        "MCP-Protocol-Version": "\x00",
        "Origin": "\xff",
    }
    response = charged("get", path, headers=headers)
    assert response.status_code in (200, 304)


@pytest.mark.parametrize("path", GET_ENDPOINTS)
def test_a_hostile_host_header_gets_a_4xx(dataset, client, path):
    response = client.get(path, headers={"Host": "evil.example\x00"})
    assert response.status_code == 400
    if path != LLMS:
        assert response.json()["error"]["code"] == "invalid_request"


# --- methods and content types on the GET endpoints -----------------------------------------


@pytest.mark.parametrize("path", [LIST, DETAIL, DISCOVERY, PROFILE])
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_other_methods_get_a_json_405_whatever_the_body(dataset, charged, path, method):
    for content_type, body in [
        ("application/json", b"[1,2"),
        ("text/plain", b"\xff\xfe"),
        ("multipart/form-data; boundary=x", b"--x--"),
        ("application/x-www-form-urlencoded", b"a=%FF"),
    ]:
        response = charged(method, path, data=body, content_type=content_type)
        assert response.status_code == 405
        assert response.json()["error"]["code"] == "method_not_allowed"


# --- the MCP endpoint --------------------------------------------------------------------


def mcp(client, body: bytes, content_type: str = "application/json", **kwargs):
    return client.post(MCP, data=body, content_type=content_type, **kwargs)


def rpc_error(response) -> dict:
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    return body["error"]


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        b"1",
        b'"ping"',
        b"null",
        b"true",
        b"{}",
        b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1,"method":7}',
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"x"}',
        b"",
        b"\xff\xfe",
        b"\x00",
        b'{"a":NaN}',
        b'{"a":Infinity}',
        b'{"a":1e400}',
        b"{" * 5000,
        b"[" * 100_000 + b"]" * 100_000,
    ],  # fmt: skip
)
def test_json_rpc_bodies_that_are_not_one_request_get_a_json_400(dataset, client, body):
    response = mcp(client, body)
    assert response.status_code == 400
    assert rpc_error(response)["code"] in (-32700, -32600)


def test_deeply_nested_arguments_are_a_tool_error_not_a_crash(dataset, client):
    nested: dict = {}
    for _ in range(500):
        nested = {"a": nested}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_startups", "arguments": {"query": nested}},
    }
    response = mcp(client, json.dumps(message).encode())
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is True


@pytest.mark.parametrize(
    "arguments",
    [
        {"limit": 10**30},
        {"limit": -(10**30)},
        {"limit": 1e300},
        {"min_mrr": 1e308},
        {"max_mrr": -1},
        {"min_mrr": 2**64},
        {"limit": "NaN"},
        {"limit": True},
        {"query": "\x00%_'\\"},
        {"query": "é" * 10_000},
        {"slug": "\x00"},
    ],  # fmt: skip
)
def test_hostile_tool_arguments_come_back_in_band(dataset, client, arguments):
    name = "get_startup" if "slug" in arguments else "search_startups"
    if "min_mrr" in arguments or "max_mrr" in arguments:
        name = "search_by_revenue"
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = mcp(client, json.dumps(message).encode())
    assert response.status_code == 200
    assert "result" in response.json()


def test_bodies_over_the_documented_size_get_a_json_413(dataset, client):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    padding = "x" * limit
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"p": padding}})
    response = mcp(client, body.encode())
    assert response.status_code == 413
    assert rpc_error(response)["code"] == -32600
    assert "too large" in rpc_error(response)["message"]


def test_a_body_just_under_the_size_limit_is_served(dataset, client):
    message = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
    overhead = len(json.dumps(message))
    message["params"] = {"p": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE - overhead - 20)}
    response = mcp(client, json.dumps(message).encode())
    assert response.status_code == 200


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "application/jsonx",
        "\xff",
    ],  # fmt: skip
)
def test_non_json_content_types_get_a_json_415(dataset, client, content_type):
    response = mcp(client, b'{"jsonrpc":"2.0","id":1,"method":"ping"}', content_type)
    assert response.status_code == 415
    assert rpc_error(response)["code"] == -32600


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"]
)
def test_json_content_types_are_served(dataset, client, content_type):
    response = mcp(client, b'{"jsonrpc":"2.0","id":1,"method":"ping"}', content_type)
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"MCP-Protocol-Version": "\x00"}, 400),
        ({"MCP-Protocol-Version": "\xff" * 5000}, 400),
        ({"Origin": "\xff\x00"}, 403),
        ({"Origin": "null"}, 403),
        ({"X-Forwarded-For": "\x00, ::g", "Accept": "\xff", "If-None-Match": "\x00"}, 200),
    ],
)
def test_junk_headers_on_mcp_get_a_json_rpc_answer(dataset, client, headers, status):
    response = mcp(client, b'{"jsonrpc":"2.0","id":1,"method":"ping"}', headers=headers)
    assert response.status_code == status
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert ("error" in body) == (status != 200)


@pytest.mark.parametrize("method", ["get", "put", "delete", "patch", "head"])
def test_other_methods_on_mcp_get_405(dataset, client, method):
    response = getattr(client, method)(MCP)
    assert response.status_code == 405


# --- the allowance ----------------------------------------------------------------------------


def test_a_free_caller_pays_only_for_records_served(dataset, client):
    failing = [
        (DETAIL.replace("acme", "nope"), {}),
        (DETAIL, {"headers": {"Authorization": "Bearer nope"}}),
        (LIST, {"headers": {"X-API-Key": ""}}),
        (LIST, {"QUERY_STRING": "&".join(["a=1"] * 2000)}),
    ]
    for path, kwargs in failing:
        assert client.get(path, **kwargs).status_code >= 400
    assert used_records() == 0
    for method in ("post", "delete"):
        assert getattr(client, method)(LIST).status_code == 405
    assert used_records() == 0
    assert client.get(f"{LIST}?limit=2&q=a").status_code == 200
    served = len(client.get(f"{LIST}?limit=2&q=a").json()["data"])
    assert used_records() == 2 * served


# --- Hypothesis: the query-parameter space -------------------------------------------------------

PARAMETERS = ["page", "limit", "sort", "q", "category", "onSale", "minMrr", "maxMrr",
              "industry", "verified", "unknown"]  # fmt: skip
values = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40),
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from([*NUMBERS[1:], *NASTY_TEXT, "true", "FALSE", "mrr-asc", "name-desc"]),
)
query_strings = st.lists(st.tuples(st.sampled_from(PARAMETERS), values), max_size=8).map(
    lambda pairs: "&".join(f"{quote(name)}={quote(value)}" for name, value in pairs)
)
raw_query_strings = st.binary(max_size=200).map(
    lambda raw: "".join(chr(b) if chr(b).isalnum() or chr(b) in "=&" else f"%{b:02X}" for b in raw)
)
hypothesis_checks = hypothesis_settings(
    max_examples=60,
    database=None,  # no .hypothesis directory: every run starts fresh
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def pro_key(dataset) -> str:
    """A Pro key, so that a few hundred list calls never run into the Free allowance."""
    account = make_account()
    make_subscription(account=account)
    return make_api_key(account=account)[1]


@hypothesis_checks
@given(query=st.one_of(query_strings, raw_query_strings))
def test_any_query_string_gets_a_200_from_the_list_and_the_index(client, pro_key, query):
    headers = {"Authorization": f"Bearer {pro_key}"}
    for path in (LIST, DISCOVERY):
        response = client.get(path, QUERY_STRING=query, headers=headers)
        assert response.status_code == 200, (path, query, response.content[:300])
        assert_json_answer(response)


@hypothesis_checks
@given(query=query_strings, slug=st.text(max_size=30))
def test_any_slug_and_query_string_gets_a_200_or_a_json_404(client, pro_key, query, slug):
    headers = {"Authorization": f"Bearer {pro_key}"}
    path_slug = quote(slug.replace("\ud800", ""), safe="") or "x"
    for prefix in ("/api/v1/startups/", "/api/ai/startups/"):
        try:
            response = client.get(prefix + path_slug, QUERY_STRING=query, headers=headers)
        except UnicodeEncodeError:  # surrogates cannot even be sent
            continue
        assert response.status_code in (200, 404), (prefix, slug, response.content[:300])
        assert_json_answer(response)
