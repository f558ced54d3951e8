"""The official Python client (`mcp` 2.3.0) doing the whole OAuth discovery flow against an MCP
server with authorization, with `ClientCredentialsOAuthProvider`: a 401 with
`resource_metadata` -> the protected resource metadata -> the authorization server's metadata ->
a client-credentials token (with `resource`) -> the calls. Run by tests/auth.rs.

Usage: py_oauth.py MODE URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE
  MODE  legacy (initialize, 2025-11-25) or auto (server/discover: 2026-07-28)

Prints one JSON line: {"version": negotiated, "tools": [names], "whoami": text, "stepped":
read_tickets' text after the step-up (or the error), "whoami_after": text}.
"""

from __future__ import annotations

import json
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class Memory:
    """Token storage for one run."""

    def __init__(self) -> None:
        self.tokens = None
        self.info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens) -> None:
        self.tokens = tokens

    async def get_client_info(self):
        return self.info

    async def set_client_info(self, info) -> None:
        self.info = info


async def main(mode: str, url: str, issuer: str, client_id: str, secret: str, scope: str) -> None:
    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=Memory(),
        client_id=client_id,
        client_secret=secret,
        scope=scope,
        issuer=issuer,
    )
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(auth=provider, timeout=20) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                tools = sorted(t.name for t in (await client.list_tools()).tools)
                who = await client.call_tool("whoami", {})
                # A tool needing a scope the first token lacks: 403 insufficient_scope, and
                # the client steps up (a new token with the challenge's scopes).
                try:
                    stepped = (await client.call_tool("read_tickets", {})).content[0].text
                except Exception as e:  # noqa: BLE001 - reported, the test decides
                    stepped = f"error: {e!r}"
                again = await client.call_tool("whoami", {})
                print(
                    json.dumps(
                        {
                            "version": client.protocol_version,
                            "tools": tools,
                            "whoami": who.content[0].text,
                            "stepped": stepped,
                            "whoami_after": again.content[0].text,
                        }
                    )
                )


if __name__ == "__main__":
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    anyio.run(main, *sys.argv[1:])
