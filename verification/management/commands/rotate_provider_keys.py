from django.core.management.base import BaseCommand

from verification.connections import provider_keys_rotate


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored provider key under the first PROVIDER_KEY_ENCRYPTION_KEYS key. "
        "Rotation: prepend a new key, run this, then remove the old key."
    )

    def handle(self, *args, **options) -> None:
        rotated = provider_keys_rotate()
        self.stdout.write(f"Re-encrypted {rotated} provider key(s) under the current key.")
