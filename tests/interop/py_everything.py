"""Interop check of the reference server @modelcontextprotocol/server-everything behind
`mcp-bridge serve --http` (examples/bridge) against the official Python client (`mcp` 2.3.0): its
tools, resources, prompts, progress, and the sampling and elicitation it asks of the client.

Usage: py_everything.py MODE URL     (URL: the bridge's http://127.0.0.1:PORT/mcp)
  MODE  legacy      initialize handshake (session era): the upstream's elicitation/create and
                    sampling/createMessage reach this client as real requests
        2026-07-28  2026-07-28 without any probe, in front of the session-era upstream: the
                    bridge turns the upstream's asks into InputRequiredResult rounds, which the
                    SDK answers with the same callbacks and retries

The client plays the user and the model. Prints one line per check and exits 0 when all pass, 1
when any fails, 2 on bad usage. Run by tests/interop_http.rs with the venv that
tests/interop/setup.sh installs.
"""

from __future__ import annotations

import base64
import sys
from typing import Any

import anyio
from mcp import Client, types

from harness import DEADLINE_S, Checks, describe, run_script, texts

EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
FEATURES = "demo://resource/static/document/features.md"
MODEL = "py-interop-model"


class User:
    """Answers the upstream's asks, and remembers them."""

    def __init__(self) -> None:
        self.elicitations: list[types.ElicitRequestParams] = []
        self.samplings: list[types.CreateMessageRequestParams] = []

    async def elicit(self, _ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicitations.append(params)
        return types.ElicitResult(action="accept", content={
            "name": "Ada Lovelace", "check": True, "email": "ada@example.com",
            "birthdate": "1815-12-10", "integer": 7, "number": 2.5,
        })

    async def sample(self, _ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.samplings.append(params)
        asked = params.messages[0].content.text if params.messages else ""
        return types.CreateMessageResult(role="assistant", model=MODEL, stop_reason="endTurn",
                                         content=types.TextContent(type="text", text=f"sampled: {asked}"))


async def run(mode: str, url: str) -> int:
    check = Checks()
    user = User()
    with anyio.fail_after(DEADLINE_S):
        async with Client(url, mode=mode, elicitation_callback=user.elicit,
                          sampling_callback=user.sample) as client:
            version = client.protocol_version
            check("protocol version", version == EXPECTED_VERSION[mode],
                  f"negotiated {version!r}, expected {EXPECTED_VERSION[mode]!r}")
            if mode == "legacy":  # a 2026-07-28 client that does not probe learns no serverInfo
                info = client.server_info
                check("server info", info is not None and info.name == "mcp-servers/everything",
                      f"{info!r} (the upstream's, through the bridge)")

            async def tool_list() -> None:
                names = {t.name for t in (await client.list_tools()).tools}
                wanted = {"echo", "get-sum", "get-structured-content", "get-tiny-image",
                          "trigger-long-running-operation", "trigger-sampling-request",
                          "trigger-elicitation-request"}
                check("tool list", wanted <= names, f"missing {sorted(wanted - names)} of {sorted(names)}")

            async def echo() -> None:
                r = await client.call_tool("echo", {"message": "through the bridge"})
                check("echo", texts(r) == ["Echo: through the bridge"], describe(r))

            async def sum_() -> None:
                r = await client.call_tool("get-sum", {"a": 20, "b": 22})
                check("get-sum", not r.is_error and "42" in " ".join(texts(r)), describe(r))

            async def structured() -> None:
                r = await client.call_tool("get-structured-content", {"location": "Chicago"})
                check("structured content", r.structured_content ==
                      {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}, describe(r))

            async def image() -> None:
                r = await client.call_tool("get-tiny-image", {})
                png = [b for b in r.content if getattr(b, "type", None) == "image"]
                ok = len(png) == 1 and png[0].mime_type == "image/png" \
                    and base64.b64decode(png[0].data).startswith(b"\x89PNG")
                check("image content", ok, f"{[getattr(b, 'type', None) for b in r.content]}")

            async def progress() -> None:
                seen: list[tuple[float, float | None]] = []

                async def on_progress(value: float, total: float | None, _message: str | None) -> None:
                    seen.append((value, total))

                r = await client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                           progress_callback=on_progress)
                ok = not r.is_error and texts(r)[0].startswith("Long running operation completed")
                check("progress", ok and seen == [(1, 3), (2, 3), (3, 3)], f"{describe(r)} progress={seen}")

            async def sampling() -> None:
                before = len(user.samplings)
                r = await client.call_tool("trigger-sampling-request", {"prompt": "a haiku", "maxTokens": 50})
                got = " ".join(texts(r))
                ok = not r.is_error and len(user.samplings) > before and MODEL in got \
                    and "sampled: Resource trigger-sampling-request context: a haiku" in got
                check("sampling", ok, f"{describe(r)} asked={len(user.samplings) - before}")

            async def elicitation() -> None:
                before = len(user.elicitations)
                r = await client.call_tool("trigger-elicitation-request", {})
                got = "\n".join(texts(r))
                asked = user.elicitations[before:]
                ok = not r.is_error and asked and "name" in (asked[0].requested_schema or {}).get("properties", {})
                for want in ["- Name: Ada Lovelace", "- Agreed to terms: true", "- Email: ada@example.com",
                             "- Birthdate: 1815-12-10", "- Favorite Integer: 7", "- Favorite Number: 2.5"]:
                    ok = ok and want in got
                check("elicitation", bool(ok), f"{describe(r)} asked={len(asked)}")

            async def resources() -> None:
                listed = [str(r.uri) for r in (await client.list_resources()).resources]
                check("resource list", FEATURES in listed, f"{listed}")
                read = await client.read_resource(FEATURES)
                text = read.contents[0].text if read.contents else ""
                check("resource read", "# Everything Server - Features" in text, text[:80])
                templates = sorted(t.uri_template for t in (await client.list_resource_templates()).resource_templates)
                check("templates", templates == ["demo://resource/dynamic/blob/{resourceId}",
                                                 "demo://resource/dynamic/text/{resourceId}"], f"{templates}")
                read = await client.read_resource("demo://resource/dynamic/text/5")
                text = read.contents[0].text if read.contents else ""
                check("template read", text.startswith("Resource 5: This is a plaintext resource"), text[:80])

            async def prompts() -> None:
                names = [p.name for p in (await client.list_prompts()).prompts]
                check("prompt list", "args-prompt" in names, f"{names}")
                got = await client.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
                text = got.messages[0].content.text
                check("prompt get", text == "What's weather in Paris, Texas?", repr(text))

            for name, step in [("tool list", tool_list), ("echo", echo), ("get-sum", sum_),
                               ("structured content", structured), ("image content", image),
                               ("progress", progress), ("sampling", sampling), ("elicitation", elicitation),
                               ("resources", resources), ("prompts", prompts)]:
                await check.attempt(name, step)

    return check.outcome(f"py_everything {mode}")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in EXPECTED_VERSION or not argv[1].startswith("http"):
        print(__doc__, file=sys.stderr)
        return 2
    return run_script(f"py_everything {argv[0]}", run, argv[0], argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
