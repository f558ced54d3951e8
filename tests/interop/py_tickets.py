"""Interop check of the ticket desk example (examples/tickets) over stdio against the official
Python client (`mcp` 2.3.0): resources, resource templates, prompts and completion.

Usage: TICKETS_DB=PATH py_tickets.py MODE -- COMMAND [ARGS...]
  MODE  legacy      initialize handshake (session era, expects 2025-11-25)
        auto        server/discover probe, initialize only as a fallback (expects 2026-07-28)
        2026-07-28  adopt 2026-07-28 without any probe (stateless requests from the start)

Spawns COMMAND as the server with TICKETS_DB passed on explicitly (the SDK hands a server only a
short list of "safe" variables such as PATH and HOME, never the rest of our environment). PATH
should name a fresh database: the checks expect the four seeded tickets. Prints one line per
check and exits 0 when all pass, 1 when any fails, 2 on bad usage. Run by tests/interop_stdio.rs
with the venv that tests/interop/setup.sh installs.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import PromptReference, ResourceTemplateReference

from harness import DEADLINE_S, Checks, run_script

EXPECTED_VERSION = {"legacy": "2025-11-25", "auto": "2026-07-28", "2026-07-28": "2026-07-28"}
# "Resource not found": the session era's own code, and invalid params from 2026-07-28 on.
NOT_FOUND_CODE = {"legacy": -32002, "auto": -32602, "2026-07-28": -32602}
EXPECTED_RESOURCES = ["tickets://statuses", "tickets://1", "tickets://2", "tickets://3", "tickets://4"]
EXPECTED_STATUSES = ["open", "in_progress", "closed"]


def json_text(contents: Any) -> Any:
    """The JSON value of one text resource contents."""
    return json.loads(contents.text)


async def run(mode: str, command: list[str], db: str) -> int:
    check = Checks()
    params = StdioServerParameters(command=command[0], args=command[1:], env={"TICKETS_DB": db})
    with anyio.fail_after(DEADLINE_S):
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(params, mode=mode))
            version = client.protocol_version
            check("protocol version", version == EXPECTED_VERSION[mode],
                  f"negotiated {version!r}, expected {EXPECTED_VERSION[mode]!r}")

            async def resource_list() -> None:
                listed = await client.list_resources()
                uris = [str(r.uri) for r in listed.resources]
                mimes = {r.mime_type for r in listed.resources}
                check("resource list", uris == EXPECTED_RESOURCES and mimes == {"application/json"},
                      f"{uris} with MIME types {sorted(m or '' for m in mimes)}; expected {EXPECTED_RESOURCES}, "
                      "all application/json")

            async def template_list() -> None:
                listed = await client.list_resource_templates()
                templates = [t.uri_template for t in listed.resource_templates]
                check("resource templates", templates == ["attachments://{+path}", "tickets://{id}"], f"{templates}")

            async def read_statuses() -> None:
                read = await client.read_resource("tickets://statuses")
                value = [json_text(c) for c in read.contents]
                check("read tickets://statuses", value == [EXPECTED_STATUSES], f"{value}")

            async def read_ticket() -> None:
                read = await client.read_resource("tickets://1")
                contents = read.contents
                ticket = json_text(contents[0]) if len(contents) == 1 else None
                ok = (isinstance(ticket, dict) and ticket.get("id") == 1 and ticket.get("status") == "open"
                      and bool(ticket.get("title")) and contents[0].mime_type == "application/json")
                check("read tickets://1", ok, f"{len(contents)} contents, mimeType "
                      f"{contents[0].mime_type if contents else None!r}, ticket {ticket!r}")

            async def read_missing() -> None:
                expected = NOT_FOUND_CODE[mode]
                try:
                    read = await client.read_resource("tickets://99")
                    check("read missing ticket", False, f"expected MCP error {expected}, got {read!r}")
                except MCPError as e:
                    data = e.data
                    check("read missing ticket", e.code == expected and data == {"uri": "tickets://99"},
                          f"MCP error {e.code}: {e.message!r} data={data!r} (expected code {expected}, "
                          "data {'uri': 'tickets://99'})")

            async def prompt() -> None:
                got = await client.get_prompt("triage_ticket", {"id": "1"})
                kinds = [m.content.type for m in got.messages]
                embedded = [m.content.resource for m in got.messages if m.content.type == "resource"]
                ticket = json_text(embedded[0]) if embedded else None
                ok = (kinds == ["text", "resource"] and all(m.role == "user" for m in got.messages)
                      and str(embedded[0].uri) == "tickets://1" and isinstance(ticket, dict) and ticket.get("id") == 1)
                check("get prompt triage_ticket", ok,
                      f"description {got.description!r}, content types {kinds}, embedded "
                      f"{[str(r.uri) for r in embedded]} with ticket {ticket!r}")

            async def prompt_missing_argument() -> None:
                try:
                    got = await client.get_prompt("triage_ticket", {})
                    check("prompt without id", False, f"expected MCP error -32602, got {got!r}")
                except MCPError as e:
                    check("prompt without id", e.code == -32602 and "`id`" in e.message,
                          f"MCP error {e.code}: {e.message!r} (expected -32602 naming `id`)")

            async def complete(label: str, ref: Any) -> None:
                result = await client.complete(ref, {"name": "id", "value": "1"})
                c = result.completion
                check(label, c.values == ["1"] and c.total == 1 and c.has_more is False,
                      f"values={c.values} total={c.total} hasMore={c.has_more}; expected ['1'], 1, False")

            async def tool() -> None:
                # The client checks structuredContent against the tool's outputSchema itself.
                await client.list_tools()
                result = await client.call_tool("query_tickets_by_status", {"status": "open"})
                found = (result.structured_content or {}).get("result")
                ids = [t.get("id") for t in found] if isinstance(found, list) else found
                check("tool query_tickets_by_status", not result.is_error and ids == [1, 4],
                      f"isError={result.is_error!r} ids={ids!r}; expected [1, 4]")

            async def fresh_after_update() -> None:
                # The client caches reads for ttlMs (2026-07-28); resource data must not go stale.
                def status(read: Any) -> Any:
                    return json.loads(read.contents[0].text).get("status")
                before = status(await client.read_resource("tickets://2"))
                await client.call_tool("update_ticket", {"id": 2, "status": "closed"})
                after = status(await client.read_resource("tickets://2"))
                check("read after update is fresh", before != "closed" and after == "closed",
                      f"status before {before!r}, after {after!r}")

            await check.attempt("resource list", resource_list)
            await check.attempt("resource templates", template_list)
            await check.attempt("read tickets://statuses", read_statuses)
            await check.attempt("read tickets://1", read_ticket)
            await check.attempt("read missing ticket", read_missing)
            await check.attempt("get prompt triage_ticket", prompt)
            await check.attempt("prompt without id", prompt_missing_argument)
            await check.attempt("complete template variable",
                                lambda: complete("complete template variable",
                                                 ResourceTemplateReference(uri="tickets://{id}")))
            await check.attempt("complete prompt argument",
                                lambda: complete("complete prompt argument",
                                                 PromptReference(name="triage_ticket")))
            await check.attempt("tool query_tickets_by_status", tool)
            await check.attempt("read after update is fresh", fresh_after_update)

    return check.outcome(f"py_tickets {mode}")


def main(argv: list[str]) -> int:
    db = os.environ.get("TICKETS_DB")
    if len(argv) < 3 or argv[1] != "--" or argv[0] not in EXPECTED_VERSION or not db:
        print(__doc__, file=sys.stderr)
        return 2
    mode, command = argv[0], argv[2:]
    return run_script(f"py_tickets {mode}", run, mode, command, db)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
