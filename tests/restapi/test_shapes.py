"""The metered answers of /api/v1 are written exactly as their declared shapes say (restapi/
shapes.py), and the OpenAPI document describes those same shapes: a key added to a builder
and not its shape, or to a shape and not its builder, fails here.
"""

from datetime import UTC, datetime
from typing import get_args, get_origin, get_type_hints, is_typeddict

import pytest

from core.renderers import camel_key
from core.shapes import shape_keys
from quota.headers import QuotaMeta
from restapi.shapes import (
    ChangeEntry,
    ChangeFeed,
    ChangeFeedMeta,
    HistoryMeta,
    HistoryPage,
    StartupPage,
    StartupPageMeta,
)
from startups.history import revenue_snapshot_record
from tests.support.contract import openapi_document
from tests.support.factories import (
    bearer,
    import_startups,
    make_account,
    make_api_key,
    make_startup,
    make_subscription,
    make_verification,
)

pytestmark = pytest.mark.django_db

# Every shape the metered answers are made of, with its component in the document.
COMPONENTS = {
    StartupPage: "StartupPage",
    StartupPageMeta: "StartupPageMeta",
    HistoryPage: "HistoryPage",
    HistoryMeta: "HistoryMeta",
    ChangeFeed: "ChangeFeed",
    ChangeFeedMeta: "ChangeFeedMeta",
    ChangeEntry: "ChangeEntry",
    QuotaMeta: "QuotaMeta",
}


def _inner_shapes(shape: type) -> dict[str, type]:
    """The keys of `shape` holding another shape (or a list of them), and that shape."""
    found = {}
    for key, hint in get_type_hints(shape).items():  # NotRequired and Annotated stripped
        inner = get_args(hint)[0] if get_origin(hint) is list else hint
        if is_typeddict(inner):
            found[key] = inner
    return found


def _collect(shape: type, value: dict, written: dict[type, list[dict]]) -> None:
    """`value` (a camelCase answer) under `shape`, and the values of its inner shapes."""
    written.setdefault(shape, []).append(value)
    for key, inner in _inner_shapes(shape).items():
        held = value.get(camel_key(key))
        for item in held if isinstance(held, list) else [held]:
            if isinstance(item, dict):
                _collect(inner, item, written)


def assert_written_as_declared(shape: type, values: list[dict]) -> None:
    keys, required = shape_keys(shape)
    declared = [camel_key(key) for key in keys]
    seen: set[str] = set()
    for value in values:
        # No undeclared key, the declared order, every required key.
        assert list(value) == [key for key in declared if key in value], shape.__name__
        assert {camel_key(key) for key in required} <= set(value), shape.__name__
        seen |= set(value)
    # Every optional key is written when it applies (the scenarios below make each apply).
    assert seen == set(declared), f"{shape.__name__}: never written {set(declared) - seen}"


@pytest.fixture
def keys() -> dict[str, dict]:
    account = make_account()
    make_subscription(account=account)
    return {"free": bearer(make_api_key()[1]), "pro": bearer(make_api_key(account=account)[1])}


def test_every_metered_answer_is_written_as_its_shape_declares(client, keys, tmp_path):
    import_startups(tmp_path, [{"name": f"Co {n}", "slug": f"co-{n}"} for n in range(3)])
    startup = make_startup(slug="hist-co", mrr=100)
    make_verification(startup, mrr=100)
    revenue_snapshot_record(startup=startup, now=datetime(2026, 10, 1, 9, tzinfo=UTC))
    first = client.get("/api/v1/startups?limit=1", **keys["pro"]).json()
    answers = {
        StartupPage: [
            # Free (quota figures), the size lowered (notice), an unknown parameter (warnings).
            ("/api/v1/startups?limit=500&bogus=1", "free"),
            ("/api/v1/startups", "pro"),
            ("/api/v1/startups?limit=1&cursor=" + first["meta"]["nextCursor"], "pro"),
        ],
        HistoryPage: [
            ("/api/v1/startups/hist-co/history?from=2026-10-01", "free"),
            ("/api/v1/startups/hist-co/history", "pro"),
        ],
        ChangeFeed: [("/api/v1/changes?limit=500", "free"), ("/api/v1/changes?limit=2", "pro")],
    }
    written: dict[type, list[dict]] = {}
    for envelope, requests in answers.items():
        for path, key in requests:
            response = client.get(path, **keys[key])
            assert response.status_code == 200, path
            _collect(envelope, response.json(), written)
    assert set(written) == set(COMPONENTS)
    for shape, values in written.items():
        assert_written_as_declared(shape, values)


def test_the_document_describes_each_shape_with_its_keys():
    schemas = openapi_document()["components"]["schemas"]
    for shape, component in COMPONENTS.items():
        keys, required = shape_keys(shape)
        schema = schemas[component]
        assert set(schema["properties"]) == {camel_key(key) for key in keys}, component
        assert set(schema["required"]) == {camel_key(key) for key in required}, component


def test_a_key_the_builder_writes_and_the_shape_does_not_declare_is_caught():
    value = {"limit": 1, "used": 0, "remaining": 1, "resetsAt": "x", "surprise": 1}
    with pytest.raises(AssertionError):
        assert_written_as_declared(QuotaMeta, [value])
    del value["surprise"], value["used"]
    with pytest.raises(AssertionError):
        assert_written_as_declared(QuotaMeta, [value])
