"""The Stripe account a founder connects in the dashboard tests (its key and the $49/month
data the fake serves) and what a startup's REST detail shows once it is synced; used by the
founders' tests and the browser test of the same path."""

from datetime import timedelta

from django.utils import timezone

from tests.support.verification_fakes import stripe_account

KEY = "rk_live_founder_dashboard_key_1234"


def stripe_data() -> dict:
    """The $49/month Stripe account, its $49 charge two days ago."""
    return stripe_account(charged=int((timezone.now() - timedelta(days=2)).timestamp()))


def assert_verified_by_stripe_data(data: dict) -> None:
    """A startup's detail after a sync of `stripe_data()`: verified, $49 MRR and $49 in total."""
    assert data["revenue"].pop("lastSyncedAt") is not None
    assert data["revenue"] == {
        "mrr": 49,
        "arr": 588,
        "currency": "USD",
        "verified": True,
        "source": "verified",
        "growth30d": None,
    }
    assert data["verification"]["totalRevenue"] == 49
