"""Interop check of the Context example (examples/context.rs) against the official Python client
(`mcp` 2.3.0): elicitation, sampling, roots, progress, logging and change notifications.

Usage: py_context.py MODE -- COMMAND [ARGS...]    (stdio: spawns COMMAND as the server)
       py_context.py MODE URL                     (Streamable HTTP: http://127.0.0.1:PORT/mcp)
  MODE  legacy      initialize handshake (session era, expects 2025-11-25): the server asks with
                    real requests (elicitation/create, sampling/createMessage, roots/list),
                    logging/setLevel governs the logs, and resources/subscribe plus the
                    list_changed notifications arrive through message_handler
        2026-07-28  2026-07-28 adopted without any probe: the server answers the tools/call with
                    an InputRequiredResult, the SDK runs the same callbacks and retries the call
                    with inputResponses and the echoed requestState; logs come only for a request
                    whose _meta carries a log level; changes arrive on subscriptions/listen

The client plays the user and the model: its callbacks record what the server asked and answer
from a plan. Prints one line per check and exits 0 when all pass, 1 when any fails, 2 on bad
usage. Over HTTP the server may have served earlier runs: nothing here assumes a fresh board.
Run by tests/interop_context.rs with the venv that tests/interop/setup.sh installs.
"""

from __future__ import annotations

import sys
import warnings
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import anyio
from mcp import Client, MCPDeprecationWarning, StdioServerParameters, types
from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

from harness import DEADLINE_S, Checks, describe, run_script, text_is

EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
# beta_feature starts disabled.
EXPECTED_TOOLS = ["count", "greet", "list_roots", "order_pizza", "pin_note", "set_beta", "summarize"]
LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
BOARD = "notes://board"
ORDER_PROMPT = "What would you like?"
NAME_PROMPT = "What is your name?"
WAIT_S = 5.0  # how long a notification may take to arrive

# Logging, roots and resources/subscribe are deprecated in 2026-07-28, and exactly what is tested.
warnings.simplefilter("ignore", MCPDeprecationWarning)


async def eventually(ok: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    """Polls `ok` until it holds or `timeout` passes."""
    with anyio.move_on_after(timeout):
        while not ok():
            await anyio.sleep(0.02)
    return ok()


async def next_event(sub: Any) -> Any:
    """The next event of a `subscriptions/listen` stream, or None after WAIT_S."""
    with anyio.move_on_after(WAIT_S):
        return await sub.__anext__()
    return None


class User:
    """The client's side: callbacks that record every request the server makes and answer from a
    plan, plus a record of the log messages and other notifications."""

    def __init__(self) -> None:
        self.answers: dict[str, types.ElicitResult] = {}  # by the server's message
        self.elicitations: list[types.ElicitRequestParams] = []
        self.samplings: list[types.CreateMessageRequestParams] = []
        self.roots_asked = 0
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.notifications: list[Any] = []

    async def elicit(self, _ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.elicitations.append(params)
        answer = self.answers.get(params.message)
        if answer is None:
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"no answer planned for {params.message!r}")
        return answer

    async def sample(self, _ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.samplings.append(params)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="Pizza is good."),
                                         model="test-model-1", stop_reason="endTurn")

    async def roots(self, _ctx: Any) -> types.ListRootsResult:
        self.roots_asked += 1
        return types.ListRootsResult(roots=[types.Root(uri="file:///home/ada/project", name="project"),
                                            types.Root(uri="file:///tmp/scratch")])

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def message(self, message: Any) -> None:
        self.notifications.append(message)

    def callbacks(self) -> dict[str, Any]:
        return {"elicitation_callback": self.elicit, "sampling_callback": self.sample,
                "list_roots_callback": self.roots, "logging_callback": self.log, "message_handler": self.message}


@dataclass
class Run:
    check: Checks
    client: Client
    user: User
    server: StdioServerParameters | str
    mode: str

    async def call(self, tool: str, args: dict[str, Any], **kw: Any) -> Any:
        return await self.client.call_tool(tool, args, **kw)

    async def tool_names(self) -> list[str]:
        return sorted(t.name for t in (await self.client.list_tools()).tools)

    async def board(self) -> list[str]:
        read = await self.client.read_resource(BOARD)
        return [line for c in read.contents for line in c.text.splitlines()]


# ---------------------------------------------------------------- elicitation

async def order_accept(r: Run) -> None:
    before = len(r.user.elicitations)
    r.user.answers[ORDER_PROMPT] = types.ElicitResult(action="accept", content={
        "size": "large", "quantity": 2, "toppings": ["olives", "peppers"], "email": "ada@example.com"})
    result = await r.call("order_pizza", {})
    asked = r.user.elicitations[before:]
    expected = "Ordered 2 Large pizza(s) with olives, peppers; receipt to ada@example.com."
    r.check("order_pizza accept", text_is(result, expected) and len(asked) == 1,
            f"{describe(result)} after {len(asked)} elicitation(s); expected {expected!r} after one")
    if asked:
        check_order_form(r.check, asked[0])


def check_order_form(check: Checks, params: Any) -> None:
    """The form the server derived from its `Order` type, as the callback received it."""
    schema = getattr(params, "requested_schema", None) or {}
    props = schema.get("properties", {})
    size, quantity, toppings, email = (props.get(k, {}) for k in ("size", "quantity", "toppings", "email"))
    options = [(o.get("const"), o.get("title")) for o in size.get("oneOf", [])]
    ok = (getattr(params, "mode", None) == "form" and params.message == ORDER_PROMPT
          and schema.get("type") == "object" and sorted(props) == ["email", "quantity", "size", "toppings"]
          and sorted(schema.get("required", [])) == ["quantity", "size"]
          and size.get("type") == "string"
          and options == [("small", "Small (25 cm)"), ("medium", "Medium (30 cm)"), ("large", "Large (35 cm)")]
          and quantity.get("type") == "integer" and quantity.get("minimum") == 1 and quantity.get("maximum") == 10
          and toppings.get("type") == "array" and toppings.get("items", {}).get("enum") == ["mushrooms", "olives", "peppers"]
          and email.get("type") == "string" and email.get("format") == "email")
    check("order form schema", ok, f"mode={getattr(params, 'mode', None)!r} message={params.message!r} schema={schema}; "
          "expected size oneOf const/title, quantity integer 1..10, toppings array of enum, email format email, "
          "required size and quantity")


async def order_refused(r: Run, action: str, expected: str) -> None:
    before = len(r.user.elicitations)
    r.user.answers[ORDER_PROMPT] = types.ElicitResult(action=action)
    result = await r.call("order_pizza", {})
    asked = len(r.user.elicitations) - before
    r.check(f"order_pizza {action}", text_is(result, expected) and asked == 1,
            f"{describe(result)} after {asked} elicitation(s); expected {expected!r} after one")


async def greet_asks(r: Run) -> None:
    before = len(r.user.elicitations)
    r.user.answers[NAME_PROMPT] = types.ElicitResult(action="accept", content={"name": "Ada"})
    result = await r.call("greet", {})
    asked = r.user.elicitations[before:]
    schema = (getattr(asked[0], "requested_schema", None) or {}) if asked else {}
    ok = (text_is(result, "Hello, Ada!") and len(asked) == 1
          and schema.get("properties", {}).get("name", {}).get("type") == "string" and schema.get("required") == ["name"])
    r.check("greet asks for the name", ok, f"{describe(result)}; asked {[a.message for a in asked]} with schema "
            f"{schema}; expected 'Hello, Ada!' after one elicitation of {{name: string}} (required)")


async def greet_named(r: Run) -> None:
    before = len(r.user.elicitations)
    result = await r.call("greet", {"name": "Bob"})
    asked = len(r.user.elicitations) - before
    r.check("greet with a name", text_is(result, "Hello, Bob!") and asked == 0,
            f"{describe(result)} after {asked} elicitation(s); expected 'Hello, Bob!' without asking")


async def greet_without_elicitation(r: Run) -> None:
    # A second client with no callbacks declares no elicitation capability.
    async with Client(r.server, mode=r.mode) as plain:
        result = await plain.call_tool("greet", {})
    r.check("greet without elicitation capability", text_is(result, "Hello, stranger!"),
            f"{describe(result)}; expected 'Hello, stranger!'")


async def input_required_by_hand(r: Run) -> None:
    """2026-07-28: the round trip `Client.call_tool` drives, done by hand through the session: an
    InputRequiredResult embedding one elicitation, then the retry carrying the answer under the
    same key with the echoed requestState."""
    before = len(r.user.elicitations)
    first = await r.client.session.call_tool("greet", {}, allow_input_required=True)
    if not isinstance(first, types.InputRequiredResult):
        r.check("input_required result", False, f"{type(first).__name__}: {first!r}; expected an InputRequiredResult")
        return
    requests = first.input_requests or {}
    key, request = next(iter(requests.items())) if len(requests) == 1 else (None, None)
    message = getattr(getattr(request, "params", None), "message", None)
    r.check("input_required result",
            getattr(request, "method", None) == "elicitation/create" and message == NAME_PROMPT
            and bool(first.request_state),
            f"inputRequests {({k: q.method for k, q in requests.items()})} asking {message!r}, requestState "
            f"{'present' if first.request_state else 'missing'}; expected one elicitation/create and a state")
    if key is None:
        return
    final = await r.client.session.call_tool(
        "greet", {}, input_responses={key: types.ElicitResult(action="accept", content={"name": "Eve"})},
        request_state=first.request_state, allow_input_required=True)
    r.check("input_required retry", isinstance(final, types.CallToolResult) and text_is(final, "Hello, Eve!"),
            f"{describe(final) if isinstance(final, types.CallToolResult) else repr(final)}; expected 'Hello, Eve!'")
    asked = len(r.user.elicitations) - before
    r.check("input_required by hand bypasses the callback", asked == 0, f"{asked} elicitation(s); expected 0")


# ---------------------------------------------------------------- sampling and roots

async def summarize(r: Run) -> None:
    before = len(r.user.samplings)
    result = await r.call("summarize", {"text": "Pizza, the food of the gods."})
    asked = r.user.samplings[before:]
    expected = "Summary (test-model-1): Pizza is good."
    r.check("summarize", text_is(result, expected) and len(asked) == 1,
            f"{describe(result)} after {len(asked)} sampling request(s); expected {expected!r} after one")
    if not asked:
        return
    p = asked[0]
    content = p.messages[0].content if len(p.messages) == 1 else None
    ok = (len(p.messages) == 1 and p.messages[0].role == "user" and getattr(content, "type", None) == "text"
          and content.text == "Summarize in one sentence:\n\nPizza, the food of the gods."
          and p.system_prompt == "You are concise." and p.max_tokens == 200 and p.temperature == 0.2)
    r.check("sampling request", ok, f"messages={[m.model_dump(exclude_none=True) for m in p.messages]} "
            f"systemPrompt={p.system_prompt!r} maxTokens={p.max_tokens} temperature={p.temperature}")


async def list_roots(r: Run) -> None:
    before = r.user.roots_asked
    result = await r.call("list_roots", {})
    asked = r.user.roots_asked - before
    expected = "2 root(s)\nproject: file:///home/ada/project\nfile:///tmp/scratch"
    r.check("list_roots", text_is(result, expected) and asked == 1,
            f"{describe(result)} after {asked} roots request(s); expected {expected!r} after one")


# ---------------------------------------------------------------- progress and logs

async def count_progress(r: Run) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    # No waiting after the result: a progress notification must come before the response (its token
    # is no longer active after it).
    result = await r.call("count", {"n": 5}, progress_callback=progress)
    r.check("count", text_is(result, "counted to 5"), f"{describe(result)}; expected 'counted to 5'")
    expected = [(float(i), 5.0, f"{i} of 5") for i in range(1, 6)]
    r.check("count progress", seen == expected, f"{seen}; expected {expected}")


async def counted_logs(r: Run, level: str | None, *, set_level: bool) -> list[tuple[str, Any]]:
    """The log messages of one `count` to 3: after logging/setLevel (session era) or with the
    level in the request's _meta (2026-07-28); `level` None sets nothing."""
    if set_level and level is not None:
        await r.client.set_logging_level(level)
    before = len(r.user.logs)
    meta = {LOG_LEVEL_META_KEY: level} if level is not None and not set_level else None
    result = await r.call("count", {"n": 3}, meta=meta)
    if not text_is(result, "counted to 3"):
        raise AssertionError(f"count: {describe(result)}")
    await anyio.sleep(0.2)  # a log line still on its way would show up here
    return [(p.level, p.data) for p in r.user.logs[before:]]


ALL_LOGS = [("info", "counting to 3")] + [("debug", f"reached {i}") for i in range(1, 4)]
INFO_LOGS = [("info", "counting to 3")]


async def logging_legacy(r: Run) -> None:
    """Session era: logging/setLevel decides what the session gets."""
    got = await counted_logs(r, "debug", set_level=True)
    r.check("logging at debug", got == ALL_LOGS, f"{got}; expected {ALL_LOGS}")
    got = await counted_logs(r, "info", set_level=True)
    r.check("logging at info", got == INFO_LOGS, f"{got}; expected {INFO_LOGS}")


async def logging_2026(r: Run) -> None:
    """2026-07-28: log messages only for a request whose _meta carries a level, at or above it."""
    got = await counted_logs(r, None, set_level=False)
    r.check("no logs without a log level", got == [], f"{got}; expected none (this Client sets no log_level)")
    got = await counted_logs(r, "debug", set_level=False)
    r.check("logging at debug", got == ALL_LOGS, f"{got}; expected {ALL_LOGS}")
    got = await counted_logs(r, "info", set_level=False)
    r.check("logging at info", got == INFO_LOGS, f"{got}; expected {INFO_LOGS}")


# ---------------------------------------------------------------- change notifications

def check_pinned(r: Run, result: Any, before: list[str], after: list[str], note: str) -> None:
    expected = f"{len(before) + 1} note(s) on the board"
    r.check("pin_note", text_is(result, expected), f"{describe(result)}; expected {expected!r}")
    r.check("read the board", after == before + [note], f"{after}; expected {before + [note]}")


async def board_legacy(r: Run) -> None:
    """Session era: resources/subscribe, then notifications/resources/updated via message_handler."""
    def updated() -> bool:
        return any(isinstance(n, types.ResourceUpdatedNotification) and n.params.uri == BOARD
                   for n in r.user.notifications)

    before = await r.board()
    await r.client.subscribe_resource(BOARD)
    note = "buy flour (legacy)"
    result = await r.call("pin_note", {"text": note})
    arrived = await eventually(updated)
    methods = sorted({n.method for n in r.user.notifications if hasattr(n, "method")})
    r.check("resource updated", arrived, f"notifications/resources/updated for {BOARD} "
            f"{'arrived' if arrived else 'did not arrive'} (methods seen: {methods})")
    check_pinned(r, result, before, await r.board(), note)


async def board_2026(r: Run) -> None:
    """2026-07-28: a subscriptions/listen stream for the board carries the update."""
    before = await r.board()
    note = "buy flour (2026-07-28)"
    async with r.client.listen(resource_subscriptions=[BOARD]) as sub:
        honored = sub.honored.resource_subscriptions
        r.check("listen to the board", honored == [BOARD], f"honored resourceSubscriptions {honored}")
        result = await r.call("pin_note", {"text": note})
        event = await next_event(sub)
        r.check("resource updated", event == ResourceUpdated(uri=BOARD),
                f"listen event {event!r}; expected {ResourceUpdated(uri=BOARD)!r}")
    # The event evicted the client's cached read of the board, so this read reaches the server.
    check_pinned(r, result, before, await r.board(), note)


async def switch_beta(r: Run, enabled: bool, notified: Callable[[], Awaitable[str | None]]) -> None:
    """set_beta, then `notified()` (a description of the change notification, None when none came),
    then the tool list."""
    result = await r.call("set_beta", {"enabled": enabled})
    seen = await notified()
    names = await r.tool_names()
    expected = f"beta_feature is {'on' if enabled else 'off'}"
    r.check(f"set_beta {enabled}", text_is(result, expected) and seen is not None and ("beta_feature" in names) == enabled,
            f"{describe(result)}; change notification: {seen}; tools now {names}")
    if enabled:
        result = await r.call("beta_feature", {})
        r.check("call beta_feature", text_is(result, "You found the beta feature."), describe(result))


async def beta_legacy(r: Run) -> None:
    """Session era: notifications/tools/list_changed via message_handler."""
    for enabled in (True, False):
        before = len(r.user.notifications)

        async def notified() -> str | None:
            def changed() -> bool:
                return any(isinstance(n, types.ToolListChangedNotification) for n in r.user.notifications[before:])
            return "notifications/tools/list_changed" if await eventually(changed) else None

        await switch_beta(r, enabled, notified)


async def beta_2026(r: Run) -> None:
    """2026-07-28: tools list_changed on a subscriptions/listen stream."""
    async with r.client.listen(tools_list_changed=True) as sub:
        r.check("listen to tool changes", sub.honored.tools_list_changed is True, f"honored {sub.honored!r}")

        async def notified() -> str | None:
            event = await next_event(sub)
            return repr(event) if event == ToolsListChanged() else None

        for enabled in (True, False):
            # The listen event also evicts the cached tools/list, so the list after it is fresh.
            await switch_beta(r, enabled, notified)


STEPS: dict[str, list[tuple[str, Callable[[Run], Awaitable[None]]]]] = {
    mode: [
        ("order_pizza accept", order_accept),
        ("order_pizza decline", lambda r: order_refused(r, "decline", "Order declined.")),
        ("order_pizza cancel", lambda r: order_refused(r, "cancel", "Order cancelled.")),
        ("greet asks for the name", greet_asks),
        ("greet with a name", greet_named),
        *([] if mode == "legacy" else [("input_required by hand", input_required_by_hand)]),
        ("summarize", summarize),
        ("list_roots", list_roots),
        ("count progress", count_progress),
        ("logging", logging_legacy if mode == "legacy" else logging_2026),
        ("greet without elicitation capability", greet_without_elicitation),
        ("resource updated", board_legacy if mode == "legacy" else board_2026),
        ("tools list_changed", beta_legacy if mode == "legacy" else beta_2026),
    ]
    for mode in EXPECTED_VERSION
}


def server_of(target: list[str]) -> StdioServerParameters | str:
    """The `Client` server argument: stdio parameters for `-- COMMAND ARGS…`, or the URL."""
    if target[0] == "--":
        return StdioServerParameters(command=target[1], args=target[2:])
    return target[0]


async def run(mode: str, target: list[str]) -> int:
    check = Checks()
    server = server_of(target)
    user = User()
    with anyio.fail_after(DEADLINE_S):
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(server, mode=mode, **user.callbacks()))
            r = Run(check, client, user, server, mode)
            version = client.protocol_version
            check("protocol version", version == EXPECTED_VERSION[mode],
                  f"negotiated {version!r}, expected {EXPECTED_VERSION[mode]!r}")

            async def tool_list() -> None:
                names = await r.tool_names()
                check("tool list", names == EXPECTED_TOOLS, f"{names}; expected {EXPECTED_TOOLS}")

            await check.attempt("tool list", tool_list)
            for name, step in STEPS[mode]:
                await check.attempt(name, lambda: step(r))

    return check.outcome(f"py_context {mode}")


def main(argv: list[str]) -> int:
    stdio = len(argv) >= 3 and argv[1] == "--"
    http = len(argv) == 2 and argv[1].startswith(("http://", "https://"))
    if not argv or argv[0] not in EXPECTED_VERSION or not (stdio or http):
        print(__doc__, file=sys.stderr)
        return 2
    mode, target = argv[0], argv[1:]
    return run_script(f"py_context {mode}", run, mode, target)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
