"""JSON-RPC 2.0 dispatch for the MCP endpoint: one message in, one (status, response) out.

`handle_message` takes any parsed JSON body and decides everything about it once: the protocol
version, whether it is a JSON-RPC 2.0 message at all, notifications and posted responses (None:
nothing to answer), then the method. The HTTP view only moves bytes.

Stateless: `initialize` is answered but never required. Two protocol eras are served side by
side. Handshake-era clients (2024-11-05 .. 2025-11-25) call `initialize` first and get HTTP 200
for every JSON-RPC answer. 2026-07-28 clients probe `server/discover` and send the protocol
version in every request's `params._meta`; their results carry `resultType` and the server-info
stamp, and their errors use the revision's HTTP statuses (400, or 404 for an unknown method).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from core.jsonrpc import JSONRPC, error_response, readable_id, result_response
from mcpserver.tools import UnknownTool, call_tool, server_instructions, tool_definitions

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = (*HANDSHAKE_VERSIONS, *MODERN_VERSIONS)
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]
# The version assumed when a request carries no MCP-Protocol-Version header (per the spec).
DEFAULT_HEADER_VERSION = "2025-03-26"

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
# 2026-07-28 list results say how long a client may reuse them.
LIST_TTL_MS = 300_000

_MODERN_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


class RpcError(Exception):
    """A JSON-RPC error answer (protocol failure, not a tool failure)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def unsupported_version(requested: Any, supported: tuple[str, ...]) -> RpcError:
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version {requested!r}; supported: {', '.join(supported)}",
        {"supported": list(supported), "requested": requested},
    )


@dataclass(frozen=True)
class Call:
    """One JSON-RPC request as the handlers see it."""

    method: str
    params: dict
    modern: bool
    http_request: HttpRequest


def server_info() -> dict:
    return {
        "name": settings.MCP_SERVER_NAME,
        "title": f"{settings.SERVICE_NAME} startup revenue data",
        "version": settings.MCP_SERVER_VERSION,
    }


def capabilities() -> dict:
    return {"tools": {"listChanged": False}}


def _initialize(call: Call) -> dict:
    requested = call.params.get("protocolVersion")
    version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION
    return {
        "protocolVersion": version,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": server_instructions(),
    }


def _discover(call: Call) -> dict:
    return {
        "supportedVersions": list(SUPPORTED_VERSIONS),
        "capabilities": capabilities(),
        "instructions": server_instructions(),
        "ttlMs": LIST_TTL_MS,
        "cacheScope": "public",
    }


def _ping(call: Call) -> dict:
    return {}


def _tools_list(call: Call) -> dict:
    result: dict[str, Any] = {"tools": tool_definitions()}
    if call.modern:
        result.update(ttlMs=LIST_TTL_MS, cacheScope="public")
    return result


def _tools_call(call: Call) -> dict:
    name = call.params.get("name")
    if not isinstance(name, str) or not name:
        raise RpcError(INVALID_PARAMS, "params.name must be the tool name (a string)")
    arguments = call.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "params.arguments must be an object")
    try:
        return call_tool(name, arguments or {}, request=call.http_request)
    except UnknownTool as error:
        raise RpcError(INVALID_PARAMS, str(error), {"name": name}) from None


HANDLERS: dict[str, Callable[[Call], dict]] = {
    "initialize": _initialize,
    "server/discover": _discover,
    "ping": _ping,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
}


def _modern_envelope(message: dict, params: dict, headers: Mapping[str, str]) -> bool:
    """Check a request's 2026-07-28 envelope; True when the request uses one."""
    meta = params.get("_meta")
    in_meta = isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta
    header_version = headers.get("mcp-protocol-version")
    if not in_meta:
        if header_version in MODERN_VERSIONS:
            raise RpcError(
                INVALID_PARAMS,
                f"params._meta must carry {PROTOCOL_VERSION_META_KEY!r} and "
                f"{CLIENT_CAPABILITIES_META_KEY!r} at protocol version {header_version}",
            )
        return False
    version = meta[PROTOCOL_VERSION_META_KEY]
    if CLIENT_CAPABILITIES_META_KEY not in meta:
        raise RpcError(INVALID_PARAMS, f"params._meta is missing {CLIENT_CAPABILITIES_META_KEY!r}")
    if header_version is not None and header_version != version:
        raise RpcError(HEADER_MISMATCH, "MCP-Protocol-Version header does not match params._meta")
    method_header = headers.get("mcp-method")
    if method_header is not None and method_header != message["method"]:
        raise RpcError(HEADER_MISMATCH, "Mcp-Method header does not match the request's method")
    name_header = headers.get("mcp-name")
    if name_header is not None and message["method"] == "tools/call":
        if name_header != params.get("name"):
            raise RpcError(HEADER_MISMATCH, "Mcp-Name header does not match params.name")
    if version not in MODERN_VERSIONS:
        raise unsupported_version(version, MODERN_VERSIONS)
    return True


def handle_message(
    message: Any, *, headers: Mapping[str, str], http_request: HttpRequest
) -> tuple[int, dict] | None:
    """Answer one parsed JSON body: (HTTP status, response), or None when nothing is owed."""
    version = headers.get("mcp-protocol-version", DEFAULT_HEADER_VERSION)
    if version not in SUPPORTED_VERSIONS:
        error = unsupported_version(version, SUPPORTED_VERSIONS)
        return 400, error_response(None, error.code, error.message, error.data)
    if isinstance(message, list):
        return 400, error_response(
            None, INVALID_REQUEST, "Batches are not supported; send one message"
        )
    if not isinstance(message, dict) or message.get("jsonrpc") != JSONRPC:
        return 400, error_response(None, INVALID_REQUEST, "Not a JSON-RPC 2.0 message")
    if "method" not in message and "id" in message and ("result" in message or "error" in message):
        return None  # a response to a server request; this server sends none
    if not isinstance(message.get("method"), str):
        request_id = readable_id(message)
        return 400, error_response(request_id, INVALID_REQUEST, "method must be a string")
    if "id" not in message:
        return None  # a notification: accepted, nothing to answer
    if readable_id(message) is None:
        return 400, error_response(None, INVALID_REQUEST, "id must be a string or an integer")
    return _handle_request(message, headers=headers, http_request=http_request)


def _handle_request(
    message: dict, *, headers: Mapping[str, str], http_request: HttpRequest
) -> tuple[int, dict]:
    """Answer one JSON-RPC request: (HTTP status, response object)."""
    request_id = message.get("id")
    params = message.get("params")
    # The era of the wire, decided once: 2026-07-28 errors use that revision's HTTP statuses.
    modern_wire = _uses_modern_wire(params, headers)
    try:
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        modern = _modern_envelope(message, params, headers)
        handler = HANDLERS.get(message["method"])
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {message['method']}")
        result = handler(Call(message["method"], params, modern, http_request))
    except RpcError as error:
        status = _MODERN_STATUS.get(error.code, 200) if modern_wire else 200
        return status, error_response(request_id, error.code, error.message, error.data)
    if modern:
        result = {**result, "resultType": "complete"}
        result["_meta"] = {**result.get("_meta", {}), SERVER_INFO_META_KEY: server_info()}
    return 200, result_response(request_id, result)


def _uses_modern_wire(params: Any, headers: Mapping[str, str]) -> bool:
    """Whether the client speaks 2026-07-28 (envelope or header), so errors get its statuses."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    in_meta = isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta
    return in_meta or headers.get("mcp-protocol-version") in MODERN_VERSIONS
