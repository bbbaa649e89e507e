"""The OpenAPI document's tags: names that read as what a visitor of /docs looks for, with the
prefixes and naming conventions in their descriptions."""

from typing import Any

# Tag names read as what a visitor of /docs looks for; the prefixes and conventions are in
# their descriptions (TAGS, settings.SPECTACULAR_SETTINGS).
REST_TAG = "Startup data"
AI_TAG = "For AI agents"
TAGS = [
    {
        "name": REST_TAG,
        "description": "`/api/v1`: the full dataset, camelCase fields. List, search and page "
        "startups, one startup's profile, its daily history and signed attestation, categories "
        "and the NDJSON export (Pro).",
    },
    {
        "name": AI_TAG,
        "description": "`/api/ai`: the curated AI-enabled set in snake_case, schema.org-style "
        "profiles and a discovery index; never spends the monthly allowance.",
    },
]


def describe_tags(result: dict, **kwargs: Any) -> dict:
    """The tags' descriptions (what each surface is), in the order /docs shows them."""
    result["tags"] = TAGS
    return result
