"""JSON-RPC 2.0 envelopes, written once: which ids are valid, and the answer's shape.

mcpserver/protocol.py answers every dispatched message with these; core/errors.py
(`mcp_api_error`) answers the API's own errors on /api/mcp (a refused key, the fair-use limit,
a database outage) with them before any message is dispatched, echoing the same id.
"""

from typing import Any

JSONRPC = "2.0"


def readable_id(message: Any) -> str | int | None:
    """The message's JSON-RPC id when it is a valid one (a string or an integer), else None."""
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict:
    """A JSON-RPC error answer; `data` only when there is some."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC, "id": request_id, "error": error}


def result_response(request_id: Any, result: Any) -> dict:
    """A JSON-RPC success answer."""
    return {"jsonrpc": JSONRPC, "id": request_id, "result": result}
