"""Future is a concurrent.futures.Future (issue 28 §1): isinstance, wait() and as_completed()
through the base class's own state, asyncio.wrap_future() under a running loop with many calls in
flight, cancellation from either side, the error classes concurrent.futures and asyncio users
catch, and the deadline as it was.  The peer is tests/inproc_server.py over Client.over() (its
tool ``sleep`` answers after ``s`` seconds, each request on a thread of its own)."""
import asyncio
import concurrent.futures
import gc
import os
import pickle
import re
import subprocess
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
import mcp_min  # noqa: E402
from inproc_server import Server, serve_in_thread  # noqa: E402
from mcp_min import Client, McpError, RequestCancelled, RequestError, RequestTimeout  # noqa: E402
from testsupport import wait_for  # noqa: E402

SLOW = 30  # seconds a "sleep" call takes: far past every deadline here (the server thread is a daemon)


@pytest.fixture(scope="module")
def peer():
    server = Server()
    reader, writer, _ = serve_in_thread(server)
    client = Client.over(reader, writer, timeout=20)
    yield client, server
    client.close()


@pytest.fixture
def client(peer):
    return peer[0]


def cancellations(server, request_id):
    return [m for _, m in server.received if m.get("method") == "notifications/cancelled"
            and (m.get("params") or {}).get("requestId") == request_id]


# ---------------------------------------------------------------------------
# The class
# ---------------------------------------------------------------------------

def test_every_future_is_a_concurrent_futures_future(client):
    tool, raw = client.submit("add", a=1, b=2), client.submit_request("tools/list")
    for fut in (tool, raw):
        assert isinstance(fut, concurrent.futures.Future) and isinstance(fut, mcp_min.Future)
    assert tool.result() == 3 and "tools" in raw.result()


def test_a_call_nobody_else_sees_builds_no_concurrent_futures_state(client, monkeypatch):
    # call() and request() wait on a bare _Request: no Condition made, no base-class state driven.
    made = []
    real = concurrent.futures.Future.__init__
    monkeypatch.setattr(concurrent.futures.Future, "__init__", lambda self: made.append(self) or real(self))
    assert client.call("add", a=1, b=2) == 3 and "tools" in client.request("tools/list")
    assert made == []
    fut = client.submit("add", a=2, b=2)
    assert made == [fut] and fut.result() == 4


def test_a_waiting_call_is_a_pending_request_a_heap_scan_finds():
    # (tests/test_hostile.py's unsettled_futures scans for _Request: it must see a call() in flight.)
    # A client of its own, whose call stays in flight until close() ends it: no window to catch
    # (a scan of PyPy's heap under load can take longer than a short call).
    reader, writer, _ = serve_in_thread(Server())
    own = Client.over(reader, writer, timeout=SLOW * 2)
    seconds = SLOW + 0.25  # (no other test's call has these arguments)

    def pending():
        return [o for o in gc.get_objects() if isinstance(o, mcp_min._Request) and o.method == "tools/call"
                and o._outcome is None and (o._params or {}).get("arguments") == {"s": seconds}]

    box = []

    def call():
        try:
            box.append(own.call("sleep", s=seconds))
        except McpError as e:
            box.append(e)
    caller = threading.Thread(target=call)
    caller.start()
    try:
        assert wait_for(pending, 30)
        found = pending()
        assert len(found) == 1 and not isinstance(found[0], mcp_min.Future)
    finally:
        own.close()  # ends the call
        caller.join(20)
    assert len(box) == 1 and isinstance(box[0], mcp_min.ConnectionClosed), box
    assert found[0]._outcome is not None and not pending()


def test_only_public_methods_are_overridden_and_no_private_name_is_shared():
    # The base class's private attributes (_condition, _state, _waiters, _result, _exception,
    # _done_callbacks, _invoke_callbacks, _get_snapshot ...) are its own: none is defined, set or
    # read here, so a new CPython may change them.  A name of ours that a later base class takes
    # up fails here first.
    base = set(dir(concurrent.futures.Future))
    # (the request bookkeeping a Future is built on, _Request, counts as ours too)
    ours = set(vars(mcp_min.Future)) | set(mcp_min.Future.__slots__)
    ours |= set(vars(mcp_min._Request)) | set(mcp_min._Request.__slots__)
    shared = {n for n in ours & base if not (n.startswith("__") and n.endswith("__"))}
    assert shared == {"running", "cancel", "result", "exception", "add_done_callback", "set_result",
                      "set_exception", "set_running_or_notify_cancel"}
    with open(os.path.join(ROOT, "mcp_min.py")) as f:
        source = f.read()
    privates = r"\.(_condition|_state|_waiters|_result|_exception|_done_callbacks|_invoke_callbacks|_get_snapshot)\b"
    body = source.split("\nclass _Request(")[1].split("\nclass _AtDeadline")[0]  # _Request and Future
    assert re.findall(r"\bself" + privates, body) == []
    assert re.findall(r"\b(?:fut|future)" + privates, source) == [] and "_Future__" not in source


def test_the_executor_side_is_refused(client):
    fut = client.submit("add", a=1, b=1)
    for call in (lambda: fut.set_result(5), lambda: fut.set_exception(ValueError()),
                 fut.set_running_or_notify_cancel):
        with pytest.raises((concurrent.futures.InvalidStateError, RuntimeError)):
            call()
    assert fut.result() == 2


# ---------------------------------------------------------------------------
# wait() and as_completed(): the base class's state, set when the outcome is
# ---------------------------------------------------------------------------

def test_wait_and_as_completed_see_results_failures_and_cancellations(client):
    good = [client.submit("add", a=i, b=1) for i in range(5)]
    bad = client.submit("no such tool")
    slow = client.submit("sleep", s=SLOW)
    done, pending = concurrent.futures.wait(good + [bad], timeout=20)
    assert done == set(good + [bad]) and not pending
    assert sorted(f.result() for f in concurrent.futures.as_completed(good, timeout=20)) == [1, 2, 3, 4, 5]
    first = concurrent.futures.wait([slow, bad], timeout=20, return_when=concurrent.futures.FIRST_EXCEPTION)
    assert first.done == {bad} and first.not_done == {slow}  # (what set_exception stored: a failure)
    assert slow.cancel() and slow.cancelled() and slow.done() and not slow.running()
    assert concurrent.futures.wait([slow], timeout=0).done == {slow}  # counted as cancelled and notified
    assert list(concurrent.futures.as_completed([slow], timeout=0)) == [slow]
    assert isinstance(bad.exception(), RequestError) and not bad.cancelled()


def test_a_submitted_future_is_done_with_nobody_waiting(client):
    # Settled on mcp_min-events (never on the reader): done() comes without a call to result().
    fut = client.submit("add", a=20, b=22)
    assert wait_for(fut.done, 20)
    assert fut.result(0) == 42 and fut.exception(0) is None


def test_done_callbacks_still_run_on_the_events_thread(client):
    seen = []
    called = threading.Event()
    fut = client.submit("add", a=1, b=2)
    fut.add_done_callback(lambda f: (seen.append((f.done(), f.result(), threading.current_thread().name)),
                                     called.set()))
    assert called.wait(20)
    assert seen == [(True, 3, "mcp_min-events")]


# ---------------------------------------------------------------------------
# asyncio
# ---------------------------------------------------------------------------

def test_asyncio_awaits_many_calls_in_flight_without_blocking_the_loop(client):
    async def main():
        ticks = []

        async def ticker():
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)
        beat = asyncio.ensure_future(ticker())
        start = time.monotonic()
        slow = asyncio.gather(*(asyncio.wrap_future(client.submit("sleep", s=0.5)) for _ in range(10)))
        sums = await asyncio.gather(*(asyncio.wrap_future(client.submit("add", a=i, b=i)) for i in range(50)))
        during = len(ticks)
        assert await slow == ["slept"] * 10
        elapsed = time.monotonic() - start
        beat.cancel()
        return sums, during, len(ticks), elapsed
    sums, during, ticks, elapsed = asyncio.run(main())
    assert sums == [2 * i for i in range(50)]
    assert elapsed < 10  # ten half-second calls at once, not one after another
    assert ticks > during and ticks >= 10  # the loop kept running while the slow calls were out


def test_asyncio_cancellation_cancels_the_request(peer):
    client, server = peer
    submitted = []

    async def main():
        fut = client.submit("sleep", s=SLOW)
        submitted.append(fut)
        waiting = asyncio.ensure_future(asyncio.wrap_future(fut))
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    asyncio.run(main())
    fut = submitted[0]
    assert fut.cancelled() and fut.done()
    with pytest.raises(RequestCancelled):
        fut.result(0)
    assert wait_for(lambda: cancellations(server, fut.id), 20)  # the server was told


def test_asyncio_wait_for_cancels_the_request_at_its_own_deadline(peer):
    client, server = peer
    submitted = []

    async def main():
        submitted.append(client.submit("sleep", s=SLOW))
        await asyncio.wait_for(asyncio.wrap_future(submitted[0]), 0.2)
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(main())
    assert submitted[0].cancelled() and wait_for(lambda: cancellations(server, submitted[0].id), 20)


def test_asyncio_sees_errors_as_errors(client):
    async def main():
        outcomes = await asyncio.gather(asyncio.wrap_future(client.submit("no such tool")),
                                        asyncio.wrap_future(client.submit("add", a=1, b=1, timeout=0)),
                                        asyncio.wrap_future(client.submit("sleep", s=0.6, timeout=0.2)),
                                        return_exceptions=True)
        return outcomes
    tool_error, no_time, late = asyncio.run(main())
    assert isinstance(tool_error, RequestError) and "unknown tool" in str(tool_error)
    # The same RequestTimeout objects, not asyncio's conversion of a plain concurrent.futures.TimeoutError:
    assert type(no_time) is RequestTimeout and "not sent" in str(no_time)
    assert type(late) is RequestTimeout  # the deadline wins over the answer that came after it


def test_an_awaited_request_ends_at_its_deadline_with_nobody_in_result(peer):
    # Nothing calls result() here: the Future's done callback (asyncio's) has mcp_min-deadlines
    # end the request at its deadline, as result() would.
    client, server = peer
    submitted = []

    async def main():
        submitted.append(client.submit("sleep", s=SLOW, timeout=0.3))
        start = time.monotonic()
        with pytest.raises(RequestTimeout, match="request cancelled"):
            await asyncio.wrap_future(submitted[0])
        return time.monotonic() - start
    assert asyncio.run(main()) < 10
    fut = submitted[0]
    assert fut.done() and not fut.cancelled() and wait_for(lambda: cancellations(server, fut.id), 20)


def test_a_cancellation_that_is_an_outcome_stays_an_error_for_asyncio():
    # A RequestCancelled the user did not ask for (a task the server cancelled) is the request's
    # error: the Future is not cancelled(), and asyncio gets the error, not a CancelledError of its
    # own that would make the awaiting task look cancelled.
    d = mcp_min._Dispatcher(lambda m: None, lambda m, p: None)

    def settle(fut, answer):
        if isinstance(answer, Exception):
            raise answer
        return answer
    fut = mcp_min.Future(d.next_id(), "tools/call", {}, 5.0, None, settle, lambda f, e: False)
    d.add(fut)

    async def main():
        waiting = asyncio.wrap_future(fut)
        d.fail(fut.id, RequestCancelled("task t was cancelled: by the operator"))
        try:
            await waiting
        except Exception as e:  # (asyncio.CancelledError is a BaseException: it would pass by)
            return e
    error = asyncio.run(main())
    assert type(error) is RequestCancelled and "operator" in str(error)
    assert fut.done() and not fut.cancelled() and fut.exception() is error
    done, _ = concurrent.futures.wait([fut], timeout=0, return_when=concurrent.futures.FIRST_EXCEPTION)
    assert done == {fut}


# ---------------------------------------------------------------------------
# The deadline, as before
# ---------------------------------------------------------------------------

def test_the_deadline_holds_in_result_and_is_a_concurrent_futures_timeout(peer):
    client, server = peer
    fut = client.submit("sleep", s=SLOW, timeout=0.2)
    start = time.monotonic()
    with pytest.raises(concurrent.futures.TimeoutError) as info:
        fut.result()
    assert time.monotonic() - start < 10
    assert type(info.value) is RequestTimeout and "request cancelled" in str(info.value)
    assert fut.done() and not fut.cancelled() and isinstance(fut.exception(0), RequestTimeout)
    assert concurrent.futures.wait([fut], timeout=0, return_when=concurrent.futures.FIRST_EXCEPTION).done == {fut}
    assert wait_for(lambda: cancellations(server, fut.id), 20)


def test_a_local_wait_is_a_concurrent_futures_timeout_and_the_request_goes_on(client):
    fut = client.submit("sleep", s=0.3)
    with pytest.raises(concurrent.futures.TimeoutError, match="still waiting"):
        fut.result(0.01)
    with pytest.raises(TimeoutError):
        fut.exception(0)
    assert fut.running() and not fut.done()
    assert fut.result(20) == "slept"


def test_no_time_left_is_done_at_once(client):
    fut = client.submit("add", a=1, b=1, timeout=0)
    assert fut.done() and concurrent.futures.wait([fut], timeout=0).done == {fut}
    assert isinstance(fut.exception(0), RequestTimeout)


# ---------------------------------------------------------------------------
# The error classes
# ---------------------------------------------------------------------------

def test_the_error_classes_are_what_concurrent_futures_users_catch():
    timeout, cancelled = RequestTimeout("late"), RequestCancelled("gone")
    assert isinstance(timeout, (McpError)) and isinstance(timeout, TimeoutError)
    assert isinstance(timeout, concurrent.futures.TimeoutError)  # a class of its own before 3.11
    assert isinstance(cancelled, McpError) and isinstance(cancelled, concurrent.futures.CancelledError)
    assert not isinstance(cancelled, asyncio.CancelledError)  # (that one cancels the awaiting task)
    mro = RequestTimeout.__mro__
    assert len(mro) == len(set(mro)) and mro.count(TimeoutError) == 1
    for error in (timeout, cancelled):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error)


def test_the_example_runs():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "async_calls.py")], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=60)
    assert done.returncode == 0, done.stdout
    assert "handler: {'sum': 5}" in done.stdout and "50 sums" in done.stdout and "cancelled" in done.stdout
