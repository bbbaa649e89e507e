from django.core.management.base import BaseCommand

from webhooks.services import endpoint_secrets_rotate


class Command(BaseCommand):
    help = (
        "Re-encrypt every webhook signing secret under the first PROVIDER_KEY_ENCRYPTION_KEYS "
        "key. Run it with rotate_provider_keys: prepend a new key, run both, remove the old one."
    )

    def handle(self, *args, **options) -> None:
        rotated = endpoint_secrets_rotate()
        self.stdout.write(f"Re-encrypted {rotated} webhook secret(s) under the current key.")
