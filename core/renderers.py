"""camelCase rendering for the REST surface: the only place keys change case."""

import re
from functools import lru_cache
from typing import Any

import orjson
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer

_SNAKE = re.compile(r"_([a-z0-9])")


@lru_cache(maxsize=1024)
def camel_key(key: str) -> str:
    # Memoised: the API has a few dozen distinct keys, and the regex per key per row was a
    # measurable share of rendering a page.
    return _SNAKE.sub(lambda match: match.group(1).upper(), key)


_LEAVES = frozenset({str, int, float, bool, type(None)})


def camelize(value: Any) -> Any:
    """Recursively camelCase dict keys; values (strings included) are left alone."""
    kind = type(value)
    if kind in _LEAVES:  # most values: checked first, by exact type
        return value
    if isinstance(value, dict):
        return {
            camel_key(k) if isinstance(k, str) else k: v if type(v) in _LEAVES else camelize(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [item if type(item) in _LEAVES else camelize(item) for item in value]
    return value


class JSONRenderer(BaseRenderer):
    """UTF-8 JSON through orjson, keys as the serializer wrote them (snake_case)."""

    media_type = "application/json"
    format = "json"
    charset = None  # JSON is UTF-8 by definition; no charset parameter.

    def transform(self, data: Any) -> Any:
        return data

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context=None):
        if data is None:
            return b""
        return orjson.dumps(self.transform(data))


class CamelCaseJSONRenderer(JSONRenderer):
    def transform(self, data: Any) -> Any:
        return camelize(data)


class JSONOnlyNegotiation(BaseContentNegotiation):
    """Every API answer is JSON whatever `Accept` says: never a 406 (the spec has one format)."""

    def select_parser(self, request: Any, parsers: list) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Any, renderers: list, format_suffix: str | None = None
    ) -> tuple[Any, str]:
        return renderers[0], renderers[0].media_type
