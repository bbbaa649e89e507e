"""/docs/: the API reference, rendered on the server from the OpenAPI document (fast, readable
without JavaScript), with Swagger UI's interactive console loaded only when asked for
(static/js/docs.js): its 1.4 MB of script would otherwise block every visit."""

import functools
import json

from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.request import Request
from rest_framework.response import Response

SHOWN_METHODS = ("get", "post", "put", "patch", "delete")  # HEAD/OPTIONS: described once


@functools.cache
def api_reference() -> list[dict]:
    """The document's operations by tag, in the document's order (built once per process)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    document = json.loads(OpenApiJsonRenderer().render(schema))
    tags = {tag["name"]: {**tag, "operations": []} for tag in document.get("tags", [])}
    for path, item in document["paths"].items():
        for method in SHOWN_METHODS:
            operation = item.get(method)
            if not operation:
                continue
            tag = (operation.get("tags") or ["Other"])[0]
            tags.setdefault(tag, {"name": tag, "description": "", "operations": []})
            tags[tag]["operations"].append(
                {
                    "id": operation["operationId"],
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "description": operation.get("description", ""),
                    "parameters": [
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p.get("required", False),
                            "type": _type(p.get("schema", {})),
                            "description": p.get("description", ""),
                        }
                        for p in operation.get("parameters", [])
                        if p["in"] in ("path", "query")
                    ],
                    "responses": [
                        (status, response.get("description", ""))
                        for status, response in operation["responses"].items()
                    ],
                }
            )
    return [tag for tag in tags.values() if tag["operations"]]


def _type(schema: dict) -> str:
    kind = schema.get("type", "")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"] if v is not None)
    return kind or "value"


class ApiReferenceView(SpectacularSwaggerSplitView):
    def get(self, request: Request, *args, **kwargs) -> Response:
        response = super().get(request, *args, **kwargs)
        if isinstance(response.data, dict):  # the page; `?script` is the console's start-up
            response.data["reference"] = api_reference()
        return response
