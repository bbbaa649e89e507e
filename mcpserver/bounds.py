"""Every MCP tool result stays small enough for clients that refuse answers above 25,000 tokens
(counted the usual way: 4 characters a token), whatever founders typed and however long a
history grew.

Two layers. Compact by default: matches carry a description cut to COMPACT_DESCRIPTION
characters, a profile at most COMPACT_ITEMS founders and technologies and a description of
PROFILE_DESCRIPTION, a history the newest COMPACT_DAYS days of its range; `detail: true` asks for
more. Then a hard budget on the whole result (structuredContent plus the same JSON as text): what
still does not fit is cut from the end (matches: the lowest ranked; history: the oldest days;
profile: the description, then list tails), and the answer says so with `truncated: true` and a
`note`.
"""

from typing import Any

import orjson

MAX_RESULT_TOKENS = 25_000
CHARS_PER_TOKEN = 4
MAX_RESULT_CHARS = MAX_RESULT_TOKENS * CHARS_PER_TOKEN
# The result carries the JSON twice (structuredContent, and escaped as content[0].text, where
# each quote costs two characters): one copy gets well under half the budget.
STRUCTURED_BUDGET = 40_000

COMPACT_DESCRIPTION = 200
DETAIL_DESCRIPTION = 2_000
PROFILE_DESCRIPTION = 1_000
COMPACT_ITEMS = 10
COMPACT_DAYS = 90

TRUNCATED_PROPERTIES = {
    "truncated": {
        "type": "boolean",
        "description": "Present (true) only when the answer was cut to stay under "
        f"{MAX_RESULT_TOKENS:,} tokens; `note` says what was left out.",
    },
    "note": {"type": "string", "description": "What was left out, when `truncated`."},
}


def cut(text: str | None, length: int) -> str | None:
    """`text` at most `length` characters, an ellipsis marking a cut."""
    if text is None or len(text) <= length:
        return text
    return text[: length - 1] + "…"


def result_chars(result: dict) -> int:
    return len(orjson.dumps(result))


def _size(value: Any) -> int:
    return len(orjson.dumps(value))


def _fit(items: list, room: int, *, keep_last: bool = False) -> list:
    """The longest run of `items` (from the start, or from the end) whose JSON fits `room`."""
    ordered = list(reversed(items)) if keep_last else items
    kept, used = [], 2
    for item in ordered:
        used += _size(item) + 1
        if used > room:
            break
        kept.append(item)
    return list(reversed(kept)) if keep_last else kept


def _short(item: Any) -> Any:
    return cut(item, COMPACT_DESCRIPTION) if isinstance(item, str) else item


def _mark(structured: dict, note: str) -> dict:
    return {**structured, "truncated": True, "note": note}


def bounded(structured: dict, budget: int = STRUCTURED_BUDGET) -> dict:
    """`structured` when its JSON fits `budget` characters, else a cut copy that does."""
    if _size(structured) <= budget:
        return structured
    if isinstance(structured.get("startups"), list):
        rest = {k: v for k, v in structured.items() if k != "startups"}
        kept = _fit(structured["startups"], budget - _size(rest) - 200)
        note = f"Only the first {len(kept)} matches fit; ask for a lower limit or add filters."
        return _mark({**structured, "startups": kept, "count": len(kept)}, note)
    if isinstance(structured.get("history"), list):
        rest = {k: v for k, v in structured.items() if k != "history"}
        kept = _fit(structured["history"], budget - _size(rest) - 200, keep_last=True)
        note = f"Only the newest {len(kept)} days fit; narrow the range with `from` and `to`."
        return _mark({**structured, "history": kept, "count": len(kept)}, note)
    # A profile: the description first, then the tails of its lists.
    cut_copy = dict(structured)
    over = _size(cut_copy) - budget + 200
    description = cut_copy.get("description") or ""
    cut_copy["description"] = cut(description, max(PROFILE_DESCRIPTION, len(description) - over))
    for name in ("founders", "technologies", "categories", "same_as"):
        if _size(cut_copy) <= budget - 200:
            break
        if isinstance(cut_copy.get(name), list):
            cut_copy[name] = [_short(item) for item in cut_copy[name][:COMPACT_ITEMS]]
    if _size(cut_copy) > budget - 200:
        cut_copy["description"] = cut(cut_copy["description"], COMPACT_DESCRIPTION)
    return _mark(cut_copy, "Long fields were shortened; the profile page has everything.")
