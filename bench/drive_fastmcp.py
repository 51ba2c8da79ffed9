#!/usr/bin/env python3
"""Bench driver for the FastMCP client (``fastmcp`` 4.2.3, ``fastmcp.Client``).

Run with the interpreter of a venv that has it, e.g. bench/.venv-fastmcp/bin/python.
"""

import contextlib

from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport

from _async_common import run
from _common import spec


class _Wrap(object):
    def __init__(self, client):
        self._c = client

    async def call(self, a, b):
        r = await self._c.call_tool("add", {"a": a, "b": b})
        return r.content[0].text

    async def list_tools(self):
        return await self._c.list_tools()


@contextlib.asynccontextmanager
async def open_client(server):
    if isinstance(server, str):
        transport = StreamableHttpTransport(server)
    else:  # keep_alive=False: leaving the context ends the server, as the other clients do
        transport = StdioTransport(server[0], server[1:], keep_alive=False)
    async with Client(transport, timeout=60) as c:
        yield _Wrap(c)


if __name__ == "__main__":
    run(spec(), open_client)
