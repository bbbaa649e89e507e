"""gunicorn's access log without secrets: API keys sent in the query string are redacted.

The service refuses such requests (400 `api_key_in_query`, apikeys/ratelimit.py), but the
access line is written for them too, so the request line and query atoms are cleaned first.
"""

from urllib.parse import unquote_plus

from gunicorn.glogging import Logger

# Query parameters taken for API keys: redacted here, refused by apikeys/ratelimit.py.
SECRET_PARAMETERS = frozenset({"api_key", "apikey", "key", "api-key"})
REDACTED = "[redacted]"


def is_secret_parameter(name: str) -> bool:
    """Whether a raw (still percent-encoded) query parameter name is a key-like one."""
    return unquote_plus(name).strip().lower() in SECRET_PARAMETERS


def has_secret_parameter(query: str) -> bool:
    """Whether a raw query string carries a key-like parameter (no limit on how many pairs,
    unlike Django's QueryDict: a long query is not an error here)."""
    return any(is_secret_parameter(pair.partition("=")[0]) for pair in query.split("&") if pair)


def redact_query(query: str) -> str:
    """The query string with the values of key-like parameters replaced."""
    if not query:
        return query
    parts = []
    for pair in query.split("&"):
        name, sep, _ = pair.partition("=")
        if is_secret_parameter(name):
            pair = f"{name}={REDACTED}"
        parts.append(pair)
    return "&".join(parts)


def redact_target(target: str) -> str:
    path, sep, query = target.partition("?")
    return f"{path}{sep}{redact_query(query)}" if sep else target


class RedactingLogger(Logger):
    """gunicorn's Logger whose `r` (request line) and `q` (query) atoms carry no keys."""

    def atoms(self, resp, req, environ, request_time) -> dict:
        atoms = super().atoms(resp, req, environ, request_time)
        method, _, rest = atoms["r"].partition(" ")
        target, _, protocol = rest.rpartition(" ")
        atoms["r"] = f"{method} {redact_target(target)} {protocol}"
        atoms["q"] = redact_query(atoms.get("q") or "")
        return atoms
