"""Which surface a path belongs to, defined once.

- The API (`/api/`: /api/v1, /api/ai, /api/mcp): read by programs, authenticated by API key
  only, never by a browser session.
- The machine-read surface: the API and `/llms.txt`. Errors are JSON and any origin may read it.
- Everything else is the site: HTML pages, the dashboard and the admin, with sessions.
"""


def is_api(path: str) -> bool:
    return path.startswith("/api/")


def is_machine_read(path: str) -> bool:
    return is_api(path) or path == "/llms.txt"
