"""Writes to founders' accounts. The username is the e-mail address, lower-cased."""

from accounts.models import User


def account_create(*, email: str, password: str | None) -> User:
    """A new founder account; `password=None` makes one that cannot sign in yet."""
    email = email.strip().lower()
    return User.objects.create_user(username=email, email=email, password=password)


def account_get_or_create(*, email: str) -> tuple[User, bool]:
    """The account with this e-mail (as username or address), creating it if needed."""
    email = email.strip().lower()
    account = (
        User.objects.filter(username__iexact=email).first()
        or User.objects.filter(email__iexact=email).order_by("id").first()
    )
    if account is not None:
        return account, False
    return account_create(email=email, password=None), True
