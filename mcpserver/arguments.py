"""Tool arguments: strict serializer fields and the JSON Schema generated from them.

Each field accepts exactly the JSON type its schema states (no coercion of "5" to 5), and
`ToolArguments` rejects keys it does not declare, so the advertised `inputSchema` and what the
server accepts are one definition.
"""

import math
from typing import Any

from rest_framework import serializers

from core.formats import whole_dollars
from quota.plans import PRO

# MCP spends no allowance (like /api/ai): a call returns as many results as one Pro request.
DEFAULT_LIMIT = PRO.default_limit
MAX_LIMIT = PRO.max_limit
MAX_TEXT = 200


class StrictText(serializers.CharField):
    def __init__(self, **kwargs: Any):
        kwargs.setdefault("max_length", MAX_TEXT)
        # An empty optional filter means "no filter"; a required one must say something.
        kwargs.setdefault("allow_blank", kwargs.get("required") is False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data.replace("\x00", ""))

    def json_schema(self) -> dict:
        return {"type": "string", "maxLength": self.max_length}


class StrictBoolean(serializers.BooleanField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data

    def json_schema(self) -> dict:
        return {"type": "boolean"}


class StrictInteger(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, float) and data.is_integer():
            data = int(data)
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)

    def json_schema(self) -> dict:
        schema: dict[str, Any] = {"type": "integer"}
        if self.min_value is not None:
            schema["minimum"] = self.min_value
        return schema


class LimitField(StrictInteger):
    """How many results: at least 1; above MAX_LIMIT it is capped (not an error)."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault(
            "help_text",
            f"Most results to return (default {DEFAULT_LIMIT}); values above {MAX_LIMIT} are "
            f"accepted and capped at {MAX_LIMIT}.",
        )
        super().__init__(min_value=1, required=False, default=DEFAULT_LIMIT, **kwargs)

    def to_internal_value(self, data: Any) -> int:
        return min(super().to_internal_value(data), MAX_LIMIT)

    def json_schema(self) -> dict:
        # No "maximum": the server accepts larger values and caps them (the description says
        # so), and a schema maximum would tell clients that 51 is refused.
        return {**super().json_schema(), "default": DEFAULT_LIMIT}


class StrictDate(serializers.DateField):
    """A `YYYY-MM-DD` string (no other date shapes, no numbers)."""

    def __init__(self, **kwargs: Any):
        super().__init__(input_formats=["%Y-%m-%d"], **kwargs)

    def to_internal_value(self, data: Any):
        if not isinstance(data, str):
            self.fail("invalid", format="YYYY-MM-DD")
        return super().to_internal_value(data)

    def json_schema(self) -> dict:
        return {"type": "string", "format": "date"}


class WholeDollars(serializers.Field):
    """A USD amount; decimals are rounded inward (`up` for a lower bound, `down` for an upper)."""

    default_error_messages = {"invalid": "A number of US dollars (0 or more) is required."}

    def __init__(self, *, rounding: str, **kwargs: Any):
        self.rounding = rounding
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if not math.isfinite(data) or data < 0 or data > 2**62:
            self.fail("invalid")
        return whole_dollars(data, rounding=self.rounding)

    def to_representation(self, value: Any) -> Any:
        return value

    def json_schema(self) -> dict:
        return {"type": "number", "minimum": 0}


class ToolArguments(serializers.Serializer):
    """Base of every argument serializer: an object with only the declared keys."""

    def to_internal_value(self, data: Any) -> dict:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"arguments": ["must be a JSON object"]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            allowed = ", ".join(self.fields) or "none"
            raise serializers.ValidationError(
                {key: [f"unknown argument (allowed: {allowed})"] for key in unknown}
            )
        # null for an optional argument counts as leaving it out (models often send nulls).
        data = {
            key: value
            for key, value in data.items()
            if value is not None or self.fields[key].required
        }
        return super().to_internal_value(data)


def input_schema(arguments: type[ToolArguments]) -> dict:
    """The JSON Schema of a tool's arguments, generated from its serializer."""
    properties = {}
    required = []
    for name, field in arguments().fields.items():
        schema = field.json_schema()
        if field.help_text:
            schema["description"] = str(field.help_text)
        properties[name] = schema
        if field.required:
            required.append(name)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
