from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email
from django.db import transaction

from accounts.services import account_get_or_create
from apikeys.services import account_allowance_set, api_key_create, subscription_set


class Command(BaseCommand):
    help = (
        "Create an API key for the account with this e-mail (creating the account if needed). "
        "The key is printed alone on the last line of stdout, once."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("email")
        parser.add_argument(
            "--plan",
            choices=["free", "pro", "lapsed"],
            help="Also set the account's plan: free ends any Pro period now, pro starts a "
            "30-day Pro period, lapsed records a Pro period that has ended. Omitted: unchanged.",
        )
        parser.add_argument("--name", default="", help="A label for the key.")
        parser.add_argument(
            "--allowance",
            type=int,
            help="Operators only: set the account's monthly allowance override (records per "
            "month on capped plans; e.g. a large number for a load test). -1 clears it.",
        )

    def handle(
        self,
        *args,
        email: str,
        plan: str | None,
        name: str,
        allowance: int | None = None,
        **options,
    ) -> None:
        try:
            validate_email(email)
        except Exception:
            raise CommandError(f"Not an e-mail address: {email!r}") from None
        with transaction.atomic():
            account, created = account_get_or_create(email=email)
            if plan is not None:
                subscription_set(account=account, plan=plan)
            if allowance is not None:
                account_allowance_set(
                    account=account, allowance=None if allowance < 0 else allowance
                )
            key = api_key_create(account=account, name=name)
        self.stderr.write(
            f"{'Created' if created else 'Found'} account {account.username}; "
            f"new key {key.api_key.display}{f' ({plan})' if plan else ''}. "
            "It is shown once, below:"
        )
        self.stdout.write(key.raw)
