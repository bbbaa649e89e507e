"""The transparency log through the REST API: one leaf per distinct statement,
signed tree heads, entries and proofs that the client's verifiers accept, 400s for bad
parameters, no allowance spent, and a log that cannot be rewritten unnoticed."""

import base64
import json
import threading

import pytest
from django.db import connection, connections
from django.db.utils import DatabaseError

from quota.models import MonthlyUsage
from startups.models import Verification
from tests.support.client_verify import verify
from tests.support.factories import bearer, make_startup, make_verification
from transparency.models import AppendOnlyError, LogEntry, TreeHead
from transparency.services import log_append

pytestmark = pytest.mark.django_db


def jwks(client) -> dict:
    return client.get("/.well-known/jwks.json").json()


def attest(client, slug: str, **headers) -> dict:
    response = client.get(f"/api/v1/startups/{slug}/attestation", **headers)
    assert response.status_code == 200, response.content
    return response.json()["data"]


def verified(slug: str, mrr: int = 1000):
    startup = make_startup(slug=slug, mrr=mrr)
    make_verification(startup)
    return startup


def test_an_attestation_names_its_leaf_and_verifies_offline_with_the_jwks(client):
    verified("acme")
    data = attest(client, "acme")
    result = verify.verify_attestation(data, jwks(client))
    assert data["leafIndex"] == 0 == result.leaf_index == result.claims["logIndex"]
    assert result.tree_head.tree_size == 1
    entry = json.loads(base64.b64decode(data["logEntry"]))
    assert entry["slug"] == "acme" and entry["mrr"] == 1000 and entry["logIndex"] == 0
    # Freshness and the host-dependent link are not part of the logged statement.
    assert not {"status", "lastSyncedAt", "verifiedAt", "methodology", "issuedAt"} & set(entry)
    assert result.claims["loggedAt"] == entry["loggedAt"]


def test_the_same_statement_is_logged_once_and_a_change_makes_a_new_leaf(client):
    startup = verified("acme")
    verified("beta", mrr=50)
    first = attest(client, "acme")
    again = attest(client, "acme")
    assert again["leafIndex"] == first["leafIndex"] == 0
    assert LogEntry.objects.count() == 1 and TreeHead.objects.count() == 1
    # A sync that changes nothing but its time adds nothing either.
    Verification.objects.filter(startup=startup).update(verified_at="2026-11-20T00:00:00Z")
    assert attest(client, "acme")["leafIndex"] == 0
    assert attest(client, "beta")["leafIndex"] == 1
    Verification.objects.filter(startup=startup).update(mrr=1200, arr=14400)
    changed = attest(client, "acme")
    assert changed["leafIndex"] == 2 and changed["treeHead"]["treeSize"] == 3
    verify.verify_attestation(changed, jwks(client))
    # The first attestation still verifies against its own (older) head, and that head is
    # consistent with today's.
    older, newer = first["treeHead"], changed["treeHead"]
    proof = client.get("/api/v1/log/proof/consistency?first=1&second=3").json()["data"]
    verify.verify_consistency(older, newer, proof, jwks(client))
    assert sorted(TreeHead.objects.values_list("tree_size", flat=True)) == [1, 2, 3]


def test_log_endpoints_answer_with_proofs_the_client_accepts_and_spend_nothing(client, api_key):
    obj, raw = api_key
    for n in range(5):
        verified(f"s{n}", mrr=100 * (n + 1))
        attest(client, f"s{n}")
    keys = jwks(client)
    spent = MonthlyUsage.objects.filter(account=obj.account).count()
    head = client.get("/api/v1/log/tree-head", **bearer(raw)).json()["data"]
    checked = verify.verify_tree_head(head, keys)
    assert checked.tree_size == head["treeSize"] == 5
    entries = client.get("/api/v1/log/entries?start=1&end=3", **bearer(raw)).json()
    assert [e["leafIndex"] for e in entries["data"]] == [1, 2, 3]
    assert entries["meta"] == {"start": 1, "end": 3, "treeSize": 5}
    for item in entries["data"]:
        leaf = verify.leaf_hash(base64.b64decode(item["entry"]))
        assert leaf.hex() == item["leafHash"]
        url = f"/api/v1/log/proof/inclusion?leaf={item['leafIndex']}&treeSize=5"
        proof = client.get(url, **bearer(raw)).json()["data"]
        by_hash = client.get(f"/api/v1/log/proof/inclusion?leaf={item['leafHash']}&treeSize=5")
        assert by_hash.json()["data"] == proof
        path = [bytes.fromhex(node) for node in proof["auditPath"]]
        assert verify.verify_inclusion_proof(leaf, item["leafIndex"], 5, path, checked.root_hash)
    # `end` past the log is cut to the last leaf.
    tail = client.get("/api/v1/log/entries?start=4&end=999").json()
    assert [e["leafIndex"] for e in tail["data"]] == [4] and tail["meta"]["end"] == 4
    assert MonthlyUsage.objects.filter(account=obj.account).count() == spent
    assert not any(MonthlyUsage.objects.filter(account=obj.account).values_list("used", flat=1))


def test_an_empty_log_has_a_signed_head_of_size_zero(client):
    head = client.get("/api/v1/log/tree-head").json()["data"]
    assert head["treeSize"] == 0
    assert verify.verify_tree_head(head, jwks(client)).root_hash.hex() == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert client.get("/api/v1/log/tree-head").json()["data"] == head


@pytest.mark.parametrize(
    "query",
    [
        "/api/v1/log/entries",
        "/api/v1/log/entries?start=0",
        "/api/v1/log/entries?start=-1&end=2",
        "/api/v1/log/entries?start=a&end=2",
        "/api/v1/log/entries?start=2&end=1",
        "/api/v1/log/entries?start=5&end=9",
        "/api/v1/log/entries?start=99999999999999999999999&end=1",
        "/api/v1/log/proof/inclusion?leaf=0",
        "/api/v1/log/proof/inclusion?leaf=0&treeSize=0",
        "/api/v1/log/proof/inclusion?leaf=2&treeSize=2",
        "/api/v1/log/proof/inclusion?leaf=0&treeSize=4",
        "/api/v1/log/proof/inclusion?leaf=zz&treeSize=1",
        "/api/v1/log/proof/inclusion?leaf=" + "ab" * 32 + "&treeSize=1",
        "/api/v1/log/proof/consistency?first=0&second=2",
        "/api/v1/log/proof/consistency?first=3&second=2",
        "/api/v1/log/proof/consistency?first=1&second=4",
        "/api/v1/log/proof/consistency?first=1.5&second=2",
        "/api/v1/log/proof/consistency?first=%00&second=2",
    ],
)
def test_bad_parameters_get_a_clear_400(client, query):
    verified("a")
    verified("b")
    attest(client, "a")
    attest(client, "b")
    response = client.get(query)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_parameter" and error["message"]


def test_a_wrong_key_is_still_a_401(client):
    response = client.get("/api/v1/log/tree-head", HTTP_AUTHORIZATION="Bearer osk_wrong")
    assert response.status_code == 401


def test_the_log_rows_cannot_be_changed_or_removed_through_the_orm(client):
    verified("acme")
    attest(client, "acme")
    leaf, head = LogEntry.objects.get(), TreeHead.objects.get()
    leaf.entry = b"{}"
    for attempt in (
        leaf.save,
        leaf.delete,
        head.delete,
        lambda: LogEntry.objects.update(entry=b"{}"),
        lambda: TreeHead.objects.filter(tree_size=1).update(root_hash="00" * 32),
        lambda: LogEntry.objects.all().delete(),
    ):
        with pytest.raises(AppendOnlyError):
            attempt()


def test_the_database_refuses_an_update_of_a_leaf_or_a_head(client):
    verified("acme")
    attest(client, "acme")
    for sql in (
        "UPDATE transparency_logentry SET slug = 'x'",
        "UPDATE transparency_treehead SET root_hash = 'x'",
    ):
        with pytest.raises(DatabaseError), connection.cursor() as cursor:
            cursor.execute(sql)
        connection.needs_rollback = False
    if connection.vendor == "postgresql":
        with pytest.raises(DatabaseError), connection.cursor() as cursor:
            cursor.execute("DELETE FROM transparency_logentry")


def _bypass_triggers_and_rewrite_leaf_0(new_entry: bytes) -> None:
    """What only someone with the database owner's rights could do: switch the triggers off
    and rewrite history."""
    from transparency import merkle

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ALTER TABLE transparency_logentry DISABLE TRIGGER USER")
        else:
            cursor.execute("DROP TRIGGER transparency_logentry_no_update")
        cursor.execute(
            'UPDATE transparency_logentry SET entry = %s, leaf_hash = %s WHERE "index" = 0',
            [new_entry, merkle.leaf_hash(new_entry).hex()],
        )


def test_a_rewritten_entry_is_caught_by_a_consistency_proof_against_an_earlier_head(client):
    for slug in ("a", "b", "c"):
        verified(slug)
        attest(client, slug)
    keys = jwks(client)
    monitor_saw = client.get("/api/v1/log/tree-head").json()["data"]  # size 3, kept by a monitor
    entry = base64.b64decode(
        client.get("/api/v1/log/entries?start=0&end=0").json()["data"][0]["entry"]
    )
    _bypass_triggers_and_rewrite_leaf_0(entry.replace(b'"mrr":1000', b'"mrr":9000'))
    verified("d")
    attest(client, "d")  # the log grows: a new head is signed over the rewritten leaf
    today = client.get("/api/v1/log/tree-head").json()["data"]
    assert today["treeSize"] == 4
    verify.verify_tree_head(today, keys)  # the head itself is validly signed...
    proof = client.get("/api/v1/log/proof/consistency?first=3&second=4").json()["data"]
    with pytest.raises(verify.VerificationError, match="not consistent"):
        verify.verify_consistency(monitor_saw, today, proof, keys)  # ...but not consistent


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_never_share_an_index():
    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need PostgreSQL (SQLite has one writer)")
    from django.utils import timezone

    errors = []

    def append(n: int) -> None:
        try:
            for round_ in range(3):
                log_append(
                    slug=f"w{n}", statement={"slug": f"w{n}", "r": round_}, now=timezone.now()
                )
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=append, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert list(LogEntry.objects.order_by("index").values_list("index", flat=True)) == list(
        range(18)
    )
    assert list(TreeHead.objects.order_by("tree_size").values_list("tree_size", flat=True)) == list(
        range(1, 19)
    )
    assert sorted(LogEntry.objects.values_list("slug", flat=True)).count("w0") == 3


def test_a_monitor_fetches_any_published_head_and_proves_the_log_only_grew(client):
    for slug in ("a", "b", "c", "d", "e"):
        verified(slug)
        attest(client, slug)
    keys = jwks(client)
    latest = client.get("/api/v1/log/tree-head").json()["data"]
    for size in range(1, 5):
        old = client.get(f"/api/v1/log/tree-head?treeSize={size}").json()["data"]
        assert verify.verify_tree_head(old, keys).tree_size == size
        url = f"/api/v1/log/proof/consistency?first={size}&second={latest['treeSize']}"
        verify.verify_consistency(old, latest, client.get(url).json()["data"], keys)
    for size in ("0", "6", "x", ""):
        response = client.get(f"/api/v1/log/tree-head?treeSize={size}")
        assert response.status_code == 400, size
        assert response.json()["error"]["code"] == "invalid_parameter"


def test_a_proof_is_computed_once_and_then_served_from_the_cache(client):
    from django.db import connection as db
    from django.test.utils import CaptureQueriesContext

    for slug in ("a", "b", "c"):
        verified(slug)
        attest(client, slug)
    urls = (
        "/api/v1/log/proof/inclusion?leaf=1&treeSize=3",
        "/api/v1/log/proof/consistency?first=1&second=3",
    )
    for url in urls:
        first = client.get(url).json()
        with CaptureQueriesContext(db) as queries:
            assert client.get(url).json() == first
        # No read of the leaf hashes up to the size (one leaf's own hash by key is fine).
        assert not [q for q in queries if '"index" <' in q["sql"]], url
