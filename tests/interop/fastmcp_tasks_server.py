"""A 2026-07-28 server whose tools run as tasks: FastMCP 4.1.4 + fastmcp-tasks 4.1.4
(the io.modelcontextprotocol/tasks extension, SEP-2663), in-memory task backend.

Runs under .cache/venv-fastmcp-tasks/bin/python (installed by .ci/install-peers):
    fastmcp_tasks_server.py stdio
    fastmcp_tasks_server.py http PORT        (127.0.0.1, endpoint /mcp)

Tools (all TaskConfig(mode="required"), poll interval 100 ms):
- ``brew {minutes}``: works 0.3 s, returns "brewed for N minutes" (structured ``{"result": ...}``)
- ``greet``: needs input: returns an InputRequiredResult asking (form elicitation ``who``) for a
  name; the task re-runs with the answer (the client gives it with tasks/update) and returns
  "Hello, NAME!"
- ``nap {s}``: sleeps ``s`` seconds (for cancel tests)
- ``broken``: raises a ToolError (the task completes with isError)
"""

import sys
from datetime import timedelta

import anyio
import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

REQUIRED = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100))

mcp = FastMCP("fastmcp-tasks-interop")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=REQUIRED)
async def brew(minutes: int = 3) -> str:
    await anyio.sleep(0.3)
    return "brewed for %d minutes" % minutes


@mcp.tool(task=REQUIRED)
async def greet(ctx: Context):
    answers = ctx.input_responses
    if not answers or "who" not in answers:
        return mcp_types.InputRequiredResult(input_requests={"who": mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message="What is your name?", requested_schema={
                "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))})
    answer = answers["who"]
    content = getattr(answer, "content", None) or {}
    return "Hello, %s!" % content.get("name", "nobody")


@mcp.tool(task=REQUIRED)
async def nap(s: float = 30.0) -> str:
    await anyio.sleep(s)
    return "rested"


@mcp.tool(task=REQUIRED)
async def broken() -> str:
    raise ToolError("this tool always fails")


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        mcp.run("stdio", show_banner=False)
    else:
        mcp.run("http", show_banner=False, host="127.0.0.1", port=int(sys.argv[2]), path="/mcp")
