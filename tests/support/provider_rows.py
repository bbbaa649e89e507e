"""What the providers' golden cases share: rows in each API's own shape (Lemon Squeezy, Gumroad,
Paddle Billing) for the local fakes to serve, and a sync of a new startup against them. Time is
fixed at NOW (2026-11-15 12:00 UTC)."""

from startups.models import Startup, Verification
from tests.support.verification_fakes import NOW, FakeProviders, lemonsqueezy_routes
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection
from verification.services import revenue_sync


def sync(fake: FakeProviders, *, provider: str, routes: dict, slug: str = "acme", key: str = ""):
    startup = Startup.objects.create(name=slug.title(), slug=slug)
    key = key or f"key_{slug}"
    fake.account(key, routes)
    connection = provider_connection_connect(
        startup=startup, provider=provider, raw_key=key, api_base=fake.base_url
    )
    revenue_sync(connection=connection, now=NOW)
    connection.refresh_from_db()
    return connection


def verified(fake: FakeProviders, **kwargs) -> Verification:
    connection = sync(fake, **kwargs)
    assert connection.status == ProviderConnection.Status.OK, connection.last_error
    return connection.startup.verification


# --- Lemon Squeezy -------------------------------------------------------------------------------


def ls_routes(*, prices=(), subscriptions=(), orders=(), invoices=()) -> dict:
    return lemonsqueezy_routes(
        stores=[{"id": 1, "currency": "USD"}],
        prices=list(prices),
        subscriptions=list(subscriptions),
        orders=list(orders),
        invoices=list(invoices),
    )


def ls_price(pid: int, unit: int, interval: str = "month", *, usage: str | None = None) -> dict:
    return {
        "id": pid,
        "category": "subscription",
        "scheme": "standard",
        "unit_price": unit,
        "unit_price_decimal": None,
        "renewal_interval_unit": interval,
        "renewal_interval_quantity": 1,
        "usage_aggregation": usage,
    }


def ls_subscription(sid: int, price_id: int, status: str = "active", quantity: int = 1) -> dict:
    return {
        "id": sid,
        "store_id": 1,
        "customer_id": 100 + sid,
        "status": status,
        "first_subscription_item": {
            "id": sid,
            "price_id": price_id,
            "quantity": quantity,
            "is_usage_based": False,
        },
    }


def ls_payment(pid: int, total: int, created: str, **extra: object) -> dict:
    return {
        "id": pid,
        "currency": "USD",
        "status": "paid",
        "total": total,
        "created_at": created,
        "refunded": False,
        "refunded_at": None,
        "refunded_amount": 0,
        **extra,
    }


# --- Gumroad ------------------------------------------------------------------------------------


def sale(sid: int, price: int, created: str, **extra: object) -> dict:
    return {
        "id": f"sale_{sid}",
        "email": f"buyer{sid % 3}@example.com",
        "price": price,
        "currency": "usd",
        "created_at": created,
        "refunded": False,
        "partially_refunded": False,
        **extra,
    }


# --- Paddle Billing -----------------------------------------------------------------------------


def paddle_price(pid: str, amount: str, interval: str = "month", frequency: int = 1) -> dict:
    return {
        "id": pid,
        "product_id": "pro_01",
        "type": "standard",
        "description": pid,
        "tax_mode": "account_setting",
        "billing_cycle": {"interval": interval, "frequency": frequency},
        "trial_period": None,
        "unit_price": {"amount": amount, "currency_code": "USD"},
        "quantity": {"minimum": 1, "maximum": 100},
        "status": "active",
    }


def paddle_subscription(sid: str, customer: str, price: dict, quantity: int = 1, **extra):
    return {
        "id": sid,
        "status": "active",
        "customer_id": customer,
        "address_id": "add_01",
        "business_id": None,
        "currency_code": "USD",
        "created_at": "2026-01-01T00:00:00.000000Z",
        "started_at": "2026-01-01T00:00:00.000000Z",
        "collection_mode": "automatic",
        "billing_cycle": price["billing_cycle"],
        "current_billing_period": {
            "starts_at": "2026-11-01T00:00:00.000000Z",
            "ends_at": "2026-12-01T00:00:00.000000Z",
        },
        "scheduled_change": None,
        "discount": None,
        "items": [
            {
                "status": "active",
                "quantity": quantity,
                "recurring": True,
                "created_at": "2026-01-01T00:00:00.000000Z",
                "price": price,
            }
        ],
        **extra,
    }


def paddle_transaction(
    tid: str,
    customer: str | None,
    subtotal: int,
    tax: int,
    billed: str,
    discount: int = 0,
    currency: str = "USD",
    status: str = "completed",
):
    total = subtotal - discount + tax
    return {
        "id": tid,
        "status": status,
        "customer_id": customer,
        "currency_code": currency,
        "origin": "subscription_recurring",
        "billed_at": billed,
        "created_at": billed,
        "details": {
            "totals": {
                "subtotal": str(subtotal), "discount": str(discount), "tax": str(tax),
                "total": str(total), "credit": "0", "balance": "0",
                "grand_total": str(total), "fee": str(total // 20),
                "earnings": str(total - tax - total // 20), "currency_code": currency,
            }
        },
    }  # fmt: skip


def paddle_adjustment(
    aid: str,
    action: str,
    tid: str,
    total: int,
    tax: int,
    created: str,
    *,
    status: str = "approved",
    type: str = "full",
) -> dict:
    """An adjustment of transaction `tid` as GET /adjustments returns it (`action` refund,
    chargeback, chargeback_warning, chargeback_reverse...); totals in cents, `tax` included."""
    return {
        "id": aid,
        "action": action,
        "transaction_id": tid,
        "subscription_id": None,
        "customer_id": "ctm_1",
        "reason": "chargeback" if "chargeback" in action else "requested",
        "credit_applied_to_balance": None,
        "currency_code": "USD",
        "status": status,
        "type": type,
        "totals": {
            "subtotal": str(total - tax), "tax": str(tax), "total": str(total),
            "fee": "0", "earnings": str(total - tax), "currency_code": "USD",
        },
        "created_at": created,
        "updated_at": created,
    }  # fmt: skip
