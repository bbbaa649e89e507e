"""The MCP tool registry: per tool a name, description, argument serializer and handler.

Handlers call the shared selectors and serializers (the same ones /api/ai uses). Argument
serializers (see `mcpserver.arguments`) reject unknown keys and values of the wrong JSON type; the
input schema each tool advertises is generated from its serializer. Failures are raised as
`ToolError` and go back in-band (`isError: true`) so the model can correct itself.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

import orjson
from django.conf import settings
from django.http import HttpRequest
from rest_framework import serializers

from aisurface.cache import ai_answer, involves
from aisurface.serializers import AiMatchSerializer, AiProfileSerializer
from core import readcache
from core.cycles import release_serializer
from core.formats import site_url
from core.shapes import declared, whole
from mcpserver.arguments import (
    LimitField,
    StrictBoolean,
    StrictDate,
    StrictText,
    ToolArguments,
    WholeDollars,
    input_schema,
)
from mcpserver.bounds import (
    COMPACT_DAYS,
    COMPACT_DESCRIPTION,
    COMPACT_ITEMS,
    DETAIL_DESCRIPTION,
    MAX_RESULT_CHARS,
    PROFILE_DESCRIPTION,
    STRUCTURED_BUDGET,
    TRUNCATED_PROPERTIES,
    bounded,
    cut,
    result_chars,
)
from startups.aiselectors import AiFilters, ai_enabled_startups, ai_startup_get, ai_startup_list
from startups.history import startup_history
from startups.serializers import SnapshotSerializer


class ToolError(Exception):
    """A tool failure the model can act on; its message says what to fix."""


class UnknownTool(LookupError):
    """tools/call named no tool of this server: a protocol error (-32602), not a tool result."""


# --- Output schemas: what every structuredContent really is (tests validate against them). ---


def output_schema(field: serializers.Field) -> dict:
    """The JSON Schema of an output serializer or field, from its declared fields: the same
    declarations the OpenAPI document is generated from (and tested against the output)."""
    if isinstance(field, serializers.ListSerializer | serializers.ListField):
        schema: dict = {"type": "array", "items": output_schema(field.child)}
    elif isinstance(field, serializers.Serializer):
        properties = {name: output_schema(child) for name, child in field.fields.items()}
        schema = {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }
    elif isinstance(field, serializers.ChoiceField):
        schema = {"type": "string", "enum": list(field.choices)}
        if field.allow_null:
            schema["enum"].append(None)
    elif isinstance(field, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"}
        if field.min_value is not None:
            schema["minimum"] = field.min_value
    elif isinstance(field, serializers.FloatField):
        schema = {"type": "number"}
    else:  # text and timestamps
        schema = {"type": "string"}
    if field.allow_null:
        schema["type"] = [schema["type"], "null"]
    return schema


def with_truncation(schema: dict) -> dict:
    """`schema` plus the optional `truncated` and `note` a cut answer carries."""
    return {**schema, "properties": {**schema["properties"], **TRUNCATED_PROPERTIES}}


class Matches(TypedDict):
    """What the search tools answer (`_matches` builds it)."""

    count: Annotated[int, whole(min_value=0)]
    startups: Annotated[list[dict], AiMatchSerializer(many=True)]


MATCHES_SCHEMA = with_truncation(output_schema(declared(Matches)()))
PROFILE_SCHEMA = with_truncation(output_schema(AiProfileSerializer()))


# --- Arguments and handlers. ---


def _slug_word(kind: str, example: str) -> str:
    return (
        f"{kind}, a slug-style word such as '{example}'; case and spacing are ignored "
        f"('{example.replace('-', ' ').title()}' matches too)."
    )


def _detail() -> StrictBoolean:
    return StrictBoolean(
        required=False,
        default=False,
        help_text="false (default): compact answer (descriptions shortened, long lists and "
        "histories cut); true: more of each. Every answer stays under 25,000 tokens either way; "
        "a cut answer says so with truncated: true.",
    )


class SearchArguments(ToolArguments):
    query = StrictText(
        required=False,
        help_text="Free text matched against name, description, category and industry.",
    )
    category = StrictText(required=False, help_text=_slug_word("Category", "developer-tools"))
    industry = StrictText(required=False, help_text=_slug_word("Industry", "financial-services"))
    verified = StrictBoolean(
        required=False,
        help_text="true: only startups whose owner account is verified; "
        "false: only those whose owner is not.",
    )
    limit = LimitField()
    detail = _detail()


class SlugArguments(ToolArguments):
    slug = StrictText(help_text="The startup's slug, as returned in search results.")
    detail = _detail()


class LimitArguments(ToolArguments):
    limit = LimitField()
    detail = _detail()


class CategoryArguments(ToolArguments):
    category = StrictText(help_text=_slug_word("Category", "marketing"))
    limit = LimitField()
    detail = _detail()


class IndustryArguments(ToolArguments):
    industry = StrictText(help_text=_slug_word("Industry", "software"))
    limit = LimitField()
    detail = _detail()


class HistoryArguments(ToolArguments):
    slug = StrictText(help_text="The startup's slug, as returned in search results.")
    # `from` is a Python keyword: declared through the class namespace.
    locals()["from"] = StrictDate(
        required=False, help_text="First UTC day to include, YYYY-MM-DD (default: the first)."
    )
    to = StrictDate(
        required=False, help_text="Last UTC day to include, YYYY-MM-DD (default: the latest)."
    )
    detail = _detail()

    def validate(self, attrs: dict) -> dict:
        start, end = attrs.get("from"), attrs.get("to")
        if start is not None and end is not None and start > end:
            raise serializers.ValidationError({"from": ["must not be after to"]})
        return attrs


class HistorySerializer(serializers.Serializer):
    slug = serializers.CharField()
    count = serializers.IntegerField()
    # One day of verified figures: the REST history's own item (whole US dollars; null: unknown).
    history = SnapshotSerializer(many=True)


class RevenueArguments(ToolArguments):
    min_mrr = WholeDollars(
        rounding="up", required=False, help_text="Lowest MRR in US dollars, inclusive."
    )
    max_mrr = WholeDollars(
        rounding="down", required=False, help_text="Highest MRR in US dollars, inclusive."
    )
    limit = LimitField()
    detail = _detail()

    def validate(self, attrs: dict) -> dict:
        low, high = attrs.get("min_mrr"), attrs.get("max_mrr")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError({"min_mrr": ["must not be greater than max_mrr"]})
        return attrs


# Tool results are kept as /api/ai answers are (call_tool), each naming the startups it shows
# (`involves`): what fills them reads the primary.


def _matches(request: HttpRequest, *, detail: bool = False, **filters: Any) -> Matches:
    asked = AiFilters(**filters)
    startups = ai_startup_list(filters=asked, db=readcache.fill_db())
    involves(startups, filters=asked)
    data = AiMatchSerializer(startups, many=True, context={"request": request}).data
    length = DETAIL_DESCRIPTION if detail else COMPACT_DESCRIPTION
    for match in data:
        match["description"] = cut(match["description"], length)
    return {"count": len(data), "startups": data}


def _search_startups(request: HttpRequest, args: dict) -> dict:
    return _matches(request, **args)


def _get_startup(request: HttpRequest, args: dict) -> dict:
    startup = ai_startup_get(slug=args["slug"], db=readcache.fill_db())
    if startup is None:
        raise ToolError(
            f"No AI-enabled startup has slug '{args['slug']}'. "
            "Call search_startups to find valid slugs."
        )
    involves([startup])
    profile = AiProfileSerializer(startup, context={"request": request}).data
    if not args["detail"]:
        profile["description"] = cut(profile["description"], PROFILE_DESCRIPTION)
        for name in ("founders", "technologies"):
            profile[name] = profile[name][:COMPACT_ITEMS]
    return profile


def _find_verified(request: HttpRequest, args: dict) -> dict:
    return _matches(request, verified=True, limit=args["limit"], detail=args["detail"])


def _by_category(request: HttpRequest, args: dict) -> dict:
    return _matches(request, category=args["category"], limit=args["limit"], detail=args["detail"])


def _by_industry(request: HttpRequest, args: dict) -> dict:
    return _matches(request, industry=args["industry"], limit=args["limit"], detail=args["detail"])


def _history(request: HttpRequest, args: dict) -> dict:
    db = readcache.fill_db()  # the startup and its days from one database
    startup = ai_enabled_startups(db=db).filter(slug=args["slug"]).first()
    window = {"start": args.get("from"), "end": args.get("to"), "db": db}
    found = None if startup is None else startup_history(slug=startup.slug, **window)
    if found is None:
        raise ToolError(
            f"No AI-enabled startup has slug '{args['slug']}'. "
            "Call search_startups to find valid slugs."
        )
    involves([startup])
    days = found[1]
    kept = days if args["detail"] else days[-COMPACT_DAYS:]
    answer = HistorySerializer({"slug": startup.slug, "count": len(kept), "history": kept}).data
    if len(kept) < len(days):
        note = f"The newest {len(kept)} of {len(days)} days; detail: true or from/to for more."
        answer = {**answer, "truncated": True, "note": note}
    return answer


def _by_revenue(request: HttpRequest, args: dict) -> dict:
    return _matches(request, has_mrr=True, **args)


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    arguments: type[ToolArguments]
    handler: Callable[[HttpRequest, dict], dict]
    output_schema: dict

    def definition(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": input_schema(self.arguments),
            "outputSchema": self.output_schema,
            "annotations": {
                "title": self.title,
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        }


_LIST_NOTE = (
    " Returns {count, startups[]} with name, slug, description (shortened unless detail: "
    "true), category, industry, website, profile_url, api_url, verified (owner account "
    "verified) and revenue {mrr, arr, currency, verified, source: the provider, 'demo' for "
    "invented demo figures, self_reported or public_sources} in whole US dollars; null means "
    "unknown. Highest MRR first. Credit profile_url where the data is shown."
)

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in [
        Tool(
            name="search_startups",
            title="Search startups",
            description="Search the AI-enabled startups by free text and optional filters "
            "(category, industry, owner-verified)." + _LIST_NOTE,
            arguments=SearchArguments,
            handler=_search_startups,
            output_schema=MATCHES_SCHEMA,
        ),
        Tool(
            name="get_startup",
            title="Get a startup's profile",
            description="Full profile of one AI-enabled startup by slug: founders, categories, "
            "technologies, revenue (mrr, arr, currency, verified, source) and links. Revenue "
            "with verified=false is self-reported; do not present it as verified.",
            arguments=SlugArguments,
            handler=_get_startup,
            output_schema=PROFILE_SCHEMA,
        ),
        Tool(
            name="find_verified_startups",
            title="Find verified startups",
            description="Startups whose owner account is verified." + _LIST_NOTE,
            arguments=LimitArguments,
            handler=_find_verified,
            output_schema=MATCHES_SCHEMA,
        ),
        Tool(
            name="search_by_category",
            title="Search by category",
            description="Startups in a category (primary or secondary), e.g. 'developer-tools', "
            "'marketing', 'fintech'." + _LIST_NOTE,
            arguments=CategoryArguments,
            handler=_by_category,
            output_schema=MATCHES_SCHEMA,
        ),
        Tool(
            name="search_by_industry",
            title="Search by industry",
            description="Startups in an industry, e.g. 'software', 'financial-services', "
            "'healthcare'." + _LIST_NOTE,
            arguments=IndustryArguments,
            handler=_by_industry,
            output_schema=MATCHES_SCHEMA,
        ),
        Tool(
            name="search_by_revenue",
            title="Search by MRR range",
            description="Startups whose monthly recurring revenue (MRR, US dollars) lies in "
            "[min_mrr, max_mrr]; both bounds optional and inclusive. Startups without a known "
            "MRR are excluded." + _LIST_NOTE,
            arguments=RevenueArguments,
            handler=_by_revenue,
            output_schema=MATCHES_SCHEMA,
        ),
        Tool(
            name="get_startup_history",
            title="Get a startup's daily revenue history",
            description="Daily snapshots of one AI-enabled startup's verified figures, oldest "
            "first: {slug, count, history[]} with date (UTC, YYYY-MM-DD), mrr, arr, customers "
            "and last_30_days in whole US dollars; null means unknown. Optional from and to "
            "(YYYY-MM-DD, inclusive) narrow the range. Days without a sync have no entry; a "
            "startup without verified revenue has an empty history.",
            arguments=HistoryArguments,
            handler=_history,
            output_schema=with_truncation(output_schema(HistorySerializer())),
        ),
    ]
}


def tool_definitions() -> list[dict]:
    """The `tools/list` entries, in registry order."""
    return [tool.definition() for tool in TOOLS.values()]


def _error_text(errors: dict) -> str:
    parts = []
    for key, messages in errors.items():
        text = "; ".join(str(m) for m in (messages if isinstance(messages, list) else [messages]))
        parts.append(text if key == "non_field_errors" else f"{key}: {text}")
    return "Invalid arguments. " + " | ".join(parts)


def _text_result(text: str, *, is_error: bool) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def call_tool(name: str, arguments: Any, *, request: HttpRequest) -> dict:
    """Run one tool; a `CallToolResult` dict, failures in-band with `isError: true`.

    An unknown tool name raises `UnknownTool` (the MCP spec's -32602 protocol error)."""
    tool = TOOLS.get(name)
    if tool is None:
        raise UnknownTool(f"Unknown tool '{name}'. Available tools: {', '.join(TOOLS)}.")
    args = tool.arguments(data={} if arguments is None else arguments)
    valid = args.is_valid()
    validated, errors = dict(args.validated_data) if valid else {}, args.errors
    release_serializer(args)
    if not valid:
        return _text_result(_error_text(errors), is_error=True)

    def build() -> dict:
        structured, budget = tool.handler(request, dict(validated)), STRUCTURED_BUDGET
        while True:  # under MAX_RESULT_CHARS whole (mcpserver/bounds.py)
            structured = bounded(structured, budget)
            result = _text_result(orjson.dumps(structured).decode(), is_error=False)
            result["structuredContent"] = structured
            if result_chars(result) <= MAX_RESULT_CHARS or budget < 1000:
                return result
            budget //= 2

    # The same answer for every caller of the same tool and arguments on this site, kept as
    # the /api/ai answers are (JSON bytes, aisurface/cache.py): a write to a startup it shows
    # or may now show is seen on the next call, on every surface at once; other writes leave
    # it be. A ToolError is never kept.
    identity = {"site": site_url(request), "tool": name, "arguments": validated}
    try:
        return orjson.loads(ai_answer(identity=identity, build=build)["body"])
    except ToolError as error:
        return _text_result(str(error), is_error=True)


def server_instructions() -> str:
    return (
        f"{settings.SERVICE_NAME} publishes startup revenue figures (MRR, ARR in whole US "
        "dollars). These tools cover the curated set of startups with the AI visibility add-on. "
        "Search first, then call get_startup with a slug for the full profile. Figures with "
        "revenue.verified=false are self-reported. Credit the startup's profile_url when "
        "showing data."
    )
