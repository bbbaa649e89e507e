"""The official Python client (clients/python, package `openstartup`) against a live server.

The Django project package is also named `openstartup`, so the client runs in a fresh
interpreter started in clients/python (where `import openstartup` is the client, installed by
`make test` from requirements-dev.txt); each test sets data up here, runs a few lines of client
code there and asserts on what it returned. Retries and error parsing are also exercised against a
small local fake HTTP server that answers 5xx/429 on cue (the real one cannot be made to fail on
cue). `history`, `attestation` and `export` run against the live server too; the export's
cut-short stream is exercised against the fake.
"""

import json
import os
import re
import sys
import textwrap
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from startups.models import RevenueSnapshot, Startup
from tests.support.factories import (
    make_account,
    make_api_key,
    make_pro_key,
    make_startup,
    make_subscription,
    make_verification,
)
from tests.support.fake_api import OUTAGE, PAGE, FakeApi
from tests.support.processes import run_to_the_end

CLIENT_DIR = Path(__file__).resolve().parents[2] / "clients" / "python"


ERROR_FIELDS = """
def error_fields(error):
    return {"type": type(error).__name__, "code": error.code, "message": error.message,
            "status": error.status, "request_id": error.request_id,
            "retry_after": getattr(error, "retry_after", None),
            "is_base": isinstance(error, openstartup.OpenStartupError)}
"""


def run_client(code: str, **variables: Any) -> Any:
    """Run `code` with the client package; `variables` are bound first, `result` is returned."""
    prelude = "".join(f"{name} = {value!r}\n" for name, value in variables.items())
    script = (
        "import json, sys, time\nimport openstartup\n"
        + ERROR_FIELDS
        + prelude
        + textwrap.dedent(code)
        + "\nsys.stdout.write(json.dumps(result))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(CLIENT_DIR / "src")  # this checkout's client, not another's install
    out = run_to_the_end([sys.executable, "-c", script], cwd=CLIENT_DIR, env=env, timeout=120)
    return json.loads(out)


def test_the_client_package_is_the_one_in_clients_python():
    where = run_client("result = openstartup.__file__")
    assert Path(where).is_relative_to(CLIENT_DIR / "src")


# --- Against a live server ---


@pytest.fixture
def startups(transactional_db) -> list[str]:
    """25 startups, slugs in MRR-descending order."""
    made = [make_startup(name=f"Co {n:02d}", slug=f"co-{n:02d}", mrr=1000 * n) for n in range(25)]
    return [startup.slug for startup in reversed(made)]


def test_list_pages_through_everything_in_order(live_server, startups):
    result = run_client(
        """
        client = openstartup.Client(base_url=url)
        iterator = client.startups.list(sort="mrr-desc", limit=10)
        slugs = [startup["slug"] for startup in iterator]
        result = {"slugs": slugs, "meta": iterator.meta,
                  "pages": [len(page) for page in client.startups.list(limit=10).pages()]}
        """,
        url=live_server.url,
    )
    assert result["slugs"] == startups  # all 25, no duplicate, no gap, in order
    assert result["pages"] == [10, 10, 5]
    assert result["meta"]["plan"] == "Free"
    assert result["meta"]["hasMore"] is False


def test_list_keywords_are_the_query_parameters(live_server, transactional_db):
    make_startup(name="Alpha Mail", slug="alpha", category="Marketing", mrr=500, on_sale=True)
    make_startup(name="Beta Mail", slug="beta", category="Marketing", mrr=5000)
    make_startup(name="Gamma", slug="gamma", category="Fintech", mrr=900, on_sale=True)
    result = run_client(
        """
        client = openstartup.Client(base_url=url)
        def slugs(**kwargs):
            return [s["slug"] for s in client.startups.list(**kwargs)]
        result = {
            "category": slugs(category="marketing", sort="name-asc"),
            "on_sale": slugs(on_sale=True, sort="mrr-asc"),
            "range": slugs(min_mrr=600, max_mrr=5000, sort="mrr-desc"),
            "q": slugs(q="mail", sort="name-desc"),
            "max_items": slugs(sort="mrr-desc", max_items=2),
        }
        """,
        url=live_server.url,
    )
    assert result == {
        "category": ["alpha", "beta"],
        "on_sale": ["alpha", "gamma"],
        "range": ["beta", "gamma"],
        "q": ["beta", "alpha"],
        "max_items": ["beta", "gamma"],
    }


def test_get_returns_the_detail_and_not_found_is_a_clear_error(live_server, transactional_db):
    make_startup(name="Acme", slug="acme", mrr=1200, category="Developer Tools")
    result = run_client(
        """
        client = openstartup.Client(base_url=url)
        acme = client.startups.get("acme")
        try:
            client.startups.get("no/such?startup")
            missing = None
        except openstartup.NotFoundError as error:
            missing = error_fields(error)
        result = {"acme": acme, "missing": missing}
        """,
        url=live_server.url,
    )
    acme = result["acme"]
    assert (acme["slug"], acme["name"], acme["revenue"]["mrr"]) == ("acme", "Acme", 1200)
    assert acme["revenue"]["arr"] == 14400
    assert acme["profileUrl"].endswith("/startups/acme")
    assert result["missing"]["type"] == "NotFoundError"
    assert result["missing"]["code"] == "not_found"
    assert result["missing"]["status"] == 404
    assert result["missing"]["message"]
    assert result["missing"]["is_base"] is True


@pytest.mark.parametrize("key_header", ["authorization", "x-api-key"])
def test_both_key_headers_carry_the_key(live_server, transactional_db, key_header):
    make_startup(slug="one", mrr=1)
    account = make_account()
    make_subscription(account=account)
    _, raw = make_api_key(account=account)
    result = run_client(
        """
        good = openstartup.Client(base_url=url, api_key=key, key_header=key_header)
        iterator = good.startups.list(limit=50)
        list(iterator)
        bad = openstartup.Client(base_url=url, api_key="osk_wrong", key_header=key_header)
        try:
            bad.startups.get("one")
            wrong = None
        except openstartup.AuthenticationError as error:
            wrong = error_fields(error)
        result = {"plan": iterator.meta["plan"], "limit": iterator.meta["limit"], "wrong": wrong}
        """,
        url=live_server.url,
        key=raw,
        key_header=key_header,
    )
    assert result["plan"] == "Pro"  # the key was sent and read: Pro limits
    assert result["limit"] == 50
    assert result["wrong"]["code"] == "invalid_api_key"
    assert result["wrong"]["status"] == 401
    assert result["wrong"]["type"] == "AuthenticationError"


def test_an_exhausted_allowance_raises_at_once_with_retry_after(live_server, transactional_db):
    for n in range(3):
        make_startup(slug=f"s{n}", mrr=n)
    account = make_account()
    account.monthly_allowance_override = 2
    account.save()
    _, raw = make_api_key(account=account)
    result = run_client(
        """
        client = openstartup.Client(base_url=url, api_key=key)
        got = []
        started = time.monotonic()
        try:
            for startup in client.startups.list(limit=1):
                got.append(startup["slug"])
            error = None
        except openstartup.RateLimitError as raised:
            error = error_fields(raised)
        result = {"got": got, "error": error, "seconds": time.monotonic() - started}
        """,
        url=live_server.url,
        key=raw,
    )
    assert len(result["got"]) == 2
    assert result["error"]["code"] == "monthly_quota_exceeded"
    assert result["error"]["status"] == 429
    assert result["error"]["retry_after"] > 60  # until the 1st: not slept through
    assert result["seconds"] < 10


def test_readme_lists_the_top_startups_in_five_lines(live_server, startups):
    for slug in startups:  # the five lines ask for verified=True (the verified filter)
        make_verification(Startup.objects.get(slug=slug))
    readme = (CLIENT_DIR / "README.md").read_text()
    snippet = re.search(r"```python\n(.*?)```", readme, re.DOTALL).group(1)
    assert len(snippet.strip().splitlines()) == 5  # import, blank line, client, for, print
    code = snippet.replace('"http://127.0.0.1:8000"', "url").replace('"osk_..."', "None")
    printed = run_client(
        "import contextlib, io\nout = io.StringIO()\nwith contextlib.redirect_stdout(out):\n"
        + textwrap.indent(code, "    ")
        + "\nresult = out.getvalue().splitlines()",
        url=live_server.url,
    )
    # Every startup here is verified, so the filter keeps all of them: order and count.
    assert [line.split()[0] + " " + line.split()[1] for line in printed] == [
        f"Co {slug[-2:]}" for slug in startups[:10]
    ]


# --- Retries and error parsing against a fake server that fails on cue ---


def client_error(url: str, options: str, call: str, error: str) -> dict:
    """The fields of the `openstartup.<error>` that `Client(base_url=url, <options>).<call>`
    raises."""
    code = f"""
        client = openstartup.Client(base_url=url, {options})
        try:
            client.{call}
        except openstartup.{error} as error:
            result = error_fields(error)
        """
    return run_client(code, url=url)


def test_5xx_is_retried_with_backoff_then_succeeds():
    script = [(503, {}, OUTAGE), (502, {}, {}), (200, {}, PAGE)]
    with FakeApi(script) as fake:
        result = run_client(
            """
            client = openstartup.Client(base_url=url, backoff=0.01)
            result = [s["slug"] for s in client.startups.list()]
            """,
            url=fake.url,
        )
        assert result == ["a"]
        assert len(fake.hits) == 3


def test_429_honours_retry_after():
    script = [(429, {"Retry-After": "1"}, {"error": {"code": "rate_limited"}}), (200, {}, PAGE)]
    with FakeApi(script) as fake:
        result = run_client(
            """
            client = openstartup.Client(base_url=url, backoff=0.01)
            started = time.monotonic()
            slugs = [s["slug"] for s in client.startups.list()]
            result = {"slugs": slugs, "seconds": time.monotonic() - started}
            """,
            url=fake.url,
        )
        assert result["slugs"] == ["a"]
        assert result["seconds"] >= 1.0
        assert len(fake.hits) == 2


def test_persistent_5xx_raises_a_server_error_with_code_message_and_request_id():
    with FakeApi([(503, {"Retry-After": "0"}, OUTAGE)]) as fake:
        options = "max_retries=2, backoff=0.01"
        result = client_error(fake.url, options, 'startups.get("a")', "ServerError")
        assert len(fake.hits) == 3  # one try and two retries
    assert result == {
        "type": "ServerError",
        "code": "service_unavailable",
        "message": "Down.",
        "status": 503,
        "request_id": "req-5",
        "retry_after": None,
        "is_base": True,
    }


def test_request_id_falls_back_to_the_header_and_4xx_is_not_retried():
    body = {"error": {"code": "not_found", "message": "No startup has this slug."}}
    with FakeApi([(404, {"X-Request-Id": "hdr-9"}, body)]) as fake:
        result = client_error(fake.url, "backoff=0.01", 'startups.get("x")', "NotFoundError")
        assert len(fake.hits) == 1
    assert result["request_id"] == "hdr-9"
    assert result["code"] == "not_found"


def test_no_server_is_a_connection_error():
    with FakeApi([(200, {}, PAGE)]) as fake:
        url = fake.url  # a port that is free once the server is gone
    options = "max_retries=1, backoff=0.01"
    result = client_error(url, options, 'startups.get("x")', "APIConnectionError")
    assert result["code"] == "connection_error"
    assert result["status"] is None


NDJSON = {"Content-Type": "application/x-ndjson"}


def test_export_streams_lines_and_checks_the_count_line():
    lines = b'{"slug":"a"}\n{"slug":"b"}\n{"meta":{"count":2,"warnings":["x ignored"]}}\n'
    with FakeApi([(200, NDJSON, lines)]) as fake:
        result = run_client(
            """
            client = openstartup.Client(base_url=url, api_key="osk_pro")
            export = client.startups.export(category="ai", on_sale=True)
            slugs = [item["slug"] for item in export]
            result = {"slugs": slugs, "meta": export.meta}
            """,
            url=fake.url,
        )
        assert fake.hits == ["/api/v1/exports/startups.ndjson?category=ai&onSale=true"]
    assert result == {"slugs": ["a", "b"], "meta": {"count": 2, "warnings": ["x ignored"]}}


@pytest.mark.parametrize(
    "lines",
    [b'{"slug":"a"}\n{"slug":"b"}\n', b'{"slug":"a"}\n{"meta":{"count":2}}\n'],
    ids=["no count line", "count differs"],
)
def test_a_cut_short_export_raises(lines):
    with FakeApi([(200, NDJSON, lines)]) as fake:
        result = run_client(
            """
            client = openstartup.Client(base_url=url)
            got = []
            try:
                for item in client.startups.export():
                    got.append(item["slug"])
                error = None
            except openstartup.APIConnectionError as raised:
                error = error_fields(raised)
            result = {"got": got, "error": error}
            """,
            url=fake.url,
        )
    assert result["got"] == ["a", "b"][: lines.count(b"slug")]
    assert result["error"]["code"] == "export_incomplete"


MODEL_SCHEMAS = {
    "Startup": "StartupList",
    "ListRevenue": "ListRevenue",
    "StartupDetail": "StartupDetail",
    "DetailRevenue": "DetailRevenue",
    "Founder": "Founder",
    "Social": "Social",
    "Verification": "Verification",
    "ProviderAccount": "ProviderAccount",
    "MonthlyRevenue": "MonthlyRevenue",
    "PageMeta": "StartupPageMeta",
    "Quota": "QuotaMeta",
}


def test_typed_models_declare_every_field_of_the_openapi_document(client, db):
    schemas = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    declared = run_client(
        """
        import typing
        result = {name: sorted(typing.get_type_hints(getattr(openstartup, name)))
                  for name in names}
        """,
        names=list(MODEL_SCHEMAS),
    )
    for model, schema in MODEL_SCHEMAS.items():
        missing = set(schemas[schema]["properties"]) - set(declared[model])
        assert not missing, f"openstartup.{model} lacks {sorted(missing)}"


def test_history_attestation_and_export_against_the_live_server(live_server, transactional_db):
    account = make_account()
    make_subscription(account=account)
    _, pro = make_api_key(account=account)
    acme = make_startup(name="Acme", slug="acme", mrr=1000, category="Tools")
    make_startup(name="Beta", slug="beta", mrr=500, category="Tools")
    make_startup(name="Other", slug="other", mrr=50, category="Food")
    make_verification(acme)
    for day, mrr in ((1, 900), (2, 950), (3, 1000)):
        RevenueSnapshot.objects.create(
            startup=acme,
            date=date(2026, 11, day),
            provider="stripe",
            mrr=mrr,
            arr=mrr * 12,
            customers=10 + day,
            last_30_days=100 * day,
            total_revenue=5000,
            synced_at=datetime(2026, 11, day, 23, tzinfo=UTC),
        )
    result = run_client(
        """
        client = openstartup.Client(base_url=url, api_key=key)
        history = client.startups.history("acme", from_="2026-11-02", to="2026-11-03")
        attestation = client.startups.attestation("acme")
        try:
            client.startups.attestation("beta")  # self-reported: nothing to attest
            missing = None
        except openstartup.OpenStartupError as error:
            missing = error_fields(error)
        export = client.startups.export(category="tools", sort="name-asc")
        rows = [row["slug"] for row in export]
        free = openstartup.Client(base_url=url)
        try:
            list(free.startups.export())
            refused = None
        except openstartup.OpenStartupError as error:
            refused = error_fields(error)
        result = {"history": history, "attestation": attestation, "missing": missing,
                  "rows": rows, "meta": export.meta, "refused": refused}
        """,
        url=live_server.url,
        key=pro,
    )
    assert [(p["date"], p["mrr"], p["customers"]) for p in result["history"]] == [
        ("2026-11-02", 950, 12),
        ("2026-11-03", 1000, 13),
    ]
    jws = result["attestation"]["jws"]
    assert jws.count(".") == 2 and result["attestation"]["keyId"]
    assert (result["missing"]["status"], result["missing"]["code"]) == (404, "not_found")
    assert result["rows"] == ["acme", "beta"]
    assert result["meta"]["count"] == 2
    assert (result["refused"]["status"], result["refused"]["code"]) == (403, "pro_required")


def test_the_client_verifies_attestations_and_their_registered_claims(
    live_server, transactional_db
):
    from django.utils import timezone

    from startups.attestation import attestation_payload, attestation_sign, jwks

    acme = make_startup(name="Acme", slug="acme", mrr=1000)
    make_verification(acme)
    now = timezone.now()
    current = attestation_payload(acme, request=None, now=now)
    figures = {k: v for k, v in current.items() if k not in ("iss", "sub", "iat", "exp")}
    old, _ = attestation_sign(figures)  # as attestations were signed before iss/sub/iat/exp
    expired, _ = attestation_sign({**current, "exp": current["iat"] - 3600})
    other_site, _ = attestation_sign({**current, "iss": "https://evil.example"})
    other_slug, _ = attestation_sign({**current, "sub": "beta"})
    tampered = old.split(".")
    tampered[1] = tampered[1][:-4] + ("AAAA" if tampered[1][-4:] != "AAAA" else "BBBB")
    result = run_client(
        """
        from openstartup import AttestationError, verify_attestation

        def outcome(token, **checks):
            try:
                return sorted(verify_attestation(token, jwks, **checks))
            except AttestationError as error:
                return error.code

        client = openstartup.Client(base_url=url)
        live = client.startups.verified_attestation("acme")
        try:
            client.startups.verified_attestation("acme", issuer="https://evil.example")
            foreign = None
        except AttestationError as error:
            foreign = error.code
        result = {
            "live": [live["sub"], live["iss"], live["exp"] - live["iat"]],
            "foreign": foreign,
            "old": outcome(old, slug="acme", issuer=url),
            "old_required": outcome(old, require_claims=True),
            "expired": outcome(expired),
            "other_site": outcome(other_site, issuer="http://127.0.0.1:1/"),
            "other_slug": outcome(other_slug, slug="acme"),
            "asked_other": outcome(old, slug="beta"),
            "tampered": outcome(".".join(tampered)),
            "garbage": outcome("not a token"),
        }
        """,
        url=live_server.url,
        jwks=jwks(),
        old=old,
        expired=expired,
        other_site=other_site,
        other_slug=other_slug,
        tampered=tampered,
    )
    assert result["live"] == ["acme", live_server.url, 7 * 86400]
    assert result["foreign"] == "wrong_issuer"
    assert "slug" in result["old"] and "exp" not in result["old"]  # verifies as issued
    assert result["old_required"] == "missing_claim"
    assert result["expired"] == "expired"
    assert result["other_site"] == "wrong_issuer"
    assert result["other_slug"] == "wrong_subject"
    assert result["asked_other"] == "wrong_subject"
    assert result["tampered"] == "bad_signature"
    assert result["garbage"] == "bad_signature"


def test_a_third_party_verifies_last_months_figure_and_the_logs_growth_offline(
    live_server, transactional_db, tmp_path
):
    """With only the client and the JWKS, check that a figure saved earlier is in a
    signed tree head, and that today's tree is consistent with that one, by function and by
    `python -m openstartup verify`; a forged figure or a foreign head is refused."""
    acme = make_startup(name="Acme", slug="acme", mrr=1000)
    make_verification(acme)
    saved = run_client(
        """
        client = openstartup.Client(base_url=url)
        jwks, attestation = client.log.jwks(), client.startups.attestation("acme")
        json.dump(jwks, open(folder + "/jwks.json", "w"))
        json.dump(attestation, open(folder + "/attestation.json", "w"))
        from openstartup.verify import verify_attestation
        checked = verify_attestation(attestation, jwks)
        result = {"mrr": checked.claims["mrr"], "leaf": checked.leaf_index,
                  "size": checked.tree_head.tree_size}
        """,
        url=live_server.url,
        folder=str(tmp_path),
    )
    assert saved == {"mrr": 1000, "leaf": 0, "size": 1}
    # A month of changes later: new figures, another startup.
    acme.verification.mrr, acme.verification.arr = 1500, 18000
    acme.verification.save()
    make_verification(make_startup(name="Beta", slug="beta", mrr=70))
    today = run_client(
        """
        client = openstartup.Client(base_url=url)
        client.startups.attestation("acme")
        client.startups.attestation("beta")
        head = client.log.tree_head()
        old = json.load(open(folder + "/attestation.json"))["treeHead"]
        proof = client.log.consistency_proof(old["treeSize"], head["treeSize"])
        json.dump(head, open(folder + "/today.json", "w"))
        json.dump(proof, open(folder + "/proof.json", "w"))
        from openstartup.verify import VerificationError, verify_consistency
        jwks = json.load(open(folder + "/jwks.json"))  # the saved copy: no trust in the server
        older, newer = verify_consistency(old, head, proof, jwks)
        try:
            verify_consistency(head, old, proof, jwks)
            backwards = None
        except VerificationError as error:
            backwards = str(error)
        result = {"sizes": [older.tree_size, newer.tree_size], "backwards": backwards,
                  "same_head": client.log.tree_head(old["treeSize"]) == old}
        """,
        url=live_server.url,
        folder=str(tmp_path),
    )
    assert today["sizes"] == [1, 3] and today["backwards"] and today["same_head"]
    # The CLI, offline (no server address is given to it at all).
    cli = run_client(
        """
        import base64, contextlib, io
        from openstartup.__main__ import main
        files = [folder + "/attestation.json", "--jwks", folder + "/jwks.json"]
        outcomes = {}
        with contextlib.redirect_stdout(io.StringIO()):
            outcomes["plain"] = main(["verify", *files])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            outcomes["consistency"] = main(["verify", *files, "--tree-head",
                folder + "/today.json", "--consistency", folder + "/proof.json"])
        report = json.loads(out.getvalue())
        forged = json.load(open(folder + "/attestation.json"))
        head, body, signature = forged["jws"].split(".")
        claims = json.loads(base64.urlsafe_b64decode(body + "=="))
        claims["mrr"] = 9999
        body = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        forged["jws"] = ".".join([head, body, signature])
        json.dump(forged, open(folder + "/forged.json", "w"))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            outcomes["forged"] = main(["verify", folder + "/forged.json", "--jwks",
                                       folder + "/jwks.json"])
        result = {"outcomes": outcomes, "report": report, "stderr": err.getvalue()}
        """,
        folder=str(tmp_path),
    )
    assert cli["outcomes"] == {"plain": 0, "consistency": 0, "forged": 1}
    assert cli["report"]["consistentWithTreeSize"] == 3 and cli["report"]["slug"] == "acme"
    assert "bad signature" in cli["stderr"]


def test_the_base_url_comes_from_the_environment_else_make_run(monkeypatch):
    """No placeholder host. `base_url`, else $OPENSTARTUP_BASE_URL, else make run's."""
    monkeypatch.delenv("OPENSTARTUP_BASE_URL", raising=False)
    assert run_client("result = openstartup.Client().base_url") == "http://127.0.0.1:8000"
    monkeypatch.setenv("OPENSTARTUP_BASE_URL", "http://api.internal:9000/")
    assert run_client("result = openstartup.Client().base_url") == "http://api.internal:9000"
    explicit = run_client("result = openstartup.Client(base_url='http://x.test').base_url")
    assert explicit == "http://x.test"


def test_a_copy_kept_by_the_clients_change_feed_stays_equal_to_the_dataset(
    live_server, transactional_db, tmp_path
):
    """A consumer mirrors the dataset with `client.changes.sync` alone, then keeps it exact
    through a creation, an edit, an unpublishing and a deletion, resuming from its cursor."""
    from founders.services import startup_create, startup_update

    key, raw = make_pro_key()
    owner = make_account()
    for n in range(4):  # as founders add them: each write is an entry of the change sequence
        startup_create(owner=owner, profile={"name": f"Co {n}"}, mrr=100 * (n + 1))
    sync = """
        client = openstartup.Client(base_url=url, api_key=key)
        copy = json.load(open(folder + "/copy.json")) if cursor else {}
        cursor = client.changes.sync(copy, cursor=cursor, limit=2)
        json.dump(copy, open(folder + "/copy.json", "w"))
        dataset = {s["slug"]: s for s in client.startups.list(sort="name-asc", limit=50)}
        def strip(items):
            return {k: {f: v for f, v in s.items() if f != "rank"} for k, s in items.items()}
        result = {"cursor": cursor, "equal": strip(copy) == strip(dataset), "slugs": sorted(copy)}
    """
    first = run_client(sync, url=live_server.url, key=raw, folder=str(tmp_path), cursor=None)
    assert first["equal"] and first["slugs"] == ["co-0", "co-1", "co-2", "co-3"]

    startup_create(owner=owner, profile={"name": "Brand New"}, mrr=900)
    startup_update(startup=Startup.objects.get(slug="co-1"), profile={"name": "Co One"}, mrr=77)
    _admin_delete("co-2")
    _unpublish("co-3")
    second = run_client(
        sync, url=live_server.url, key=raw, folder=str(tmp_path), cursor=first["cursor"]
    )
    assert second["equal"] and second["slugs"] == ["brand-new", "co-0", "co-1"]


def _admin_delete(slug: str) -> None:
    """Deletion as an operator makes it: the admin's delete records the tombstone."""
    from django.test import Client as DjangoClient

    from tests.support.admin import operator_client

    client = operator_client(DjangoClient())
    pk = Startup.objects.get(slug=slug).pk
    assert client.post(f"/admin/startups/startup/{pk}/delete/", {"post": "yes"}).status_code == 302


def _unpublish(slug: str) -> None:
    from django.test import Client as DjangoClient

    from tests.support.admin import admin_form, operator_client

    client = operator_client(DjangoClient())
    startup = Startup.objects.get(slug=slug)
    form = admin_form(name=startup.name, slug=slug, is_published=None)
    url = f"/admin/startups/startup/{startup.pk}/change/"
    assert client.post(url, form).status_code == 302
