#!/usr/bin/env python3
"""mcp_min from async code: an async web handler's shape, and many calls at once.

    python examples/async_calls.py

mcp_min is synchronous, but ``submit()`` returns at once with a ``concurrent.futures.Future``,
and ``asyncio.wrap_future()`` makes that awaitable: the event loop goes on serving while the
server works, and one client carries any number of calls in flight.  Cancelling the awaiting
side (a cancelled task, ``asyncio.wait_for`` running out) cancels the request: the server is
told.  The request's own ``timeout`` still applies (RequestTimeout when it passes).

The server is examples/calc.py over stdio.  Standard library only; Python 3.8+.
"""
import asyncio
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # mcp_min.py one level up (a copy beside your code needs none)

from mcp_min import Client, ToolError  # noqa: E402

CALC = [sys.executable, os.path.join(HERE, "calc.py")]

client = None  # one Client for the application, shared by every handler (it is thread-safe)


async def startup() -> None:
    """What a web framework's startup hook (FastAPI's lifespan) would do.  Connecting blocks
    (a process starts, a handshake runs): off the loop, on the default executor."""
    global client
    client = await asyncio.get_running_loop().run_in_executor(None, Client, CALC)


async def shutdown() -> None:
    await asyncio.get_running_loop().run_in_executor(None, client.close)


async def add(a: float, b: float) -> dict:
    """An ``@app.get("/add")`` handler: await the tool call; the loop serves other requests meanwhile."""
    total = await asyncio.wrap_future(client.submit("add", a=a, b=b))
    return {"sum": total}


async def divide(a: float, b: float) -> dict:
    """The same with the errors a handler turns into a response, and a bound on the wait:
    past 5 seconds ``wait_for`` cancels the request (the server is told) and raises."""
    try:
        quotient = await asyncio.wait_for(asyncio.wrap_future(client.submit("divide", a=a, b=b)), 5)
    except ToolError as e:  # the tool ran and said no: a 4xx in a web framework
        return {"error": str(e)}
    return {"quotient": quotient}


async def main() -> None:
    await startup()
    try:
        print("handler:", await add(2, 3))
        print("handler:", await divide(1, 0))
        # Many calls in flight at once, over the one connection:
        sums = await asyncio.gather(*(asyncio.wrap_future(client.submit("add", a=i, b=i)) for i in range(50)))
        print("%d sums: %s ..." % (len(sums), sums[:5]))
        # Cancelling the awaiting task cancels the request (cancelled() is then true). calc answers
        # at once, so the call may well be done first: then cancel() has nothing left to cancel.
        fut = client.submit("multiply", a=6, b=7)
        waiting = asyncio.ensure_future(asyncio.wrap_future(fut))
        waiting.cancel()
        try:
            print("multiply:", await waiting)
        except asyncio.CancelledError:
            print("multiply: cancelled" + (" (the request too)" if fut.cancelled() else " (it had ended)"))
    finally:
        await shutdown()


if __name__ == "__main__":
    asyncio.run(main())
