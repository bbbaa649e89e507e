"""The sparse-fieldset (`fields=`) answers of /api/v1 in the OpenAPI document (a
drf-spectacular postprocessing hook; settings.SPECTACULAR_SETTINGS).

The documented 200 bodies stay exact (every field of an item required) so that generated types
need no null checks; the `fields=` body is described by a separate component that the 200
answer names in the extension `x-sparse-fieldset-schema` (OpenAPI cannot tie a response schema
to a query parameter). tests/support/contract.py and tests/support/schemathesis_hooks.py read it.
"""

import copy
from typing import Any

from core.surfaces import REST_PREFIX

SPARSE_SCHEMA = "x-sparse-fieldset-schema"


def _rest_operations(result: dict) -> list[dict]:
    return [
        operation
        for path, item in result.get("paths", {}).items()
        if path.startswith(REST_PREFIX)
        for operation in item.values()
        if isinstance(operation, dict)
    ]


def sparse_fieldsets(result: dict, **kwargs: Any) -> dict:
    """With `fields=`, REST items carry only the fields asked for. The documented 200 body is
    the whole item (every field required, so generated types need no null checks); each item
    schema gets a `...Sparse` twin with nothing required (down to its object-valued fields),
    each envelope a `...Sparse` twin holding those, and the 200 answer names the twin in
    `x-sparse-fieldset-schema`: the body whenever `fields` is sent."""
    schemas = result.get("components", {}).get("schemas", {})

    def sparse_of(name: str) -> str:
        twin = name + "Sparse"
        if twin not in schemas:
            schema = copy.deepcopy(schemas[name])
            schema.pop("required", None)
            schema["description"] = f"{name} cut to the fields named in `fields`."
            schemas[twin] = schema
        return twin

    def retarget(node: Any) -> None:  # direct or oneOf/anyOf refs; not array items
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            name = ref.rsplit("/", 1)[-1]
            if ref.startswith("#/components/schemas/") and "properties" in schemas.get(name, {}):
                node["$ref"] = f"#/components/schemas/{sparse_of(name)}"
            for key in ("oneOf", "anyOf", "allOf"):
                for option in node.get(key, []):
                    retarget(option)

    twins = {}
    for envelope, path in (("StartupPage", ("data", "items")), ("StartupEnvelope", ("data",))):
        if envelope not in schemas:
            continue
        item = schemas[envelope]["properties"]
        for part in path[:-1]:
            item = item[part]
        twin = sparse_of(item[path[-1]]["$ref"].rsplit("/", 1)[-1])
        for prop in schemas[twin]["properties"].values():
            retarget(prop)
        outer = copy.deepcopy(schemas[envelope])
        outer["description"] = f"{envelope} with its items cut to the fields named in `fields`."
        parent = outer["properties"]
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = {"$ref": f"#/components/schemas/{twin}"}
        schemas[envelope + "Sparse"] = outer
        twins[f"#/components/schemas/{envelope}"] = f"#/components/schemas/{envelope}Sparse"
    for operation in _rest_operations(result):
        for parameter in operation.get("parameters", []):
            if parameter.get("in") == "query" and parameter.get("name") == "fields":
                # Also what schemathesis' examples phase sends: a real sparse answer every run.
                parameter.setdefault("example", "name,slug,revenue.mrr")
        ok = operation.get("responses", {}).get("200", {})
        schema = ok.get("content", {}).get("application/json", {}).get("schema", {})
        if schema.get("$ref") in twins:
            ok[SPARSE_SCHEMA] = {"$ref": twins[schema["$ref"]]}
            ok["description"] = (
                (ok.get("description") or "The whole items.")
                + f" With `fields`, the items carry only those fields: the body is then "
                f"`{twins[schema['$ref']].rsplit('/', 1)[1]}` (named in `{SPARSE_SCHEMA}`)."
            )
    return result
