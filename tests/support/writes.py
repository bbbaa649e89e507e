"""Visible writes as the write paths make them: the rows written by a queryset UPDATE (or an
INSERT), then the change recorded, in one transaction. No model save: the change sequence
alone tells the read cache which startups changed (core/rowcopies.py)."""

from django.db import transaction

from startups.changes import CREATED, api_fields, startup_change_record
from startups.models import Startup


def visible_update(startup: Startup, **columns) -> Startup:
    """Write `columns` of `startup` and record the change; the startup as it is now."""
    with transaction.atomic():
        Startup.objects.filter(pk=startup.pk).update(**columns)
        startup = Startup.objects.get(pk=startup.pk)
        startup_change_record(startup=startup, fields=api_fields(columns))
    return startup


def visible_create(**fields) -> Startup:
    """A new startup, recorded as created (as a founder's new startup is)."""
    with transaction.atomic():
        (startup,) = Startup.objects.bulk_create([Startup(**fields)])
        startup = Startup.objects.get(slug=startup.slug)
        startup_change_record(startup=startup, kind=CREATED)
    return startup
