"""Sparse fieldsets (`fields=name,slug,revenue.mrr`): which keys of a REST item to send.

Names are the REST (camelCase) keys, nested ones dotted one level deep; they are checked
against the fields the item's serializer declares, so the rule follows the documented shape.
"""

from functools import cache

from rest_framework import serializers

from core.renderers import camel_key

MAX_NAMES = 50


@cache
def field_names(serializer_class: type[serializers.Serializer]) -> frozenset[str]:
    """Every selectable name of an item: its keys and, for object-valued keys, `key.sub`."""
    names = set()
    for name, field in serializer_class().fields.items():
        names.add(camel_key(name))
        if isinstance(field, serializers.Serializer):
            names |= {f"{camel_key(name)}.{camel_key(sub)}" for sub in field.fields}
    return frozenset(names)


def parse_fields(
    raw: str | None, serializer_class: type[serializers.Serializer]
) -> tuple[frozenset[str] | None, list[str]]:
    """The selected names (None: the whole item) and a warning per name that was ignored."""
    if not raw:
        return None, []
    known = field_names(serializer_class)
    wanted = [name.strip() for name in raw.split(",") if name.strip()][:MAX_NAMES]
    unknown = [name for name in wanted if name not in known]
    warnings = [f"fields: unknown field {name[:60]!r} was ignored." for name in unknown]
    selected = frozenset(name for name in wanted if name in known)
    # Nothing valid left: the whole item, rather than empty objects.
    return (selected or None), warnings


def sparse(item: dict, selected: frozenset[str] | None) -> dict:
    """`item` (camelCase keys) cut to the selected names, in the item's own key order."""
    if selected is None:
        return item
    out = {}
    for key, value in item.items():
        if key in selected:
            out[key] = value
        elif any(name.startswith(key + ".") for name in selected):
            if isinstance(value, dict):
                out[key] = {k: v for k, v in value.items() if f"{key}.{k}" in selected}
            else:  # an object that is null here (verification of a self-reported startup)
                out[key] = value
    return out
