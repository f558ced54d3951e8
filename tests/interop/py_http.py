"""Interop check of an MCP server over HTTP against the official Python client (`mcp` 2.3.0).

Usage: py_http.py MODE URL
  MODE  legacy      Streamable HTTP, initialize handshake (session era, expects 2025-11-25)
        auto        Streamable HTTP, server/discover probe with initialize as the fallback
                    (expects 2026-07-28, connected within 5 s)
        2026-07-28  Streamable HTTP, 2026-07-28 adopted without any probe (stateless requests)
        sse         the deprecated HTTP+SSE transport (`mcp.client.sse.sse_client`), initialize
                    handshake (expects 2025-11-25)
  URL   the MCP endpoint (http://127.0.0.1:PORT/mcp), or for `sse` the SSE endpoint
        (http://127.0.0.1:PORT/sse)

Connects to a running server (the quickstart example with `--http`), prints one line per check
and exits 0 when all pass, 1 when any fails, 2 on bad usage. Run by tests/interop_http.rs with
the venv that tests/interop/setup.sh installs.
"""

from __future__ import annotations

import sys
import time
from contextlib import AsyncExitStack
from typing import Any, Callable

import anyio
from mcp import Client, MCPError
from mcp.client.sse import sse_client

from harness import DEADLINE_S, Checks, describe, run_script, texts

EXPECTED_VERSION = {
    "legacy": "2025-11-25",
    "auto": "2026-07-28",
    "2026-07-28": "2026-07-28",
    "sse": "2025-11-25",
}
EXPECTED_SERVER = "mcp-examples"
EXPECTED_TOOLS = ["add", "divide", "greet", "measure", "sleep"]
INVALID_PARAMS = -32602
# `auto` waits up to 10 s for a server/discover answer before falling back to initialize, so a
# server that mishandles the probe still connects, just late: the budget has to sit well below that.
CONNECT_BUDGET_S = 5.0
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"


def make_client(mode: str, url: str) -> Client:
    if mode == "sse":
        # HTTP+SSE is a handshake-era transport: GET the SSE URL, wait for `endpoint`, POST there.
        return Client(sse_client(url), mode="legacy")
    # A URL string means Streamable HTTP (`streamable_http_client`).
    return Client(url, mode=mode)


async def run(mode: str, url: str) -> int:
    check = Checks()
    with anyio.fail_after(DEADLINE_S):
        async with AsyncExitStack() as stack:
            started = time.monotonic()
            client = await stack.enter_async_context(make_client(mode, url))
            connect_s = time.monotonic() - started
            check("connect time", connect_s < CONNECT_BUDGET_S, f"{connect_s:.2f}s (budget {CONNECT_BUDGET_S}s)")

            version = client.protocol_version
            check("protocol version", version == EXPECTED_VERSION[mode],
                  f"negotiated {version!r}, expected {EXPECTED_VERSION[mode]!r}")

            listed = await client.list_tools()
            names = sorted(tool.name for tool in listed.tools)
            check("tool list", names == EXPECTED_TOOLS, f"{names}")

            # With a pinned version the client never asks the server who it is (no initialize, no
            # discover), so the identity comes from the serverInfo stamp every 2026-07-28 result carries.
            info = client.server_info
            source = "server/discover _meta stamp" if client.session.discover_result is not None else "initialize"
            if info is None:
                info = (listed.meta or {}).get(SERVER_INFO_META_KEY)
                source = f"tools/list _meta[{SERVER_INFO_META_KEY!r}]"
            name = info.get("name") if isinstance(info, dict) else getattr(info, "name", None)
            check("server name", name == EXPECTED_SERVER, f"{name!r} from {source}, expected {EXPECTED_SERVER!r}")

            await call(check, client, "add 2+3", "add", {"a": 2, "b": 3},
                       lambda r: not r.is_error and texts(r) == ["5"] and r.structured_content == {"result": 5},
                       "text '5', structured {'result': 5}")
            await call(check, client, "measure", "measure", {"from": {"x": 0, "y": 0}, "to": {"x": 3, "y": 4}},
                       lambda r: not r.is_error and (r.structured_content or {}).get("distance") == 5.0,
                       "structured distance 5.0")
            await call(check, client, "divide by zero", "divide", {"dividend": 1, "divisor": 0},
                       lambda r: r.is_error is True and texts(r) == ["cannot divide by zero"],
                       "isError with text 'cannot divide by zero'")
            await call(check, client, "bad argument", "add", {"a": "x", "b": 1},
                       lambda r: r.is_error is True and any("`a`" in t for t in texts(r)),
                       "isError with text naming `a`")

            try:
                result = await client.call_tool("nope", {})
                check("unknown tool", False, f"expected MCP error {INVALID_PARAMS}, got a result: {describe(result)}")
            except MCPError as e:
                check("unknown tool", e.code == INVALID_PARAMS,
                      f"MCP error {e.code}: {e.message!r} (expected code {INVALID_PARAMS})")

    return check.outcome(f"py_http {mode}")


async def call(check: Checks, client: Client, label: str, tool: str, args: dict[str, Any],
               ok: Callable[[Any], bool], expected: str) -> None:
    # A JSON-RPC error here is a failed check too (these calls should all produce results).
    try:
        result = await client.call_tool(tool, args)
    except MCPError as e:
        check(label, False, f"MCP error {e.code}: {e.message!r}; expected {expected}")
        return
    check(label, ok(result), f"{describe(result)}; expected {expected}")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in EXPECTED_VERSION or not argv[1].startswith("http"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, url = argv
    return run_script(f"py_http {mode}", run, mode, url)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
