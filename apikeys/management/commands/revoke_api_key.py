from django.core.management.base import BaseCommand, CommandError

from apikeys.services import api_key_revoke_raw


class Command(BaseCommand):
    help = "Revoke an API key, given the key itself."

    def add_arguments(self, parser) -> None:
        parser.add_argument("key")

    def handle(self, *args, key: str, **options) -> None:
        api_key = api_key_revoke_raw(raw=key)
        if api_key is None:
            raise CommandError("No such key.")
        self.stdout.write(f"Revoked {api_key.display} of {api_key.account.username}.")
