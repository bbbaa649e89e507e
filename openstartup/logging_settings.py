"""The LOGGING setting, apart because it is long: one line per record, naming its request id."""


def logging_settings(*, level: str) -> dict:
    """LOGGING, the root logger at `level` (LOG_LEVEL in the environment, read by settings)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"}
        },
        "filters": {
            "once_a_minute": {"()": "core.logs.OncePerInterval", "seconds": 60},
            "request_id": {"()": "core.requestid.RequestIdFilter"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "plain",
                "filters": ["request_id"],
            }
        },
        "loggers": {
            # Cache (Redis) failures: the cache is bypassed, so they are logged once a minute.
            "openstartup.cache": {"filters": ["once_a_minute"]},
        },
        "root": {"handlers": ["console"], "level": level},
    }
