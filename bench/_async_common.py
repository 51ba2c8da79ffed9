"""The asyncio workloads shared by the official clients' drivers (mcp, fastmcp).

``open_client(server)`` is an async context manager yielding an object with
``call(a, b) -> text`` and ``list_tools()``.  Threads are replaced by their
asyncio equivalent: ``threads`` concurrent tasks sharing one session.
"""

import asyncio

from _common import check, clock, emit


async def _warm(c, s):
    for i in range(s["warmup"]):
        check(await c.call(i, 1), i + 1)


def run(s, open_client):
    mode, n = s["mode"], s["n"]

    async def seq():
        async with open_client(s["server"]) as c:
            await _warm(c, s)
            call = c.call
            t0 = clock()
            for i in range(n):
                check(await call(i, 1), i + 1)
            return clock() - t0

    async def tasks():
        k = s["threads"]
        bounds = [n * j // k for j in range(k + 1)]
        async with open_client(s["server"]) as c:
            await _warm(c, s)

            async def work(lo, hi):
                for i in range(lo, hi):
                    check(await c.call(i, 1), i + 1)

            t0 = clock()
            await asyncio.gather(*(work(bounds[j], bounds[j + 1]) for j in range(k)))
            return clock() - t0

    async def pipeline():
        async with open_client(s["server"]) as c:
            await _warm(c, s)
            t0 = clock()
            results = await asyncio.gather(*(c.call(i, 1) for i in range(n)))
            for i, r in enumerate(results):
                check(r, i + 1)
            return clock() - t0

    async def lifecycle():
        async with open_client(s["server"]) as c:
            await c.list_tools()
            check(await c.call(2, 3), 5)

    if mode == "lifecycle":
        t0 = clock()
        asyncio.run(lifecycle())
        emit(clock() - t0)
        return
    body = {"seq": seq, "http_seq": seq, "threads": tasks, "pipeline": pipeline}[mode]
    emit(asyncio.run(body()), n)
