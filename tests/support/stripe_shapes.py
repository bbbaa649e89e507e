"""Stripe objects shaped as in Stripe's API reference (subscription, item, price, discount on
both sides of the 2025-09-30.clover change, coupon, charge), and a startup synced against them
through the local fake; used by the Stripe golden cases of tests/verification."""

from datetime import UTC, datetime

from startups.models import Startup
from tests.support.verification_fakes import NOW, FakeProviders, stripe_routes
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection
from verification.services import revenue_sync

CREATED = 1761955200  # 2025-11-01


def ts(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, 12, tzinfo=UTC).timestamp())


def stripe_price(pid: str, unit: int | None, interval: str = "month", **extra) -> dict:
    return {
        "id": pid,
        "object": "price",
        "active": True,
        "billing_scheme": "per_unit",
        "created": CREATED,
        "currency": "usd",
        "custom_unit_amount": None,
        "livemode": True,
        "lookup_key": None,
        "metadata": {},
        "nickname": None,
        "product": "prod_NWjs8kKbJWmuuc",
        "recurring": {
            "interval": interval,
            "interval_count": 1,
            "meter": None,
            "usage_type": "licensed",
        },
        "tax_behavior": "unspecified",
        "tiers_mode": None,
        "transform_quantity": None,
        "type": "recurring",
        "unit_amount": unit,
        "unit_amount_decimal": None if unit is None else str(unit),
        **extra,
    }


def stripe_subscription(sid: str, customer: str, *items: tuple[dict, int], **extra) -> dict:
    return {
        "id": sid,
        "object": "subscription",
        "application": None,
        "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None},
        "billing_cycle_anchor": CREATED,
        "cancel_at": None,
        "cancel_at_period_end": False,
        "canceled_at": None,
        "collection_method": "charge_automatically",
        "created": CREATED,
        "currency": "usd",
        "customer": customer,
        "default_payment_method": None,
        "default_tax_rates": [],
        "discounts": [],
        "items": {
            "object": "list",
            "data": [
                {
                    "id": f"si_{sid}_{n}",
                    "object": "subscription_item",
                    "created": CREATED,
                    "current_period_end": ts(2026, 12, 1),
                    "current_period_start": ts(2026, 11, 1),
                    "discounts": [],
                    "metadata": {},
                    "price": price,
                    "quantity": quantity,
                    "subscription": sid,
                    "tax_rates": [],
                }
                for n, (price, quantity) in enumerate(items)
            ],
            "has_more": False,
            "total_count": len(items),
            "url": f"/v1/subscription_items?subscription={sid}",
        },
        "latest_invoice": None,
        "livemode": True,
        "metadata": {},
        "pause_collection": None,
        "start_date": CREATED,
        "status": "active",
        "trial_end": None,
        "trial_start": None,
        **extra,
    }


def stripe_coupon(cid: str, *, duration: str = "forever", percent_off=None, amount_off=None):
    return {
        "id": cid,
        "object": "coupon",
        "amount_off": amount_off,
        "created": CREATED,
        "currency": "usd" if amount_off is not None else None,
        "duration": duration,
        "duration_in_months": 3 if duration == "repeating" else None,
        "livemode": True,
        "max_redemptions": None,
        "metadata": {},
        "name": None,
        "percent_off": percent_off,
        "redeem_by": None,
        "times_redeemed": 1,
        "valid": True,
    }


def discount_before_clover(coupon: dict, sid: str) -> dict:
    """Up to 2025-08-27.basil: the coupon embedded in the discount."""
    return {
        "id": f"di_{coupon['id']}",
        "object": "discount",
        "checkout_session": None,
        "coupon": coupon,
        "customer": "cus_x",
        "end": None,
        "invoice": None,
        "invoice_item": None,
        "promotion_code": None,
        "start": CREATED,
        "subscription": sid,
        "subscription_item": None,
    }


def discount_from_clover(coupon: dict | str, sid: str) -> dict:
    """From 2025-09-30.clover: `source.coupon`, expanded (an object) or not (its id)."""
    coupon_id = coupon if isinstance(coupon, str) else coupon["id"]
    return {
        "id": f"di_{coupon_id}",
        "object": "discount",
        "checkout_session": None,
        "customer": "cus_x",
        "end": None,
        "invoice": None,
        "invoice_item": None,
        "promotion_code": None,
        "source": {"coupon": coupon, "type": "coupon"},
        "start": CREATED,
        "subscription": sid,
        "subscription_item": None,
    }


def charge(chid: str, amount: int, customer: str | None, *, status: str = "succeeded", **extra):
    return {
        "id": chid,
        "object": "charge",
        "amount": amount,
        "amount_captured": amount if status == "succeeded" else 0,
        "amount_refunded": 0,
        "captured": status == "succeeded",
        "created": ts(2026, 11, 2),
        "currency": "usd",
        "customer": customer,
        "livemode": True,
        "paid": status == "succeeded",
        "refunded": False,
        "status": status,
        **extra,
    }


def synced(fake: FakeProviders, *, slug: str = "acme", **routes) -> ProviderConnection:
    startup = Startup.objects.create(name=slug.title(), slug=slug)
    token = f"rk_live_{slug}"
    routes.setdefault("subscriptions", [])
    routes.setdefault("balance_transactions", [])
    fake.account(token, stripe_routes(**routes))
    connection = provider_connection_connect(
        startup=startup, provider="stripe", raw_key=token, api_base=fake.base_url
    )
    revenue_sync(connection=connection, now=NOW)
    connection.refresh_from_db()
    return connection


def verified(fake: FakeProviders, **routes):
    connection = synced(fake, **routes)
    assert connection.status == ProviderConnection.Status.OK, connection.last_error
    return connection.startup.verification
