"""The official TypeScript client (clients/typescript) against a live server, from pytest.

The client is compiled once per module with the pinned `tsc` (package.json; `npm ci`) into a
temp directory laid out as an installed package (`node_modules/@openstartup/client`), and each
test runs a small ES module with node. Retries run against the fake server of the Python
client's tests; webhook verification against signatures computed here with Python's hmac.
Missing node or npm tools fail the tests (never a skip).
"""

import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from startups.models import Startup
from tests.support.factories import (
    make_account,
    make_api_key,
    make_startup,
    make_subscription,
    make_verification,
)
from tests.support.fake_api import OUTAGE, PAGE, FakeApi

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"
BIN = ROOT / "node_modules" / ".bin"


def tool(name: str) -> str:
    path = BIN / name
    assert path.exists(), f"{path} is missing: run `npm ci` (make install-dev)"
    return str(path)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A directory where `import ... from "@openstartup/client"` is this checkout's client."""
    assert shutil.which("node"), "node is missing (Node.js 20 or later)"
    work = tmp_path_factory.mktemp("ts-client")
    package = work / "node_modules" / "@openstartup" / "client"
    package.mkdir(parents=True)
    shutil.copy(CLIENT / "package.json", package / "package.json")
    built = subprocess.run(
        [tool("tsc"), "-p", str(CLIENT), "--outDir", str(package / "dist")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (work / "node_modules" / "@types").symlink_to(ROOT / "node_modules" / "@types")
    (work / "package.json").write_text(json.dumps({"type": "module", "private": True}))
    return work


def run_node(workspace: Path, code: str, **env: str):
    """Run an ES module with the client importable; it prints one JSON value."""
    script = workspace / "script.mjs"
    script.write_text(code)
    run = subprocess.run(
        ["node", str(script)],
        cwd=workspace,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def served_document(live_server, django_db_blocker) -> bytes:
    url = f"{live_server.url}/api/v1/openapi.json"
    with django_db_blocker.unblock(), urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310
        return answer.read()


def test_the_committed_types_are_generated_from_the_current_document(
    live_server, django_db_blocker, tmp_path
):
    spec = tmp_path / "openapi.json"
    spec.write_bytes(served_document(live_server, django_db_blocker))
    fresh = tmp_path / "schema.ts"
    subprocess.run(
        [tool("openapi-typescript"), str(spec), "-o", str(fresh)],
        capture_output=True,
        check=True,
        timeout=120,
    )
    assert fresh.read_text() == (CLIENT / "src" / "schema.ts").read_text(), (
        "clients/typescript/src/schema.ts is out of date: regenerate it with "
        "`npx openapi-typescript <server>/api/v1/openapi.json -o clients/typescript/src/schema.ts`"
    )


@pytest.fixture
def startups(transactional_db) -> list[str]:
    """25 startups (slugs in MRR-descending order) and a Pro key."""
    made = [make_startup(name=f"Co {n:02d}", slug=f"co-{n:02d}", mrr=1000 * n) for n in range(25)]
    return [startup.slug for startup in reversed(made)]


@pytest.fixture
def pro_key(transactional_db) -> str:
    account = make_account(email="pro@example.com")
    make_subscription(account=account, days=1)
    return make_api_key(account=account)[1]


LIVE = """
import { OpenStartup, NotFoundError, PermissionDeniedError } from "@openstartup/client";
const client = new OpenStartup({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
const slugs = [];
const cursors = [];
for await (const page of client.pages({ limit: 10 })) {
  cursors.push(page.meta.nextCursor);
  for (const startup of page.data) slugs.push(startup.slug);
}
const first = [];
for await (const startup of client.startups({}, 3)) first.push([startup.slug, startup.revenue.mrr]);
const detail = await client.get("co-24");
let missing = null;
try { await client.get("no-such-startup"); } catch (error) {
  missing = { isNotFound: error instanceof NotFoundError, status: error.status, code: error.code,
              requestId: typeof error.requestId, message: error.message };
}
const exported = [];
let exportError = null;
try {
  const rows = client.export({ minMrr: 20000 });
  for (let next = await rows.next(); ; next = await rows.next()) {
    if (next.done) { exported.push(next.value); break; }
    exported.push(next.value.slug);
  }
} catch (error) {
  exportError = { pro: error instanceof PermissionDeniedError, code: error.code };
}
const categories = await client.categories();
console.log(JSON.stringify({ slugs, cursors: cursors.map((c) => c === null ? null : "cursor"),
  first, profileUrl: detail.profileUrl, missing, exported, exportError,
  categories: Array.isArray(categories.data) }));
"""


def test_pages_by_cursor_gets_errors_and_exports_against_the_live_server(
    live_server, startups, pro_key, workspace
):
    result = run_node(workspace, LIVE, BASE_URL=live_server.url, API_KEY=pro_key)
    assert result["slugs"] == startups  # every startup once, in order, over three pages
    assert result["cursors"] == ["cursor", "cursor", None]
    assert result["first"] == [["co-24", 24000], ["co-23", 23000], ["co-22", 22000]]
    assert result["profileUrl"] == f"{live_server.url}/startups/co-24"
    assert result["missing"] == {
        "isNotFound": True,
        "status": 404,
        "code": "not_found",
        "requestId": "string",
        "message": result["missing"]["message"],
    }
    assert result["exported"] == ["co-24", "co-23", "co-22", "co-21", "co-20", {"count": 5}]
    assert result["exportError"] is None
    assert result["categories"] is True


def test_a_free_caller_gets_a_typed_pro_required(live_server, startups, workspace):
    code = """
    import { OpenStartup, PermissionDeniedError } from "@openstartup/client";
    const client = new OpenStartup({ baseUrl: process.env.BASE_URL });
    try { for await (const row of client.export()) {} console.log("null"); }
    catch (error) {
      console.log(JSON.stringify({ typed: error instanceof PermissionDeniedError,
        code: error.code, status: error.status, body: error.body }));
    }
    """
    result = run_node(workspace, code, BASE_URL=live_server.url)
    assert result["typed"] is True and result["status"] == 403
    assert result["code"] == result["body"]["error"]["code"] == "pro_required"


RETRYING = """
import { OpenStartup } from "@openstartup/client";
const client = new OpenStartup({ baseUrl: process.env.BASE_URL, backoff: 0.01 });
const started = Date.now();
try {
  const slugs = [];
  for await (const startup of client.startups()) slugs.push(startup.slug);
  console.log(JSON.stringify({ slugs, seconds: (Date.now() - started) / 1000 }));
} catch (error) {
  console.log(JSON.stringify({ error: error.name, code: error.code, status: error.status,
    requestId: error.requestId, retryAfter: error.retryAfter,
    seconds: (Date.now() - started) / 1000 }));
}
"""

CURSOR_PAGE = {**PAGE, "meta": {**PAGE["meta"], "nextCursor": None}}


def test_429_and_503_are_retried_after_retry_after(workspace):
    script = [
        (429, {"Retry-After": "1"}, {"error": {"code": "rate_limited"}}),
        (503, {"Retry-After": "1"}, OUTAGE),
        (200, {}, CURSOR_PAGE),
    ]
    with FakeApi(script) as fake:
        result = run_node(workspace, RETRYING, BASE_URL=fake.url)
        assert len(fake.hits) == 3
    assert result["slugs"] == ["a"]
    assert result["seconds"] >= 2  # waited both Retry-Afters


def test_a_long_retry_after_is_thrown_at_once_and_5xx_gives_up_typed(workspace):
    quota = {"error": {"code": "monthly_quota_exceeded", "message": "Used up.", "requestId": "r"}}
    with FakeApi([(429, {"Retry-After": "86400"}, quota)]) as fake:
        result = run_node(workspace, RETRYING, BASE_URL=fake.url)
        assert len(fake.hits) == 1
    assert result["error"] == "RateLimitError" and result["code"] == "monthly_quota_exceeded"
    assert result["retryAfter"] == 86400 and result["seconds"] < 5
    with FakeApi([(500, {}, OUTAGE)]) as fake:
        result = run_node(workspace, RETRYING, BASE_URL=fake.url)
        assert len(fake.hits) == 4  # the first try and 3 retries
    assert result["error"] == "ServerError"
    assert (result["code"], result["status"], result["requestId"]) == (
        "service_unavailable",
        500,
        "req-5",
    )


def test_a_cut_short_export_throws(workspace):
    rows = b'{"slug":"a"}\n{"slug":"b"}\n'  # no count line
    with FakeApi([(200, {"Content-Type": "application/x-ndjson"}, rows)]) as fake:
        code = """
        import { OpenStartup } from "@openstartup/client";
        const client = new OpenStartup({ baseUrl: process.env.BASE_URL });
        const got = [];
        try { for await (const row of client.export()) got.push(row.slug); }
        catch (error) { console.log(JSON.stringify({ got, name: error.name, code: error.code })); }
        """
        result = run_node(workspace, code, BASE_URL=fake.url)
    assert result == {"got": ["a", "b"], "name": "ConnectionError", "code": "export_incomplete"}


# --- Webhook verification (Standard Webhooks), against signatures made here ---

SECRET_BYTES = b"0123456789abcdef0123456789abcdef"
SECRET = "whsec_" + base64.b64encode(SECRET_BYTES).decode()


def signature(msg_id: str, timestamp: int, body: str, key: bytes = SECRET_BYTES) -> str:
    signed = f"{msg_id}.{timestamp}.{body}".encode()
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


VERIFY = """
import { verifyWebhook, signWebhook } from "@openstartup/client/webhooks";
const cases = JSON.parse(process.env.CASES);
const out = cases.map(({ body, headers, now }) => {
  try {
    return { ok: verifyWebhook(body, headers, process.env.SECRET,
                               { now: new Date(now * 1000) }) };
  } catch (error) { return { error: error.name, message: error.message }; }
});
const sig = signWebhook(process.env.SECRET, "msg_1", 1700000000, "{}");
console.log(JSON.stringify({ out, sig }));
"""


def test_webhook_signatures_verify_per_standard_webhooks(workspace):
    now = int(time.time())
    body = json.dumps({"type": "startup.updated", "data": {"slug": "acme", "name": "Ünï"}})

    def headers(sig, ts=now, msg="msg_2a"):
        return {"webhook-id": msg, "webhook-timestamp": str(ts), "webhook-signature": sig}

    good = signature("msg_2a", now, body)
    other = signature("msg_2a", now, body, key=b"another key entirely............")
    cases = [
        {"body": body, "headers": headers(good), "now": now},
        # Several signatures (a rotated secret): one match is enough.
        {"body": body, "headers": headers(f"{other} {good}"), "now": now},
        {"body": body, "headers": headers(other), "now": now},
        {"body": body.replace("acme", "acne"), "headers": headers(good), "now": now},
        {"body": body, "headers": headers(good), "now": now + 301},  # over 5 minutes
        {"body": body, "headers": headers(good), "now": now - 301},
        {"body": body, "headers": headers(good), "now": now + 299},
        {"body": body, "headers": {"webhook-id": "msg_2a"}, "now": now},
        {"body": body, "headers": headers("v2," + good[3:]), "now": now},
    ]
    result = run_node(workspace, VERIFY, CASES=json.dumps(cases), SECRET=SECRET)
    out = result["out"]
    parsed = json.loads(body)
    assert out[0] == {"ok": parsed} and out[1] == {"ok": parsed} and out[6] == {"ok": parsed}
    for failed in (out[2], out[3], out[4], out[5], out[7], out[8]):
        assert failed["error"] == "WebhookVerificationError", failed
    assert "timestamp" in out[4]["message"] and "webhook-timestamp" in out[7]["message"]
    assert result["sig"] == signature("msg_1", 1700000000, "{}")


# --- The README's five-line example, as printed ---


def test_the_readme_example_runs_as_printed(live_server, startups, workspace):
    for slug in startups:  # the five lines ask for verified startups
        make_verification(Startup.objects.get(slug=slug))
    readme = (CLIENT / "README.md").read_text()
    snippet = re.search(r"```ts\n(.*?)```", readme, re.DOTALL).group(1)
    assert len(snippet.strip().splitlines()) == 5  # import, blank line, client, for, print
    main = workspace / "readme.ts"
    main.write_text(snippet)
    (workspace / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "strict": True,
                    "target": "es2022",
                    "module": "nodenext",
                    "moduleResolution": "nodenext",
                    "types": ["node"],
                },
                "files": ["readme.ts"],
            }
        )
    )
    compiled = subprocess.run(
        [tool("tsc"), "-p", "."], cwd=workspace, capture_output=True, text=True, timeout=180
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    run = subprocess.run(
        ["node", "readme.js"],
        cwd=workspace,
        env={**os.environ, "OPENSTARTUP_URL": live_server.url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"Co {slug[-2:]} {int(slug[-2:]) * 1000}" for slug in startups[:10]
    ]
