"""Lenient query-parameter fields: a value a field cannot read becomes `None`, never an error.

The REST list, its export, the history, the public /startups/ page and /api/ai/discovery declare
their query parameters with these (invalid parameters are ignored and named in `meta.warnings`,
never refused). `openapi` on each field is what the OpenAPI document says about the parameter
(core/openapi.py `LenientFieldSchema`).
"""

import math
import re
from datetime import UTC, date, datetime
from functools import cached_property
from typing import Any

from django.utils.dateparse import parse_date, parse_datetime
from rest_framework import serializers

from core.formats import whole_dollars
from startups.selectors import After, decode_cursor, website_domain

# Bounds that keep any number a client sends inside what both databases can compare.
_BIGINT_MAX = 2**63 - 1
MAX_TEXT = 200
MAX_CURSOR = 4096  # a cursor holds a name and a slug of up to 200 characters each


class LenientField(serializers.Field):
    """A query parameter that never fails validation: garbage becomes `None` (the default).

    `openapi` holds what the OpenAPI document says about the parameter (type, default, range);
    it documents the rule, the parser below applies it leniently.
    """

    openapi: dict[str, Any] = {"type": "string"}

    def __init__(self, *, openapi: dict[str, Any] | None = None, **kwargs: Any):
        self.openapi = {**self.openapi, **(openapi or {})}
        kwargs.setdefault("required", False)  # a query parameter may always be left out
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        try:
            return self.parse(str(data).strip())
        except (ValueError, OverflowError):
            return None

    def parse(self, raw: str) -> Any:
        raise NotImplementedError


class LenientQuery(serializers.Serializer):
    """A serializer of lenient query parameters whose fields are bound once per class.

    DRF deep-copies a serializer's declared fields for every instance (a third of the time of
    a cached list request went there). Lenient fields keep nothing per request (no context, no
    state set while validating), so every instance of a class shares one bound set.
    """

    @cached_property
    def fields(self):
        cls = type(self)
        shared = cls.__dict__.get("_shared_fields")
        if shared is None:
            shared = serializers.Serializer.fields.func(self)
            cls._shared_fields = shared
        return shared


class LenientInteger(LenientField):
    openapi = {"type": "integer"}

    def parse(self, raw: str) -> int | None:
        return int(raw) if raw else None


class LenientMoney(LenientField):
    """A whole-dollar bound; decimals are accepted, NaN and infinities ignored."""

    openapi = {"type": "number"}

    def __init__(self, *, rounding: str, **kwargs: Any):
        self.rounding = rounding
        super().__init__(**kwargs)

    def parse(self, raw: str) -> int | None:
        value = float(raw)
        if not math.isfinite(value):
            return None
        whole = whole_dollars(value, rounding=self.rounding)
        return max(-_BIGINT_MAX, min(_BIGINT_MAX, whole))


class LenientBoolean(LenientField):
    openapi = {"type": "boolean"}

    def parse(self, raw: str) -> bool | None:
        return {"true": True, "false": False}.get(raw.lower())


class LenientChoice(LenientField):
    def __init__(self, *, choices: list[str], **kwargs: Any):
        self.choices = choices
        super().__init__(**kwargs)
        self.openapi = {"type": "string", "enum": list(choices), **self.openapi}

    def parse(self, raw: str) -> str | None:
        return raw if raw in self.choices else None


class LenientText(LenientField):
    """Text cut to `max_length` characters (what the document says as `maxLength`)."""

    def __init__(self, *, max_length: int = MAX_TEXT, **kwargs: Any):
        self.max_length = max_length
        super().__init__(**kwargs)
        self.openapi = {"type": "string", "maxLength": max_length, **self.openapi}

    def parse(self, raw: str) -> str | None:
        # NUL cannot be stored or compared by PostgreSQL; it never matches anything anyway.
        text = raw.replace("\x00", "")[: self.max_length]
        return text or None


class LenientDomain(LenientField):
    openapi = {"type": "string", "maxLength": MAX_TEXT}

    def parse(self, raw: str) -> str | None:
        return website_domain(raw[:MAX_TEXT])


class LenientTimestamp(LenientField):
    """An ISO 8601 timestamp (`2026-11-01T00:00:00Z`; no offset means UTC) or date."""

    openapi = {"type": "string", "format": "date-time"}

    def parse(self, raw: str) -> datetime | None:
        if not raw:
            return None
        moment = parse_datetime(raw)
        if moment is None and (day := parse_date(raw)) is not None:
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
        if moment is None:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class LenientCursor(LenientField):
    openapi = {"type": "string", "maxLength": MAX_CURSOR}

    def parse(self, raw: str) -> After | None:
        return decode_cursor(raw) if 0 < len(raw) <= MAX_CURSOR else None


class LenientDate(LenientField):
    openapi = {"type": "string", "format": "date"}

    def parse(self, raw: str) -> date | None:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", raw):
            return None
        return date.fromisoformat(raw)
