#!/usr/bin/env python3
"""Bench driver for the official Python SDK client (``mcp`` 2.3.0, ``mcp.Client``).

Run with the interpreter of a venv that has it, e.g. .cache/venv/bin/python.
"""

import contextlib

from mcp import Client, StdioServerParameters

from _async_common import run
from _common import spec


class _Wrap(object):
    def __init__(self, client):
        self._c = client

    async def call(self, a, b):
        r = await self._c.call_tool("add", {"a": a, "b": b})
        if r.is_error:
            raise SystemExit("tool error %r" % r)
        return r.content[0].text

    async def list_tools(self):
        return await self._c.list_tools()


@contextlib.asynccontextmanager
async def open_client(server):
    target = server if isinstance(server, str) else StdioServerParameters(command=server[0], args=server[1:])
    async with Client(target, read_timeout_seconds=60) as c:
        yield _Wrap(c)


if __name__ == "__main__":
    run(spec(), open_client)
