"""Startups published before the change sequence existed get one `created` entry each, so a
consumer reading the change feed from the start receives the whole dataset (without it, the feed
would hold only startups written after the deploy)."""

from django.db import migrations
from django.utils import timezone


def backfill(apps, schema_editor):
    Startup = apps.get_model("startups", "Startup")
    Change = apps.get_model("startups", "Change")
    recorded = set(Change.objects.values_list("startup_id", flat=True).distinct())
    now = timezone.now()
    rows = (
        Change(startup_id=pk, slug=slug, kind="created", fields=[], at=now)
        for pk, slug in Startup.objects.filter(is_published=True)
        .order_by("id")
        .values_list("id", "slug")
        .iterator(chunk_size=2000)
        if pk not in recorded
    )
    Change.objects.bulk_create(rows, batch_size=2000)


class Migration(migrations.Migration):
    dependencies = [("startups", "0009_change_sequence")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
