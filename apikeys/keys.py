"""The API key format and its digest. Pure functions, no ORM.

A key is `osk_` + 40 random base62 characters + a 6-character base62 CRC32 checksum of the
first two parts (50 characters in all). Base62 keeps the key one double-clickable word; the
checksum lets a secret scanner recognise a leaked key, and lets us refuse a mistyped key
without a database lookup. Only the SHA-256 digest is stored: the secret has ~238 bits of
entropy, so a fast hash is enough and a password hasher would cost milliseconds per request.
"""

import hashlib
import secrets
import string
import zlib

PREFIX = "osk_"
SECRET_LENGTH = 40
CHECKSUM_LENGTH = 6
KEY_LENGTH = len(PREFIX) + SECRET_LENGTH + CHECKSUM_LENGTH
ALPHABET = string.digits + string.ascii_letters  # base62
_ALPHABET_SET = frozenset(ALPHABET)


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, remainder = divmod(number, 62)
        digits.append(ALPHABET[remainder])
    return "".join(reversed(digits))


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode("ascii")), CHECKSUM_LENGTH)


def generate() -> str:
    """A new raw key. Shown to its owner once and never stored."""
    body = PREFIX + "".join(secrets.choice(ALPHABET) for _ in range(SECRET_LENGTH))
    return body + _checksum(body)


def is_well_formed(raw: str) -> bool:
    """True when `raw` has the prefix, length, alphabet and a matching checksum."""
    if len(raw) != KEY_LENGTH or not raw.startswith(PREFIX):
        return False
    rest = raw[len(PREFIX) :]
    if not _ALPHABET_SET.issuperset(rest):
        return False
    body, checksum = raw[:-CHECKSUM_LENGTH], raw[-CHECKSUM_LENGTH:]
    return secrets.compare_digest(_checksum(body), checksum)


def digest(raw: str) -> str:
    """The hex SHA-256 of a raw key: what the database stores and looks keys up by."""
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def last_four(raw: str) -> str:
    return raw[-4:]


def display(four: str) -> str:
    """How a key is shown after creation: prefix, ellipsis, last four characters."""
    return f"{PREFIX}…{four}"
