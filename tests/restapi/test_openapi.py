"""The OpenAPI 3.1 document (/api/v1/openapi.json), /docs and the guide.

The document is generated from the serializers' declared fields, which also render the data,
except on the hot paths (list rows, AI matches) that keep a hand-written `to_representation`.
These tests keep the two equal, and conftest.py checks every API response of the whole suite
against the document.
"""

import json
from datetime import date
from types import SimpleNamespace

import pytest
from django.test import Client, RequestFactory
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_openapi
from rest_framework import serializers

from aisurface.serializers import (
    AiDiscoveryEntrySerializer,
    AiDiscoverySerializer,
    AiMatchSerializer,
    AiProfileSerializer,
)
from core.renderers import camel_key
from startups.aiselectors import ai_startup_get
from startups.models import Startup
from startups.selectors import startup_get
from startups.serializers import StartupDetailSerializer, StartupListSerializer
from tests.support.contract import DOCUMENTED_PATHS, openapi_document, violations_of
from tests.support.factories import (
    make_account,
    make_ai_startup,
    make_founder,
    make_social,
    make_verification,
)
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db


@pytest.fixture
def document() -> dict:
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    return response.json()


@pytest.fixture
def verified_ai_startup():
    """A startup with every optional part filled: verified, founders, socials, AI add-on."""
    startup = make_ai_startup(
        name="Acme", slug="acme", mrr=4200, owner_verified=True, founded=2021, on_sale=True
    )
    make_founder(startup, title="CEO", twitter="https://x.com/ada")
    make_social(startup)
    make_verification(
        startup,
        months=[(date(2026, 9, 1), 500, 20), (date(2026, 10, 1), 700, 0)],
        credential="restricted_read",
        provider_reported={"mrr": 4000, "revenue": None, "definition": "x", "period": "current"},
    )
    return startup


def test_the_document_is_valid_openapi_3_1(document):
    assert document["openapi"] == "3.1.0"
    validate_openapi(document)
    assert set(document["paths"]) == DOCUMENTED_PATHS


def test_the_served_document_is_the_one_the_suite_checks_against(document):
    assert document == openapi_document()


def test_every_operation_accepts_either_key_header_or_none(document):
    schemes = document["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {**schemes["bearerAuth"], "type": "http", "scheme": "bearer"}
    assert schemes["apiKeyHeader"]["in"] == "header"
    assert schemes["apiKeyHeader"]["name"] == "X-API-Key"
    for item in document["paths"].values():
        assert item["get"]["security"] == [{"bearerAuth": []}, {"apiKeyHeader": []}, {}]


def test_every_parameter_has_a_type_and_a_description(document):
    for path, item in document["paths"].items():
        for parameter in item["get"].get("parameters", []):
            assert parameter["schema"].get("type"), (path, parameter["name"])
            assert parameter.get("description"), (path, parameter["name"])


def test_list_parameters_carry_the_spec_defaults_and_ranges(document):
    parameters = {
        p["name"]: p["schema"] for p in document["paths"]["/api/v1/startups"]["get"]["parameters"]
    }
    assert set(parameters) == {
        "page",
        "limit",
        "sort",
        "q",
        "category",
        "onSale",
        "minMrr",
        "maxMrr",
        "verified",
        "cursor",
        "website",
        "country",
        "updatedSince",
        "fields",
    }
    assert parameters["page"]["default"] == 1
    assert parameters["limit"] == {
        **parameters["limit"],
        "default": 10,
        "minimum": 1,
        "maximum": 50,
    }
    assert parameters["sort"]["enum"] == [
        "mrr-desc",
        "mrr-asc",
        "name-asc",
        "name-desc",
        "growth-desc",
        "updated-desc",
    ]
    assert parameters["sort"]["default"] == "mrr-desc"
    assert parameters["onSale"]["type"] == "boolean"
    assert parameters["minMrr"]["type"] == parameters["maxMrr"]["type"] == "number"


def test_every_rest_response_documents_the_service_headers(document):
    for path in ("/api/v1/startups", "/api/v1/startups/{slug}"):
        for status, response in document["paths"][path]["get"]["responses"].items():
            if status in ("400", "414"):  # refused before the API answers (documented there)
                continue
            headers = response["headers"]
            assert headers["X-Service-Plan"]["required"] is True, (path, status)
            assert headers["X-Service-Max-Limit"]["required"] is True, (path, status)
            for name in ("Quota-Limit", "Quota-Remaining", "Quota-Reset"):
                assert f"X-Service-{name}" in headers, (path, status)


def test_errors_share_the_one_error_object(document):
    error = document["components"]["schemas"]["Error"]
    assert error["required"] == ["error"]
    for item in document["paths"].values():
        for status, response in item["get"]["responses"].items():
            if status == "414":  # gunicorn's own answer, before the API (no error object)
                continue
            if status.startswith(("4", "5")):
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/Error"}


def _property_names(document: dict, component: str) -> set[str]:
    return set(document["components"]["schemas"][component]["properties"])


def test_rest_components_are_camel_case_and_ai_components_snake_case(document):
    assert "founderName" in _property_names(document, "StartupList")
    assert {"profileUrl", "askingPrice", "businessType"} <= _property_names(
        document, "StartupDetail"
    )
    assert {"hasMore", "maxLimit"} <= _property_names(document, "StartupPageMeta")
    assert {"totalRevenue", "last30Days", "historyMonths"} <= _property_names(
        document, "Verification"
    )
    assert {"founded_year", "same_as", "api_url"} <= _property_names(document, "AiProfile")
    assert {"profile_url", "api_url"} <= _property_names(document, "AiDiscoveryEntry")


def test_every_example_conforms_to_its_schema(document):
    checked = 0
    for item in document["paths"].values():
        for response in item["get"]["responses"].values():
            for media in response.get("content", {}).values():
                root = {**media["schema"], "components": document["components"]}
                for example in media.get("examples", {}).values():
                    Draft202012Validator(root).validate(example["value"])
                    checked += 1
    assert checked >= 6


def _shape(value):
    """Keys of a rendered value, recursively (lists by their first element)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [_shape(value[0])]
    return None


def _declared(field):
    """Declared fields of a serializer, in the same shape as `_shape`."""
    if isinstance(field, serializers.ListSerializer):
        return [_declared(field.child)]
    if isinstance(field, serializers.Serializer):
        return {name: _declared(sub) for name, sub in field.fields.items()}
    return None


def test_declared_fields_are_exactly_the_rendered_keys(verified_ai_startup, rf: RequestFactory):
    request = rf.get("/")
    context = {"request": request}
    # The provider account behind the verified figures, so `providerAccount` renders whole.
    ProviderConnection.objects.create(
        startup=Startup.objects.get(slug="acme"),
        provider="stripe",
        encrypted_key="-",
        account_id="acct_1",
        account_name="Acme Inc",
        account_domain="acme.com",
    )
    detail = startup_get(slug="acme")
    ai = ai_startup_get(slug="acme")
    listed = SimpleNamespace(**{**vars(detail), "rank": 1})
    cases = [
        (StartupListSerializer(listed), StartupListSerializer()),
        (StartupDetailSerializer(detail, context=context), StartupDetailSerializer()),
        (AiProfileSerializer(ai, context=context), AiProfileSerializer()),
        (AiDiscoveryEntrySerializer(ai, context=context), AiDiscoveryEntrySerializer()),
        (AiMatchSerializer(ai, context=context), AiMatchSerializer()),
        (AiDiscoverySerializer([ai], context=context), AiDiscoverySerializer()),
    ]
    for rendering, declaration in cases:
        assert _shape(rendering.data) == _declared(declaration), type(declaration).__name__


def test_the_contract_check_catches_a_response_the_document_does_not_describe(
    verified_ai_startup, rf
):
    good = Client().get("/api/v1/startups/acme")
    assert good.status_code == 200
    request = rf.get("/api/v1/startups/acme")
    assert violations_of(request, good) == []

    extra = good.json()
    extra["data"]["surprise"] = 1
    del extra["data"]["verification"]
    good.content = json.dumps(extra).encode()
    problems = violations_of(request, good)
    assert any("surprise" in problem for problem in problems)
    assert any("verification" in problem for problem in problems)

    teapot = Client().get("/api/v1/startups/acme")
    teapot.status_code = 418
    assert "418 is not documented" in violations_of(request, teapot)[0]


def test_camel_key_is_the_renderers_rule():
    assert camel_key("last_30_days") == "last30Days"
    assert camel_key("has_more") == "hasMore"


def test_docs_page_uses_only_assets_served_by_the_site():
    page = Client().get("/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    # The start-up script is a URL of its own: no inline scripts under the CSP.
    script = Client().get("/docs/?script=")
    assert script["Content-Type"].startswith("application/javascript")
    assert "/api/v1/openapi.json" in script.content.decode()
    # The console's scripts are loaded on demand (static/js/docs.js), in this order.
    assert ' /docs/?script="' in html
    assert "//cdn" not in html and "unpkg" not in html and "jsdelivr" not in html
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-standalone-preset.js"):
        url = f"/static/drf_spectacular_sidecar/swagger-ui-dist/{asset}"
        assert url in html
        assert Client().get(url).status_code == 200


def test_the_guide_explains_paging_plans_headers_and_data_use():
    page = Client().get("/docs/guide/")
    assert page.status_code == 200
    html = page.content.decode()
    for words in ("hasMore", "monthly_quota_exceeded", "X-Service-Quota-Remaining", "profileUrl"):
        assert words in html
    assert "100 records per calendar month" in " ".join(html.split())


def test_the_dashboard_and_llms_txt_link_the_docs(client):
    text = client.get("/llms.txt").content.decode()
    assert "/docs/" in text and "/api/v1/openapi.json" in text and "/docs/guide/" in text
    client.force_login(make_account())
    dashboard = client.get("/dashboard/").content.decode()
    assert 'href="/docs/"' in dashboard and 'href="/docs/guide/"' in dashboard


def test_the_hot_paths_never_build_the_declared_fields(verified_ai_startup, rf):
    """List rows, the detail and AI matches are declared for the document only: they stay
    dict literals. (The AI profile renders from its fields: its answers are kept as bytes.)"""
    request = rf.get("/")
    detail = startup_get(slug="acme")
    listing = StartupListSerializer([detail, detail], many=True)
    ai = ai_startup_get(slug="acme")
    matches = AiMatchSerializer([ai, ai], many=True, context={"request": request})
    for serializer in (listing, matches):
        assert serializer.data
        assert "fields" not in serializer.child.__dict__  # cached_property never evaluated
    profile = StartupDetailSerializer(detail, context={"request": request})
    assert profile.data
    assert "fields" not in profile.__dict__


def test_every_operation_documents_the_servers_request_line_bound(client):
    # gunicorn refuses request lines over 8190 bytes with 414 before the API.
    document = client.get("/api/v1/openapi.json").json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert "414" in operation["responses"], (method, path)


def test_the_docs_page_renders_every_operation_and_head_options_once(document):
    html = Client().get("/docs/").content.decode()
    for path, item in document["paths"].items():
        assert f'<code class="path">{path}</code>' in html, path
        assert f'id="{item["get"]["operationId"]}"' in html
    assert html.count('<span class="method">GET</span>') == len(document["paths"])
    assert '<span class="method">HEAD</span>' not in html
    assert '<span class="method">OPTIONS</span>' not in html
    assert html.count("HEAD and OPTIONS, on every path") == 1
    assert '<h2 id="tag-1">Startup data</h2>' in html
    assert '<h2 id="tag-2">For AI agents</h2>' in html


def test_the_docs_page_shows_code_spans_as_code_and_escapes_the_rest():
    from django.template import Context, Template

    render = Template("{% load site %}{{ v|ticks }}").render
    assert render(Context({"v": "use `a<b>` & `c`"})) == (
        "use <code>a&lt;b&gt;</code> &amp; <code>c</code>"
    )
    assert render(Context({"v": "odd ` <i>"})) == "odd ` &lt;i&gt;"
    html = Client().get("/docs/").content.decode()
    assert "<code>/api/v1</code>: the full dataset" in html


def _all_required(document: dict, component: str) -> None:
    schema = document["components"]["schemas"][component]
    assert set(schema["required"]) == set(schema["properties"]), component


def test_default_answers_are_exact_and_sparse_answers_have_their_own_schema(document):
    """Generated types must not make every field optional because `fields=` exists.
    The 200 bodies are the whole items; the `fields=` body is a separate, named schema."""
    schemas = document["components"]["schemas"]
    for envelope, item, where in (
        ("StartupPage", "StartupList", lambda s: s["properties"]["data"]["items"]),
        ("StartupEnvelope", "StartupDetail", lambda s: s["properties"]["data"]),
    ):
        assert where(schemas[envelope]) == {"$ref": f"#/components/schemas/{item}"}
        _all_required(document, item)
        assert "required" not in schemas[item + "Sparse"]
        assert where(schemas[envelope + "Sparse"]) == {"$ref": f"#/components/schemas/{item}Sparse"}
    _all_required(document, "ListRevenue")
    assert "anyOf" not in json.dumps(schemas["StartupPage"])
    for path, envelope in (
        ("/api/v1/startups", "StartupPage"),
        ("/api/v1/startups/{slug}", "StartupEnvelope"),
    ):
        ok = document["paths"][path]["get"]["responses"]["200"]
        assert ok["content"]["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{envelope}"
        }
        assert ok["x-sparse-fieldset-schema"] == {"$ref": f"#/components/schemas/{envelope}Sparse"}
        assert f"{envelope}Sparse" in ok["description"]
        assert "x-sparse-fieldset-schema" not in document["paths"][path]["head"]["responses"]["200"]
        # schemathesis' examples phase sends it, so CI reads a real sparse answer every run.
        fields = next(
            p for p in document["paths"][path]["get"]["parameters"] if p["name"] == "fields"
        )
        assert fields["example"] == "name,slug,revenue.mrr"


def test_tags_and_operation_ids_make_readable_module_names(document):
    """openapi-python-client names a module per tag and a function per operation id."""
    tags = ["Startup data", "For AI agents", "Webhooks"]
    assert [tag["name"] for tag in document["tags"]] == tags
    ids = []
    # The events POSTed to endpoints (the top-level `webhooks` object) have a tag of their own.
    for event in document["webhooks"].values():
        assert event["post"]["tags"] == ["Webhooks"]
        assert event["post"]["operationId"].isalnum()
        ids.append(event["post"]["operationId"])
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation["tags"] == (
                ["Startup data"] if path.startswith("/api/v1") else ["For AI agents"]
            )
            assert operation["operationId"].isalnum(), (method, path)
            ids.append(operation["operationId"])
    assert len(ids) == len(set(ids))
    assert "exportStartups" in ids and "listStartups" in ids


def test_the_contract_check_reads_a_sparse_answer_against_its_own_schema(verified_ai_startup, rf):
    url = "/api/v1/startups?fields=name,revenue.mrr"
    sparse = Client().get(url)
    assert sparse.json()["data"][0] == {"name": "Acme", "revenue": {"mrr": 4200}}
    assert violations_of(rf.get(url), sparse) == []
    # The same body as a default answer (no `fields`) is missing every other field.
    problems = violations_of(rf.get("/api/v1/startups"), sparse)
    assert any("'slug' is a required property" in problem for problem in problems)
