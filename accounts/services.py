"""Writes to founders' accounts. The username is the e-mail address, lower-cased."""

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core import signing
from django.core.mail import send_mail
from django.utils import timezone

from accounts.models import User

_CONFIRM_SALT = "accounts.email-confirmation"


def account_create(*, email: str, password: str | None, confirmed: bool = False) -> User:
    """A new founder account; `password=None` makes one that cannot sign in yet. Unconfirmed
    accounts' keys answer 403 until the owner follows the link of `email_confirmation_send`."""
    email = email.strip().lower()
    return User.objects.create_user(
        username=email,
        email=email,
        password=password,
        email_confirmed_at=timezone.now() if confirmed else None,
    )


def account_get_or_create(*, email: str) -> tuple[User, bool]:
    """The account with this e-mail (as username or address), creating it if needed. Used by
    operators' commands, so an account made here is confirmed."""
    email = email.strip().lower()
    account = account_find(email=email)
    if account is not None:
        return account, False
    return account_create(email=email, password=None, confirmed=True), True


def account_find(*, email: str) -> User | None:
    """The account with this e-mail as username or address, if any."""
    email = email.strip().lower()
    return (
        User.objects.filter(username__iexact=email).first()
        or User.objects.filter(email__iexact=email).order_by("id").first()
    )


def email_confirmation_token(*, account: User) -> str:
    """A signed, expiring token naming the account and the address it confirms."""
    return signing.dumps({"a": account.pk, "e": account.email}, salt=_CONFIRM_SALT, compress=True)


def email_confirm(*, token: str) -> User | None:
    """Confirm the address a token names; None when the token is bad, expired or the address
    changed since. Confirming twice is harmless."""
    try:
        data = signing.loads(
            token, salt=_CONFIRM_SALT, max_age=settings.EMAIL_CONFIRMATION_MAX_AGE_SECONDS
        )
    except signing.BadSignature:
        return None
    account = User.objects.filter(pk=data.get("a"), email=data.get("e")).first()
    if account is None:
        return None
    if account.email_confirmed_at is None:
        account.email_confirmed_at = timezone.now()
        User.objects.filter(pk=account.pk).update(email_confirmed_at=account.email_confirmed_at)
    return account


def email_confirmation_send(*, account: User, base_url: str) -> None:
    """E-mail the owner the link that confirms their address."""
    link = f"{base_url}/accounts/confirm/{email_confirmation_token(account=account)}/"
    days = settings.EMAIL_CONFIRMATION_MAX_AGE_SECONDS // 86400
    send_mail(
        subject=f"Confirm your e-mail address for {settings.SERVICE_NAME}",
        message=(
            f"Open this link to confirm your e-mail address; your API keys work once it is "
            f"confirmed:\n\n{link}\n\nThe link works for {days} days. If you did not sign up "
            f"for {settings.SERVICE_NAME}, ignore this e-mail."
        ),
        from_email=None,
        recipient_list=[account.email],
    )


def signup_attempt_notify(*, account: User, base_url: str) -> None:
    """Tell an account's owner someone tried to sign up with their address (the sign-up page
    answers as for a new address, so it never reveals that an address is registered)."""
    send_mail(
        subject=f"Someone tried to sign up for {settings.SERVICE_NAME} with your address",
        message=(
            f"An account with this e-mail address already exists. If that was you, sign in at "
            f"{base_url}/accounts/login/ instead. If it was not, you can ignore this e-mail: "
            f"nothing was changed."
        ),
        from_email=None,
        recipient_list=[account.email],
    )


def account_sign_up(*, email: str, password: str, base_url: str) -> User | None:
    """A sign-up from the public page: a new, unconfirmed account that is e-mailed its
    confirmation link, or, when the address is registered already, an e-mail to its owner and
    no change (None). The page answers both alike."""
    existing = account_find(email=email)
    if existing is not None:
        make_password(password)  # as slow as creating an account: timing reveals nothing either
        signup_attempt_notify(account=existing, base_url=base_url)
        return None
    account = account_create(email=email, password=password)
    email_confirmation_send(account=account, base_url=base_url)
    return account
