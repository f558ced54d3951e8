"""What the Python interop scripts share: the check collector, result formatting, and the way a
script runs and exits (one line per check; exit 0 when all pass, 1 when any fails or the run
does not finish within DEADLINE_S). Imported by the py_*.py scripts next to it."""

from __future__ import annotations

import sys
import traceback
from typing import Any, Awaitable, Callable

import anyio
from mcp import MCPError

# A hung server must fail the run, not hang it.
DEADLINE_S = 60.0


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

    def outcome(self, label: str) -> int:
        """Prints the summary line; the exit code."""
        if self.failed:
            print(f"{label}: {len(self.failed)} check(s) failed: {', '.join(self.failed)}", file=sys.stderr)
            return 1
        print(f"{label}: all checks passed")
        return 0


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", None) == "text"]


def text_is(result: Any, expected: str) -> bool:
    return not result.is_error and texts(result) == [expected]


def describe(result: Any) -> str:
    return f"isError={result.is_error!r} text={texts(result)!r} structured={result.structured_content!r}"


def run_script(label: str, run: Callable[..., Awaitable[int]], *args: Any) -> int:
    """Runs `run(*args)` (which bounds itself with DEADLINE_S); a time-out or a crash (connect
    failures land here) is reported as a FAIL line, not just a traceback."""
    try:
        return anyio.run(run, *args)
    except TimeoutError:
        print(f"{label}: FAIL: no answer within {DEADLINE_S}s", file=sys.stderr)
    except Exception as e:  # noqa: BLE001
        print(f"{label}: FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        traceback.print_exc()
    return 1
