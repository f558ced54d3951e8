"""A representative server written with the official Python SDK (mcp 2.3.0, `MCPServer`), for
tests/interop_client.rs: our Rust client against it. Its tools that ask the client (`greet`: a
form, `sample`: sampling, `roots`: roots/list) use resolvers, which the SDK serves as
InputRequiredResult rounds in 2026-07-28 and as server-to-client requests in the session era.

    py_server.py                          stdio (default)
    py_server.py --http PORT              Streamable HTTP on 127.0.0.1:PORT at /mcp
    py_server.py --sse PORT               deprecated HTTP+SSE on 127.0.0.1:PORT (/sse, /messages/)
"""

import argparse
from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import ListRoots, Sample
from mcp.types import (
    Completion,
    CreateMessageResult,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
)

mcp = MCPServer("py-interop", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress at each step."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"counted {steps}"


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


# A resolver rather than `ctx.elicit`: it works in both eras (2026-07-28 has no back-channel for
# a mid-call request; the SDK turns the Elicit into an InputRequiredResult round there).
@mcp.tool()
async def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Ask the user for their name (form elicitation) and greet them."""
    return f"Hello, {who.name}!"


def ask_haiku(topic: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Write a haiku about {topic}"))],
        max_tokens=60,
    )


@mcp.tool()
async def sample(topic: str, haiku: Annotated[CreateMessageResult, Resolve(ask_haiku)]) -> str:
    """Ask the client to sample a haiku about `topic`."""
    text = haiku.content.text if isinstance(haiku.content, TextContent) else f"({haiku.content.type})"
    return f"{haiku.model} wrote: {text}"


def ask_roots() -> ListRoots:
    return ListRoots()


@mcp.tool()
async def roots(found: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """List the client's roots."""
    return ", ".join(f"{r.name or '?'}={r.uri}" for r in found.roots)


@mcp.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("this tool always fails")


@mcp.resource("config://app", mime_type="text/plain")
def config() -> str:
    """The app's configuration."""
    return "debug=true"


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for `name`."""
    return f"Hello, {name}!"


@mcp.prompt()
def review(code: str) -> str:
    """Review some code."""
    return f"Please review this code:\n\n{code}"


LANGUAGES = ["python", "perl", "rust", "ruby"]


@mcp.completion()
async def complete(ref, argument, context):
    if isinstance(ref, ResourceTemplateReference) and argument.name == "name":
        return Completion(values=[n for n in ["ada", "alan", "grace"] if n.startswith(argument.value)])
    if isinstance(ref, PromptReference) and argument.name == "code":
        return Completion(values=[l for l in LANGUAGES if l.startswith(argument.value)])
    return None


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--sse", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.http is not None:
        mcp.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.sse is not None:
        mcp.run("sse", host="127.0.0.1", port=args.sse)
    else:
        mcp.run()
