from django.apps import AppConfig


class StartupsConfig(AppConfig):
    name = "startups"

    def ready(self) -> None:
        from core import invalidation, readcache
        from startups import models

        # The startups' own tables: every surface's copies are made of them. Their bulk
        # writes are itemised by the change service (startups/changes.py), whose `bump`
        # names the startups changed, so a per-startup copy of any other stays.
        invalidation.itemised("data")
        invalidation.register(
            "data",
            models.Startup,
            models.Founder,
            models.Social,
            models.MonthlyRevenue,
            models.RevenueSnapshot,
        )
        # A sync that changes nothing visible stamps only when it ran (docs/architecture.md).
        invalidation.register("data", models.Verification, ignores={"verified_at"})
        readcache.register_change_reader(_changed)


def _changed(after: int, upto: int) -> list[tuple[int, int]]:
    """(startup id, sequence) of the Change rows in (after, upto], from the primary."""
    from core import readcache
    from startups.models import Change

    rows = Change.objects.using(readcache.PRIMARY).filter(id__gt=after, id__lte=upto)
    return list(rows.values_list("startup_id", "id"))
