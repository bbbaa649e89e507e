"""The OpenAPI document as a test oracle: does a response conform to what it promises?

`conftest.py` runs `violations_of` on every response the test suite gets from /api/v1 and
/api/ai (test client and live server alike), so a view and its description cannot drift.
"""

import functools
import json
import re
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from jsonschema import Draft202012Validator

from core.openapi_fieldsets import SPARSE_SCHEMA

CHECKED_PREFIXES = ("/api/v1/", "/api/ai/")
# The document itself is not described by the document.
UNCHECKED_PATHS = {"/api/v1/openapi.json"}
# Every path the document describes (the docs page lists the same).
DOCUMENTED_PATHS = {
    "/api/v1/startups",
    "/api/v1/startups/{slug}",
    "/api/v1/startups/{slug}/history",
    "/api/v1/startups/{slug}/attestation",
    "/api/v1/categories",
    "/api/v1/changes",
    "/api/v1/exports/startups.ndjson",
    "/api/v1/log/tree-head",
    "/api/v1/log/entries",
    "/api/v1/log/proof/inclusion",
    "/api/v1/log/proof/consistency",
    "/api/v1/webhooks/endpoints",
    "/api/v1/webhooks/endpoints/{endpoint_id}",
    "/api/v1/webhooks/endpoints/{endpoint_id}/deliveries",
    "/api/ai/discovery",
    "/api/ai/startups/{slug}",
}


@functools.cache
def openapi_document() -> dict:
    """The document exactly as /api/v1/openapi.json serves it (generated once per run)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema))


@dataclass(frozen=True)
class Operation:
    template: str
    pattern: re.Pattern
    item: dict


@functools.cache
def _operations() -> list[Operation]:
    operations = []
    for template, item in openapi_document()["paths"].items():
        regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>(?s:.+))", re.escape(template))
        # Routes serve the canonical path and the same path with a trailing slash.
        operations.append(Operation(template, re.compile(f"{regex}/?"), item))
    # Most specific first: /startups/{slug}/history before /startups/{slug} (whose slug may
    # hold any text).
    return sorted(operations, key=lambda operation: -len(operation.template))


@functools.cache
def _validator(pointer: str) -> Draft202012Validator:
    """A validator for the schema at a JSON pointer, resolving the document's own $refs."""
    document = openapi_document()
    node = document
    for part in pointer.split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    root = {**node, "components": document["components"]}
    return Draft202012Validator(root, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def violations_of(request: HttpRequest, response: HttpResponse) -> list[str]:
    """What is wrong with this response according to the OpenAPI document (empty: nothing)."""
    path = request.path
    if not path.startswith(CHECKED_PREFIXES) or path in UNCHECKED_PATHS:
        return []
    method = request.method.lower()
    if method == "options":
        return []  # CORS preflight and DRF metadata: not part of the contract
    operation = next((op for op in _operations() if op.pattern.fullmatch(path)), None)
    if operation is None:
        return []  # unknown paths: the JSON 404 of errors.handler404 (tested on its own)
    # HEAD answers like GET; other methods get the GET operation's documented 405.
    documented = operation.item.get(method) or operation.item["get"]
    where = f"{request.method} {path} -> {response.status_code}"
    status = str(response.status_code)
    if status not in documented["responses"]:
        return [f"{where}: status {status} is not documented for {operation.template}"]
    described = documented["responses"][status]
    problems = [
        f"{where}: header {name} is required but missing"
        for name, header in described.get("headers", {}).items()
        if header.get("required") and name not in response
    ]
    content = described.get("content")
    if response.streaming:  # read by the test itself; only its media type is checked here
        media = response["Content-Type"].split(";")[0].strip()
        if method != "head" and media not in (content or {}):
            problems.append(f"{where}: streamed {media} is not documented")
        return problems
    if not content or method == "head":
        # HEAD bodies are dropped by the server (and the test client) after this point.
        if content is None and response.content and method != "head":
            problems.append(f"{where}: a body was sent where none is documented")
        return problems
    if not response["Content-Type"].startswith("application/json"):
        return [*problems, f"{where}: Content-Type {response['Content-Type']} is not JSON"]
    try:
        body = json.loads(response.content)
    except ValueError:
        return [*problems, f"{where}: the body is not JSON"]
    method_key = method if method in operation.item else "get"
    pointer = "/".join(
        [
            "#",
            "paths",
            _escape(operation.template),
            method_key,
            "responses",
            status,
            "content",
            "application~1json",
            "schema",
        ]
    )
    # Read raw: request.GET refuses (raises on) query strings with too many parameters. With
    # `fields=`, the body is the sparse twin the answer names (openapi.sparse_fieldsets).
    if SPARSE_SCHEMA in described and re.search(
        r"(^|&)fields=", request.META.get("QUERY_STRING", "")
    ):
        pointer = "/".join(pointer.split("/")[:-3] + [SPARSE_SCHEMA])
    for error in _validator(pointer.removeprefix("#")).iter_errors(body):
        location = "/".join(str(part) for part in error.absolute_path) or "(root)"
        problems.append(f"{where}: {location}: {error.message}")
    return problems
