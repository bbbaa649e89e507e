"""Every MCP tool result stays under 25,000 tokens (4 characters a token), compact by default
and with `detail: true`, at limit=50 and for the longest data founders can type; through the
official MCP SDK against a live server, as tests/mcpserver/test_endpoint.py does."""

import json
from datetime import UTC, date, datetime, timedelta

import anyio
import jsonschema
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpserver.bounds import COMPACT_DAYS, COMPACT_DESCRIPTION, MAX_RESULT_TOKENS
from startups.models import Founder, RevenueSnapshot
from tests.support.factories import make_ai_startup

LONG = "Long description. " * 1200  # about 21,600 characters, as a founder may type


def make_heavy_dataset() -> None:
    for n in range(60):
        make_ai_startup(
            slug=f"heavy-{n:02d}",
            name=f"Heavy {n:02d} " + "N" * 180,
            description=LONG,
            category="Marketing",
            industry="Software",
            mrr=1000 + n,
            arr=(1000 + n) * 12,
            owner_verified=True,
            technologies=[f"tech-{i}-" + "t" * 80 for i in range(300)],
        )
    big = make_ai_startup(slug="big", name="Big", description=LONG * 5, mrr=10, arr=120)
    Founder.objects.bulk_create(
        Founder(startup=big, name=f"Founder {i} " + "f" * 150, title="CEO", position=i)
        for i in range(400)
    )
    start = date(2021, 1, 1)
    RevenueSnapshot.objects.bulk_create(
        RevenueSnapshot(
            startup=big,
            date=start + timedelta(days=i),
            provider="stripe",
            mrr=1000 + i,
            arr=(1000 + i) * 12,
            customers=i,
            last_30_days=1000,
            total_revenue=100_000,
            synced_at=datetime(2021, 1, 1, tzinfo=UTC) + timedelta(days=i),
        )
        for i in range(2000)
    )


CALLS = [
    ("search_startups", {"limit": 50}),
    ("search_startups", {"limit": 50, "detail": True}),
    ("find_verified_startups", {"limit": 50, "detail": True}),
    ("search_by_category", {"category": "marketing", "limit": 50}),
    ("search_by_industry", {"industry": "software", "limit": 50, "detail": True}),
    ("search_by_revenue", {"min_mrr": 1, "limit": 50, "detail": True}),
    ("get_startup", {"slug": "big"}),
    ("get_startup", {"slug": "big", "detail": True}),
    ("get_startup_history", {"slug": "big"}),
    ("get_startup_history", {"slug": "big", "detail": True}),
]


async def _call_all(url: str) -> tuple[dict, list]:
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            results = []
            for name, arguments in CALLS:
                # call_tool validates structuredContent against the tool's outputSchema.
                results.append(await session.call_tool(name, arguments))
            return tools, results


def tokens(result) -> float:
    """The whole tool result as a client receives it, by the 4-characters-a-token estimate."""
    payload = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return len(json.dumps(payload, ensure_ascii=False)) / 4


@pytest.mark.django_db(transaction=True)
def test_every_tool_result_stays_under_25000_tokens_at_limit_50(live_server):
    make_heavy_dataset()
    tools, results = anyio.run(_call_all, f"{live_server.url}/api/mcp")
    answers = {}
    for (name, arguments), result in zip(CALLS, results, strict=True):
        assert result.is_error is False, (name, result.content)
        assert tokens(result) <= MAX_RESULT_TOKENS, (name, arguments, tokens(result))
        jsonschema.validate(result.structured_content, tools[name].output_schema)
        assert json.loads(result.content[0].text) == result.structured_content
        answers[(name, bool(arguments.get("detail")))] = result.structured_content

    compact = answers[("search_startups", False)]
    assert all(len(m["description"]) <= COMPACT_DESCRIPTION for m in compact["startups"])
    assert all(m["profile_url"].endswith("/startups/" + m["slug"]) for m in compact["startups"])
    # Detailed matches are longer, so fewer fit: the answer says it was cut.
    detailed = answers[("search_startups", True)]
    assert detailed["truncated"] is True and detailed["note"]
    assert detailed["count"] == len(detailed["startups"]) < 50
    assert [m["slug"] for m in detailed["startups"]] == [
        m["slug"] for m in compact["startups"][: detailed["count"]]
    ]
    history = answers[("get_startup_history", False)]
    assert history["count"] == COMPACT_DAYS and history["truncated"] is True
    assert history["history"][-1]["date"] == (date(2021, 1, 1) + timedelta(days=1999)).isoformat()
    full_history = answers[("get_startup_history", True)]
    assert COMPACT_DAYS < full_history["count"] < 2000 and full_history["truncated"] is True
    profile = answers[("get_startup", True)]
    assert profile["truncated"] is True and len(profile["founders"]) <= 400


def test_small_answers_are_not_marked(client, db):
    make_ai_startup(slug="small", name="Small", mrr=5)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_startups", "arguments": {"limit": 50}},
    }
    answer = client.post("/api/mcp", body, content_type="application/json").json()
    structured = answer["result"]["structuredContent"]
    assert structured["count"] == 1 and "truncated" not in structured
