"""Interop peer: a small MCP server built with the official Python SDK (mcp==2.3.0).

Test tool only; runs with the interpreter of .cache/venv (see .ci/install-peers):

    .cache/venv/bin/python tests/interop/sdk_server.py stdio
    .cache/venv/bin/python tests/interop/sdk_server.py http PORT   # Streamable HTTP, 127.0.0.1:PORT/mcp

Offers:
  tools     add(a:int, b:int) -> int
            echo(text:str) -> str
            slow_count(steps:int=3, delay:float=0.05) -> str   reports progress each step
            ask_name() -> str                                  elicits {"name": str} from the client
                (<= 2025-11-25: server-to-client elicitation/create mid-call;
                 >= 2026-07-28: InputRequiredResult, client retries with inputResponses)
  resource  interop://greeting (text/plain, "hello from sdk_server")
  template  interop://square/{n}
  prompt    greet(name: str)
"""

from __future__ import annotations

import sys
from typing import Annotated

import anyio
from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve

server = MCPServer(
    name="mcp-min-interop-sdk-server",
    version="1.0.0",
    instructions="Interop peer for mcp_min tests.",
)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
async def slow_count(ctx: Context, steps: int = 3, delay: float = 0.05) -> str:
    """Count to `steps`, reporting progress after each step (needs a progressToken to be visible)."""
    for i in range(1, steps + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(i, steps, f"step {i}/{steps}")
    return f"counted to {steps}"


class NameForm(BaseModel):
    name: str = Field(description="Your name")


def _ask_for_name() -> Elicit[NameForm]:
    return Elicit("What is your name?", NameForm)


@server.tool()
async def ask_name(answer: Annotated[ElicitationResult[NameForm], Resolve(_ask_for_name)]) -> str:
    """Ask the client (elicitation) for a name and greet it."""
    if answer.action == "accept":
        return f"Hello, {answer.data.name}!"
    return f"elicitation {answer.action}"


@server.resource("interop://greeting", mime_type="text/plain")
def greeting() -> str:
    """A static text resource."""
    return "hello from sdk_server"


@server.resource("interop://square/{n}", mime_type="text/plain")
def square(n: str) -> str:
    """A templated resource: the square of n."""
    return str(int(n) ** 2)


@server.prompt()
def greet(name: str) -> str:
    """A prompt that greets `name`."""
    return f"Please greet {name} warmly."


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "stdio":
        server.run("stdio")
        return 0
    if len(argv) == 2 and argv[0] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
        return 0
    print(__doc__, file=sys.stderr)
    print("usage: sdk_server.py stdio | sdk_server.py http PORT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
