-- wrk script for row "MCP tools/call search_startups": one JSON-RPC POST per request.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_startups","arguments":{"query":"forge","limit":10}}}'
