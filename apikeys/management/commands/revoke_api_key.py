from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from apikeys.services import api_key_revoke_raw


class Command(BaseCommand):
    help = "Revoke an API key, given the key itself."

    def add_arguments(self, parser) -> None:
        parser.add_argument("key")

    def handle(self, *args, key: str, **options) -> None:
        try:
            api_key = api_key_revoke_raw(raw=key)
        except DatabaseError as error:
            # The revocation and the invalidation of every server's copies are one transaction:
            # when it fails, neither happened, and the operator must know.
            raise CommandError(
                f"NOT revoked: the database could not be updated ({error})."
            ) from None
        if api_key is None:
            raise CommandError("No such key.")
        self.stdout.write(
            f"Revoked {api_key.display} of {api_key.account.username}; every server refuses it "
            "from its next request."
        )
