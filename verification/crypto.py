"""Provider keys at rest: Fernet tokens under PROVIDER_KEY_ENCRYPTION_KEYS (no ORM here).

The first key encrypts, every key decrypts, so keys rotate by prepending a new one, running
`manage.py rotate_provider_keys`, then removing the old one.
"""

import functools

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

# DEVELOPMENT ONLY: settings.DEV_PROVIDER_KEY_ENCRYPTION_KEY, a fixed, public key so the project
# runs with no environment. `manage.py check --deploy` warns (verification.W001) while it is in
# use; production refuses to start with it. Read through django.conf: no app imports the roof.


class UnreadableKey(Exception):
    """The stored token decrypts under none of the configured keys."""


def _fernet() -> MultiFernet:
    keys = settings.PROVIDER_KEY_ENCRYPTION_KEYS or [settings.DEV_PROVIDER_KEY_ENCRYPTION_KEY]
    return _fernet_of(tuple(keys))


@functools.lru_cache(maxsize=4)
def _fernet_of(keys: tuple[str, ...]) -> MultiFernet:
    """Built once per key list (every sync decrypts; a rotated list builds a new one). Only
    the keys' own objects are kept: decrypted provider keys never are."""
    return MultiFernet([Fernet(key) for key in keys])


def encrypt_key(raw: str) -> str:
    return _fernet().encrypt(raw.encode()).decode()


def decrypt_key(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise UnreadableKey("the stored provider key decrypts under no configured key") from None


def reencrypt_key(token: str) -> str:
    """The same secret under the current first key."""
    try:
        return _fernet().rotate(token.encode()).decode()
    except InvalidToken:
        raise UnreadableKey("the stored provider key decrypts under no configured key") from None
