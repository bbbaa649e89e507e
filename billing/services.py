"""Pro through Stripe: start a Checkout Session or a Customer Portal session with the official
SDK, and apply signed webhook events to the account's plan (idempotent, order-safe)."""

import json
import logging
from datetime import UTC, datetime
from typing import Any

import stripe
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from apikeys.models import Subscription
from apikeys.services import PRO_PERIOD
from billing.models import BillingCustomer, StripeEvent, StripeSubscription

logger = logging.getLogger(__name__)

# Stripe statuses in which the account is Pro. past_due: Stripe is still retrying the payment,
# so access continues until Stripe gives up (the subscription then becomes unpaid or canceled).
PRO_STATUSES = {"active", "trialing", "past_due"}
FINAL_STATUSES = {"canceled", "incomplete_expired"}
SIGNATURE_TOLERANCE_SECONDS = 300
MAX_TIMESTAMP = 253_402_300_799  # 9999-12-31T23:59:59Z, the last moment a datetime holds


class BillingUnavailable(Exception):
    """Stripe is not configured, or could not be reached; the message is for the founder."""


class WebhookRefused(Exception):
    """Unsigned, badly signed, stale or unreadable webhook: answered 400."""


class WebhookRetry(Exception):
    """The event could not be stored this time: answered 503 so Stripe delivers it again."""


def billing_configured() -> bool:
    return bool(settings.STRIPE_SECRET_KEY and settings.STRIPE_PRO_PRICE_ID)


def _client() -> stripe.StripeClient:
    base = {"api": settings.STRIPE_API_BASE} if settings.STRIPE_API_BASE else None
    return stripe.StripeClient(
        settings.STRIPE_SECRET_KEY, base_addresses=base, max_network_retries=1
    )


def checkout_session_create(*, account: User, success_url: str, cancel_url: str) -> str:
    """A Stripe Checkout Session (subscription mode, the Pro price) for `account`; its URL."""
    if not billing_configured():
        raise BillingUnavailable("Online payment is not set up on this service.")
    params: dict[str, Any] = {
        "mode": "subscription",
        "line_items": [{"price": settings.STRIPE_PRO_PRICE_ID, "quantity": 1}],
        "success_url": success_url,
        "cancel_url": cancel_url,
        "client_reference_id": str(account.pk),
        "metadata": {"account_id": str(account.pk), "price": settings.STRIPE_PRO_PRICE_ID},
        # Every subscription event then names the account, whatever order events arrive in.
        "subscription_data": {"metadata": {"account_id": str(account.pk)}},
    }
    customer = BillingCustomer.objects.filter(account=account).first()
    if customer is not None:
        params["customer"] = customer.stripe_customer_id
    elif account.email:
        params["customer_email"] = account.email
    try:
        session = _client().v1.checkout.sessions.create(params=params)
    except stripe.StripeError as exc:
        logger.warning("checkout session for account %s failed: %s", account.pk, type(exc))
        raise BillingUnavailable("Stripe could not start the checkout; try again.") from None
    return session.url


def portal_session_create(*, account: User, return_url: str) -> str:
    """A Stripe Customer Portal session for the account's Stripe customer; its URL."""
    customer = BillingCustomer.objects.filter(account=account).first()
    if not billing_configured() or customer is None:
        raise BillingUnavailable("There is no Stripe billing for this account yet.")
    try:
        session = _client().v1.billing_portal.sessions.create(
            params={"customer": customer.stripe_customer_id, "return_url": return_url}
        )
    except stripe.StripeError as exc:
        logger.warning("portal session for account %s failed: %s", account.pk, type(exc))
        raise BillingUnavailable("Stripe could not open billing; try again.") from None
    return session.url


def subscriptions_cancel(*, account: User) -> int:
    """Cancel at Stripe, at once, every Pro subscription of `account` that has not ended (the
    account is being deleted); returns how many. A subscription Stripe no longer knows counts as
    ended. Raises BillingUnavailable, cancelling no more, when Stripe is not configured or does
    not answer: the caller then changes nothing."""
    live = StripeSubscription.objects.filter(account=account, holds_pro_price=True).exclude(
        status__in=FINAL_STATUSES
    )
    cancelled = 0
    for row in live:
        if not settings.STRIPE_SECRET_KEY:
            raise BillingUnavailable(
                "Your Pro subscription cannot be cancelled with Stripe from here right now"
            )
        try:
            _client().v1.subscriptions.cancel(row.stripe_id)
        except stripe.InvalidRequestError as exc:
            if exc.code != "resource_missing":
                logger.warning("cancelling %s failed: %s", row.stripe_id, type(exc))
                raise BillingUnavailable("Stripe refused to cancel your Pro subscription") from None
        except stripe.StripeError as exc:
            logger.warning("cancelling %s failed: %s", row.stripe_id, type(exc))
            raise BillingUnavailable("Stripe could not cancel your Pro subscription") from None
        # Kept even if what follows fails: a second attempt does not cancel it again.
        StripeSubscription.objects.filter(pk=row.pk).update(status="canceled")
        cancelled += 1
    return cancelled


def webhook_event_verify(*, payload: bytes, signature: str | None) -> dict:
    """The event, if `signature` is Stripe's for this payload, made in the last 5 minutes."""
    secret = settings.STRIPE_WEBHOOK_SECRET
    if not secret or not signature:
        raise WebhookRefused("missing signature")
    try:
        text = payload.decode("utf-8")
        stripe.WebhookSignature.verify_header(text, signature, secret, SIGNATURE_TOLERANCE_SECONDS)
        event = json.loads(text)
    except (stripe.SignatureVerificationError, UnicodeDecodeError, ValueError):
        raise WebhookRefused("bad signature or payload") from None
    if not (
        isinstance(event, dict)
        and isinstance(event.get("id"), str)
        and isinstance(event.get("type"), str)
        and isinstance(event.get("created"), int)
        and 0 < event["created"] < MAX_TIMESTAMP
        and isinstance((event.get("data") or {}).get("object"), dict)
    ):
        raise WebhookRefused("not a Stripe event")
    return event


def webhook_event_handle(*, payload: bytes, signature: str | None) -> str:
    """Verify and apply one webhook delivery; a replayed event id changes nothing."""
    event = webhook_event_verify(payload=payload, signature=signature)
    try:
        with transaction.atomic():
            record = StripeEvent.objects.create(
                event_id=event["id"],
                type=event["type"][:100],
                created=datetime.fromtimestamp(event["created"], tz=UTC),
            )
            outcome = _apply(event)
            StripeEvent.objects.filter(pk=record.pk).update(outcome=outcome[:200])
    except IntegrityError:
        if StripeEvent.objects.filter(event_id=event["id"]).exists():
            return "duplicate"
        # Another delivery about the same subscription won a race: nothing was stored, so
        # Stripe must send this one again.
        raise WebhookRetry("concurrent update; retry") from None
    # A plan change is a write of Subscription rows: it replaced the "auth" token with them.
    logger.info("stripe event %s %s: %s", event["id"], event["type"], outcome)
    return outcome


def _apply(event: dict) -> str:
    kind, obj = event["type"], event["data"]["object"]
    at = datetime.fromtimestamp(event["created"], tz=UTC)
    if kind in ("checkout.session.completed", "checkout.session.async_payment_succeeded"):
        return _checkout_completed(obj, at=at, paid=kind.endswith("async_payment_succeeded"))
    if kind in (
        "customer.subscription.created",
        "customer.subscription.updated",
        "customer.subscription.deleted",
    ):
        return _subscription_changed(obj, at=at)
    if kind == "invoice.payment_failed":
        return _payment_failed(obj, at=at)
    return "ignored"


def _account_for(*, customer: Any, metadata: Any, reference: Any = None) -> User | None:
    """The account an event is about: our own id (client reference or metadata), else the
    Stripe customer we already know. Remembers the customer for the portal."""
    ours = metadata.get("account_id") if isinstance(metadata, dict) else None
    for candidate in (reference, ours):
        if isinstance(candidate, str) and candidate.isdigit() and len(candidate) < 19:
            account = User.objects.filter(pk=int(candidate)).first()
            if account is not None:
                if isinstance(customer, str) and customer:
                    try:
                        with transaction.atomic():
                            BillingCustomer.objects.get_or_create(
                                account=account, defaults={"stripe_customer_id": customer}
                            )
                    except IntegrityError:
                        pass  # that customer is another account's: keep the first link
                return account
    if isinstance(customer, str) and customer:
        known = BillingCustomer.objects.filter(stripe_customer_id=customer).first()
        return known.account if known else None
    return None


# Checkout Session `payment_status` values meaning the customer has paid (Stripe:
# "no_payment_required" is a session whose first invoice is zero, e.g. a trial or a full
# discount). "unpaid" (an asynchronous payment method) is settled later by
# checkout.session.async_payment_succeeded.
PAID_CHECKOUT = {"paid", "no_payment_required"}


def _holds_pro_price(subscription: dict) -> bool:
    """Whether a Stripe subscription object has an item on the Pro price (STRIPE_PRO_PRICE_ID):
    a subscription to any other price of the operator's account is not Pro."""
    wanted = settings.STRIPE_PRO_PRICE_ID
    for item in _items(subscription):
        price = item.get("price")
        price_id = price.get("id") if isinstance(price, dict) else price
        if wanted and price_id == wanted:
            return True
    return False


def _checkout_completed(obj: dict, *, at: datetime, paid: bool = False) -> str:
    account = _account_for(
        customer=obj.get("customer"),
        metadata=obj.get("metadata"),
        reference=obj.get("client_reference_id"),
    )
    if account is None:
        return "no account"
    subscription_id = obj.get("subscription")
    if obj.get("mode") != "subscription" or not isinstance(subscription_id, str):
        return "not a subscription"
    if obj.get("status") not in (None, "complete"):
        return "checkout not complete"
    if not paid and obj.get("payment_status") not in PAID_CHECKOUT:
        return "checkout not paid yet"
    # Only the sessions this service creates (checkout_session_create) name the Pro price in
    # their metadata; the session object carries no line items. The subscription's own events
    # then check its items (_holds_pro_price).
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    if not settings.STRIPE_PRO_PRICE_ID or metadata.get("price") != settings.STRIPE_PRO_PRICE_ID:
        return "not a Pro checkout"
    # The period end comes with the subscription's own events; until then a provisional one.
    return _subscription_state(
        stripe_id=subscription_id, account=account, status="active", period_end=None, at=at
    )


def _items(subscription: dict) -> list[dict]:
    """A subscription object's items (`items.data`), whatever shape an event gives them."""
    items = subscription.get("items")
    items = items.get("data") if isinstance(items, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _period_end(obj: dict) -> datetime | None:
    ends = [obj.get("current_period_end")]
    ends += [item.get("current_period_end") for item in _items(obj)]
    ends = [end for end in ends if isinstance(end, int) and 0 < end < MAX_TIMESTAMP]
    return datetime.fromtimestamp(max(ends), tz=UTC) if ends else None


def _subscription_changed(obj: dict, *, at: datetime) -> str:
    stripe_id = obj.get("id")
    if not isinstance(stripe_id, str):
        return "no subscription id"
    account = _account_for(customer=obj.get("customer"), metadata=obj.get("metadata"))
    if account is None:
        known = StripeSubscription.objects.filter(stripe_id=stripe_id).first()
        account = known.account if known else None
    if account is None:
        return "no account"
    status = obj.get("status") if isinstance(obj.get("status"), str) else "unknown"
    return _subscription_state(
        stripe_id=stripe_id,
        account=account,
        status=status,
        period_end=_period_end(obj),
        at=at,
        pro_price=_holds_pro_price(obj),
    )


def _subscription_state(
    *,
    stripe_id: str,
    account: User,
    status: str,
    period_end: datetime | None,
    at: datetime,
    pro_price: bool = True,
) -> str:
    """Record the subscription as of `at` and set the account's Pro period from it, unless a
    newer event was applied already (events can arrive in any order). Only a subscription
    holding the Pro price (`pro_price`) in a paying status makes the account Pro."""
    now = timezone.now()
    row, created = StripeSubscription.objects.select_for_update().get_or_create(
        stripe_id=stripe_id,
        defaults={"account": account, "status": status, "last_event_at": at},
    )
    if not created:
        if at < row.last_event_at:
            return "older than the state applied"
        if at == row.last_event_at and row.status in FINAL_STATUSES:
            return "already ended"
    row.status, row.last_event_at, row.holds_pro_price = status, at, pro_price
    if period_end is not None:
        row.current_period_end = period_end
    if status in PRO_STATUSES and pro_price:
        end = row.current_period_end or now + PRO_PERIOD
        if end <= now:
            end = now + PRO_PERIOD  # a stale period on an active subscription: Stripe renews
        if row.plan_period_id is None:
            row.plan_period = Subscription.objects.create(
                account=row.account, current_period_end=end
            )
        else:
            Subscription.objects.filter(pk=row.plan_period_id).update(current_period_end=end)
    elif row.plan_period_id is not None:
        Subscription.objects.filter(pk=row.plan_period_id, current_period_end__gt=now).update(
            current_period_end=now
        )
    row.save()
    return f"subscription {status}" + ("" if pro_price else " (not the Pro price)")


def _payment_failed(obj: dict, *, at: datetime) -> str:
    stripe_id = obj.get("subscription")
    parent = (obj.get("parent") or {}).get("subscription_details") or {}
    stripe_id = stripe_id if isinstance(stripe_id, str) else parent.get("subscription")
    if not isinstance(stripe_id, str):
        return "not a subscription invoice"
    # Stripe retries the payment; the subscription's own events say when access ends.
    updated = StripeSubscription.objects.filter(stripe_id=stripe_id).update(payment_failed_at=at)
    return "payment failure noted" if updated else "unknown subscription"


def billing_panel(*, account: User) -> dict:
    """What the dashboard's plan panel shows about paying for Pro."""
    latest = StripeSubscription.objects.filter(account=account).order_by("-last_event_at").first()
    return {
        "configured": billing_configured(),
        "has_customer": BillingCustomer.objects.filter(account=account).exists(),
        "payment_failed": bool(
            latest and latest.payment_failed_at and latest.status in PRO_STATUSES
        ),
        "operator_contact": settings.OPERATOR_CONTACT,
    }
