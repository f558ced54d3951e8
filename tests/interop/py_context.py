"""Interop check of the Context example (examples/context.rs) against the official Python client
(`mcp` 2.3.0): elicitation, sampling, roots, progress, logging and change notifications.

Usage: py_context.py MODE -- COMMAND [ARGS...]    (stdio: spawns COMMAND as the server)
       py_context.py MODE URL                     (Streamable HTTP: http://127.0.0.1:PORT/mcp)
  MODE  legacy      initialize handshake (session era, expects 2025-11-25): the server asks the
                    client with real requests (elicitation/create, sampling/createMessage,
                    roots/list); logging/setLevel governs logs; resources/subscribe and the
                    list_changed notifications arrive through message_handler
        2026-07-28  adopt 2026-07-28 without any probe: the server answers a tools/call with an
                    InputRequiredResult, the SDK runs the same callbacks and retries the call with
                    inputResponses; logs come only for requests carrying a log level in _meta;
                    changes arrive on a subscriptions/listen stream

The client plays the user and the model: its callbacks record what the server asked and answer
from a plan. Prints one line per check and exits 0 when all pass, 1 when any fails, 2 on bad
usage. Run by tests/interop_context.rs with the venv that tests/interop/setup.sh installs.
"""

from __future__ import annotations

import sys
import traceback
import warnings
from contextlib import AsyncExitStack
from typing import Any, Awaitable, Callable

import anyio
from mcp import Client, MCPDeprecationWarning, MCPError, StdioServerParameters, types
from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
EXPECTED_TOOLS = ["count", "greet", "list_roots", "order_pizza", "pin_note", "set_beta", "summarize"]
LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
BOARD = "notes://board"
NOTIFICATION_WAIT_S = 5.0  # how long a change notification may take to arrive
DEADLINE_S = 60.0  # a hung server must fail the run, not hang it

# The deprecated features (logging, roots, resources/subscribe) are exactly what is tested here.
warnings.simplefilter("ignore", MCPDeprecationWarning)


class Checks:
    """Runs every check even after a failure, so one run shows everything that is wrong."""

    def __init__(self) -> None:
        self.failed: list[str] = []

    def __call__(self, name: str, ok: bool, detail: str) -> bool:
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}", flush=True)
        if not ok:
            self.failed.append(name)
        return ok

    async def attempt(self, name: str, step: Callable[[], Awaitable[None]]) -> None:
        """Runs one check's coroutine; an exception (an MCP error, a validation error) fails it."""
        try:
            await step()
        except MCPError as e:
            self(name, False, f"MCP error {e.code}: {e.message!r}")
        except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
            self(name, False, f"{type(e).__name__}: {e}")


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", None) == "text"]


def text_is(result: Any, expected: str) -> bool:
    return not result.is_error and texts(result) == [expected]


def describe(result: Any) -> str:
    return f"isError={result.is_error!r} text={texts(result)!r}"


async def eventually(ok: Callable[[], bool], timeout: float = NOTIFICATION_WAIT_S) -> bool:
    """Polls `ok` until it holds or `timeout` passes."""
    with anyio.move_on_after(timeout):
        while not ok():
            await anyio.sleep(0.02)
    return ok()


class User:
    """The client's side of the conversation: callbacks that record every request the server
    makes and answer from a plan, plus a record of the notifications and log messages."""

    def __init__(self) -> None:
        self.elicit_answers: dict[str, types.ElicitResult] = {}  # by the server's message
        self.elicitations: list[types.ElicitRequestParams] = []
        self.samplings: list[types.CreateMessageRequestParams] = []
        self.roots_asked = 0
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.notifications: list[Any] = []

    async def elicit(self, _ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.elicitations.append(params)
        answer = self.elicit_answers.get(params.message)
        if answer is None:
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"no answer planned for {params.message!r}")
        return answer

    async def sample(self, _ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.samplings.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Pizza is good."),
            model="test-model-1",
            stop_reason="endTurn",
        )

    async def roots(self, _ctx: Any) -> types.ListRootsResult:
        self.roots_asked += 1
        return types.ListRootsResult(roots=[
            types.Root(uri="file:///home/ada/project", name="project"),
            types.Root(uri="file:///tmp/scratch"),
        ])

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def message(self, message: Any) -> None:
        self.notifications.append(message)

    def notified(self, kind: type, **fields: Any) -> bool:
        return any(isinstance(n, kind) and all(getattr(n.params, k, None) == v for k, v in fields.items())
                   for n in self.notifications)

    def callbacks(self) -> dict[str, Any]:
        return {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "list_roots_callback": self.roots,
            "logging_callback": self.log,
            "message_handler": self.message,
        }


def server_of(target: list[str]) -> StdioServerParameters | str:
    """The `Client` server argument: stdio parameters for a command, or an HTTP URL."""
    if target[0] == "--":
        return StdioServerParameters(command=target[1], args=target[2:])
    return target[0]


async def run(mode: str, target: list[str]) -> int:
    check = Checks()
    server = server_of(target)
    legacy = mode == "legacy"
    user = User()
    with anyio.fail_after(DEADLINE_S):
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(server, mode=mode, **user.callbacks()))
            version = client.protocol_version
            check("protocol version", version == EXPECTED_VERSION[mode],
                  f"negotiated {version!r}, expected {EXPECTED_VERSION[mode]!r}")

            async def tool_list() -> None:
                names = sorted(t.name for t in (await client.list_tools()).tools)
                check("tool list", names == EXPECTED_TOOLS, f"{names} (beta_feature starts disabled)")

            await check.attempt("tool list", tool_list)

            # ---- elicitation ----
            async def order_accept() -> None:
                before = len(user.elicitations)
                user.elicit_answers["What would you like?"] = types.ElicitResult(action="accept", content={
                    "size": "large", "quantity": 2, "toppings": ["olives", "peppers"], "email": "ada@example.com"})
                result = await client.call_tool("order_pizza", {})
                asked = user.elicitations[before:]
                expected = "Ordered 2 Large pizza(s) with olives, peppers; receipt to ada@example.com."
                check("order_pizza accept", text_is(result, expected) and len(asked) == 1,
                      f"{describe(result)}, elicitation callback ran {len(asked)} time(s); "
                      f"expected text {expected!r} after exactly one elicitation")
                if asked:
                    check_order_form(check, asked[0])

            async def order_other(action: str, expected: str) -> None:
                before = len(user.elicitations)
                user.elicit_answers["What would you like?"] = types.ElicitResult(action=action)
                result = await client.call_tool("order_pizza", {})
                check(f"order_pizza {action}", text_is(result, expected) and len(user.elicitations) == before + 1,
                      f"{describe(result)}, {len(user.elicitations) - before} elicitation(s); expected {expected!r}")

            async def greet_asks() -> None:
                before = len(user.elicitations)
                user.elicit_answers["What is your name?"] = types.ElicitResult(action="accept", content={"name": "Ada"})
                result = await client.call_tool("greet", {})
                asked = user.elicitations[before:]
                schema = getattr(asked[0], "requested_schema", None) if asked else None
                props = (schema or {}).get("properties", {})
                ok = (text_is(result, "Hello, Ada!") and len(asked) == 1 and props.get("name", {}).get("type") == "string"
                      and (schema or {}).get("required") == ["name"])
                check("greet asks for the name", ok,
                      f"{describe(result)}, asked {[a.message for a in asked]} with schema {schema}; expected "
                      "'Hello, Ada!' after one elicitation of {name: string} (required)")

            async def greet_named() -> None:
                before = len(user.elicitations)
                result = await client.call_tool("greet", {"name": "Bob"})
                check("greet with a name", text_is(result, "Hello, Bob!") and len(user.elicitations) == before,
                      f"{describe(result)}, {len(user.elicitations) - before} elicitation(s); expected 'Hello, Bob!' "
                      "without asking")

            await check.attempt("order_pizza accept", order_accept)
            await check.attempt("order_pizza decline", lambda: order_other("decline", "Order declined."))
            await check.attempt("order_pizza cancel", lambda: order_other("cancel", "Order cancelled."))
            await check.attempt("greet asks for the name", greet_asks)
            await check.attempt("greet with a name", greet_named)

            # ---- sampling and roots ----
            async def summarize() -> None:
                result = await client.call_tool("summarize", {"text": "Pizza, the food of the gods."})
                expected = "Summary (test-model-1): Pizza is good."
                check("summarize result", text_is(result, expected) and len(user.samplings) == 1,
                      f"{describe(result)}, sampling callback ran {len(user.samplings)} time(s); expected {expected!r}")
                if user.samplings:
                    p = user.samplings[0]
                    content = p.messages[0].content if len(p.messages) == 1 else None
                    ok = (p.messages[0].role == "user" and getattr(content, "type", None) == "text"
                          and content.text == "Summarize in one sentence:\n\nPizza, the food of the gods."
                          and p.system_prompt == "You are concise." and p.max_tokens == 200 and p.temperature == 0.2)
                    check("sampling request", ok,
                          f"messages={[m.model_dump(exclude_none=True) for m in p.messages]} "
                          f"systemPrompt={p.system_prompt!r} maxTokens={p.max_tokens} temperature={p.temperature}")

            async def list_roots() -> None:
                result = await client.call_tool("list_roots", {})
                expected = "2 root(s)\nproject: file:///home/ada/project\nfile:///tmp/scratch"
                check("list_roots", text_is(result, expected) and user.roots_asked == 1,
                      f"{describe(result)}, roots callback ran {user.roots_asked} time(s); expected {expected!r}")

            await check.attempt("summarize result", summarize)
            await check.attempt("list_roots", list_roots)

            # ---- progress and logs ----
            async def count() -> None:
                seen: list[tuple[float, float | None, str | None]] = []

                async def progress(value: float, total: float | None, message: str | None) -> None:
                    seen.append((value, total, message))

                result = await client.call_tool("count", {"n": 5}, progress_callback=progress)
                check("count result", text_is(result, "counted to 5"), f"{describe(result)}; expected 'counted to 5'")
                values = [v for v, _, _ in seen]
                # Notifications may be delivered after the result: give late ones a moment.
                await eventually(lambda: len(seen) >= 5, 2.0)
                values = [v for v, _, _ in seen]
                ok = (values == [1, 2, 3, 4, 5] and all(t == 5 for _, t, _ in seen)
                      and [m for _, _, m in seen] == [f"{i} of 5" for i in range(1, 6)])
                check("count progress", ok, f"{seen}; expected 1..5 of 5, messages 'i of 5'")

            await check.attempt("count progress", count)
            if legacy:
                await check.attempt("logging", lambda: logging_legacy(check, client, user))
            else:
                await check.attempt("logging", lambda: logging_2026(check, client, user))

            # ---- a client that cannot show forms ----
            async def greet_without_elicitation() -> None:
                async with Client(server, mode=mode) as plain:
                    result = await plain.call_tool("greet", {})
                    check("greet without elicitation capability", text_is(result, "Hello, stranger!"),
                          f"{describe(result)}; expected 'Hello, stranger!'")

            await check.attempt("greet without elicitation capability", greet_without_elicitation)

            # ---- change notifications ----
            if legacy:
                await check.attempt("resource updated", lambda: board_legacy(check, client, user))
                await check.attempt("tools list_changed", lambda: beta_legacy(check, client, user))
            else:
                await check.attempt("resource updated", lambda: board_2026(check, client))
                await check.attempt("tools list_changed", lambda: beta_2026(check, client))

    if check.failed:
        print(f"py_context {mode}: {len(check.failed)} check(s) failed: {', '.join(check.failed)}", file=sys.stderr)
        return 1
    print(f"py_context {mode}: all checks passed")
    return 0


def check_order_form(check: Checks, params: Any) -> None:
    """The form the server derived from its `Order` type, as the client received it."""
    schema = getattr(params, "requested_schema", None) or {}
    props = schema.get("properties", {})
    size, quantity, toppings, email = (props.get(k, {}) for k in ("size", "quantity", "toppings", "email"))
    size_options = [(o.get("const"), o.get("title")) for o in size.get("oneOf", [])]
    ok = (getattr(params, "mode", None) == "form" and params.message == "What would you like?"
          and schema.get("type") == "object"
          and sorted(props) == ["email", "quantity", "size", "toppings"]
          and sorted(schema.get("required", [])) == ["quantity", "size"]
          and size_options == [("small", "Small (25 cm)"), ("medium", "Medium (30 cm)"), ("large", "Large (35 cm)")]
          and quantity.get("type") == "integer" and quantity.get("minimum") == 1 and quantity.get("maximum") == 10
          and toppings.get("type") == "array"
          and toppings.get("items", {}).get("enum") == ["mushrooms", "olives", "peppers"]
          and email.get("type") == "string" and email.get("format") == "email")
    check("order form schema", ok, f"mode={getattr(params, 'mode', None)!r} message={params.message!r} schema={schema}")


async def logging_legacy(check: Checks, client: Client, user: User) -> None:
    """Session era: logging/setLevel decides what the session gets."""
    async def counted(level: str) -> list[tuple[str, Any]]:
        await client.set_logging_level(level)
        before = len(user.logs)
        result = await client.call_tool("count", {"n": 3})
        if not text_is(result, "counted to 3"):
            raise AssertionError(f"count: {describe(result)}")
        await eventually(lambda: any(p.data == "reached 3" for p in user.logs[before:]) or level != "debug", 2.0)
        await anyio.sleep(0.1)  # anything still on its way
        return [(p.level, p.data) for p in user.logs[before:]]

    debug = await counted("debug")
    expected = [("info", "counting to 3")] + [("debug", f"reached {i}") for i in range(1, 4)]
    check("logging at debug", debug == expected, f"{debug}; expected {expected}")
    info = await counted("info")
    check("logging at info", info == [("info", "counting to 3")],
          f"{info}; expected only [('info', 'counting to 3')]")


async def logging_2026(check: Checks, client: Client, user: User) -> None:
    """2026-07-28: log messages only for a request whose _meta carries a log level, at or above it."""
    async def counted(level: str | None) -> list[tuple[str, Any]]:
        before = len(user.logs)
        meta = {LOG_LEVEL_META_KEY: level} if level else None
        result = await client.call_tool("count", {"n": 3}, meta=meta)
        if not text_is(result, "counted to 3"):
            raise AssertionError(f"count: {describe(result)}")
        await eventually(lambda: any(p.data == "reached 3" for p in user.logs[before:]) or level != "debug", 2.0)
        await anyio.sleep(0.1)
        return [(p.level, p.data) for p in user.logs[before:]]

    none = await counted(None)
    check("no logs without a log level", none == [], f"{none}; expected none (the Client sets no log_level)")
    debug = await counted("debug")
    expected = [("info", "counting to 3")] + [("debug", f"reached {i}") for i in range(1, 4)]
    check("logging at debug", debug == expected, f"{debug}; expected {expected}")
    info = await counted("info")
    check("logging at info", info == [("info", "counting to 3")],
          f"{info}; expected only [('info', 'counting to 3')]")


async def board_legacy(check: Checks, client: Client, user: User) -> None:
    await client.subscribe_resource(BOARD)
    result = await client.call_tool("pin_note", {"text": "buy flour"})
    arrived = await eventually(lambda: user.notified(types.ResourceUpdatedNotification, uri=BOARD))
    check("resource updated", text_is(result, "1 note(s) on the board") and arrived,
          f"{describe(result)}; notifications/resources/updated for {BOARD} "
          f"{'arrived' if arrived else 'did not arrive'} (got {[n.method for n in user.notifications if hasattr(n, 'method')]})")
    read = await client.read_resource(BOARD)
    body = [c.text for c in read.contents]
    check("read the board", body == ["buy flour"], f"{body}")


async def board_2026(check: Checks, client: Client) -> None:
    async with client.listen(resource_subscriptions=[BOARD]) as sub:
        honored = sub.honored.resource_subscriptions
        check("listen honors the board", honored == [BOARD], f"honored resourceSubscriptions {honored}")
        result = await client.call_tool("pin_note", {"text": "buy flour"})
        event = None
        with anyio.move_on_after(NOTIFICATION_WAIT_S):
            event = await sub.__anext__()
        check("resource updated", text_is(result, "1 note(s) on the board") and event == ResourceUpdated(uri=BOARD),
              f"{describe(result)}; listen event {event!r}, expected {ResourceUpdated(uri=BOARD)!r}")
    read = await client.read_resource(BOARD)
    body = [c.text for c in read.contents]
    check("read the board", body == ["buy flour"], f"{body}")


async def beta_legacy(check: Checks, client: Client, user: User) -> None:
    async def switch(enabled: bool) -> None:
        before = len(user.notifications)
        result = await client.call_tool("set_beta", {"enabled": enabled})
        arrived = await eventually(lambda: any(isinstance(n, types.ToolListChangedNotification)
                                               for n in user.notifications[before:]))
        names = sorted(t.name for t in (await client.list_tools()).tools)
        state = "on" if enabled else "off"
        check(f"set_beta {enabled}", text_is(result, f"beta_feature is {state}") and arrived
              and ("beta_feature" in names) == enabled,
              f"{describe(result)}; notifications/tools/list_changed {'arrived' if arrived else 'did not arrive'}; "
              f"tools now {names}")

    await switch(True)
    result = await client.call_tool("beta_feature", {})
    check("call beta_feature", text_is(result, "You found the beta feature."), describe(result))
    await switch(False)


async def beta_2026(check: Checks, client: Client) -> None:
    async with client.listen(tools_list_changed=True) as sub:
        check("listen honors tools", sub.honored.tools_list_changed is True, f"honored {sub.honored!r}")

        async def switch(enabled: bool) -> None:
            result = await client.call_tool("set_beta", {"enabled": enabled})
            event = None
            with anyio.move_on_after(NOTIFICATION_WAIT_S):
                event = await sub.__anext__()
            # The listen event evicts the cached tools/list, so this is fresh.
            names = sorted(t.name for t in (await client.list_tools()).tools)
            state = "on" if enabled else "off"
            check(f"set_beta {enabled}", text_is(result, f"beta_feature is {state}") and event == ToolsListChanged()
                  and ("beta_feature" in names) == enabled,
                  f"{describe(result)}; listen event {event!r}; tools now {names}")

        await switch(True)
        result = await client.call_tool("beta_feature", {})
        check("call beta_feature", text_is(result, "You found the beta feature."), describe(result))
        await switch(False)


def main(argv: list[str]) -> int:
    stdio = len(argv) >= 3 and argv[1] == "--"
    http = len(argv) == 2 and argv[1].startswith("http")
    if not argv or argv[0] not in EXPECTED_VERSION or not (stdio or http):
        print(__doc__, file=sys.stderr)
        return 2
    mode, target = argv[0], argv[1:]
    try:
        return anyio.run(run, mode, target)
    except TimeoutError:
        print(f"py_context {mode}: FAIL: no answer within {DEADLINE_S}s", file=sys.stderr)
    except Exception as e:  # connect failures land here: report them, don't just traceback
        print(f"py_context {mode}: FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        traceback.print_exc()
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
