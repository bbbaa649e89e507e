"""Per-process copies of key lookups and startup profiles (core/readcache.py).

A copy may be served only while its generation token in the database is current: any write,
from any server, must show on the very next request. Writes by "another server" are simulated
by replacing the token row directly, which is all another server's write does here; the
two-gunicorn tests in tests/system/test_production.py and tests/system/test_faults.py do it
with real processes.

A request served from copies makes exactly one query: the read of the tokens, which live in the
database, not in Redis, so no Redis state can bring a stale copy back.
"""

import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from apikeys.services import api_key_revoke, subscription_set
from core import readcache
from core.models import GENERATION_TOKENS_SQL, Generation
from startups import pagecache
from startups.models import Startup
from tests.support.factories import (
    make_api_key,
    make_founder,
    make_pro_key,
    make_startup,
    make_subscription,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("read_cache_on")]


@pytest.fixture
def pro(db):
    key, raw = make_pro_key()
    return key, {"HTTP_X_API_KEY": raw}


def detail(client, slug: str, headers: dict):
    return client.get(f"/api/v1/startups/{slug}", **headers)


def another_server_wrote(kind: str) -> None:
    """What a write on another server leaves in the database: a new token."""
    Generation.objects.update_or_create(kind=kind, defaults={"token": f"elsewhere-{kind}"})


def test_a_repeated_pro_detail_is_served_with_only_the_token_query(
    client, pro, django_assert_num_queries
):
    make_startup(name="Acme", slug="acme", mrr=100)
    first = detail(client, "acme", pro[1])
    with django_assert_num_queries(1):
        again = detail(client, "acme", pro[1])
    assert again.status_code == 200
    assert again.content == first.content
    assert again["X-Service-Plan"] == "Pro"


def test_the_token_read_passes_every_execute_wrapper(client, pro):
    """On PostgreSQL the token read goes through a cursor kept per connection, not Django's
    cursor wrapper; it must still pass every execute wrapper (the request's database deadline
    is one) on the request it serves."""
    make_startup(name="Acme", slug="acme", mrr=100)
    detail(client, "acme", pro[1])
    seen = []

    def spy(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        again = detail(client, "acme", pro[1])
    assert again.status_code == 200
    assert seen == [GENERATION_TOKENS_SQL]


def test_a_free_detail_still_counts_every_record(client):
    _, raw = make_api_key()
    make_startup(slug="acme")
    for _ in range(3):
        response = detail(client, "acme", {"HTTP_X_API_KEY": raw})
    assert response["X-Service-Quota-Remaining"] == "97"


def test_an_edit_shows_on_the_next_request(client, pro):
    startup = make_startup(name="Before", slug="acme")
    make_founder(startup, name="Ada")
    assert detail(client, "acme", pro[1]).json()["data"]["name"] == "Before"
    startup.name = "After"
    startup.save()
    assert detail(client, "acme", pro[1]).json()["data"]["name"] == "After"
    make_founder(startup, name="Grace")
    founders = detail(client, "acme", pro[1]).json()["data"]["founders"]
    assert [f["name"] for f in founders] == ["Ada", "Grace"]


def test_a_write_on_another_server_drops_this_servers_copies(client, pro):
    make_startup(name="Before", slug="acme")
    detail(client, "acme", pro[1])
    # A write this process cannot see (plain SQL, as another release's server may send)...
    with connection.cursor() as cursor:
        table = connection.ops.quote_name(Startup._meta.db_table)
        sql = f"UPDATE {table} SET name = %s WHERE slug = %s"  # noqa: S608 - a quoted name
        cursor.execute(sql, ["After", "acme"])
    assert detail(client, "acme", pro[1]).json()["data"]["name"] == "Before"  # copy in use
    another_server_wrote("data")  # ...whose server replaced the token
    assert detail(client, "acme", pro[1]).json()["data"]["name"] == "After"


def test_bulk_writes_mark_copies_stale(client, pro, tmp_path):
    make_startup(name="Before", slug="acme")
    detail(client, "acme", pro[1])
    records = [
        {"name": "Imported", "slug": "acme", "revenue": {"mrr": 5, "arr": 60, "currency": "USD"}}
    ]
    path = tmp_path / "startups.json"
    path.write_text(json.dumps(records))
    call_command("import_startups", str(path), stdout=io.StringIO())
    data = detail(client, "acme", pro[1]).json()["data"]
    assert (data["name"], data["revenue"]["mrr"]) == ("Imported", 5)


def test_a_revoked_key_is_refused_on_the_next_request(client, pro, django_assert_num_queries):
    key, headers = pro
    make_startup(slug="acme")
    detail(client, "acme", headers)
    with django_assert_num_queries(1):
        assert detail(client, "acme", headers).status_code == 200
    api_key_revoke(api_key=key)
    assert detail(client, "acme", headers).status_code == 401


def test_a_key_revoked_on_another_server_is_refused_here(client, pro):
    key, headers = pro
    make_startup(slug="acme")
    detail(client, "acme", headers)
    type(key).objects.filter(pk=key.pk).update(revoked_at="2026-01-01T00:00:00Z")
    another_server_wrote("auth")
    response = detail(client, "acme", headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"


def test_plan_changes_show_at_once(client, pro):
    key, headers = pro
    make_startup(slug="acme")
    assert detail(client, "acme", headers)["X-Service-Plan"] == "Pro"
    subscription_set(account=key.account, plan="free")
    assert detail(client, "acme", headers)["X-Service-Plan"] == "Free"
    make_subscription(account=key.account)
    assert detail(client, "acme", headers)["X-Service-Plan"] == "Pro"


def test_a_pro_period_ending_while_copied_ends_pro_on_time(client, pro, monkeypatch):
    _, headers = pro
    make_startup(slug="acme")
    assert detail(client, "acme", headers)["X-Service-Plan"] == "Pro"
    later = timezone.now() + timedelta(days=31)  # past the 30-day period, nothing written
    monkeypatch.setattr("apikeys.services.timezone.now", lambda: later)
    assert detail(client, "acme", headers)["X-Service-Plan"] == "Free"


def test_a_write_during_a_build_never_leaves_a_stale_copy():
    local = readcache.LocalCache("data", max_entries=10)
    readcache.current("data")  # the token the build starts under

    def build_racing_a_write() -> str:
        readcache.bump("data")  # a write lands while the rows are being read
        return "stale"

    assert local.get_or_build("k", build_racing_a_write) == "stale"
    assert local.get_or_build("k", lambda: "fresh") == "fresh"


def test_without_the_shared_cache_copies_still_follow_every_write(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2},
        }
    }
    local = readcache.LocalCache("data", max_entries=10)
    assert local.get_or_build("k", lambda: "one") == "one"
    assert local.get_or_build("k", lambda: "two") == "one"  # kept: nothing was written
    readcache.bump("data")  # a write, with Redis unreachable
    assert local.get_or_build("k", lambda: "three") == "three"


def test_copies_are_off_when_read_cache_seconds_is_zero(settings):
    settings.READ_CACHE_SECONDS = 0
    local = readcache.LocalCache("data", max_entries=10)
    assert local.get_or_build("k", lambda: "one") == "one"
    assert local.get_or_build("k", lambda: "two") == "two"


def test_the_per_process_map_is_bounded():
    local = readcache.LocalCache("data", max_entries=3)
    for i in range(10):
        local.get_or_build(i, lambda i=i: i)
    assert len(local._entries) == 3
    assert local.get_or_build(9, lambda: "rebuilt") == 9  # the newest are kept
    assert local.get_or_build(0, lambda: "rebuilt") == "rebuilt"


def test_a_repeated_pro_list_page_is_served_with_only_the_token_query(
    client, pro, django_assert_num_queries
):
    for i in range(12):
        make_startup(name=f"S{i:02d}", slug=f"s{i:02d}", mrr=100 + i)
    first = client.get("/api/v1/startups", {"sort": "name-asc"}, **pro[1])
    with django_assert_num_queries(1):
        again = client.get("/api/v1/startups", {"sort": "name-asc"}, **pro[1])
    assert again.json() == first.json()


def test_a_list_follows_a_write_at_once(client, pro):
    leader = make_startup(name="Leader", slug="leader", mrr=500)
    make_startup(name="Runner", slug="runner", mrr=400)

    def ranked() -> list[tuple[str, int, int]]:
        data = client.get("/api/v1/startups", **pro[1]).json()["data"]
        return [(item["name"], item["revenue"]["mrr"], item["rank"]) for item in data]

    assert ranked() == [("Leader", 500, 1), ("Runner", 400, 2)]
    leader.mrr, leader.name = 300, "Former leader"
    leader.save()
    assert ranked() == [("Runner", 400, 1), ("Former leader", 300, 2)]


def test_signing_up_signing_in_and_making_a_key_keep_the_copies(client):
    from tests.support.factories import PASSWORD, make_account

    token = readcache.current("data"), readcache.current("auth")
    account = make_account()
    assert client.login(username=account.username, password=PASSWORD)
    make_api_key(account=account)
    assert (readcache.current("data"), readcache.current("auth")) == token


def test_the_token_changes_with_the_write_it_announces(client, pro):
    """The token is replaced in the write's own transaction: a revocation rolled back leaves
    the copies good, a committed one is refused on the next request."""
    from django.db import transaction

    key, headers = pro
    make_startup(slug="acme")
    assert detail(client, "acme", headers).status_code == 200
    token = readcache.current("auth")
    with pytest.raises(RuntimeError), transaction.atomic():
        api_key_revoke(api_key=key)
        raise RuntimeError("the write fails after the revocation")
    assert readcache.current("auth") == token
    key.refresh_from_db()
    assert detail(client, "acme", headers).status_code == 200
    api_key_revoke(api_key=key)
    assert readcache.current("auth") != token
    assert detail(client, "acme", headers).status_code == 401


def test_kept_list_rows_and_skeletons_are_not_walked_by_the_garbage_collector(client, pro):
    """Thousands of kept rows as model instances made every full collection walk them (p99
    pauses up to 90 ms under load); kept as tuples of plain values, the collector drops them
    from its lists. The pages served from them are unchanged."""
    import gc

    for n in range(30):
        make_startup(name=f"Kept {n:02d}", mrr=1000 + n)
    first = client.get("/api/v1/startups?limit=30", **pro[1]).json()
    again = client.get("/api/v1/startups?limit=30", **pro[1]).json()
    assert again["data"] == first["data"]
    assert [s["rank"] for s in again["data"]] == list(range(1, 31))
    # A tuple is untracked once what it holds is: nested ones one level per collection.
    gc.collect()
    gc.collect()
    kept = [entry[2] for entry in pagecache.LIST_ROWS._entries.values()]
    skeletons = [entry[2] for entry in pagecache.SKELETONS._entries.values()]
    assert len(kept) == 30 and skeletons
    assert not any(gc.is_tracked(row) for row in kept)
    assert not any(gc.is_tracked(s["ids"]) or gc.is_tracked(s["ranks"]) for s in skeletons)
