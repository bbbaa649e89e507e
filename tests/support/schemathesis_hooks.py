"""Schemathesis hooks for .ci/schemathesis (loaded through SCHEMATHESIS_HOOKS).

An answer asked for with `fields=` (sparse fieldsets) carries only the fields named: its body
is the schema that the documented answer names in `x-sparse-fieldset-schema`, not the exact
default one (core.openapi.sparse_fieldsets). Every other answer is checked by
schemathesis' own `response_schema_conformance`.
"""

import json

import schemathesis
from jsonschema import Draft202012Validator
from schemathesis.specs.openapi.checks import response_schema_conformance

SPARSE_SCHEMA = "x-sparse-fieldset-schema"


@schemathesis.check
def response_schema_conformance_or_sparse(ctx, response, case):
    documented = case.operation.definition.raw.get("responses", {}).get(
        str(response.status_code), {}
    )
    if SPARSE_SCHEMA not in documented or "fields" not in (case.query or {}):
        return response_schema_conformance(ctx, response, case)
    if case.method.upper() == "HEAD":
        return None
    root = {
        **documented[SPARSE_SCHEMA],
        "components": case.operation.schema.raw_schema["components"],
    }
    errors = [
        f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
        for error in Draft202012Validator(root).iter_errors(json.loads(response.content))
    ]
    if errors:
        raise AssertionError(f"The sparse answer does not match {SPARSE_SCHEMA}: {errors[:5]}")
    return None
