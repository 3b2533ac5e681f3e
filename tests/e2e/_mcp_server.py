"""A one-tool MCP server over stdio (JSON-RPC lines), for the e2e tests: ``hello``
answers "hello from the test's MCP server". Not a test module: the client starts it."""

from __future__ import annotations

import json
import sys


def _result(method: str, params: dict[str, object]) -> dict[str, object]:
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "probe", "version": "1"}}
    if method == "tools/list":
        return {"tools": [{"name": "hello", "description": "Say hello",
                           "inputSchema": {"type": "object", "properties": {}}}]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "hello from the test's MCP server"}]}
    return {}


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:  # (a notification has none and gets no answer)
        answer = {"jsonrpc": "2.0", "id": message["id"],
                  "result": _result(str(message.get("method")), message.get("params") or {})}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
