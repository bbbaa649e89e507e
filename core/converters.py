"""URL converters."""


class AnyTextConverter:
    """Any non-empty text, slashes and newlines included (Django's `path` stops at a newline),
    so that every slug a client sends reaches the view and gets the documented JSON answer."""

    regex = "(?s:.+)"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
