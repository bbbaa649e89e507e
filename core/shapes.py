"""Response shapes declared once, as `TypedDict`s (Sentry's way): the keys in the order answers
write them, each annotated with the DRF field the OpenAPI document describes it by.

A shape's builder is a plain function returning the `TypedDict` (a dict literal: no serializer
runs per request); `declared(Shape)` makes the serializer drf-spectacular reads. Adding a key is
one edit of the shape plus the line of its builder that fills it; tests compare what the
builders write with what the shapes declare.

    class QuotaMeta(TypedDict):
        limit: Annotated[int, whole(help_text="Records included this month.")]
        quota: NotRequired[Annotated[QuotaMeta, nested(help_text="Free plan only.")]]

A key's annotation is `Annotated[type, <a DRF field>]`, or a nested shape (`Annotated[Shape,
nested(...)]`, `Annotated[list[Shape], nested(...)]`, or the bare shape); `NotRequired` keys are
written only when they apply (`required=False` in the document). Names that are Python keywords
(`from`) use the functional `TypedDict("Name", {...})` form.
"""

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import (
    Annotated,
    Any,
    NotRequired,
    Required,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from rest_framework import serializers

from core.formats import iso_timestamp


# The field helpers every declaration uses.
class Timestamp(serializers.DateTimeField):
    """A moment as every surface writes it: UTC, milliseconds and Z (core.formats)."""

    def to_representation(self, value: datetime) -> str | None:
        return iso_timestamp(value)


def text(**kwargs: Any) -> serializers.CharField:
    """A string; `null=True` when the value may be null."""
    return serializers.CharField(allow_null=kwargs.pop("null", False), **kwargs)


def whole(**kwargs: Any) -> serializers.IntegerField:
    """A whole number (dollars, counts, years); `null=True` when the value may be null."""
    return serializers.IntegerField(allow_null=kwargs.pop("null", False), **kwargs)


def timestamp(**kwargs: Any) -> Timestamp:
    return Timestamp(allow_null=kwargs.pop("null", False), **kwargs)


@dataclass(frozen=True)
class Nested:
    """A key holding another shape (or a list of them); `kwargs` go to its field."""

    kwargs: dict = field(default_factory=dict)


def nested(**kwargs: Any) -> Nested:
    return Nested(kwargs)


def shape_keys(shape: type) -> tuple[list[str], frozenset[str]]:
    """The shape's keys in the order answers write them, and those always written."""
    return list(shape.__annotations__), shape.__required_keys__


def document_last(*keys: str) -> Callable[[type], type]:
    """Decorates a shape whose document lists `keys` after the others (where it always has:
    clients generated from the document keep their field order), not where answers write them."""

    def mark(shape: type) -> type:
        if not set(keys) <= set(shape.__annotations__):
            raise TypeError(f"{shape.__name__} has no key among {keys}")
        shape.__document_last__ = keys
        return shape

    return mark


@functools.cache
def declared(shape: type) -> type[serializers.Serializer]:
    """The DRF serializer declaring `shape` for the OpenAPI document: one class per shape, named
    after it, its docstring the component's description."""
    hints = get_type_hints(shape, include_extras=True)
    keys, required = shape_keys(shape)
    document_last = getattr(shape, "__document_last__", ())
    ordered = [key for key in keys if key not in document_last] + list(document_last)
    fields = {key: _field(shape, key, hints[key], key in required) for key in ordered}
    serializer = type(
        f"{shape.__name__}Serializer",
        (serializers.Serializer,),
        {**fields, "__doc__": shape.__doc__, "__module__": shape.__module__},
    )
    # DRF orders declared fields by when they were created; a shape's order is its own (and a
    # field may be shared between shapes, as `PlanName` is).
    serializer._declared_fields = fields
    return serializer


def _field(shape: type, key: str, hint: Any, required: bool) -> serializers.Field:
    if get_origin(hint) in (NotRequired, Required):
        (hint,) = get_args(hint)
    base, *metadata = get_args(hint) if get_origin(hint) is Annotated else (hint,)
    fields = [item for item in metadata if isinstance(item, serializers.Field)]
    if fields:
        (made,) = fields
        if required or not made.required:
            return made
        # An optional key: the same field with required=False (built as DRF copies fields).
        kwargs = {**copy.deepcopy(made._kwargs), "required": False}
        return type(made)(*copy.deepcopy(made._args), **kwargs)
    kwargs = next((item.kwargs for item in metadata if isinstance(item, Nested)), {})
    kwargs = kwargs if required else {**kwargs, "required": False}
    if is_typeddict(base):
        return declared(base)(**kwargs)
    if get_origin(base) is list and is_typeddict(get_args(base)[0]):
        return declared(get_args(base)[0])(many=True, **kwargs)
    raise TypeError(f"{shape.__name__}.{key} declares no field for the document")
