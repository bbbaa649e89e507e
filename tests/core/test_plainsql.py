"""Plain SQL on the sync's hot path (core/plainsql.py) stores and reads values as the ORM does,
on SQLite and on PostgreSQL alike: a timestamp written by plain SQL compares with the ORM's
(SQLite keeps timestamps as text, so a text of another shape would sort wrongly), and what the
ORM wrote reads back equal."""

from datetime import UTC, date, datetime, timedelta

import pytest

from core import plainsql
from startups.models import MonthlyRevenue, Verification
from tests.support.factories import make_startup, make_verification

pytestmark = pytest.mark.django_db
AT = datetime(2026, 11, 20, 9, 30, 15, 123456, tzinfo=UTC)


def test_a_timestamp_written_by_plain_sql_is_the_one_the_orm_reads_and_compares():
    verification = make_verification(make_startup("Acme"), verified_at=AT - timedelta(days=3))
    sql = f"UPDATE {plainsql.table(Verification)} SET verified_at = %s WHERE id = %s"  # noqa: S608
    changed, _ = plainsql.run(
        sql, [plainsql.to_db(Verification, "verified_at", AT), verification.pk]
    )

    assert changed == 1
    assert Verification.objects.get(pk=verification.pk).verified_at == AT
    later = AT + timedelta(microseconds=1)
    assert Verification.objects.filter(verified_at__lt=later, verified_at__gte=AT).count() == 1
    assert not Verification.objects.filter(verified_at__gt=AT).exists()


def test_values_the_orm_wrote_read_back_through_plain_sql_as_the_orm_gives_them():
    reported = {"mrr": 1234, "definition": 'the provider\'s "MRR"', "period": None}
    verification = make_verification(
        make_startup("Acme"),
        verified_at=AT,
        months=[(date(2026, 10, 1), 500, 20)],
        provider_reported=reported,
    )
    sql = (
        f"SELECT v.verified_at, v.provider_reported, m.month FROM {plainsql.table(Verification)} v"  # noqa: S608
        f" JOIN {plainsql.table(MonthlyRevenue)} m ON m.verification_id = v.id WHERE v.id = %s"
    )
    _, [(at, provider_reported, month)] = plainsql.run(sql, [verification.pk])

    assert plainsql.from_db(Verification, "verified_at", at) == AT
    assert plainsql.aware(at) == AT  # the read paths' cheap form, the same answer
    assert plainsql.from_db(Verification, "provider_reported", provider_reported) == reported
    assert plainsql.from_db(MonthlyRevenue, "month", month) == date(2026, 10, 1)
    assert plainsql.from_db(Verification, "provider_reported", None) is None
