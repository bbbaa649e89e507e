"""Which surface a path belongs to, defined once.

- The API (`/api/`), read by programs and authenticated by API key only, never by a browser
  session:
  - `/api/v1/`: the REST dataset, metered per caller, so never cached on the way;
  - `/api/ai/`: the curated AI set, not metered;
  - `/api/mcp`: MCP over JSON-RPC (with or without a trailing slash), errors as JSON-RPC.
- The machine-read surface: the API and `/llms.txt`. Errors are JSON and any origin may read it.
- Everything else is the site: HTML pages, the dashboard and the admin, with sessions.
"""

REST_PREFIX = "/api/v1/"
AI_PREFIX = "/api/ai/"
MCP_PATH = "/api/mcp"


def is_api(path: str) -> bool:
    return path.startswith("/api/")


def is_rest(path: str) -> bool:
    return path.startswith(REST_PREFIX)


def is_mcp_path(path: str) -> bool:
    return path.rstrip("/") == MCP_PATH


def is_machine_read(path: str) -> bool:
    return is_api(path) or path == "/llms.txt"
